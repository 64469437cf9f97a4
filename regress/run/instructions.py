"""The instruction-count instrument (compare --instrument): how many
instructions the timed region of each CPU benchmark executes per call, on
both sides, beside the time.

Where the machine has no hardware counters (a VM, as the 2-core gate
machine), each binary runs under valgrind's callgrind with collection off;
bench (impl/core/instructions.hpp) collects only around its timed calls and
dumps one count per call of the benchmark function, named with the instance
and its iterations. Only the benchmarks bench lists on one core are counted
(one_thread), on that core: valgrind runs threads one at a time, so the
count of a benchmark of several threads depends on their interleaving
(measured on the 2-core machine: OpenMP GEMMs of 2 threads moved up to 90%
between two counts of one binary, 1-thread ones by 0.005%).

Each side runs twice, BASE NEW NEW BASE: the difference of a side's two
counts is the instrument's own A/A noise, and a change counts only beyond
max(INSTRUCTION_FLOOR, NOISE_MULTIPLE x that noise). Counts are kept in the
work folder (instructions/), so a resumed or re-analysed comparison reads
them instead of counting again.

It is a cross-check, never the gate on its own: instructions miss what
memory and caches do, so judge() only qualifies the time's verdicts.
"""
import json
import math
import os
import re
import shutil
import subprocess

from regress.run import launch

MODES = ("none", "auto", "instructions")
INSTRUCTION_FLOOR = 0.003   # 0.3%: below any change of code worth a word, above valgrind's jitter
NOISE_MULTIPLE = 3.0
ORDER = (("base", 1), ("new", 1), ("new", 2), ("base", 2))
_DESC = re.compile(r"^desc: Trigger: Client Request: parbench (\d+) (.+)$")
_TOTAL = re.compile(r"^(?:summary|totals): (\d+)")


class InstrumentError(Exception):
    """The instrument cannot run here, or bench failed under it: one line."""


def unavailable():
    """Why instructions cannot be counted on this machine, or None."""
    if shutil.which("valgrind") is None:
        return "no valgrind on PATH (apt-get install valgrind); this build counts instructions under valgrind only"
    return None


def supports(binary):
    """Whether `binary` is a bench that counts under callgrind: another
    Google Benchmark program would count nothing, after minutes under
    valgrind."""
    return launch.knows(binary, "PARBENCH_CALLGRIND")


def one_thread(binary, args):
    """The CPU benchmarks `binary args` lists when it may use one core: the
    benchmarks whose count is deterministic."""
    try:
        return launch.cpu_benchmarks(binary, args, [min(os.sched_getaffinity(0))])
    except launch.Refused as e:
        raise InstrumentError(str(e))


def _parse(dump):
    """(name, iterations, instructions) of one callgrind dump bench asked for, or None."""
    name = iters = total = None
    with open(dump, errors="replace") as f:
        for line in f:
            m = _DESC.match(line.rstrip("\n"))
            if m:
                iters, name = int(m.group(1)), m.group(2)
            m = _TOTAL.match(line)
            if m:
                total = int(m.group(1))
    if name is None or total is None:
        return None
    return name, iters, total


def read_dumps(folder, prefix):
    """{name: instructions per iteration} of the dumps `prefix`.* in folder:
    every call's count over every call's iterations."""
    sums = {}
    for f in sorted(os.listdir(folder)):
        if not f.startswith(prefix + "."):
            continue
        got = _parse(os.path.join(folder, f))
        if got is None:
            continue
        name, iters, total = got
        s = sums.setdefault(name, [0, 0])
        s[0] += total
        s[1] += iters
    return {k: v[0] / v[1] for k, v in sums.items() if v[1] > 0}


def _bench_args(args, names):
    """Bench's arguments under valgrind: the selection, one repetition, the
    shortest time (each call is timed at valgrind's pace)."""
    keep = [a for a in launch.strip_filter(args)
            if not a.startswith(("--benchmark_repetitions", "--benchmark_min_time", "--benchmark_out"))]
    return keep + ["--benchmark_filter=" + launch.exact_filter(names), "--benchmark_repetitions=1",
                   "--benchmark_min_time=0.01", "--no-energy"]


