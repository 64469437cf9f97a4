"""Duet rounds (compare --run --duet): BASE and NEW run at the same time on
disjoint core sets, each process pinned to its set (affinity, and OpenMP's
places), the sets swapped every round. A neighbour's load, a frequency step
or thermal drift then hits both sides of a pair alike and cancels in its
ratio, where interleaved rounds (one side after the other) take it on one
side only. Each bench meets its partner at the start of every instance
and again once it is set up and verified (PARBENCH_DUET,
impl/core/duet.hpp), so the two time the same work side by side even where
one side's set-up takes longer.

A benchmark runs in duet when it is on the CPU and bench lists it with half
the cores (its threads fit in one set); the others, GPU and wider CPU
benchmarks, run in interleaved rounds as before. plan() decides once, from
the listings; run_round() runs one round's duet part; merge() joins a
round's duet and interleaved parts into the one JSON per side the analysis
reads.
"""
import json
import os
import threading
from dataclasses import dataclass, field

from regress.run import launch

MODES = ("auto", "on", "off")


class DuetError(Exception):
    """--duet=on where it cannot run: one line for the user."""


@dataclass(frozen=True)
class Plan:
    """Which benchmarks run in duet, and on which core sets."""
    mode: str                                   # --duet
    sets: tuple = ()                            # (cores of set 0, cores of set 1); () without duet
    names: frozenset = field(default_factory=frozenset)   # the benchmarks that run in duet
    why_not: str = ""                           # why no benchmark runs in duet, when none does

    def manifest(self):
        """What the work folder's manifest keeps: a resumed run must plan the same."""
        return {"mode": self.mode, "sets": [list(s) for s in self.sets], "names": sorted(self.names)}

    def split(self, names):
        """(duet names, interleaved names) of a round's selection."""
        names = set(names)
        return sorted(names & self.names), sorted(names - self.names)

    def sets_of(self, r):
        """{side: cores} of round r (0-based): the sets swap every round."""
        a, b = self.sets
        return {"base": a, "new": b} if r % 2 == 0 else {"base": b, "new": a}


def cores():
    """The cores this process may run on, in order."""
    return sorted(os.sched_getaffinity(0))


def plan(mode, bins, args, side_args, common, log):
    """The Plan of --duet=mode for the benchmarks `common` to both binaries
    (bins: {side: path}); DuetError for --duet=on where no benchmark can run
    in duet."""
    if mode == "off":
        return Plan(mode, why_not="--duet=off")
    have = cores()
    if len(have) < 2:
        why = "bench may use %d core here; a duet needs two disjoint core sets" % len(have)
        if mode == "on":
            raise DuetError("--duet=on: " + why)
        log("compare: no duet rounds: %s; interleaved rounds" % why)
        return Plan(mode, why_not=why)
    half = len(have) // 2
    sets = (tuple(have[:half]), tuple(have[half:2 * half]))
    old = [side.upper() for side in ("base", "new") if not launch.knows(bins[side], "PARBENCH_DUET")]
    if old:
        why = "%s cannot meet its partner (a bench from before duet rounds)" % " and ".join(old)
        if mode == "on":
            raise DuetError("--duet=on: " + why)
        log("compare: no duet rounds: %s; interleaved rounds" % why)
        return Plan(mode, why_not=why)
    try:
        fits = set(common)
        for side, cpus in (("base", sets[0]), ("new", sets[1])):
            fits &= launch.cpu_benchmarks(bins[side], args + side_args.get(side, []), list(cpus))
    except launch.Refused as e:
        why = "a binary cannot list its benchmarks by device (%s)" % e
        if mode == "on":
            raise DuetError("--duet=on: " + why)
        log("compare: no duet rounds: %s; interleaved rounds" % why)
        return Plan(mode, why_not=why)
    if not fits:
        why = "no selected CPU benchmark fits in %d of the %d cores" % (half, len(have))
        if mode == "on":
            raise DuetError("--duet=on: " + why)
        return Plan(mode, why_not=why)
    log("compare: duet rounds for %d of %d benchmarks, on cores %s and %s, swapped every round; the other %d "
        "interleaved" % (len(fits), len(common), _cores_text(sets[0]), _cores_text(sets[1]), len(common) - len(fits)))
    return Plan(mode, sets, frozenset(fits))


def _cores_text(cpus):
    return ",".join(str(c) for c in cpus)


def places(cpus):
    """OMP_PLACES for a core set: one place per core, threads bound close."""
    return {"OMP_PLACES": ",".join("{%d}" % c for c in cpus), "OMP_PROC_BIND": "close"}


def run_round(p, r, bins, args, side_args, env, outs, logs, sync):
    """Runs round r's duet part: both sides at once, each on its set, meeting
    at each instance through the file `sync`. outs/logs: {side: path}.
    Returns {side: exit status}."""
    if os.path.exists(sync):
        os.remove(sync)  # a fresh meeting file: counts from an earlier try would release a side early
    sets = p.sets_of(r)
    status = {}
    errors = []

    def one(side, index):
        e = dict(env.get(side) or {})
        e.update(places(sets[side]))
        e["PARBENCH_DUET"] = "%s:%d" % (sync, index)
        try:
            status[side] = launch.run(bins[side], args + side_args.get(side, []), outs[side], logs[side], env=e,
                                      cpus=list(sets[side]))[0]
        except BaseException as ex:  # re-raised in the caller's thread
            errors.append(ex)

    threads = [threading.Thread(target=one, args=(side, i)) for i, side in enumerate(("base", "new"))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:
        launch.stop_all()  # Ctrl-C, SIGTERM: no bench of the pair left running
        raise
    if errors:
        raise errors[0]
    return status


def merge(parts, out):
    """Joins the JSON files `parts` (a round's interleaved part first, then
    its duet part; those present) into `out`: the first one's context, every
    part's entries."""
    docs = []
    for path in parts:
        with open(path) as f:
            docs.append(json.load(f))
    merged = dict(docs[0])
    merged["benchmarks"] = [e for d in docs for e in d.get("benchmarks", [])]
    with open(out + ".part", "w") as f:
        json.dump(merged, f)
    os.replace(out + ".part", out)
