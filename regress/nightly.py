"""The nightly job: build, test, run the suite crash-safely, check the
comparator on itself (A/A), keep the run in the history, find change points,
compare with the accepted baseline, write the report.

  ci/nightly [--history DIR] [--out DIR] [--suite nightly|smoke] [--filter REGEX]
             [--skip-build] [--skip-tests]
  ci/nightly --accept-baseline RUN.json [--history DIR] [--reason TEXT]

Steps (each logged with its time; a failed step is reported and the job goes
on where the later steps can, so one night gives every result it can):

 1. build    cmake Release (CUDA when nvcc is there) into build/nightly
 2. tests    ctest (GPU tests must not skip on a GPU host: PARBENCH_REQUIRE_GPU)
 3. suite    ci/run-suite: the suite's instances, one process per variant,
             a time limit each, repetitions (nightly: 9) -> OUT/suite.json;
             the nightly suite leaves out what select_exclusions names (the
             roles come from one smoke instance of each variant, run first)
 4. A/A      ci/compare --run with the same binary on both sides, on a small
             subset of the suite (aa_subset): any SLOWER/FASTER there is a
             false alarm; its counts go to the false-alarm ledger
             HISTORY/aa-ledger.jsonl (shown on the trends page)
 5. ingest   ci/history ingest OUT/suite.json
 6. changes  ci/trends: change points of every series of this machine, the
             trend charts and the page of what changed -> OUT/report/trends/;
             a regression measured at or before the accepted baseline's run
             was accepted with it and does not fail the night
 7. bisect   ci/bisect for each confirmed change whose commit range holds more
             than one commit (bisect_changes), within --bisect-seconds; the
             reports go to HISTORY/bisect/RANGE/, the trends page names the
             culprits; a stopped bisection resumes the next call
 8. baseline ci/compare BASELINE OUT/suite.json --noise OUT/aa.json, where
             BASELINE is HISTORY/baselines/MACHINE.json.gz, the run accepted on
             purpose (--accept-baseline); the first night's run becomes it
 9. report   plots/plot OUT/suite.json -> OUT/report/

Exit status: the comparator's: 0 nothing regressed; 1 a confirmed regression
(a confirmed change point, SLOWER against the baseline) or an error entry; 2 a
step could not run (build, bad input); 3 the baseline is not comparable (a
new machine or toolkit: accept a new baseline); 4 stopped by --max-seconds
(the same command with --resume goes on: a night may run in several calls).

Accepting a baseline (after an intended change, or a new driver):
  ci/nightly --accept-baseline OUT/suite.json --reason "faster sort merged (PR 42)"
copies the run into HISTORY/baselines/ under its machine id and appends the
reason, date and revision to HISTORY/baselines/log.jsonl.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

from regress.store import alerts
from regress.store import history as historymod
from regress.run import launch
from regress import cli
from regress.load import results

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOOL = "nightly"

# What each suite runs (bench arguments).
# nightly: the default profile's instances with 9 repetitions each (what the
#   comparator needs to decide) and a 0.01 s minimum time per repetition,
#   sized to finish well inside 20 minutes on a GPU host (docs/tools/nightly.md
#   has the measured times). It leaves out what a night cannot afford or does
#   not gate on, read from bench's roles and run names, never from variant
#   names (select_exclusions): the serial references the others are checked
#   against (role baseline: some take seconds a run on the large problems),
#   instances with a ranks argument (they need mpirun), and all but the middle
#   of tuning sweeps (CPU threads: all cores, --threads=cores; a wide block
#   sweep: its middle size).
# smoke: seconds, for trying the job; it runs every instance.
# "args" choose the instances and go to the A/A rounds too; "timing" is the
# suite's alone.
SUITES = {
    "nightly": {"profile": [], "args": ["--threads=cores"],
                "timing": ["--benchmark_repetitions=9", "--benchmark_min_time=0.01"], "select": True},
    "smoke": {"profile": ["--profile=smoke"], "args": [], "timing": ["--benchmark_repetitions=3"], "select": False},
}
# A block sweep of three or more sizes spanning this factor or more (64 to
# 1024 threads) explores tuning; the night guards its middle size. Narrower
# sweeps (tile shapes, 128 to 512) are the working range and run whole.
WIDE_SWEEP = 16
# The A/A subset (aa_subset), run with the suite's profile and arguments so
# that its names are the suite's and its run-to-run noise serves the baseline
# comparison (--noise): the suite's most stable fast instances on this
# machine's device.
# The A/A rounds are sequential (compare --run): most of its instances are
# SAME after 8 rounds; the cap bounds the night for the others.
AA_MAX_ROUNDS = 12
AA_SIZE = 6            # instances: a noise figure for several variants, few enough for 8+ quick rounds
AA_MAX_SECONDS = 0.01  # per iteration at most: a round of the subset takes about a second
AA_ARGS = ["--benchmark_min_time=0.02"]
# The energy step meters the A/A subset again with windows long enough for
# a repeatable figure: NVML's counter steps every 100 ms, and a GPU at its
# power cap swings 670-780 W across 0.6 s windows, so its energy per call
# varies 1-3% from one such window to the next and within 1% over 2 s ones
# (docs/perf/energy.md). Its history is its own, beside the suite's, since
# its timing is not the suite's.
ENERGY_SECONDS = 2.0   # a repetition's window, --energy-seconds
ENERGY_REPETITIONS = 3
ENERGY_HISTORY = "energy"   # under --history
ENERGY_METRIC = "joules_per_call"
# The role survey runs one smoke instance of each variant, once: seconds.
SURVEY_ARGS = ["--profile=smoke", "--benchmark_min_time=0.001", "--benchmark_repetitions=1", "--no-progress"]
SURVEY_TIMEOUT = 300.0  # seconds: a hung instance must not hold the night


def log(line):
    print("nightly: " + line, file=sys.stderr, flush=True)


class Step:
    """One step of the night: logs and records its time and how it ended,
    "done", "stopped" (--max-seconds, a signal) or "skipped: why"."""

    def __init__(self, name, summary):
        self.name, self.summary = name, summary
        self.status = "done"

    def __enter__(self):
        self.t0 = time.monotonic()
        log("%s ..." % self.name)
        return self

    def __exit__(self, exc_type, *exc):
        dt = time.monotonic() - self.t0
        if exc_type is not None:
            self.status = "stopped"
        self.summary.append({"step": self.name, "seconds": round(dt, 1), "status": self.status})
        log("%s %s in %.0f s" % (self.name, self.status, dt))
        return False


def skipped(name, summary, why):
    """A step the night did not run, in the summary with its reason."""
    summary.append({"step": name, "seconds": 0.0, "status": "skipped: " + why})
    log("%s skipped: %s" % (name, why))


def repetitions_needed(instances, alpha=0.05):
    """The repetitions per side that let a two-file comparison of this many
    instances decide at all: the exact Mann-Whitney test's smallest p must
    pass Holm's first step (alpha / instances)."""
    from regress.stats import ranks as stats
    return stats.sizes_for(alpha / max(1, instances), "mw") or 64


