#pragma once
// Instruction counts of the timed region, for compare --instrument
// (regress/run/instructions.py): a second instrument beside the time, which
// a neighbour's load does not move. On a machine without hardware counters
// (a VM) the comparator runs bench under valgrind's callgrind with
// collection off and PARBENCH_CALLGRIND=1; bench then collects only around
// each timed call of a CPU job and dumps the count of every call of the
// benchmark function under the instance's name and its iteration count,
// which the comparator divides. Without that variable these do nothing.
#include <string>

namespace pb::instructions {

// Collection on / off around one timed call.
void begin();
void end();
// Dumps the counts collected since the last dump: `name` ran `iterations`
// timed calls.
void dump(const std::string& name, long long iterations);
// Whether bench counts (PARBENCH_CALLGRIND=1 under valgrind).
bool counting();

}  // namespace pb::instructions
