"""The nightly job: build, test, run the suite crash-safely, check the
comparator on itself (A/A), keep the run in the history, find change points,
compare with the accepted baseline, write the report.

  ci/nightly [--history DIR] [--out DIR] [--suite nightly|smoke] [--filter REGEX]
             [--skip-build] [--skip-tests]
  ci/nightly --accept-baseline RUN.json [--history DIR] [--reason TEXT]

Its steps, each logged with its time (a failed step is reported and the job
goes on where the later steps can): build, tests, suite, A/A, ingest,
changes, bisect, baseline, energy, report; regress/run/nightly.py says what
each does.

Exit status: the comparator's: 0 nothing regressed; 1 a confirmed regression
(a confirmed change point, SLOWER against the baseline) or an error entry; 2 a
step could not run (build, bad input), or another night holds --history or
--out (one night at a time); 3 the baseline is not comparable (a new machine
or toolkit: accept a new baseline); 4 stopped by --max-seconds (the same
command with --resume goes on: a night may run in several calls, and one
killed outright is resumed the same way: docs/tools/nightly.md).

Accepting a baseline (after an intended change, or a new driver):
  ci/nightly --accept-baseline OUT/suite.json --reason "faster sort merged (PR 42)"
copies the run into HISTORY/baselines/ under its machine id and appends the
reason, date and revision to HISTORY/baselines/log.jsonl.
"""
import argparse
import sys
import time

from regress import cli
from regress.run.nightly import SUITES, accept_baseline, night
from regress.run.nightly_guard import Busy, record_call, start_call
from regress.run.nightly_steps import BISECT_SECONDS, ENERGY_SECONDS, log

TOOL = "nightly"


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

    summary, codes = [], []
    t0 = time.time()
    try:
        inflight = start_call(args, t0, log)
    except Busy as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return 2
    code = None  # stays None when a signal stops the call
    try:
        code = night(args, summary, codes, inflight)
    finally:
        record_call(args, summary, t0, code, inflight, log)
    return code


if __name__ == "__main__":
    cli.run_tool(TOOL, main, "; the same command with --resume goes on")
