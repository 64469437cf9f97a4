"""ci/backfill: a history from the past (regress/run/backfill.py says how).

    ci/backfill GOOD..BAD --history DIR [--every N | --commits A,B,...]
                [--repo .] [--build CMD --bench PATH] [--cache DIR]
                [--state DIR] [--max-seconds S] [--resume] -- BENCH-ARGS

Builds each commit of the range (ci/bisect's build cache and worktree), runs
its bench with BENCH-ARGS, dates the run by its commit, marks it as
backfilled and ingests it into the history, oldest first; then ci/trends
finds the change points of the past. Any Google Benchmark project works
with --build and --bench.

Exit status: 0 done; 2 bad input (one line "backfill: ..."): a range that
is not an ancestry path, a history of another machine, a state of another
backfill; 4 stopped by --max-seconds (go on with --resume)."""

from regress import cli
from regress.run import backfill, launch
from regress.run.bisect import Bad, add_build_arguments, default_cache
from regress.store.history import HistoryError

TOOL = "backfill"


def make_parser():
    p = cli.ArgumentParser(TOOL, "ci/backfill", description=__doc__.split("\n\n")[0],
                           epilog=__doc__.split("\n\n")[-1])
    p.add_argument("range", nargs="?", metavar="GOOD..BAD", help="the commits after GOOD up to BAD, and GOOD")
    p.add_argument("--history", help="the history directory (or postgresql:// URL) to fill (with --resume: the "
                   "state's)")
    p.add_argument("--every", type=int, metavar="N", help="every Nth commit (BAD always)")
    p.add_argument("--commits", metavar="A,B,...", help="only these commits of the range")
    add_build_arguments(p)
    p.add_argument("--state", default="backfill-state", help="what this backfill did (default %(default)s)")
    p.add_argument("--all-parents", action="store_true", help="every commit, not first parents only")
    p.add_argument("--max-seconds", type=float, help="start no commit after this many seconds; exit 4")
    p.add_argument("--resume", action="store_true", help="go on with the backfill in --state")
    return p


def main(argv=None):
    argv, bench_args = cli.split_at_dashes(argv)
    args = make_parser().parse_args(argv)
    log = cli.log

    if args.every is not None and args.every < 1:
        log("%s: --every must be at least 1" % TOOL)
        return cli.EXIT_INPUT
    if args.every and args.commits:
        log("%s: give --every or --commits, not both" % TOOL)
        return cli.EXIT_INPUT
    if not args.history and not args.resume:
        log("%s: needs --history DIR (the history to fill)" % TOOL)
        return cli.EXIT_INPUT
    deadline = cli.deadline(args.max_seconds)
    try:
        if args.cache is None and not args.resume:
            args.cache = default_cache(args.repo)
        params = backfill.state_params(args, bench_args)
        log("backfill: %d commits of %s into %s; builds cached in %s"
            % (len(params["commits"]), params["range"], params["history"], params["cache"]))
        done = backfill.Backfill(params, args.state, log, deadline).run()
    except (Bad, HistoryError, launch.Refused) as e:
        log("%s: %s" % (TOOL, e))
        return cli.EXIT_INPUT
    line = backfill.summary(params)
    if not done:
        log("backfill: stopped (--max-seconds): %s; go on with: ci/backfill --resume --state %s" % (line, args.state))
        return cli.EXIT_STOPPED
    print("backfill: %s (history: %s)" % (line, params["history"]))
    return cli.EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
