"""Writes the GEMM tile table from a tuning sweep.

    ci/python -m regress.gemm_tune SWEEP.json [--out FILE] [--summary FILE.md]

SWEEP.json is bench's output with --gemm-tile (ci/tune-gemm runs it): the
tunable kernels once per tile configuration, each instance's run name ending
in tile:<name>. For every (variant, op, type, M, N, K) the configuration with
the shortest median time over the passed repetitions wins; an instance whose
any repetition failed or was incorrect takes no part. The table is written as
C++ initializer rows for impl/gemm/cuda/tuning.cpp, to FILE (default
impl/gemm/cuda/tuned_sm<NN>.inc, NN from the file's gpu_compute_capability): the
sweep's (variant, op, type) groups replace theirs, the file's other rows
stay, and a comment line a group names the sweep and GPU that chose it. A
Markdown summary (each shape's winner, its time, and the default
configuration's) is printed or written to --summary.

Exit status: 0 written; 1 the sweep has no tile entries or a group has no
passed configuration; 2 a bad command line or unreadable file.
"""
import os
import re
import statistics
import sys

from regress import cli
from regress.load import results

TOOL = "gemm_tune"


def choose(run):
    """{(variant, op, type, m, n, k): [(median seconds, tile), ...] fastest first}, and the failed instances."""
    times, failed = {}, set()
    for e in run.entries:
        args = e.run.args
        if e.run.family != "GEMM" or "tile" not in args or e.aggregate:
            continue
        key = (e.run.variant, args.get("op"), args.get("type"), int(args["M"]), int(args["N"]), int(args["K"]))
        tile = args["tile"]
        seconds = e.seconds() if e.disposition == "passed" else None
        if seconds is None:
            if e.is_error or e.disposition == "passed":  # a passed entry without a finite time: not usable
                failed.add((key, tile))
            continue
        times.setdefault(key, {}).setdefault(tile, []).append(seconds)
    table = {}
    for key, by_tile in times.items():
        ranked = sorted((statistics.median(ts), tile) for tile, ts in by_tile.items() if (key, tile) not in failed)
        table[key] = ranked
    for key, tile in failed:
        table.setdefault(key, [])
    return table, sorted(failed)


def sm_of(run):
    cc = str(run.context.get("gpu_compute_capability", ""))
    parts = cc.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return parts[0] + parts[1]


ROW = re.compile(r'^\{"([^"]+)", "([^"]+)", "([^"]+)", (\d+), (\d+), (\d+), "([^"]+)"\},$')
# Where each (variant, op, type) group was measured: one line a group, so a
# table built from sweeps of several GPUs says which GPU chose which rows.
SOURCE = re.compile(r'^// (\S+) (\S+) (\S+): (.+)$')
# The one-source header of tables written before the per-group lines.
HEADER = re.compile(r'^// Written by regress/gemm_tune\.py from (.+); rerun ci/tune-gemm to change\.$')


def read_rows(path):
    """The rows of an existing table and where each group came from:
    ({(variant, op, type, m, n, k): tile}, {(variant, op, type): source});
    both empty when there is no table."""
    rows, sources, header = {}, {}, None
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                m = ROW.match(line)
                if m:
                    g = m.groups()
                    rows[(g[0], g[1], g[2], int(g[3]), int(g[4]), int(g[5]))] = g[6]
                    continue
                m = HEADER.match(line)
                if m:
                    header = m.group(1)
                    continue
                m = SOURCE.match(line)
                if m:
                    sources[m.groups()[:3]] = m.group(4)
    except FileNotFoundError:
        pass
    for key in rows:
        sources.setdefault(key[:3], header or "an unnamed sweep")
    return rows, sources


def render(rows, sources):
    lines = ["// Written by regress/gemm_tune.py; rerun ci/tune-gemm to change. Each group's sweep:"]
    lines += ["// %s %s %s: %s" % (group + (sources[group],)) for group in sorted(sources)]
    lines.append("// variant, op, type, M, N, K, fastest tile configuration")
    for key in sorted(rows):
        variant, op, typ, m, n, k = key
        lines.append('{"%s", "%s", "%s", %d, %d, %d, "%s"},' % (variant, op, typ, m, n, k, rows[key]))
    return "\n".join(lines) + "\n"


