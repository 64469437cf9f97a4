"""Turn parbench JSON into charts (PNG, and SVG with --svg) and an offline report.

    plots/plot RUN.json [RUN.json ...] --out DIR [--label NAME ...] [--merge] [--chart NAME ...]

DIR receives one PNG per chart (and an SVG with --svg), named by what it
shows (kind, family, problem), index.html (opens with no network: images are
files beside it, styles and the table sorter are inline) and report.md, its
Markdown twin. Charts and report files an earlier report left
in DIR are removed first (other files are left alone). Every chart is titled
with the family, the input and the machine.

Sources: each input file is a source, labelled by its file name or by
--label (given once per file, in order). Charts draw sources as separate,
labelled series; derived figures (speedup, efficiency, fraction of ceiling)
only ever combine entries of one source. --merge reads all files as one
source (one experiment split over files, as ci/mpi-grid.sh writes it).

Charts (--chart NAME draws only those named):
  speedup     speedup over the family baseline (the variant the JSON marks
              "baseline"), and parallel efficiency: speedup over the variant's
              own 1-thread run / threads, vs threads
  heatmap     ranks x threads: speedup over the family baseline (colours 0 to
              the ideal ranks x threads) and efficiency against the variant's
              own 1 rank x 1 thread cell (colours 0 to 1)
  strong      strong scaling: time vs threads, log-log, with the ideal line
  gpus        scaling over GPUs: time and efficiency vs GPU count, strong (ideal
              t(1)/g) and weak (scaling:weak entries: ideal t(1), efficiency t(1)/t)
  gflops      GFLOP/s vs size (M, N, K) per variant, error bars from repetitions
  iteration   k-means time per iteration vs N per variant
  throughput  sorts: elements per second vs total per variant (one array each)
  blocks      time vs CUDA block size
  breakdown   k-means host-to-device / kernel / device-to-host / host shares
  mlp_throughput  MLP training samples per second vs batch size per variant
  mlp_share   MLP: the share of a training step spent in GEMM calls, the rest
              element-wise
  sor_bandwidth   SOR bandwidth vs grid size, against the copy ceiling
  field       (only with --sor-field DIR) an SOR field solved by sor-solve to
              a tolerance: heatmap and residual per sweep
  roofline    per family and device: achieved GFLOP/s vs arithmetic intensity
              (the JSON's flop and byte models), under the roofs of the
              compute and bandwidth ceilings measured in the same source
  ceiling     each entry's rate (the counter its JSON names) as a fraction of
              the ceiling of the same kind, device and source; a fraction above
              1 + %(noise)s is drawn as a measurement problem, not a result
  energy      where energy was metered: time against energy per call per
              variant, the Pareto front (nothing both faster and cheaper) ringed
  per_joule   work per joule (GFLOP/J, keys/J ...) vs work per call per variant
  rate        any family the charts above do not draw against size: each
              entry's rate counter (its JSON's rate) vs each numeric argument

Derived figures are defined in regress/load/derived.py.

Exit status: 0 when every input was read and every requested chart drawn;
2 when an input is bad input, refused as every tool refuses it
(docs/tools/README.md, "Bad input": missing, a directory, not JSON, cut off
mid-run, a malformed entry, only aggregates), when a chart named with --chart
had no data, when DIR cannot be used, or on bad usage. Each problem is one
line on stderr ("plot: ..."); the other inputs are still drawn. Without
--chart, a chart whose data is not in the input is listed in the report as
not drawn, with the reason.
"""
import argparse
import concurrent.futures
import gc
import multiprocessing
import os
import re
import signal
import sys

from regress.load import derived
from regress import cli
from regress.load import results
from plots import report_html
from plots import sor_field
from plots.report_charts import CHARTS
from plots.report_draw import Canvas
from plots.report_stats import NoData, collect, label, machine

__doc__ = __doc__ % {"noise": derived.CEILING_NOISE}

TOOL = "plot"
MANIFEST = ".parbench-report"  # what the last report wrote into DIR
_OWN = re.compile(r"^(%s)(_[a-z0-9._-]+)?\.(png|svg)$" % "|".join(list(CHARTS) + ["field"]))