def count(binary, args, names, folder, tag, env=None, log=None):
    """Runs `binary` under callgrind on `names`: {name: instructions per
    iteration}, also written to folder/tag.json; read from there when it is
    already counted. InstrumentError when bench fails under valgrind."""
    done = os.path.join(folder, tag + ".json")
    if os.path.isfile(done):
        with open(done) as f:
            return json.load(f)
    work = os.path.join(folder, tag + ".dumps")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    e = dict(os.environ, **(env or {}))
    e.update(PARBENCH_CALLGRIND="1", OMP_WAIT_POLICY="passive", GOMP_SPINCOUNT="0")
    cmd = ["taskset", "-c", str(min(os.sched_getaffinity(0))), "valgrind", "--tool=callgrind", "--collect-atstart=no",
           "--callgrind-out-file=" + os.path.join(work, "cg"), binary] + _bench_args(args, names) + [
               "--benchmark_out=" + os.path.join(work, "out.json")]
    if log:
        log("compare: instructions: %s under callgrind (%d benchmarks) ..." % (tag, len(names)))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=e)
    if p.returncode not in (0, 1):
        last = [ln for ln in p.stdout.strip().splitlines() if not ln.startswith("==")][-1:] or ["(no output)"]
        raise InstrumentError("%s exited with status %d under valgrind: %s" % (binary, p.returncode, last[0]))
    got = read_dumps(work, "cg")
    if not got:
        raise InstrumentError("%s counted nothing under valgrind (a bench without PARBENCH_CALLGRIND support, "
                              "or no CPU benchmark ran)" % binary)
    with open(done + ".part", "w") as f:
        json.dump(got, f)
    os.replace(done + ".part", done)
    shutil.rmtree(work, ignore_errors=True)
    return got


def measure(bins, args, side_args, env, names, workdir, log=None):
    """Each side counted twice, BASE NEW NEW BASE: {"base": [counts, counts],
    "new": [...]}, kept in workdir/instructions."""
    folder = os.path.join(workdir, "instructions")
    os.makedirs(folder, exist_ok=True)
    out = {"base": [], "new": []}
    for side, k in ORDER:
        out[side].append(count(bins[side], args + side_args.get(side, []), names, folder, "%s-%d" % (side, k),
                               (env or {}).get(side), log))
    return out


def stored(workdir):
    """The counts a comparison kept in workdir, or None."""
    folder = os.path.join(workdir, "instructions")
    files = {(s, k): os.path.join(folder, "%s-%d.json" % (s, k)) for s, k in ORDER}
    if not all(os.path.isfile(f) for f in files.values()):
        return None
    out = {"base": [], "new": []}
    for side, k in ORDER:
        with open(files[(side, k)]) as f:
            out[side].append(json.load(f))
    return out


def changes(counts):
    """{name: {base, new, change, noise, threshold, moved}} of the benchmarks
    counted on every run: change of NEW's count against BASE's (the means of
    each side's two), noise the larger difference of a side's own two
    counts, moved whether the change is beyond the threshold."""
    names = set.intersection(*(set(c) for side in ("base", "new") for c in counts[side]))
    out = {}
    for n in sorted(names):
        b = [c[n] for c in counts["base"]]
        w = [c[n] for c in counts["new"]]
        if min(b + w) <= 0:
            continue
        noise = max(abs(math.log(b[0] / b[1])), abs(math.log(w[0] / w[1])))
        change = math.log(sum(w) / sum(b))
        thr = max(INSTRUCTION_FLOOR, NOISE_MULTIPLE * math.expm1(noise))
        out[n] = {"base": sum(b) / len(b), "new": sum(w) / len(w), "change": math.expm1(change),
                  "noise": math.expm1(noise), "threshold": thr, "moved": abs(math.expm1(change)) > thr}
    return out
