#!/usr/bin/env python3
"""The nightly job: build, test, run the suite crash-safely, check the
comparator on itself (A/A), keep the run in the history, find change points,
compare with the accepted baseline, write the report.

  ci/nightly [--history DIR] [--out DIR] [--suite nightly|smoke] [--skip-build] [--skip-tests]
  ci/nightly --accept-baseline RUN.json [--history DIR] [--reason TEXT]

Steps (each logged with its time; a failed step is reported and the job goes
on where the later steps can, so one night gives every result it can):

 1. build    cmake Release (CUDA when nvcc is there) into build/nightly
 2. tests    ctest (GPU tests must not skip on a GPU host: PARBENCH_REQUIRE_GPU)
 3. suite    ci/run-suite: the suite's instances, one process per family,
             a time limit each, repetitions (nightly: 9) -> OUT/suite.json
 4. A/A      ci/compare --run with the same binary on both sides, on a small
             subset: any SLOWER/FASTER there is a false alarm; its counts go to
             the false-alarm ledger HISTORY/aa-ledger.jsonl (shown on the trends page)
 5. ingest   ci/history ingest OUT/suite.json
 6. changes  ci/trends: change points of every series of this machine, the
             trend charts and the page of what changed -> OUT/report/trends/;
             a regression measured at or before the accepted baseline's run
             was accepted with it and does not fail the night
 7. baseline ci/compare BASELINE OUT/suite.json --noise OUT/aa.json, where
             BASELINE is HISTORY/baselines/MACHINE.json.gz, the run accepted on
             purpose (--accept-baseline); the first night's run becomes it
 8. report   plots/plot OUT/suite.json -> OUT/report/

Exit status: the comparator's: 0 nothing regressed; 1 a confirmed regression
(a confirmed change point, SLOWER against the baseline) or an error entry; 2 a
step could not run (build, bad input); 3 the baseline is not comparable (a
new machine or toolkit: accept a new baseline); 4 stopped by --max-seconds
(the same command with --resume goes on: a GPU machine lent in 10-minute
calls runs a night in several).

Accepting a baseline (after an intended change, or a new driver):
  ci/nightly --accept-baseline OUT/suite.json --reason "faster sort merged (PR 42)"
copies the run into HISTORY/baselines/ under its machine id and appends the
reason, date and revision to HISTORY/baselines/log.jsonl.
"""
import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "plots"))
import history as historymod  # noqa: E402
import pbjson  # noqa: E402

TOOL = "nightly"
PY = [os.path.join(ROOT, "plots", "with-python")]

# What each suite runs (bench arguments).
# nightly: the default profile's instances with 9 repetitions each (what the
#   comparator needs to decide) and a 0.01 s minimum time per repetition,
#   sized to finish well inside 20 minutes on a GPU host (README, "The nightly
#   job", has the measured times). It leaves out what a night cannot afford or
#   does not gate on: the MPI instances (they need a launcher); the sweeps that
#   tune rather than guard (CPU threads: all cores only, --threads=cores;
#   k-means blocks: 256 only); the serial references that the others are
#   checked against (GEMM/Naive, KMeans/Seq, Sort/Std: KMeans/Seq takes 3-34 s
#   a run on the large problems, Sort/Std 131 s of a night on the H200).
# smoke: seconds, for trying the job.
NIGHTLY_EXCLUDE = "|".join([
    "KMeans/MPI/", "KMeans/Seq/", "KMeans/CUDA[^/]*/.*/block:(64|1024)/", "GEMM/Naive/", "Sort/Std/", "SOR/Seq/",
    "MLP/Naive/"])
SUITES = {
    "nightly": {"profile": [], "args": [
        "--benchmark_filter=-^(%s)" % NIGHTLY_EXCLUDE,
        "--threads=cores", "--benchmark_repetitions=9", "--benchmark_min_time=0.01"]},
    "smoke": {"profile": ["--profile=smoke"], "args": ["--benchmark_repetitions=3"]},
}
# The A/A subset, run with the suite's profile so that its names are the
# suite's and its run-to-run noise serves the baseline comparison (--noise):
# a few fast, stable benchmarks per device.
AA = {
    "gpu": ["--benchmark_filter=^(GEMM/cuBLAS/op:AB/type:f32/|Sort/CUB/key:u32/payload:keys/order:asc/dist:uniform/)",
            "--benchmark_min_time=0.02"],
    "cpu": ["--benchmark_filter=^GEMM/OpenBLAS/op:AB/type:f32/", "--benchmark_min_time=0.02"],
}


def log(line):
    print("nightly: " + line, file=sys.stderr, flush=True)


class Step:
    def __init__(self, name, summary):
        self.name, self.summary = name, summary

    def __enter__(self):
        self.t0 = time.monotonic()
        log("%s ..." % self.name)
        return self

    def __exit__(self, *exc):
        dt = time.monotonic() - self.t0
        self.summary.append({"step": self.name, "seconds": round(dt, 1)})
        log("%s done in %.0f s" % (self.name, dt))
        return False


def run(cmd, logfile=None, env=None):
    """Runs cmd; its output to logfile (or through). Returns the exit status.
    When the job is stopped (SIGTERM, Ctrl-C) the step gets SIGTERM and time
    to stop its own children (the suite runner kills its bench) before the
    job exits."""
    f = open(logfile, "w") if logfile else None
    try:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT if f else None, env=env)
        try:
            return p.wait()
        except BaseException:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            raise
    finally:
        if f:
            f.close()