def prepare_out(out):
    """Creates DIR, or clears what an earlier report wrote there (its
    manifest's files, and chart-named PNG/SVG files). Returns an error line or None."""
    if os.path.exists(out) and not os.path.isdir(out):
        return "--out %s: exists and is not a folder" % out
    try:
        os.makedirs(out, exist_ok=True)
        old = set()
        manifest = os.path.join(out, MANIFEST)
        if os.path.isfile(manifest):
            with open(manifest, encoding="utf-8") as f:
                old = {line.strip() for line in f if line.strip() and "/" not in line}
        for name in os.listdir(out):
            if name in old or _OWN.match(name) or name in ("index.html", "report.md"):
                path = os.path.join(out, name)
                if os.path.isfile(path):
                    os.remove(path)
        probe = os.path.join(out, MANIFEST)
        with open(probe, "w", encoding="utf-8") as f:
            f.write("")
    except OSError as e:
        return "--out %s: cannot write there: %s" % (out, e.strerror or e)
    return None


# The kinds that draw a figure a problem first, so the small kinds fill the
# workers' ends; the rest in name order.
HEAVY_FIRST = ("ceiling", "speedup", "strong")

_JOB = None  # (stats, canvas) that forked workers inherit from draw_charts


def _draw_kind(name, stats, cv):
    """One chart kind into its own Canvas: (name, what it drew, why not)."""
    part = cv.part()
    try:
        CHARTS[name](stats, part)
    except NoData as e:
        return name, part.drawn(), str(e)
    return name, part.drawn(), None


def _draw_kind_in_worker(name):
    return _draw_kind(name, *_JOB)


def _worker_signals():
    # The parent alone answers Ctrl-C and SIGTERM (cli.run_tool); it
    # ends the workers, which then leave without a traceback of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def draw_charts(names, stats, cv, jobs):
    """Draws the chart kinds `names` into `cv`; {name: why not} for those
    without data. Rendering is nearly all of a report's time: with jobs > 1,
    forked workers draw whole kinds, each kind building and rendering its
    figures in one process (a long-lived worker reuses its heap; a process a
    figure paid its page faults again each time). The parent absorbs what
    each kind drew in `names` order, so the report reads the same either way."""
    global _JOB
    order = sorted(names, key=lambda n: (HEAVY_FIRST.index(n) if n in HEAVY_FIRST else len(HEAVY_FIRST), n))
    if jobs > 1 and len(order) > 1 and hasattr(os, "fork"):
        _JOB = (stats, cv)
        gc.freeze()  # the workers' collectors leave the inherited heap alone, and so uncopied
        try:
            # A worker that dies (killed, out of memory) fails the pool at once
            # (BrokenProcessPool) instead of leaving its kind waited for.
            pool = concurrent.futures.ProcessPoolExecutor(min(jobs, len(order)), multiprocessing.get_context("fork"),
                                                          initializer=_worker_signals)
            try:
                done = {r[0]: r[1:] for r in pool.map(_draw_kind_in_worker, order)}
            except BaseException:  # Ctrl-C, SIGTERM, a failed kind: the other kinds are not waited for
                pool.shutdown(wait=False, cancel_futures=True)
                for p in multiprocessing.active_children():
                    p.terminate()
                raise
            pool.shutdown()
        finally:
            _JOB = None
            gc.unfreeze()
    else:
        done = {n: _draw_kind(n, stats, cv)[1:] for n in order}
    missing = {}
    for n in names:
        drawn, why = done[n]
        cv.absorb(drawn)
        if why is not None:
            missing[n] = why
    return missing


