"""Scale-out on one host's GPUs, in resumable steps.

Everything the multi-GPU measurements need from one lease: the bench steps
of a plan (ci/scale-out.json: the interconnect ceilings, SOR and k-means
over 1, 2, 4, ... GPUs), the multi-process GPU runs (ci/gpu-scaling.sh), the
nightly suite on one GPU and spread over all of them (ci/nightly
--suite-only), then the GPU scaling charts of the plan's charted steps and
DIR/summary.json (the suite's wall time on N GPUs against one). The plan
names what to run; this driver knows no family.

  ci/scale-out [--bench PATH] [--out DIR] [--plan FILE] [--gpus N]
               [--lane-cores K] [--max-seconds S] [--only STEP,...] [--dry-run]

The GPU counts are 1, 2, 4, ... up to the host's GPUs, and the host's count
itself (--gpus N: up to N); a plan's "{gpus}" stands for them. A step is
done once its file is in DIR (DIR/<step>.json, or DIR/<step>/ for the
multi-process runs, the suites and the charts): a device call cut off by its
time limit loses only the step it was in, and the same command goes on from
the first step not done (the suites resume where they stopped). --dry-run
prints each step's command and whether it is done.

Exit status: 0 every step done; 1 a step failed (the others still ran);
2 bad input (one line); 4 stopped by --max-seconds (run the same command
again to go on).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from regress.run import launch
from regress import cli


TOOL = "scale-out"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAN = os.path.join(ROOT, "ci", "scale-out.json")
TOOL_STEPS = ["mpi", "suite-1", "suite-all", "charts"]
TIMING = ["--benchmark_repetitions=3", "--benchmark_min_time=0.1s", "--no-progress"]


class UsageError(Exception):
    pass


def gpu_counts(gpus):
    """1, 2, 4, ... below gpus, and gpus itself."""
    out, g = [], 1
    while g < gpus:
        out.append(g)
        g *= 2
    return out + [gpus]


def host_gpus():
    """The GPUs nvidia-smi lists (0 without it)."""
    try:
        p = subprocess.run(["nvidia-smi", "--list-gpus"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return len([line for line in p.stdout.splitlines() if line.strip()]) if p.returncode == 0 else 0


def read_plan(path):
    """The plan's bench steps, in order: [(name, args, charted)]."""
    try:
        with open(path) as f:
            plan = json.load(f)
        steps = [(st["name"], list(st["args"]), bool(st.get("chart"))) for st in plan["steps"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError("--plan: %s is not a plan (%s)" % (path, e))
    names = [n for n, _, _ in steps]
    clash = [n for n in names if n in TOOL_STEPS or names.count(n) > 1]
    if clash:
        raise UsageError("--plan: step %s is named twice, or is one of the driver's own" % clash[0])
    return steps


def bench_args(args, counts):
    """A plan step's bench arguments for these GPU counts, timed."""
    g = ",".join(str(c) for c in counts)
    return [a.replace("{gpus}", g) for a in args] + TIMING


def charted_files(a, charted, existing=True):
    """The charted steps' JSON files; those written so far unless existing is False."""
    files = [os.path.join(a.out, s + ".json") for s in charted]
    return [f for f in files if os.path.exists(f)] if existing else files


def tool_cmd(step, a, gpus, left, charted=()):
    """The command of a step run by another of the project's tools."""
    ci = os.path.join(ROOT, "ci")
    if step == "mpi":
        return [os.path.join(ci, "gpu-scaling.sh"), "--bench", a.bench, "--out", os.path.join(a.out, "mpi")]
    if step == "charts":
        files = charted_files(a, charted, existing=not a.dry_run)
        return [os.path.join(ROOT, "plots", "plot")] + files + \
            ["--merge", "--chart", "gpus", "--out", os.path.join(a.out, "charts")]
    lanes = 1 if step == "suite-1" else gpus
    out = os.path.join(a.out, step)
    cmd = [os.path.join(ci, "nightly"), "--suite-only", "--skip-build", "--skip-tests",
           "--build-dir", os.path.dirname(os.path.abspath(a.bench)), "--out", out,
           "--history", os.path.join(a.out, "history"), "--gpus", str(lanes)]
    if lanes > 1 and a.lane_cores is not None:
        cmd += ["--lane-cores", str(a.lane_cores)]
    if os.path.isdir(out):
        cmd.append("--resume")
    if left is not None:
        cmd += ["--max-seconds", str(max(int(left), 1))]
    return cmd


def done_path(a, step):
    if step not in TOOL_STEPS:
        return os.path.join(a.out, step + ".json")
    if step in ("suite-1", "suite-all"):
        return os.path.join(a.out, step, "suite.json")
    return os.path.join(a.out, step, ".done")


def suite_seconds(a, step):
    """The suite step's seconds summed over the calls of that night."""
    try:
        with open(os.path.join(a.out, step, "nightly.json")) as f:
            return json.load(f)["night_step_seconds"]["suite"]
    except (OSError, ValueError, KeyError):
        return None


def write_summary(a, gpus):
    one, spread = suite_seconds(a, "suite-1"), suite_seconds(a, "suite-all")
    summary = {"gpus": gpus, "suite_seconds_1_gpu": one, "suite_seconds_all_gpus": spread,
               "ratio": round(spread / one, 3) if one and spread else None}
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    return summary


def run_step(step, a, plan, counts, gpus, deadline):
    """0 done, 1 failed, 4 stopped at the deadline."""
    left = None if deadline is None else deadline - time.monotonic()
    if step in plan:
        part = os.path.join(a.out, "." + step + ".json")
        log = os.path.join(a.out, step + ".log")
        rc, _, stopped, _ = launch.run(a.bench, bench_args(plan[step], counts), part, log, deadline=deadline)
        if stopped:
            return cli.EXIT_STOPPED
        check = subprocess.run([os.path.join(ROOT, "ci", "check-run"), part]).returncode if rc == 0 else rc
        if rc != 0 or check != 0:
            print("%s: %s failed (exit %d; %s)" % (TOOL, step, rc or check, log), file=sys.stderr)
            return cli.EXIT_FAIL
        os.replace(part, done_path(a, step))
        return cli.EXIT_OK
    if step == "charts" and not charted_files(a, a.charted):
        print("%s: charts: no charted step has run yet" % TOOL, file=sys.stderr)
        return cli.EXIT_OK
    cmd = tool_cmd(step, a, gpus, left, a.charted)
    # Its own process group, so that a step cut off at the deadline takes its
    # launcher and every bench under it along (the suites stop themselves).
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        rc = proc.wait(timeout=None if step.startswith("suite") or left is None else max(left, 1))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return cli.EXIT_STOPPED
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if rc == cli.EXIT_STOPPED:
        return rc
    if rc != 0:
        print("%s: %s failed (exit %d)" % (TOOL, step, rc), file=sys.stderr)
        return cli.EXIT_FAIL
    # The charts are done once they hold every charted step; drawn from
    # fewer (--only, or a call cut off), the next call draws them again.
    complete = step != "charts" or len(charted_files(a, a.charted)) == len(a.charted)
    if not step.startswith("suite") and complete:
        open(done_path(a, step), "w").close()
    return cli.EXIT_OK


def main(argv=None):
    p = argparse.ArgumentParser(prog="ci/" + TOOL, description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", default=os.path.join("build", "gpu", "bench"))
    p.add_argument("--out", default=os.environ.get("OUT", "out") + "/scale-out")
    p.add_argument("--plan", default=PLAN, help="the bench steps (default ci/scale-out.json)")
    p.add_argument("--gpus", type=int, help="GPU counts up to N (default: the host's GPUs)")
    p.add_argument("--lane-cores", type=int, help="the suite on all GPUs: K cores a lane (ci/nightly)")
    p.add_argument("--max-seconds", type=float, help="start no step after S seconds; exit 4, rerun to go on")
    p.add_argument("--only", help="these steps only, comma-separated (the plan's and " + ", ".join(TOOL_STEPS) + ")")
    p.add_argument("--dry-run", action="store_true", help="print each step's command and whether it is done")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return cli.EXIT_OK if e.code == 0 else cli.EXIT_INPUT
    try:
        steps = read_plan(a.plan)
        order = [n for n, _, _ in steps] + TOOL_STEPS
        plan = {n: args for n, args, _ in steps}
        a.charted = [n for n, _, c in steps if c]
        only = order if a.only is None else [s.strip() for s in a.only.split(",")]
        bad = [s for s in only if s not in order]
        if bad:
            raise UsageError("--only: unknown step %s (steps: %s)" % (bad[0], ", ".join(order)))
        if a.max_seconds is not None and a.max_seconds <= 0:
            raise UsageError("--max-seconds: %g is not positive" % a.max_seconds)
        if a.lane_cores is not None and a.lane_cores < 1:
            raise UsageError("--lane-cores: %d is below 1" % a.lane_cores)
        gpus = a.gpus if a.gpus is not None else host_gpus()
        if gpus < 1:
            raise UsageError("--gpus: %d; this host lists no GPU (nvidia-smi)" % gpus if a.gpus is not None
                             else "no GPU here (nvidia-smi lists none); give --gpus N to see the plan")
        if not a.dry_run and not (os.path.isfile(a.bench) and os.access(a.bench, os.X_OK)):
            raise UsageError("--bench: %s is not an executable (ci/gpu.sh builds build/gpu/bench)" % a.bench)
    except UsageError as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return cli.EXIT_INPUT
    counts = gpu_counts(gpus)
    deadline = None if a.max_seconds is None else time.monotonic() + a.max_seconds
    if not a.dry_run:
        os.makedirs(a.out, exist_ok=True)
    codes = []
    for step in [s for s in order if s in only]:
        done = os.path.exists(done_path(a, step))
        if a.dry_run:
            cmd = [a.bench] + bench_args(plan[step], counts) if step in plan \
                else tool_cmd(step, a, gpus, a.max_seconds, a.charted)
            print("%-10s %-5s %s" % (step, "done" if done else "to do", " ".join(cmd)))
            continue
        if done:
            continue
        if deadline is not None and time.monotonic() >= deadline:
            print("%s: stopped before %s (--max-seconds): run the same command again" % (TOOL, step),
                  file=sys.stderr)
            return cli.EXIT_STOPPED
        print("%s: %s [%s]" % (TOOL, step, time.strftime("%H:%M:%S")), file=sys.stderr, flush=True)
        if step == "charts" and os.path.isdir(os.path.join(a.out, "charts")):
            shutil.rmtree(os.path.join(a.out, "charts"))
        rc = run_step(step, a, plan, counts, gpus, deadline)
        if rc == cli.EXIT_STOPPED:
            print("%s: stopped in %s (--max-seconds): run the same command again" % (TOOL, step), file=sys.stderr)
            return rc
        codes.append(rc)
    if not a.dry_run:
        s = write_summary(a, gpus)
        if s["ratio"] is not None:
            print("%s: the suite on %d GPUs took %.0f s against %.0f s on one: %.3f" % (
                TOOL, gpus, s["suite_seconds_all_gpus"], s["suite_seconds_1_gpu"], s["ratio"]), file=sys.stderr)
    return max(codes, default=cli.EXIT_OK)


if __name__ == "__main__":
    sys.exit(main())