def gpu_present():
    return shutil.which("nvidia-smi") is not None and \
        subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def baseline_path(hist, machine):
    return os.path.join(hist, "baselines", machine + ".json.gz")


def accept_baseline(path, hist, reason):
    try:
        run_ = pbjson.load(path)
    except pbjson.LoadError as e:
        log(str(e))
        return 2
    if run_.cut is not None:
        log("%s is cut off mid-run: not a baseline" % path)
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
    p = argparse.ArgumentParser(prog="nightly", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--history", default="history", help="the history directory (default %(default)s)")
    p.add_argument("--out", default="nightly-out", help="this night's files (default %(default)s)")
    p.add_argument("--suite", choices=sorted(SUITES), default="nightly")
    p.add_argument("--build-dir", default="build/nightly")
    p.add_argument("--skip-build", action="store_true", help="use the bench already in --build-dir")
    p.add_argument("--skip-tests", action="store_true")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds one suite process may run")
    p.add_argument("--resume", action="store_true", help="go on with a night an earlier call left in --out "
                   "(tests already run are not run again; the suite and the A/A rounds resume)")
    p.add_argument("--max-seconds", type=float, help="stop starting suite processes and A/A rounds after this "
                   "many seconds: exit 4, and the same command with --resume goes on")
    p.add_argument("--accept-baseline", metavar="RUN.json", help="make this run the machine's baseline and stop")
    p.add_argument("--reason", default="accepted by hand", help="why (kept in the baselines' log)")
    args = p.parse_args(argv)
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
    with Step("suite", summary):
        cmd = [sys.executable, os.path.join(HERE, "run_suite.py"), "--bench", bench, "--out", suite,
               "--timeout", str(args.timeout), "--split", "variant"]
        if args.resume:
            cmd.append("--resume")
        if left() is not None:
            cmd += ["--max-seconds", str(left())]
        rc = run(cmd + ["--"] + SUITES[args.suite]["profile"] + SUITES[args.suite]["args"] + ["--no-progress"])
        if rc == 4:
            log("stopped in the suite (--max-seconds): run the same command with --resume to go on")
            return 4
        if rc == 2 or not os.path.exists(suite):
            log("the suite did not run")
            return 2
        codes.append(rc)
    # The night's context and machine, read once (the suite is tens of MB).
    context = pbjson.load(suite).context
    machine = historymod.machine_of(context)
    base = baseline_path(args.history, machine)

    aa = os.path.join(args.out, "aa.json")
    with Step("A/A", summary):
        twin = os.path.join(args.out, "bench-twin")
        if not os.path.exists(twin):
            shutil.copy2(bench, twin)
        limit = [] if left() is None else ["--max-seconds", str(left())]
        rc = run(PY + [os.path.join(ROOT, "plots", "compare.py"), "--run", bench, twin, "--workdir",
                       os.path.join(args.out, "aa-rounds"), "--json", aa] + limit + ["--"]
                 + SUITES[args.suite]["profile"] + AA["gpu" if gpu else "cpu"],
                 os.path.join(args.out, "aa.txt"))
        if rc == 4:
            log("stopped in the A/A rounds (--max-seconds): run the same command with --resume to go on")
            return 4
        if os.path.exists(aa):
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
        else:
            log("the A/A comparison did not run (exit %d): %s" % (rc, os.path.join(args.out, "aa.txt")))
            codes.append(2)

    with Step("ingest", summary):
        rc = run(PY + [os.path.join(ROOT, "plots", "history.py"), "--history", args.history, "ingest", suite])
        if rc != 0:
            codes.append(2)

    report = os.path.join(args.out, "report")
    with Step("changes", summary):
        # Regressions measured at or before the accepted baseline were accepted
        # with it: listed, not failing the night.
        accepted = []
        if os.path.exists(base):
            try:
                date = pbjson.load(base).context.get("date")
            except pbjson.LoadError as e:
                log("the baseline cannot be read (%s): every confirmed regression fails" % e)
                date = None
            if date:
                accepted = ["--accepted-through", str(date)]
        rc = run(PY + [os.path.join(ROOT, "plots", "trends.py"), "--history", args.history, "--machine",
                       machine, "--out", os.path.join(report, "trends"),
                       "--json", os.path.join(args.out, "changes.json")] + accepted)
        codes.append(rc)

    with Step("baseline", summary):
        if not os.path.exists(base):
            accept_baseline(suite, args.history, "the first night on this machine")
        else:
            cmd = PY + [os.path.join(ROOT, "plots", "compare.py"), base, suite, "--json",
                        os.path.join(args.out, "baseline.json"), "--markdown", os.path.join(args.out, "baseline.md"),
                        "--plot", os.path.join(args.out, "baseline.png")]
            if os.path.exists(aa):
                cmd += ["--noise", aa]
            rc = run(cmd, os.path.join(args.out, "baseline.txt"))
            codes.append(rc)

    with Step("report", summary):
        rc = run([os.path.join(ROOT, "plots", "plot"), suite, "--out", report],
                 os.path.join(args.out, "report.log"))
        if rc != 0:
            log("the report failed (exit %d)" % rc)

    total = sum(s["seconds"] for s in summary)
    code = 3 if 3 in codes else 2 if 2 in codes else 1 if 1 in codes else 0
    log("%s in %.0f s: exit %d" % (", ".join("%s %.0f s" % (s["step"], s["seconds"]) for s in summary), total, code))
    return code


if __name__ == "__main__":
    pbjson.run_tool(TOOL, main, "; the same command with --resume goes on")
