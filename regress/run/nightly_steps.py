"""The night's parts that its procedure (regress/run/nightly.py) calls: how a
step is logged and recorded (Step), how a step's command runs and stops
(run), the verdicts it prints (not_same_lines), the energy series
(energy_night) and the bisection of confirmed changes (bisect_changes)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from regress.store import alerts
from regress.load import results
from regress.run import launch
from regress.run.nightly_guard import HELD, die_with_parent

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
BISECT_SECONDS = 1200.0   # the night's budget for bisecting its confirmed changes (--bisect-seconds)
TIMED_OUT = 124   # run()'s status for a step that --max-seconds stopped


def log(line):
    print("nightly: " + line, file=sys.stderr, flush=True)


class Step:
    """One step of the night: logs and records its time and how it ended,
    "done", "stopped" (--max-seconds, a signal) or "skipped: why".
    on_change(summary, step or None) hears when it starts and ends (the
    record of the call in flight)."""

    def __init__(self, name, summary, on_change=None):
        self.name, self.summary, self.on_change = name, summary, on_change
        self.status = "done"

    def __enter__(self):
        self.t0 = time.monotonic()
        if self.on_change:
            self.on_change(self.summary, self.name)
        log("%s ..." % self.name)
        return self

    def __exit__(self, exc_type, *exc):
        dt = time.monotonic() - self.t0
        if exc_type is not None:
            self.status = "stopped"
        self.summary.append({"step": self.name, "seconds": round(dt, 1), "status": self.status})
        if self.on_change:
            self.on_change(self.summary, None)
        log("%s %s in %.0f s" % (self.name, self.status, dt))
        return False


def skipped(name, summary, why):
    """A step the night did not run, in the summary with its reason."""
    summary.append({"step": name, "seconds": 0.0, "status": "skipped: " + why})
    log("%s skipped: %s" % (name, why))


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


def run(cmd, logfile=None, env=None, timeout=None):
    """Runs cmd; its output to logfile (or through). Returns the exit status,
    TIMED_OUT when it ran past `timeout` seconds (it is stopped as below).
    When the job is stopped (SIGTERM, Ctrl-C) the step gets SIGTERM and time
    to stop its own children (the suite runner kills its bench) before the
    job exits; when it is killed outright, the step gets SIGTERM from the
    kernel (nightly_guard.die_with_parent). The step holds the night's locks
    until it ends (nightly_guard.HELD)."""
    f = open(logfile, "w") if logfile else None
    try:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT if f else None, env=env, pass_fds=tuple(HELD),
                             preexec_fn=die_with_parent())
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


def energy_night(bench, bench_args, names, out, hist, report, timeout, seconds=ENERGY_SECONDS, reuse=False):
    """The night's energy series: the instances `names` metered over
    windows of `seconds` into OUT/energy.json, ingested into HIST/energy and its
    trends (ci/trends --metric joules_per_call) written to REPORT/energy and
    OUT/energy-changes.json. Returns the step's status; an energy change is
    reported there, never failing the night (the gate follows the time).
    With `reuse` (a resumed night) a whole OUT/energy.json of these
    instances that an earlier call metered is the night's: metering again
    would store a second energy run for one night."""
    if not names:
        return "done: nothing to meter (no A/A subset)"
    path = os.path.join(out, "energy.json")
    rc = 0
    if reuse and metered_before(path, names):
        log("energy: metered by an earlier call of this night (%s)" % path)
    else:
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


def metered_before(path, names):
    """Whether `path` is a whole metered run (the loader takes it) of
    every instance of `names`: a run cut off by a kill or a time limit is not."""
    try:
        run_ = results.load_strict(path)
    except results.LoadError:
        return False
    return set(names) <= {e.run_name for e in run_.entries if not e.aggregate}


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
        from regress.run import bisect
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
