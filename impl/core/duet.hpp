#pragma once
// Duet runs (compare --run, docs/tools/compare.md): BASE and NEW run the same
// instances at the same time on disjoint cores, so a neighbour's load, a
// frequency change or thermal drift hits both sides of a pair alike.
// PARBENCH_DUET=FILE:SIDE (SIDE 0 or 1) names a small file both processes
// map; each publishes how many instances it has entered, and the one ahead
// waits at the start of an instance until its partner has entered it too,
// has finished, or is gone. It waits again once the instance is set up,
// verified and warm, until its partner is too: a change that makes one
// side's set-up or check longer would otherwise have that side build its
// inputs while the other times. Without the variable nothing happens.
namespace pb::duet {

// Called by the registrar each time an instance (registration index `id`) is
// entered; the first call of a new instance is a meeting point.
void instance_started(int id);
// Called once the instance entered last is ready to be timed: the second
// meeting point. The partner is waited for until it is ready too, has moved
// on to a later instance (this one failed or was unsupported there), or is
// gone; a partner built before this meeting existed is not waited for.
void ready_to_time(int id);
// Whether this process runs as one side of a duet; the first call registers
// it with its partner (bench calls it at its start, so a partner waiting at
// its first instance sees this side alive while it builds its fixtures).
bool active();
// Forgets this process's duet (unmaps the file, reads PARBENCH_DUET again at
// the next call): for tests, whose forked sides must not inherit what their
// parent process found.
void reset_for_tests();

}  // namespace pb::duet