def with_repetitions(timing, needed):
    """The suite's timing arguments with at least `needed` repetitions."""
    out, have = [], None
    for a in timing:
        if a.startswith("--benchmark_repetitions="):
            have = int(a.split("=", 1)[1])
            a = "--benchmark_repetitions=%d" % max(have, needed)
        out.append(a)
    if have is None:
        out.append("--benchmark_repetitions=%d" % needed)
    return out, have


def not_same_lines(doc, limit=40):
    """One line per verdict of a comparison's JSON that is not SAME (the
    most urgent first, as the comparator orders them)."""
    rows = [r for r in doc.get("benchmarks", []) if r.get("verdict") != "SAME"]
    out = []
    for r in rows[:limit]:
        change = r.get("change")
        out.append("%-13s %9s  %s%s" % (r["verdict"], "-" if change is None else "%+.2f%%" % (100 * change),
                                        r["name"], "  (%s)" % r["reason"] if r.get("reason") else ""))
    if len(rows) > limit:
        out.append("... and %d more" % (len(rows) - limit))
    return out


TIMED_OUT = 124   # run()'s status for a step that --max-seconds stopped


def run(cmd, logfile=None, env=None, timeout=None):
    """Runs cmd; its output to logfile (or through). Returns the exit status,
    TIMED_OUT when it ran past `timeout` seconds (it is stopped as below).
    When the job is stopped (SIGTERM, Ctrl-C) the step gets SIGTERM and time
    to stop its own children (the suite runner kills its bench) before the
    job exits."""
    f = open(logfile, "w") if logfile else None
    try:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT if f else None, env=env)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(p)
            return TIMED_OUT
        except BaseException:
            _stop(p)
            raise
    finally:
        if f:
            f.close()


def _stop(p):
    """SIGTERM, 30 s to stop its own children, then SIGKILL."""
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def tool(module):
    """The command line of one of the package's tools, with this Python (the
    nightly runs through ci/python, which exports the package's PYTHONPATH)."""
    return [sys.executable, "-m", module]