def main(argv=None):
    ap = cli.ArgumentParser(TOOL, "plots/plot", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="Google Benchmark JSON written by bench")
    ap.add_argument("--out", required=True, help="folder for the charts and the report")
    ap.add_argument("--label", action="append", default=[], help="name of an input in charts and tables "
                    "(once per input, in order; default: the file name)")
    ap.add_argument("--merge", action="store_true", help="read every input as one source (one run split over files)")
    ap.add_argument("--chart", action="append", choices=sorted(CHARTS), help="draw only these charts")
    ap.add_argument("--svg", action="store_true", help="an SVG beside each chart's PNG (slower; the report "
                    "links to it)")
    ap.add_argument("--sor-field", action="append", default=[], metavar="DIR",
                    help="a folder written by sor-solve: its field and residuals go into the SOR section")
    a = ap.parse_args(argv)
    if a.label and len(a.label) != len(a.json):
        ap.error("--label given %d times for %d inputs (give it once per input, in order)"
                 % (len(a.label), len(a.json)))
    status = 0
    runs = []
    for i, path in enumerate(a.json):
        lbl = a.label[i] if a.label else None
        try:
            run = results.load_strict(path, label=lbl)
        except results.LoadError as e:
            # Refused as every tool refuses it; the other inputs are still drawn.
            print("%s: %s" % (TOOL, e), file=sys.stderr)
            status = cli.EXIT_INPUT
            continue
        for w in run.warnings:  # about the context only: the entries are all there
            print("%s: %s: warning: %s" % (TOOL, path, w), file=sys.stderr)
        runs.append(run)
    if not runs:  # every input refused: an earlier report in DIR is left as it was
        return status
    labels = [r.label for r in runs]
    if a.merge:  # one source for the charts; the tables keep each file's name
        for run in runs:
            for e in run.entries:
                e.source = "merged"
    elif len(set(labels)) != len(labels):
        dup = sorted({lbl for lbl in labels if labels.count(lbl) > 1})
        print("plot: several inputs are labelled %s: give --label once per input, or --merge to read them as one "
              "source" % ", ".join(dup), file=sys.stderr)
        return 2
    problem = prepare_out(a.out)
    if problem:
        print("plot: %s" % problem, file=sys.stderr)
        return 2
    stats = collect(runs)
    machines = {}
    for run in runs:
        src = "merged" if a.merge else run.label
        machines.setdefault(src, machine([run]))
    cv = Canvas(a.out, machines, formats=("png", "svg") if a.svg else ("png",))
    cv.assign_styles({k for s in stats for k in (s.run.variant, label(s))},
                     ["merged"] if a.merge else [r.label for r in runs])
    for key, what in (("parbench_git_revision", "git revisions"), ("parbench_profile", "profiles")):
        seen = sorted({str(r.context.get(key)) for r in runs if isinstance(r.context, dict) and r.context.get(key)})
        if len(seen) > 1:
            cv.finding("info", "the inputs come from %d %s (%s): compare across them with care"
                       % (len(seen), what, ", ".join(seen)), "mixed-inputs")
    names = list(dict.fromkeys(a.chart)) if a.chart else sorted(CHARTS)
    missing = []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    for name, why in draw_charts(names, stats, cv, cores).items():
        missing.append((name, why))
        if a.chart:
            print("plot: chart %s not drawn: %s" % (name, why), file=sys.stderr)
            status = 2
    for folder in a.sor_field:
        try:
            sor_field.draw(folder, cv)
        except sor_field.FieldError as e:
            print("plot: --sor-field %s" % e, file=sys.stderr)
            status = 2
    for name in cv.finish():
        print("plot: chart %s could not be written" % name, file=sys.stderr)
        status = 2
    missing += cv.dropped
    written = report_html.write_report(a.out, runs, cv.made, missing, cv.findings)
    with open(os.path.join(a.out, MANIFEST), "w", encoding="utf-8") as f:
        for name, _, _ in cv.made:
            for ext in cv.formats:
                f.write("%s.%s\n" % (name, ext))
        for name in written or ():
            f.write("%s\n" % name)
    nothing = not any(e.disposition == "passed" for r in runs for e in r.entries)
    print("plot: %d charts%s, report in %s" % (len(cv.made), ": nothing was measured (no entry passed)"
                                               if nothing else "", os.path.join(a.out, "index.html")))
    return status


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
