"""Crash-safe suite runner: bench in separate processes, one JSON out.

  ci/run-suite --bench build/gpu/bench --out suite.json [--split family|variant]
               [--timeout S] [--workdir DIR] [--exclude REGEX] -- [bench arguments]
  ci/run-suite --out suite.json --workdir DIR --merge-stopped

The selected instances (bench --benchmark_list_tests with the bench
arguments) are split into groups, one per family (default) or per
Family/Variant, and each group runs as its own bench process with a time
limit. When a process crashes (a signal, an abort, a GPU fault), hangs past
the limit, or ends without writing every instance, the runner keeps what the
process wrote (a file cut off mid-run is closed after its last complete
entry), records the instance that was running as a `failed` entry saying
what happened, and starts a new process for the rest of the group. So a
broken instance costs only itself.

With --gpus N the instances that run on one GPU are spread over GPUs 0 ..
N-1: each GPU is a lane with its own process (CUDA_VISIBLE_DEVICES) and its
own share of the cores, taking the next group of GPU instances when it is
done; the CPU instances, whose times other processes would disturb, and the
multi-GPU ones run after, alone. Each GPU entry records its GPU's model and,
from a lane, its index (`parbench.gpu`, `parbench.gpu_index`).

With --lane-cores K each lane gets K cores only, and the CPU instances run
at the same time as the lanes, on the cores the lanes leave (their thread
axes end at that many cores); the multi-GPU instances run after the lanes, on
the lanes' cores. The suite then takes about as long as the longer of its GPU
and CPU work instead of their sum. `--only cpu` (or `gpu`) runs only the
instances bench says run on the CPU (or on GPUs).

The entries are merged in the order bench lists them into one Google
Benchmark JSON (the first part's context, the union of parbench_counters,
and parbench_suite: the groups, their processes and what ended them).

--merge-stopped runs nothing: it writes OUT from the instances a stopped
suite finished in its workdir (a copy of it from another machine too), with
parbench_suite.stopped giving how many of how many, for a suite that will
not be resumed.

Progress on stderr: group i of n when it starts and every 30 s while it runs
(instances done, elapsed time, an estimate of the time left).
Exit status: 0 every entry passed or is unsupported; 1 an entry is an error
(incorrect, out of memory, failed: including those the runner recorded);
2 bad usage or a bench that refuses its arguments; 4 stopped by --max-seconds
(the state is in the workdir: the same command with --resume goes on);
128+N stopped by signal N (SIGINT, SIGTERM, SIGHUP): the bench process is
killed with the runner, never left running, and --resume goes on too.
"""
import argparse
import errno
import os
import re
import sys

from regress import cli
from regress.run.suite import UsageError, merge_stopped, run_suite

TOOL = "run-suite"


def main(argv=None):
    argv, bench_args = cli.split_at_dashes(argv)
    p = argparse.ArgumentParser(prog="run-suite", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", help="the bench binary (not with --merge-stopped)")
    p.add_argument("--out", required=True, help="the merged JSON")
    p.add_argument("--split", choices=("family", "variant"), default="family",
                   help="one process per family (default) or per Family/Variant")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds one process may run (default 1800)")
    p.add_argument("--workdir", help="where the parts and their logs go (default OUT.parts/)")
    p.add_argument("--resume", action="store_true", help="go on from the parts an earlier run of the same "
                   "suite left in --workdir")
    p.add_argument("--max-seconds", type=float, help="stop after this many seconds, killing the process that "
                   "is running then (its finished instances are kept): exit 4, the state kept for --resume")
    p.add_argument("--gpus", type=int, default=1, metavar="N",
                   help="run the instances on one GPU on N GPUs at once (GPUs 0 .. N-1, each its own process "
                   "and share of the cores); CPU and multi-GPU instances still run alone (default 1)")
    p.add_argument("--lane-cores", type=int, metavar="K", help="give each GPU lane K cores and run the CPU "
                   "instances at the same time, on the cores the lanes leave (their thread axes end there); "
                   "the multi-GPU instances run after the lanes, on the lanes' cores")
    p.add_argument("--only", choices=("cpu", "gpu"), help="only the instances that run on the CPU (or on GPUs), "
                   "as bench --list-devices says")
    p.add_argument("--merge-stopped", action="store_true", help="run nothing: write OUT from the instances a "
                   "stopped suite finished in --workdir (parbench_suite.stopped says how many of how many)")
    p.add_argument("--exclude", metavar="REGEX", help="leave out the instances whose name this Python regular "
                   "expression matches (after bench's own --benchmark_filter)")
    args = p.parse_args(argv)
    say = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.merge_stopped:
        try:
            return merge_stopped(args.out, args.workdir or args.out + ".parts", say)
        except (UsageError, OSError) as e:
            print("%s: %s" % (TOOL, e), file=sys.stderr)
            return 2
    if args.bench is None:
        print("%s: --bench is required (the bench binary)" % TOOL, file=sys.stderr)
        return 2
    try:
        exclude = re.compile(args.exclude) if args.exclude is not None else None
    except re.error as e:
        print("%s: --exclude is not a regular expression: %s" % (TOOL, e), file=sys.stderr)
        return 2
    for a in bench_args:
        if a.startswith("--benchmark_out") or a == "--benchmark_list_tests":
            print("%s: %s: the runner writes the JSON itself (--out)" % (TOOL, a), file=sys.stderr)
            return 2
    if not (os.path.isfile(args.bench) and os.access(args.bench, os.X_OK)):
        print("%s: %s is not an executable file" % (TOOL, args.bench), file=sys.stderr)
        return 2
    if not args.timeout > 0:
        print("%s: --timeout must be positive" % TOOL, file=sys.stderr)
        return 2
    if args.gpus < 1:
        print("%s: --gpus must be at least 1" % TOOL, file=sys.stderr)
        return 2
    if args.lane_cores is not None and args.lane_cores < 1:
        print("%s: --lane-cores must be at least 1" % TOOL, file=sys.stderr)
        return 2
    try:
        return run_suite(os.path.abspath(args.bench), bench_args, args.out, args.split, args.timeout,
                         args.workdir or args.out + ".parts", say, args.resume, args.max_seconds,
                         exclude=exclude, gpus=args.gpus, lane_cores=args.lane_cores, only=args.only)
    except UsageError as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return 2
    except OSError as e:
        why = "%s%s" % (e.strerror or e, ": %s" % e.filename if e.filename else "")
        if e.errno == errno.ENOSPC:
            why += "; the instances done are kept: free space and run the same command with --resume"
        print("%s: %s" % (TOOL, why), file=sys.stderr)
        return 2


if __name__ == "__main__":
    cli.run_tool(TOOL, main, "; the bench process it ran was killed; the same command with --resume goes on")