def gpu_present():
    return shutil.which("nvidia-smi") is not None and \
        subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def energy_night(bench, bench_args, names, out, hist, report, timeout, seconds=ENERGY_SECONDS):
    """The night's energy series: the instances `names` metered over
    windows of `seconds` into OUT/energy.json, ingested into HIST/energy and its
    trends (ci/trends --metric joules_per_call) written to REPORT/energy and
    OUT/energy-changes.json. Returns the step's status; an energy change is
    reported there, never failing the night (the gate follows the time)."""
    if not names:
        return "done: nothing to meter (no A/A subset)"
    path = os.path.join(out, "energy.json")
    windows = ["--benchmark_min_time=%g" % seconds, "--benchmark_repetitions=%d" % ENERGY_REPETITIONS]
    rc = run([bench] + bench_args + windows + ["--benchmark_filter=" + launch.exact_filter(names),
                                               "--benchmark_out=" + path, "--benchmark_out_format=json",
                                               "--no-progress"],
             os.path.join(out, "energy.log"), timeout=timeout)
    if rc == TIMED_OUT:
        return "stopped"
    try:
        entries = results.load(path).entries
    except results.LoadError as e:
        log("energy: the metered run did not finish (exit %d): %s" % (rc, e))
        return "done: no figures (the metered run failed: %s)" % os.path.join(out, "energy.log")
    metered = [e for e in entries if not e.aggregate and e.counter(ENERGY_METRIC) is not None]
    if not metered:
        why = next((e.energy for e in entries if not e.aggregate and e.energy), "no entry says why")
        log("energy: no figures: %s" % why)
        return "done: no figures (%s)" % why
    store = os.path.join(hist, ENERGY_HISTORY)
    if run(tool("regress.history") + ["--history", store, "ingest", path], os.path.join(out, "energy-ingest.log")):
        return "done: %d metered, not stored (%s)" % (len(metered), os.path.join(out, "energy-ingest.log"))
    changes = os.path.join(out, "energy-changes.json")
    rc = run(tool("regress.trends") + ["--history", store, "--metric", ENERGY_METRIC, "--out",
                                       os.path.join(report, "energy"), "--json", changes],
             os.path.join(out, "energy-trends.log"), timeout=timeout)
    if rc == TIMED_OUT:
        return "stopped"
    if rc not in (0, 1) or not os.path.exists(changes):
        return "done: %d metered, no trends (%s)" % (len(metered), os.path.join(out, "energy-trends.log"))
    with open(changes) as f:
        doc = json.load(f)
    line = "%d entries metered; energy series: %s" % (len(metered), doc["summary_line"])
    log("energy: " + line)
    return "done: " + line


def baseline_path(hist, machine):
    return os.path.join(hist, "baselines", machine + ".json.gz")


def _variant(name):
    """Family/Variant of a run name."""
    return "/".join(name.split("/")[:2])


def survey_roles(bench, workdir, variants=None):
    """{Family/Variant: role} as bench reports it, from one smoke instance of
    each variant (of `variants` when given) run once: seconds. A variant
    whose instance wrote no entry has no role here, and is kept in the
    suite."""
    first = {}
    for n in launch.list_tests(bench, SURVEY_ARGS):
        if variants is None or _variant(n) in variants:
            first.setdefault(_variant(n), n)
    if not first:
        return {}
    out = os.path.join(workdir, "roles.json")
    launch.run(bench, SURVEY_ARGS + ["--benchmark_filter=" + launch.exact_filter(sorted(first.values()))], out,
               os.path.join(workdir, "roles.log"), timeout=SURVEY_TIMEOUT)
    try:
        run_ = results.load(out)
    except results.LoadError:
        return {}
    return {"%s/%s" % (e.run.family, e.run.variant): e.role for e in run_.entries if e.role}