def summary(table, defaults):
    out = ["| variant | op | type | M x N x K | fastest tile | ms | default tile | ms | gain |",
           "| --- | --- | --- | --- | --- | ---: | --- | ---: | ---: |"]
    for key in sorted(table):
        variant, op, typ, m, n, k = key
        best_t, best = table[key][0]
        d = defaults.get(variant)
        d_t = next((t for t, name in table[key] if name == d), None)
        gain = "%.3f" % (d_t / best_t) if d_t else "-"
        out.append("| %s | %s | %s | %dx%dx%d | %s | %.3f | %s | %s | %s |" % (
            variant, op, typ, m, n, k, best, best_t * 1e3, d or "-", "%.3f" % (d_t * 1e3) if d_t else "-", gain))
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = cli.ArgumentParser(TOOL, "ci/tune-gemm", description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep")
    ap.add_argument("--out", help="the table file (default impl/gemm/cuda/tuned_sm<NN>.inc)")
    ap.add_argument("--summary", help="write the Markdown summary here instead of stdout")
    ap.add_argument("--default", action="append", default=[], metavar="VARIANT=TILE",
                    help="the configuration a kernel runs without a table, for the summary's gain column")
    a = ap.parse_args(argv)
    run = results.load_or_exit(a.sweep, TOOL)
    table, failed = choose(run)
    for key, tile in failed:
        print("%s: %s %s %s %dx%dx%d tile %s failed; left out" % ((TOOL,) + key[:3] + key[3:] + (tile,)),
              file=sys.stderr)
    if not table:
        print("%s: %s has no GEMM entries with a tile: argument (was bench run with --gemm-tile?)"
              % (TOOL, a.sweep), file=sys.stderr)
        return 1
    empty = [k for k, v in table.items() if not v]
    if empty:
        print("%s: no configuration passed for %s %s %s %dx%dx%d" % ((TOOL,) + empty[0][:3] + empty[0][3:]),
              file=sys.stderr)
        return 1
    sm = sm_of(run)
    out = a.out
    if out is None:
        if sm is None:
            print("%s: %s names no gpu_compute_capability; give --out" % (TOOL, a.sweep), file=sys.stderr)
            return 2
        here = os.path.dirname(os.path.abspath(__file__))
        out = os.path.join(here, "..", "impl", "gemm", "cuda", "tuned_sm%s.inc" % sm)
    defaults = {}
    for d in a.default:
        if "=" not in d:
            print("%s: --default takes VARIANT=TILE, not %r" % (TOOL, d), file=sys.stderr)
            return 2
        v, t = d.split("=", 1)
        defaults[v] = t
    gpu = run.context.get("gpu", "an unnamed GPU")
    # The sweep replaces the rows of the (variant, op, type) groups it
    # measured; the table's other rows (a sweep of one variant, say) stay.
    rows, sources = read_rows(out)
    swept = {key[:3] for key in table}
    rows = {key: tile for key, tile in rows.items() if key[:3] not in swept}
    kept = len(rows)
    rows.update({key: ranked[0][1] for key, ranked in table.items()})
    kept_groups = {key[:3] for key in rows}  # a source line outlives no group of rows
    sources = {group: src for group, src in sources.items() if group in kept_groups and group not in swept}
    sources.update({group: "%s (%s, sm_%s)" % (os.path.basename(a.sweep), gpu, sm or "?") for group in swept})
    text = summary(table, defaults)
    try:
        with open(out, "w") as f:
            f.write(render(rows, sources))
        if a.summary:
            with open(a.summary, "w") as f:
                f.write(text)
    except OSError as e:
        print("%s: cannot write %s: %s" % (TOOL, e.filename, e.strerror), file=sys.stderr)
        return 2
    if not a.summary:
        sys.stdout.write(text)
    print("%s: %d choices written to %s (%d other rows kept)" % (TOOL, len(table), os.path.normpath(out), kept),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
