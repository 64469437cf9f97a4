"""Print a bench JSON file as a table: one row per instance, the median over
repetitions (or the single run), with a chosen counter and, optionally, the
ratio of that counter to a reference variant of the same problem. Error
entries follow the table; load warnings go to stderr, one line each.

Exit status: 0 printed; 2 bad input, refused as every tool refuses it
(docs/tools/README.md, "Bad input": missing, a directory, not Google
Benchmark JSON, cut off mid-run, a malformed entry, only aggregates), or
wrong arguments (e.g. a --filter that is not a regular expression), one line
"table: ..."."""
import argparse
import re
import statistics
import sys

from regress import cli
from regress.load import results

TOOL = "table"


def medians(run, counter):
    """{base name: (median seconds, median counter, n)} over passed, non-aggregate entries."""
    groups = {}
    for e in run.passed():
        groups.setdefault(e.run.base(), []).append(e)
    out = {}
    for base, es in groups.items():
        secs = statistics.median(e.seconds() for e in es)
        vals = [e.counter(counter) for e in es if e.counter(counter) is not None]
        out[base] = (secs, statistics.median(vals) if vals else None, len(es), es[0].run)
    return out


def reference(rows, rn, variant):
    """The row of `variant` for the same problem as run name `rn`: with the
    same knobs (threads, block ...) where the reference has them, else the
    first of that problem (a reference that has no such knob)."""
    same_problem = [row for row in rows.values()
                    if row[3].family == rn.family and row[3].variant == variant and row[3].problem() == rn.problem()]
    for row in same_problem:
        shared = [k for k in row[3].args if k in rn.args and (k, rn.args[k]) not in rn.problem()]
        if all(row[3].args[k] == rn.args[k] for k in shared):
            return row
    return same_problem[0] if same_problem else None


def main(argv=None):
    ap = cli.ArgumentParser(TOOL, "ci/table", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--filter", default="", help="regex on the run name")
    ap.add_argument("--counter", default="GFLOPS")
    ap.add_argument("--ratio-to", default="", help="variant to divide by (same other arguments)")
    a = ap.parse_args(argv)
    try:
        pat = re.compile(a.filter)
    except re.error as e:
        print("%s: --filter %r is not a regular expression: %s" % (TOOL, a.filter, e), file=sys.stderr)
        return cli.EXIT_INPUT
    run = results.load_or_exit(a.json, TOOL)
    rows = medians(run, a.counter)
    print("%-72s %12s %12s %4s %8s" % ("instance", "median time", a.counter, "n", "ratio"))
    for base in sorted(rows):
        if not pat.search(base):
            continue
        secs, val, n, rn = rows[base]
        ratio = ""
        if a.ratio_to and val:
            ref = reference(rows, rn, a.ratio_to)
            if ref and ref[1]:
                ratio = "%.3f" % (val / ref[1])
        shown = "%12.5g" % val if val is not None else "%12s" % "-"  # the counter is not in this entry
        print("%-72s %10.4g s %s %4d %8s" % (base, secs, shown, n, ratio))
    for e in run.errors():
        print("ERROR %s: %s: %s" % (e.name, e.disposition, e.reason))
    return cli.EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