def select_exclusions(names, roles):
    """A Python regular expression of the instances (of `names`, what the
    suite's arguments select) that a night leaves out: variants whose role is
    baseline, instances with a ranks argument (they need a launcher, mpirun), and
    every size but the middle one of a wide block sweep (three or more
    sizes, the largest at least WIDE_SWEEP times the smallest). None when
    nothing is left out."""
    parts = sorted("^%s/" % re.escape(v) for v, role in roles.items() if role == "baseline")
    blocks = {}
    for n in names:
        try:
            rn = results.parse_run_name(n)
        except ValueError:
            continue
        if "ranks" in rn.args:
            parts.append("/ranks:")
        if "block" in rn.args:
            blocks.setdefault(_variant(n), set()).add(rn.args["block"])
    for v, sizes in sorted(blocks.items()):
        numeric = sorted(int(b) for b in sizes if b.isdigit())
        if len(numeric) == len(sizes) >= 3 and numeric[-1] >= WIDE_SWEEP * numeric[0]:
            middle = numeric[len(numeric) // 2]
            drop = [str(b) for b in numeric if b != middle]
            parts.append("^%s/.*/block:(?:%s)(?:/|$)" % (re.escape(v), "|".join(drop)))
    parts = list(dict.fromkeys(parts))
    return "|".join(parts) if parts else None


def aa_subset(run_, device, size=AA_SIZE):
    """The A/A instances: passed, role variant, on `device`, at most
    AA_MAX_SECONDS per iteration, the `size` with the smallest spread of the
    suite's repetitions (coefficient of variation), one per variant first."""
    times = {}
    for e in run_.entries:
        if e.aggregate or e.disposition != "passed" or e.role != "variant" or e.device != device:
            continue
        t = e.seconds()
        if t is not None and t > 0:
            times.setdefault(e.run_name, []).append(t)
    spread = []
    for name, ts in times.items():
        if len(ts) < 2 or statistics.median(ts) > AA_MAX_SECONDS:
            continue
        spread.append((statistics.pstdev(ts) / statistics.mean(ts), name))
    spread.sort()
    chosen, seen = [], set()
    for cv, name in spread:            # the most stable of each variant first
        if _variant(name) not in seen:
            seen.add(_variant(name))
            chosen.append(name)
    for cv, name in spread:            # then the most stable of the rest
        if name not in chosen:
            chosen.append(name)
    return sorted(chosen[:size])


def aa_choice(run_, gpu):
    """The A/A subset on this host's device (the GPU's where there is one);
    a suite that ran none there (a CPU-only filter on a GPU host) checks the
    comparator on the other device's instances instead."""
    first, other = ("gpu", "cpu") if gpu else ("cpu", "gpu")
    return aa_subset(run_, first) or aa_subset(run_, other)


BISECT_SECONDS = 1200.0   # the night's budget for bisecting its confirmed changes (--bisect-seconds)


def bisect_dir(hist, before, after):
    """Where the bisection of one commit range lives in the history."""
    return os.path.join(hist, "bisect", "%s-%s" % (before[:12], after[:12]))


def bisect_changes(changes_path, hist, repo, bench_args, budget, log=log, build=None, bench=None):
    """ci/bisect for each confirmed, not accepted change of changes.json
    (ci/trends --json) whose commit range holds more than one commit, one
    bisection per range with the benchmarks that changed in it, within
    `budget` seconds in all. A stopped bisection is resumed by the next call
    (its state stays in HIST/bisect/RANGE/state). Returns
    [{"range": [before, after], "benchmarks": [...], "exit": rc or None, "why": ...}]."""
    with open(changes_path) as f:
        doc = json.load(f)
    ranges = {}
    for c in doc.get("changes", []):
        # A change already triaged (its alert invalid, won't fix, fixed...) is not bisected.
        state = (c.get("alert") or {}).get("state")
        if c.get("status") != "confirmed" or c.get("accepted") or state not in (None,) + alerts.OPEN:
            continue
        a, b = c.get("revision_before"), c.get("revision_after")
        if a and b and a != b:
            ranges.setdefault((a, b), []).append(c["name"])
    done, t0 = [], time.monotonic()
    for (a, b), names in sorted(ranges.items()):
        item = {"range": [a, b], "benchmarks": sorted(names), "exit": None}
        done.append(item)
        from regress import bisect
        counted = bisect.git(repo, "rev-list", "--count", "--first-parent", "%s..%s" % (a, b), check=False)
        if counted.returncode != 0:
            item["why"] = "not commits of %s (a build of a dirty tree, or another repository)" % repo
            log("bisect %s..%s: skipped, %s" % (a, b, item["why"]))
            continue
        if int(counted.stdout.strip() or 0) <= 1:
            item["why"] = "one commit: %s is the culprit" % b
            continue
        left = budget - (time.monotonic() - t0)
        if left <= 60:
            item["why"] = "no time left this night (--bisect-seconds); the next night goes on"
            continue
        where = bisect_dir(hist, a, b)
        cmd = tool("regress.bisect") + [a, b, "--repo", repo, "--state", os.path.join(where, "state"),
                                        "--cache", os.path.join(hist, "bisect-cache"), "--out", where,
                                        "--max-seconds", "%.0f" % left]
        if os.path.isfile(os.path.join(where, "state", "state.json")):
            cmd.append("--resume")
        if build:
            cmd += ["--build", build]
        if bench:
            cmd += ["--bench", bench]
        cmd += ["--"] + launch.strip_filter(bench_args) + ["--benchmark_filter=" + launch.exact_filter(sorted(names))]
        os.makedirs(where, exist_ok=True)
        item["exit"] = run(cmd, os.path.join(where, "bisect.log"))
        if item["exit"] == 4:
            item["why"] = "stopped by the time budget; the next call resumes it"
        log("bisect %s..%s (%d benchmarks): exit %s, %s" % (a[:12], b[:12], len(names), item["exit"],
                                                            os.path.join(where, "report.md")))
    return done


def accept_baseline(path, hist, reason):
    try:
        run_ = results.load_strict(path)
    except results.LoadError as e:
        log(str(e))
        return 2
    machine = historymod.machine_of(run_.context)
    dest = baseline_path(hist, machine)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\x1f\x8b":
        data = gzip.compress(data, mtime=0)
    with open(dest + ".part", "wb") as f:
        f.write(data)
    os.replace(dest + ".part", dest)
    with open(os.path.join(hist, "baselines", "log.jsonl"), "a") as f:
        f.write(json.dumps({"machine": machine, "revision": run_.context.get("parbench_git_revision"),
                            "date": run_.context.get("date"), "source": path, "reason": reason},
                           sort_keys=True) + "\n")
    log("accepted %s as the baseline of machine %s (%s)" % (path, machine, reason))
    return 0


def main(argv=None):
    p = cli.ArgumentParser(TOOL, "ci/nightly", description=__doc__.split("\n\n")[1],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--history", default="history", help="the history directory (default %(default)s): the "
                   "runs, and the nightly's own files (baselines, the A/A ledger, bisections)")
    p.add_argument("--store", metavar="URL", help="keep the runs in this history instead (a PostgreSQL URL "
                   "that several runners share); the nightly's own files stay in --history")
    p.add_argument("--out", default="nightly-out", help="this night's files (default %(default)s)")
    p.add_argument("--suite", choices=sorted(SUITES), default="nightly")
    p.add_argument("--filter", metavar="REGEX", help="only the instances bench's --benchmark_filter=REGEX selects "
                   "(a night on a few groups)")
    p.add_argument("--build-dir", default="build/nightly")
    p.add_argument("--skip-build", action="store_true", help="use the bench already in --build-dir")
    p.add_argument("--skip-tests", action="store_true")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds one suite process may run")
    p.add_argument("--gpus", type=int, default=1, metavar="N", help="spread the suite's one-GPU instances over "
                   "GPUs 0 .. N-1 (ci/run-suite --gpus; default 1)")
    p.add_argument("--lane-cores", type=int, metavar="K", help="K cores a GPU lane, the CPU instances at the same "
                   "time on the rest (ci/run-suite --lane-cores); keep it the same night after night, since the "
                   "CPU thread axes end at the cores left")
    p.add_argument("--resume", action="store_true", help="go on with a night an earlier call left in --out "
                   "(tests already run are not run again; the suite and the A/A rounds resume)")
    p.add_argument("--max-seconds", type=float, help="stop starting suite processes and A/A rounds after this "
                   "many seconds: exit 4, and the same command with --resume goes on")
    p.add_argument("--suite-only", action="store_true", help="stop after the suite (OUT/suite.json; its time in "
                   "OUT/nightly.json): to time the suite, e.g. --gpus 4 against --gpus 1")
    p.add_argument("--energy-seconds", type=float, default=ENERGY_SECONDS, metavar="S",
                   help="each repetition's window in the energy step (default %(default)s: a GPU at its power "
                   "cap agrees within 1%% from one 2 s window to the next)")
    p.add_argument("--skip-bisect", action="store_true", help="do not bisect tonight's confirmed changes")
    p.add_argument("--bisect-seconds", type=float, default=BISECT_SECONDS,
                   help="the night's time for ci/bisect on confirmed changes (default %(default)s)")
    p.add_argument("--accept-baseline", metavar="RUN.json", help="make this run the machine's baseline and stop")
    p.add_argument("--reason", default="accepted by hand", help="why (kept in the baselines' log)")
    args = p.parse_args(argv)
    if not args.energy_seconds > 0:
        p.error("--energy-seconds must be a positive number of seconds")
    if args.accept_baseline:
        return accept_baseline(args.accept_baseline, args.history, args.reason)

    os.makedirs(args.out, exist_ok=True)
    summary, codes = [], []
    t0 = time.time()
    code = None  # stays None when a signal stops the call
    try:
        code = night(args, summary, codes)
    finally:
        record_call(args, summary, t0, code)
    return code


def record_call(args, summary, t0, code):
    """Keeps this call's steps in OUT/nightly-calls.jsonl (a night run in
    several calls has one line per call, stopped ones included) and writes
    OUT/nightly.json: this call's steps, every call, and each step's seconds
    summed over the night's calls (what the night cost, rebuilds on a fresh
    machine and A/A rounds cut short included)."""
    ledger = os.path.join(args.out, "nightly-calls.jsonl")
    with open(ledger, "a") as f:
        f.write(json.dumps({"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
                            "seconds": round(time.time() - t0, 1), "steps": summary, "exit": code},
                           sort_keys=True) + "\n")
    calls = []
    with open(ledger) as f:
        for line in f:
            try:
                calls.append(json.loads(line))
            except ValueError:
                pass  # a line cut by a killed call
    totals = {}
    for c in calls:
        for s in c.get("steps", []):
            totals[s["step"]] = round(totals.get(s["step"], 0.0) + s["seconds"], 1)
    with open(os.path.join(args.out, "nightly.json"), "w") as f:
        json.dump({"parbench_nightly": 1, "suite": args.suite, "steps": summary, "exit": code, "calls": calls,
                   "night_step_seconds": totals, "night_seconds": round(sum(totals.values()), 1)},
                  f, indent=1, sort_keys=True)
    if len(calls) > 1:
        log("the night so far, %d calls: %s; %.0f s" % (
            len(calls), ", ".join("%s %.0f s" % kv for kv in totals.items()), sum(totals.values())))


def night(args, summary, codes):
    bench = os.path.join(args.build_dir, "bench")
    gpu = gpu_present()
    env = dict(os.environ)
    if gpu:
        env["PARBENCH_REQUIRE_GPU"] = "1"

    if not args.skip_build:
        with Step("build", summary):
            cuda = "ON" if os.path.exists("/usr/local/cuda/bin/nvcc") or shutil.which("nvcc") else "OFF"
            rc = run(["cmake", "-S", ROOT, "-B", args.build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                      "-DPARBENCH_CUDA=" + cuda], os.path.join(args.out, "configure.log"))
            if rc == 0:
                rc = run(["cmake", "--build", args.build_dir, "-j", str(os.cpu_count() or 2)],
                         os.path.join(args.out, "build.log"))
            if rc != 0:
                log("the build failed: %s" % os.path.join(args.out, "build.log"))
                return 2
    if not os.access(bench, os.X_OK):
        log("%s is missing: build first (or drop --skip-build)" % bench)
        return 2
    started = time.monotonic()

    def left():
        return None if args.max_seconds is None else max(0.0, args.max_seconds - (time.monotonic() - started))

    later = ["suite", "A/A", "ingest", "changes", "bisect", "baseline", "energy", "report"]

    def finish(code, after=None, why=None):
        """The night's last line: each step, done, stopped or skipped (and why)."""
        if after is not None:
            for rest in later[later.index(after) + 1:]:
                skipped(rest, summary, why or "the night was stopped in %s (--max-seconds); --resume runs it" % after)
        total = sum(s["seconds"] for s in summary)
        log("steps: %s; %.0f s: exit %d" % (", ".join(
            "%s %s%s" % (s["step"], s.get("status", "done"), "" if s.get("status", "").startswith("skipped")
                         else " %.0f s" % s["seconds"]) for s in summary), total, code))
        return code

    def out_of_time(step):
        """Every step respects --max-seconds: with none left, this step and
        the later ones are skipped, and the night goes on with --resume."""
        if left() is None or left() > 0:
            return False
        for name in later[later.index(step):]:
            skipped(name, summary, "no time left (--max-seconds); the same command with --resume runs it")
        log("stopped before %s (--max-seconds): run the same command with --resume to go on" % step)
        return True

    def stopped(step, name):
        step.status = "stopped"
        log("stopped in %s (--max-seconds): run the same command with --resume to go on" % name)

    tests_log = os.path.join(args.out, "tests.log")
    if not args.skip_tests and args.resume and os.path.exists(tests_log) and \
            "tests passed" in open(tests_log).read():
        log("tests: already run in this night (%s)" % tests_log)
    elif not args.skip_tests:
        with Step("tests", summary):
            # Not the test that runs this job itself (tests/test_nightly.py).
            jobs = str(max(2, (os.cpu_count() or 2) // 2))
            rc = run(["ctest", "--test-dir", args.build_dir, "-j", jobs, "--output-on-failure", "-E", "^nightly$"],
                     os.path.join(args.out, "tests.log"), env)
            if rc != 0:
                log("tests failed: %s (the job goes on)" % os.path.join(args.out, "tests.log"))
                codes.append(1)

    suite = os.path.join(args.out, "suite.json")
    spec = SUITES[args.suite]
    chosen = spec["profile"] + spec["args"] + (["--benchmark_filter=" + args.filter] if args.filter else [])
    with Step("suite", summary) as step:
        cmd = tool("regress.run_suite") + ["--bench", bench, "--out", suite, "--timeout", str(args.timeout),
                                           "--split", "variant", "--gpus", str(args.gpus)] + \
            (["--lane-cores", str(args.lane_cores)] if args.lane_cores is not None else [])
        try:
            names = launch.list_tests(bench, chosen)
        except launch.Refused as e:
            log(str(e))
            return 2
        # A suite whose repetitions cannot decide the baseline comparison
        # would gate on nothing: its repetitions are raised to what the
        # comparison of this many instances needs.
        timing, had = with_repetitions(spec["timing"], repetitions_needed(len(names)))
        if timing != spec["timing"]:
            log("%d repetitions cannot decide a two-file comparison of %d instances: %d instead"
                % (had or 1, len(names), repetitions_needed(len(names))))
        if spec["select"]:
            try:
                roles = survey_roles(bench, args.out, {_variant(n) for n in names})
                if names and not roles:
                    log("the role survey read no roles (%s): the baselines run too"
                        % os.path.join(args.out, "roles.log"))
                exclude = select_exclusions(names, roles)
            except launch.Refused as e:
                log(str(e))
                return 2
            if exclude:
                cmd += ["--exclude", exclude]
        if args.resume:
            cmd.append("--resume")
        if left() is not None:
            cmd += ["--max-seconds", str(left())]
        rc = run(cmd + ["--"] + chosen + timing + ["--no-progress"])
        if rc == 4:
            stopped(step, "suite")
        elif rc == 2 or not os.path.exists(suite):
            log("the suite did not run")
        else:
            codes.append(rc)
    if rc == 4:
        return finish(4, after="suite")
    if rc == 2 or not os.path.exists(suite):
        return finish(2, after="suite")
    if args.suite_only:
        return finish(max(codes, default=0), after="suite", why="--suite-only")
    # The night's context, machine and A/A subset, read once (the suite is tens of MB).
    suite_run = results.load(suite)
    context = suite_run.context
    aa_names = aa_choice(suite_run, gpu)
    del suite_run
    machine = historymod.machine_of(context)
    base = baseline_path(args.history, machine)

    aa = os.path.join(args.out, "aa.json")
    with Step("A/A", summary) as step:
        twin = os.path.join(args.out, "bench-twin")
        if not os.path.exists(twin):
            shutil.copy2(bench, twin)
        limit = [] if left() is None else ["--max-seconds", str(left())]
        if aa_names:
            bench_args = (spec["profile"] + spec["args"] + AA_ARGS
                          + ["--benchmark_filter=" + launch.exact_filter(aa_names)])
            rc = run(tool("regress.compare") + ["--run", bench, twin, "--workdir", os.path.join(args.out, "aa-rounds"),
                                                "--max-rounds", str(AA_MAX_ROUNDS), "--json", aa] + limit
                     + ["--"] + bench_args,
                     os.path.join(args.out, "aa.txt"))
        else:
            rc = 2
            with open(os.path.join(args.out, "aa.txt"), "w") as f:
                f.write("no passed instance on this device fast and repeated enough for the A/A rounds\n")
        if rc == 4:
            stopped(step, "A/A")
        elif os.path.exists(aa):
            with open(aa) as f:
                doc = json.load(f)
            entry = {"date": context.get("date"), "revision": context.get("parbench_git_revision"),
                     "machine": machine,
                     "compared": len(doc["benchmarks"]), "counts": doc["summary"],
                     "false_alarms": doc["summary"].get("SLOWER", 0) + doc["summary"].get("FASTER", 0)}
            os.makedirs(args.history, exist_ok=True)
            with open(os.path.join(args.history, "aa-ledger.jsonl"), "a") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
            log("A/A: %s" % doc["summary_line"])
            for line in not_same_lines(doc):
                log("A/A: " + line)
        else:
            log("the A/A comparison did not run (exit %d): %s" % (rc, os.path.join(args.out, "aa.txt")))
            codes.append(2)
    if rc == 4:
        return finish(4, after="A/A")

    with Step("ingest", summary):
        rc = run(tool("regress.history") + ["--history", args.store or args.history, "ingest", suite])
        if rc != 0:
            codes.append(2)

    report = os.path.join(args.out, "report")
    if out_of_time("changes"):
        return finish(4)
    with Step("changes", summary) as step:
        # Regressions measured at or before the accepted baseline were accepted
        # with it: listed, not failing the night.
        accepted = []
        if os.path.exists(base):
            try:
                date = results.load(base).context.get("date")
            except results.LoadError as e:
                log("the baseline cannot be read (%s): every confirmed regression fails" % e)
                date = None
            if date:
                accepted = ["--accepted-through", str(date)]
        rc = run(tool("regress.trends") + ["--history", args.store or args.history, "--files", args.history,
                                           "--machine", machine,
                                           "--out", os.path.join(report, "trends"),
                                           "--json", os.path.join(args.out, "changes.json")] + accepted,
                 timeout=left())
        if rc == TIMED_OUT:
            stopped(step, "changes")
    if rc == TIMED_OUT:
        return finish(4, after="changes")
    codes.append(rc)

    if args.skip_bisect:
        skipped("bisect", summary, "--skip-bisect")
    elif not os.path.exists(os.path.join(args.out, "changes.json")):
        skipped("bisect", summary, "no changes.json (the changes step failed)")
    elif out_of_time("bisect"):
        return finish(4)
    else:
        with Step("bisect", summary):
            budget = args.bisect_seconds if left() is None else min(args.bisect_seconds, left())
            done = bisect_changes(os.path.join(args.out, "changes.json"), args.history, ROOT,
                                  spec["profile"] + spec["args"], budget)
            with open(os.path.join(args.out, "bisect.json"), "w") as f:
                json.dump(done, f, indent=1, sort_keys=True)
            if any(d["exit"] == 0 for d in done):
                # The trends page names tonight's culprits with their changes.
                run(tool("regress.trends") + ["--history", args.store or args.history, "--files", args.history,
                                              "--machine", machine,
                                              "--out", os.path.join(report, "trends")] + accepted,
                    os.path.join(args.out, "trends-after-bisect.log"), timeout=left())

    if out_of_time("baseline"):
        return finish(4)
    rc = 0
    with Step("baseline", summary) as step:
        if not os.path.exists(base):
            accept_baseline(suite, args.history, "the first night on this machine")
            step.status = "done (tonight's run is the machine's first baseline)"
        else:
            verdicts = os.path.join(args.out, "baseline.json")
            cmd = tool("regress.compare") + [base, suite, "--json", verdicts,
                                             "--markdown", os.path.join(args.out, "baseline.md"),
                                             "--plot", os.path.join(args.out, "baseline.png")]
            if os.path.exists(aa):
                cmd += ["--noise", aa]
            # This machine's own run-to-run noise for every benchmark that
            # the A/A instances do not cover (the prior where its series is short).
            cmd += ["--history", args.store or args.history]
            rc = run(cmd, os.path.join(args.out, "baseline.txt"), timeout=left())
            if rc == TIMED_OUT:
                stopped(step, "baseline")
            elif os.path.exists(verdicts):
                with open(verdicts) as f:
                    doc = json.load(f)
                # The gate's verdicts, where a user reads them first: every one that is not SAME.
                log("baseline: %s" % doc["summary_line"])
                for line in not_same_lines(doc):
                    log("baseline: " + line)
            else:
                log("the baseline comparison did not run (exit %d): %s"
                    % (rc, os.path.join(args.out, "baseline.txt")))
    if rc == TIMED_OUT:
        return finish(4, after="baseline")
    codes.append(rc)

    if out_of_time("energy"):
        return finish(4)
    with Step("energy", summary) as step:
        step.status = energy_night(bench, spec["profile"] + spec["args"], aa_names, args.out, args.history, report,
                                   left(), args.energy_seconds)
    if step.status == "stopped":
        return finish(4, after="energy")

    if out_of_time("report"):
        return finish(4)
    with Step("report", summary) as step:
        rc = run([os.path.join(ROOT, "plots", "plot"), suite, "--out", report],
                 os.path.join(args.out, "report.log"), timeout=left())
        if rc == TIMED_OUT:
            stopped(step, "report")
        elif rc != 0:
            log("the report failed (exit %d)" % rc)
    if rc == TIMED_OUT:
        return finish(4, after="report")

    code = 3 if 3 in codes else 2 if 2 in codes else 1 if 1 in codes else 0
    return finish(code)


if __name__ == "__main__":
    cli.run_tool(TOOL, main, "; the same command with --resume goes on")
