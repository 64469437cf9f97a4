"""ci/bisect GOOD BAD: the first commit that moved the named benchmarks.

    ci/bisect GOOD BAD -- --benchmark_filter='^GEMM/' --benchmark_min_time=0.02s
    ci/bisect GOOD BAD --build 'make bench' --bench ./bench -- ARGS   # any Google Benchmark project
    ci/bisect --resume --max-seconds 540                             # go on where it stopped

The search, its state and its confidence: regress/run/bisect.py.

Output: the report (--out, default bisect-report/): report.json and
report.md with every step (commit, verdicts, intervals, p, rounds) and, per
culprit, its evidence (regress/run/evidence.py).

Exit status: 0 done (culprits found, or none); 2 bad input, one line
("bisect: ..."); 4 stopped by --max-seconds (rerun with --resume).
"""
import os
import time

from regress import cli
from regress.run import launch
from regress.run.bisect import (EXIT_INCOMPLETE, EXIT_INPUT, EXIT_OK, Bad,
                                Search, Stopped, add_build_arguments, state_params)
from regress.run.bisect_report import render_markdown, report

TOOL = "bisect"


def make_parser():
    p = cli.ArgumentParser(TOOL, "ci/bisect", description=__doc__.split("\n\n")[0],
                           formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
                           epilog="exit status: 0 done (culprits found, or none); 2 bad input; 4 stopped by "
                                  "--max-seconds (rerun with --resume)")
    p.add_argument("good", nargs="?", metavar="GOOD", help="a revision without the change")
    p.add_argument("bad", nargs="?", metavar="BAD", help="a later revision with it")
    add_build_arguments(p)
    p.add_argument("--state", default="bisect-state", help="this bisection's verdicts and rounds (default %(default)s)")
    p.add_argument("--out", default="bisect-report", help="report.md and report.json (default %(default)s)")
    p.add_argument("--all-parents", action="store_true", help="search every commit, not first parents only")
    p.add_argument("--max-rounds", type=int, help="the comparator's cap on paired rounds per comparison")
    p.add_argument("--max-seconds", type=float, help="stop after this many seconds; exit 4, go on with --resume")
    p.add_argument("--resume", action="store_true", help="go on with the bisection in --state")
    p.add_argument("--no-evidence", action="store_true", help="name the culprits without gathering evidence")
    return p


def main(argv=None):
    argv, bench_args = cli.split_at_dashes(argv)
    args = make_parser().parse_args(argv)
    log = cli.log

    deadline = cli.deadline(args.max_seconds)
    try:
        params = state_params(args, bench_args)
        log("bisect: builds are cached in %s" % params["cache"])
        search = Search(params, log, deadline).run()
        evidence = {}
        if not args.no_evidence and search.culprits:
            # The evidence starts only with time left: a call stopped here
            # resumes with the search already done.
            if deadline is not None and time.monotonic() >= deadline:
                raise Stopped()
            from regress.run import evidence as ev
            evidence = ev.gather(search, params, log)
        doc = report(search, params, evidence)
    except (Bad, launch.Refused) as e:
        log("%s: %s" % (TOOL, e))
        return EXIT_INPUT
    except Stopped:
        log("bisect: stopped (--max-seconds); go on with: ci/bisect --resume --state %s" % args.state)
        return EXIT_INCOMPLETE
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        cli.dump(doc, f)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(render_markdown(doc))
    print("bisect: %s (report: %s)" % (doc["summary"], os.path.join(args.out, "report.md")))
    return EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
