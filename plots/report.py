#!/usr/bin/env python3
"""Turn parbench JSON into charts (PNG and SVG) and an offline report.

    plots/plot RUN.json [RUN.json ...] --out DIR [--chart NAME ...]

DIR receives one PNG and one SVG per chart, index.html (opens with no network:
images are files beside it, styles and the table sorter are inline) and
report.md, its Markdown twin. Every chart is titled with the family, the
input and the machine.

Charts (--chart NAME draws only those named):
  speedup     speedup and parallel efficiency vs threads, ideal line; against
              the family's reference (GEMM: Naive, KMeans: Seq, Sort: Std), same problem
  heatmap     ranks x threads speedup and efficiency (MPI runs)
  strong      strong scaling: time vs threads, log-log, with the ideal line
  weak        weak scaling: runs of configuration cfg:weak (work per thread fixed)
  gflops      GEMM GFLOP/s vs size per variant, error bars from repetitions
  iteration   k-means time per iteration vs N per variant
  throughput  sorts: elements per second vs total per variant (one array each)
  blocks      time vs CUDA block size
  breakdown   k-means host-to-device / kernel / device-to-host / host bars
  ceiling     fraction of the matching ceiling of the same run: GEMM rates of
              the Ceiling family's cuBLAS / OpenBLAS GEMMs (or, without them,
              cuBLAS and OpenBLAS at most threads on the same problem); k-means
              point bandwidth and sort bandwidth (each key and value read and
              written once) of Ceiling CUDA.Copy / HostTriad

Exit status: 0 when every input was read and every requested chart drawn;
2 when an input could not be read (missing, truncated, not Google Benchmark
JSON) or a chart named with --chart had no data, each said in one line; the
other charts are still produced. Without --chart, a chart whose data is not in
the input is listed in the report as not drawn, with the reason.
"""
import argparse
import html
import math
import os
import statistics
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbjson  # noqa: E402

REFERENCE = {"GEMM": "Naive", "KMeans": "Seq", "Sort": "Std"}
MAX_FIGS = 6  # per chart kind: the problems with the most data points


class NoData(Exception):
    """The input holds nothing this chart can draw; the message says what is missing."""


class Stat:
    """One instance across repetitions: median seconds, spread, counters."""

    def __init__(self, entries):
        self.run = entries[0].run
        self.entries = entries
        secs = [e.seconds() for e in entries]
        self.seconds = statistics.median(secs)
        self.stdev = statistics.stdev(secs) if len(secs) > 1 else 0.0
        self.n = len(secs)
        self.path = entries[0].path
        self.on_gpu = entries[0].on_gpu

    def counter(self, key):
        vals = [e.counter(key) for e in entries_with(self.entries, key)]
        return statistics.median(vals) if vals else None

    def counter_stdev(self, key):
        vals = [e.counter(key) for e in entries_with(self.entries, key)]
        return statistics.stdev(vals) if len(vals) > 1 else 0.0

    def arg(self, key, cast=str):
        v = self.run.args.get(key)
        return cast(v) if v is not None else None

    def problem(self):
        """The run's arguments without knobs: equal for all variants of one problem."""
        return self.run.problem()


def entries_with(entries, key):
    return [e for e in entries if e.counter(key) is not None]


def collect(runs):
    groups = {}
    for run in runs:
        for e in run.passed():
            e.path = run.path
            groups.setdefault((run.path, e.run.base()), []).append(e)
    return [Stat(es) for es in groups.values()]


def machine(runs):
    ctx = runs[0].context if runs else {}
    parts = [ctx.get("cpu_model") or ctx.get("host_name", "")]
    gpu = ctx.get("gpu", "")
    if gpu and not gpu.startswith("none"):
        parts.append(gpu)
    return " / ".join(p for p in parts if p)


def work(problem):
    """Size of a problem, for choosing which to draw: the product of its numeric dimensions."""
    w = 1.0
    for k, v in problem:
        if k in ("M", "N", "K", "D", "n"):
            w *= float(v)
    return w


def problem_label(problem):
    return " ".join("%s=%s" % (k, v) for k, v in problem)


# ---- drawing ---------------------------------------------------------------


def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


class Canvas:
    def __init__(self, out, mach):
        self.out, self.mach, self.made = out, mach, []

    def save(self, fig, name, title):
        # Long titles (problem and baseline) wrap to the figure's width.
        width = max(40, int(fig.get_figwidth() * 12))
        fig.suptitle("%s\n%s" % (textwrap.fill(title, width), self.mach), fontsize=10)
        fig.tight_layout()
        for ext in ("png", "svg"):
            fig.savefig(os.path.join(self.out, "%s.%s" % (name, ext)), dpi=110)
        plt().close(fig)
        self.made.append((name, title))


def by_family(stats, family):
    return [s for s in stats if s.run.family == family]


def chart_speedup(stats, cv):
    drawn = 0
    for family, ref_name in REFERENCE.items():
        fam = by_family(stats, family)
        refs = {(s.path, s.problem()): s for s in fam if s.run.variant == ref_name}
        series = {}
        for s in fam:
            t = s.arg("threads", int)
            ref = refs.get((s.path, s.problem()))
            if t is None or ref is None or s.arg("ranks") is not None:
                continue
            series.setdefault(s.problem(), {}).setdefault(s.run.variant, []).append((t, ref.seconds / s.seconds))
        for problem, variants in sorted(series.items(), key=lambda kv: (-sum(map(len, kv[1].values())), -work(kv[0])))[:MAX_FIGS]:
            pyplot = plt()
            fig, (a1, a2) = pyplot.subplots(1, 2, figsize=(10, 4))
            tmax = max(t for pts in variants.values() for t, _ in pts)
            a1.plot([1, tmax], [1, tmax], "k--", lw=1, label="ideal")
            for v, pts in sorted(variants.items()):
                pts.sort()
                a1.plot([t for t, _ in pts], [sp for _, sp in pts], "o-", label=v)
                a2.plot([t for t, _ in pts], [sp / t for t, sp in pts], "o-", label=v)
            a2.axhline(1.0, color="k", ls="--", lw=1)
            a1.set(xlabel="threads", ylabel="speedup vs %s" % ref_name)
            a2.set(xlabel="threads", ylabel="parallel efficiency", ylim=(0, None))
            a1.legend(fontsize=7)
            drawn += 1
            n = sum(1 for name, _ in cv.made if name.startswith("speedup_%s_" % family.lower())) + 1
            cv.save(fig, "speedup_%s_%d" % (family.lower(), n), "%s speedup and efficiency: %s" % (family, problem_label(problem)))
    if not drawn:
        raise NoData("no threaded runs with their family's reference (Naive / Seq) on the same problem")


def chart_heatmap(stats, cv):
    cells = {}
    for s in stats:
        r, t = s.arg("ranks", int), s.arg("threads", int)
        ref_name = REFERENCE.get(s.run.family)
        if r is None or t is None or ref_name is None:
            continue
        cells.setdefault((s.run.family, s.run.variant, s.problem()), {})[(r, t)] = s
    refs = {(s.run.family, s.problem()): s for s in stats if s.run.variant == REFERENCE.get(s.run.family)}
    drawn = 0
    for (family, variant, problem), grid in cells.items():
        ref = refs.get((family, problem))
        against = ref.run.variant if ref is not None else None
        if ref is None and (1, 1) in grid:  # no reference in these files: the grid's own 1 x 1 cell
            ref, against = grid[(1, 1)], "%s at 1 rank x 1 thread (no %s in these files)" % (
                variant, REFERENCE.get(family))
        if ref is None:
            continue
        ranks = sorted({r for r, _ in grid})
        threads = sorted({t for _, t in grid})
        pyplot = plt()
        fig, axes = pyplot.subplots(1, 2, figsize=(10, 4))
        for ax, what in zip(axes, ("speedup", "efficiency")):
            m = [[float("nan")] * len(threads) for _ in ranks]
            for (r, t), s in grid.items():
                sp = ref.seconds / s.seconds
                m[ranks.index(r)][threads.index(t)] = sp if what == "speedup" else sp / (r * t)
            im = ax.imshow(m, origin="lower", cmap="viridis")
            ax.set(xticks=range(len(threads)), xticklabels=threads, yticks=range(len(ranks)), yticklabels=ranks,
                   xlabel="threads per rank", ylabel="ranks", title=what)
            for i in range(len(ranks)):
                for j in range(len(threads)):
                    if not math.isnan(m[i][j]):
                        ax.text(j, i, "%.2f" % m[i][j], ha="center", va="center", color="w", fontsize=7)
            fig.colorbar(im, ax=ax)
        drawn += 1
        cv.save(fig, "heatmap_%d" % drawn, "%s %s ranks x threads: %s; speedup against %s" % (
            family, variant, problem_label(problem), against))
    if not drawn:
        raise NoData("no runs with both ranks and threads arguments (MPI benchmarks)")


def chart_strong(stats, cv):
    series = {}
    for s in stats:
        t = s.arg("threads", int)
        if t is not None and s.arg("ranks") is None:
            series.setdefault((s.run.family, s.problem()), {}).setdefault(s.run.variant, []).append((t, s.seconds, s.stdev))
    good = [(k, v) for k, v in series.items() if any(len(p) > 1 for p in v.values())]
    if not good:
        raise NoData("no variant was run at more than one thread count")
    good.sort(key=lambda kv: (-sum(map(len, kv[1].values())), -work(kv[0][1])))
    for i, ((family, problem), variants) in enumerate(good[:MAX_FIGS]):
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6, 4))
        for v, pts in sorted(variants.items()):
            pts.sort()
            ax.errorbar([t for t, _, _ in pts], [x for _, x, _ in pts], yerr=[e for _, _, e in pts], fmt="o-", label=v, capsize=2)
            t0, x0, _ = pts[0]
            ax.plot([t for t, _, _ in pts], [x0 * t0 / t for t, _, _ in pts], ":", color="grey", lw=1)
        ax.set(xscale="log", yscale="log", xlabel="threads", ylabel="seconds per call (dotted: ideal)")
        ax.legend(fontsize=7)
        cv.save(fig, "strong_%d" % (i + 1), "%s strong scaling: %s" % (family, problem_label(problem)))


def chart_weak(stats, cv):
    pts = {}
    for s in stats:
        t = s.arg("threads", int)
        if s.arg("cfg") == "weak" and t is not None:
            pts.setdefault((s.run.family, s.run.variant), []).append((t, s.seconds))
    if not pts:
        raise NoData("weak scaling needs runs of configuration cfg:weak (problem size proportional to threads); none in the input")
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(6, 4))
    for (family, variant), p in sorted(pts.items()):
        p.sort()
        ax.plot([t for t, _ in p], [p[0][1] / x for _, x in p], "o-", label="%s %s" % (family, variant))
    ax.axhline(1.0, color="k", ls="--", lw=1)
    ax.set(xlabel="threads", ylabel="weak-scaling efficiency T(1)/T(p)")
    ax.legend(fontsize=7)
    cv.save(fig, "weak", "Weak scaling")


def label(s):
    knob = [("%s %s" % (k, s.run.args[k])) for k in pbjson.KNOBS if k in s.run.args]
    return s.run.variant + (" (%s)" % ", ".join(knob) if knob else "")


def draw_lines(cv, lines, xlabel, ylabel, name, title):
    """One log-log line per label: points (x, y) or (x, y, spread), spread as error bars."""
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(7, 4.5))
    for lbl, pts in sorted(lines.items()):
        pts.sort()
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        if len(pts[0]) > 2:
            ax.errorbar(xs, ys, yerr=[p[2] for p in pts], fmt="o-", label=lbl, capsize=2, ms=3)
        else:
            ax.plot(xs, ys, "o-", label=lbl, ms=3)
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel)
    ax.legend(fontsize=6, ncol=2)
    cv.save(fig, name, title)


def at_most_threads(ss):
    """Threaded variants at their most threads only (one line per configuration); the rest as they are."""
    most = {}
    for s in ss:
        t = s.arg("threads", int)
        if t is not None:
            most[s.run.variant] = max(most.get(s.run.variant, 0), t)
    return [s for s in ss if s.arg("threads", int) in (None, most.get(s.run.variant))]


def chart_gflops(stats, cv):
    gemm = [s for s in by_family(stats, "GEMM") if s.counter("GFLOPS") is not None]
    if not gemm:
        raise NoData("no passed GEMM entries with a GFLOPS counter")
    groups = {}
    for s in gemm:
        groups.setdefault((s.arg("op"), s.arg("type")), []).append(s)
    for i, ((op, typ), ss) in enumerate(sorted(groups.items())):
        lines = {}
        for s in at_most_threads(ss):
            size = (s.arg("M", int) * s.arg("N", int) * s.arg("K", int)) ** (1 / 3)
            lines.setdefault(label(s), []).append((size, s.counter("GFLOPS"), s.counter_stdev("GFLOPS")))
        draw_lines(cv, lines, "(M*N*K)^(1/3)", "GFLOP/s", "gflops_%d" % (i + 1), "GEMM %s %s: GFLOP/s vs size" % (op, typ))


def chart_iteration(stats, cv):
    km = [s for s in by_family(stats, "KMeans") if s.counter("seconds_per_iteration")]
    groups = {}
    for s in km:
        groups.setdefault((s.arg("cfg"), s.arg("D"), s.arg("dist")), []).append(s)
    groups = {k: v for k, v in groups.items() if len({s.arg("N") for s in v}) > 1}
    if not groups:
        raise NoData("no k-means configuration was run at more than one N")
    for i, ((cfg, d, dist), ss) in enumerate(sorted(groups.items())):
        lines = {}
        for s in ss:
            lines.setdefault(label(s), []).append((s.arg("N", int), s.counter("seconds_per_iteration") * 1e3))
        draw_lines(cv, lines, "N (points)", "ms per iteration", "iteration_%d" % (i + 1),
                   "KMeans %s (D=%s, %s): time per iteration vs N" % (cfg, d, dist))


def chart_throughput(stats, cv):
    """Sorts of one array: elements/s vs total, one figure per key type,
    payload, order and distribution; threaded variants at their most threads."""
    srt = [s for s in by_family(stats, "Sort") if s.counter("elements_per_second") and s.arg("n") == s.arg("length")]
    groups = {}
    for s in srt:
        groups.setdefault((s.arg("key"), s.arg("payload"), s.arg("order"), s.arg("dist")), []).append(s)
    groups = {k: v for k, v in groups.items() if len({s.arg("n") for s in v}) > 1}
    if not groups:
        raise NoData("no sort of one array was run at more than one total")
    for i, (key, ss) in enumerate(sorted(groups.items())[:MAX_FIGS]):
        lines = {}
        for s in at_most_threads(ss):
            eps = s.counter("elements_per_second")
            spread = eps * s.stdev / s.seconds if s.seconds else 0.0
            lines.setdefault(label(s), []).append((s.arg("n", int), eps, spread))
        draw_lines(cv, lines, "elements (one array)", "elements per second", "throughput_%d" % (i + 1),
                   "Sort %s %s %s %s: elements/s vs size" % key)


def chart_blocks(stats, cv):
    series = {}
    for s in stats:
        b = s.arg("block", int)
        if b is not None:
            series.setdefault((s.run.family, s.problem()), {}).setdefault(s.run.variant, []).append((b, s.seconds, s.stdev))
    good = [(k, v) for k, v in series.items() if any(len(p) > 1 for p in v.values())]
    if not good:
        raise NoData("no CUDA variant was run at more than one block size")
    good.sort(key=lambda kv: -max(x for p in kv[1].values() for _, x, _ in p))
    for i, ((family, problem), variants) in enumerate(good[:MAX_FIGS]):
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6, 4))
        for v, pts in sorted(variants.items()):
            pts.sort()
            ax.errorbar([b for b, _, _ in pts], [x * 1e3 for _, x, _ in pts], yerr=[e * 1e3 for _, _, e in pts], fmt="o-", label=v, capsize=2)
        ax.set(xscale="log", xlabel="block size (threads or tile edge)", ylabel="ms per call")
        ax.set_xticks(sorted({b for p in variants.values() for b, _, _ in p}))
        import matplotlib.ticker

        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.legend(fontsize=7)
        cv.save(fig, "blocks_%d" % (i + 1), "%s time vs block size: %s" % (family, problem_label(problem)))


def chart_breakdown(stats, cv):
    parts = ("h2d_s", "kernel_s", "d2h_s", "host_s")
    groups = {}
    for s in by_family(stats, "KMeans"):
        if all(s.counter(p) is not None for p in parts):
            groups.setdefault(s.problem(), []).append(s)
    if not groups:
        raise NoData("no k-means entries with the h2d_s / kernel_s / d2h_s / host_s counters")
    for i, (problem, ss) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))[:MAX_FIGS]):
        ss.sort(key=label)
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(8, 4.5))
        # Shares of each run (stacked bars on a log axis would misstate them),
        # with the run's total above its bar.
        totals = [sum(s.counter(p) for p in parts) for s in ss]
        bottom = [0.0] * len(ss)
        for p in parts:
            vals = [s.counter(p) / t if t > 0 else 0.0 for s, t in zip(ss, totals)]
            ax.bar(range(len(ss)), vals, bottom=bottom, label=p[:-2])
            bottom = [b + v for b, v in zip(bottom, vals)]
        for x, t in enumerate(totals):
            ax.text(x, 1.01, "%.3g ms" % (t * 1e3), ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(ss)))
        ax.set_xticklabels([label(s) for s in ss], rotation=60, ha="right", fontsize=6)
        ax.set(ylabel="share of run time", ylim=(0, 1.12))
        ax.legend(fontsize=7, loc="lower right")
        cv.save(fig, "breakdown_%d" % (i + 1), "KMeans run breakdown: %s" % problem_label(problem))


def ceilings(stats):
    """Ceiling-family rates of each input file: {(path, what): value}."""
    out = {}
    for s in by_family(stats, "Ceiling"):
        v = s.counter("GFLOPS") or s.counter("GBps")
        if v:
            out[(s.path, s.run.variant)] = v
    return out


def chart_ceiling(stats, cv):
    """GEMM variants against the GEMM rate ceilings and k-means against the
    bandwidth ceilings, of the same run. Without Ceiling entries, cuBLAS and
    OpenBLAS (most threads) on the same problem stand in for the GEMM rates."""
    ceil = ceilings(stats)
    gemm = [s for s in by_family(stats, "GEMM") if s.counter("GFLOPS")]
    probs = {}
    for s in gemm:
        probs.setdefault((s.path, s.problem()), []).append(s)
    drawn = 0
    for (path, problem), ss in sorted(probs.items(), key=lambda kv: -max(x.counter("flops_per_call") or 0 for x in kv[1])):
        typ = dict(problem).get("type", "f32")
        gpu_name = "cuBLAS.%sGEMM" % ("D" if typ == "f64" else "S")
        cpu_name = "OpenBLAS.%sGEMM" % ("D" if typ == "f64" else "S")
        gpu_ref = ceil.get((path, gpu_name))
        cpu_ref = ceil.get((path, cpu_name))
        gpu_lbl, cpu_lbl = "Ceiling " + gpu_name, "Ceiling " + cpu_name
        if gpu_ref is None:
            same = [s for s in ss if s.run.variant == "cuBLAS"]
            gpu_ref, gpu_lbl = (same[0].counter("GFLOPS"), "cuBLAS") if same else (None, "")
        if cpu_ref is None:
            cpu = [s for s in ss if s.run.variant == "OpenBLAS"]
            top = max(cpu, key=lambda s: s.arg("threads", int)) if cpu else None
            cpu_ref, cpu_lbl = (top.counter("GFLOPS"), "OpenBLAS %s threads" % top.arg("threads")) if top else (None, "")
        rows = []
        for s in ss:
            gpu = s.on_gpu
            ref, lbl = (gpu_ref, gpu_lbl) if gpu else (cpu_ref, cpu_lbl)
            if ref:
                rows.append((label(s), s.counter("GFLOPS") / ref, lbl, gpu))
        drawn += draw_fractions(cv, rows, "ceiling_%d" % (drawn + 1), "GEMM fraction of ceiling: %s" % problem_label(problem))
        if drawn >= MAX_FIGS:
            break
    # K-means reads its points once an iteration at least: N * D * 8 bytes.
    kprobs = {}
    for s in by_family(stats, "KMeans"):
        if s.counter("seconds_per_iteration"):
            kprobs.setdefault((s.path, s.problem()), []).append(s)
    for (path, problem), ss in sorted(kprobs.items(), key=lambda kv: -work(kv[0][1])):
        gpu_ref, cpu_ref = ceil.get((path, "CUDA.Copy")), ceil.get((path, "HostTriad"))
        rows = []
        for s in ss:
            gbps = s.arg("N", int) * s.arg("D", int) * 8 / s.counter("seconds_per_iteration") * 1e-9
            gpu = s.on_gpu
            ref = gpu_ref if gpu else cpu_ref
            if ref:
                rows.append((label(s), gbps / ref, "Ceiling CUDA.Copy" if gpu else "Ceiling HostTriad", gpu))
        if drawn < 2 * MAX_FIGS:
            drawn += draw_fractions(cv, rows, "ceiling_%d" % (drawn + 1),
                                    "KMeans points read per iteration, fraction of bandwidth ceiling: %s" % problem_label(problem))
    # Sorts move each key (and value) in and out once at least: the GBps counter.
    sprobs = {}
    for s in by_family(stats, "Sort"):
        if s.counter("GBps"):
            sprobs.setdefault((s.path, s.problem()), []).append(s)
    sdrawn = 0
    for (path, problem), ss in sorted(sprobs.items(), key=lambda kv: -int(dict(kv[0][1]).get("n", 0))):
        gpu_ref, cpu_ref = ceil.get((path, "CUDA.Copy")), ceil.get((path, "HostTriad"))
        rows = []
        for s in ss:
            gpu = s.on_gpu
            ref = gpu_ref if gpu else cpu_ref
            if ref:
                rows.append((label(s), s.counter("GBps") / ref, "Ceiling CUDA.Copy" if gpu else "Ceiling HostTriad", gpu))
        if rows and sdrawn < 2:
            sdrawn += draw_fractions(cv, rows, "ceiling_%d" % (drawn + 1),
                                     "Sort bandwidth (keys and values in and out once), fraction of ceiling: %s" % problem_label(problem))
            drawn += rows != []
    if not drawn:
        raise NoData("no GEMM, k-means or sort entries with a ceiling in the same run (Ceiling family, or cuBLAS / OpenBLAS beside them)")


def draw_fractions(cv, rows, name, title):
    if not rows:
        return 0
    rows.sort(key=lambda r: (r[3], -r[1]))
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(8, 0.9 + 0.3 * len(rows)))
    ax.barh(range(len(rows)), [r[1] for r in rows], color=["tab:green" if r[3] else "tab:blue" for r in rows])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(["%s / %s" % (r[0], r[2]) for r in rows], fontsize=6)
    ax.axvline(1.0, color="k", lw=1)
    ax.set(xlabel="fraction of the ceiling measured in the same run")
    cv.save(fig, name, title)
    return 1


CHARTS = {
    "speedup": chart_speedup,
    "heatmap": chart_heatmap,
    "strong": chart_strong,
    "weak": chart_weak,
    "gflops": chart_gflops,
    "iteration": chart_iteration,
    "throughput": chart_throughput,
    "blocks": chart_blocks,
    "breakdown": chart_breakdown,
    "ceiling": chart_ceiling,
}

# ---- report ----------------------------------------------------------------

TABLE_COUNTERS = ("GFLOPS", "seconds_per_iteration", "lloyd_iterations", "elements_per_second", "cpu_threads", "block")

SORTER = """
<script>
document.querySelectorAll('table.sortable th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0], rows = Array.from(body.rows);
  const asc = th.dataset.asc = th.dataset.asc === '1' ? '0' : '1';
  const key = r => { const t = r.cells[col].dataset.v ?? r.cells[col].textContent; const n = parseFloat(t); return isNaN(n) ? t : n; };
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x > y ? 1 : x < y ? -1 : 0) * (asc === '1' ? 1 : -1); });
  rows.forEach(r => body.appendChild(r));
}));
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  document.body.dataset.imagesTotal = imgs.length;
  document.body.dataset.imagesLoaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
});
</script>
"""


def table_rows(runs):
    rows = []
    for run in runs:
        groups = {}
        for e in run.entries:
            if e.aggregate:
                continue
            groups.setdefault(e.run.base(), []).append(e)
        for base, es in groups.items():
            row = {"name": base, "family": es[0].run.family, "disposition": es[0].disposition, "message": es[0].message}
            if es[0].disposition == "passed":
                st = Stat(es)
                row.update(seconds=st.seconds, n=st.n)
                for c in TABLE_COUNTERS:
                    v = st.counter(c)
                    if v is not None:
                        row[c] = v
            rows.append(row)
    return rows


def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v
    return str(v)


def write_report(out, runs, made, missing):
    mach = machine(runs)
    rows = table_rows(runs)
    cols = ["name", "disposition", "seconds", "n"] + list(TABLE_COUNTERS) + ["message"]
    ctx_keys = sorted({k for r in runs for k in r.context})
    h = ["<!doctype html><html><head><meta charset='utf-8'><title>parbench report</title>",
         "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:12px}"
         "td,th{border:1px solid #ccc;padding:2px 6px}th{cursor:pointer;background:#eee}"
         "img{max-width:100%;border:1px solid #ddd;margin:.5em 0}</style></head><body>",
         "<h1>parbench report</h1><p>%s</p>" % html.escape(mach),
         "<h2>Machine and build</h2><table>"]
    for k in ctx_keys:
        vals = {str(r.context.get(k, "")) for r in runs}
        h.append("<tr><th>%s</th><td>%s</td></tr>" % (html.escape(k), html.escape(" | ".join(sorted(vals)))))
    h.append("</table><p>Inputs: %s</p>" % html.escape(", ".join(r.path for r in runs)))
    h.append("<h2>Charts</h2>")
    md = ["# parbench report", "", mach, "", "## Machine and build", "", "| key | value |", "| --- | --- |"]
    md += ["| %s | %s |" % (k, " \\| ".join(sorted({str(r.context.get(k, '')) for r in runs}))) for k in ctx_keys]
    md += ["", "## Charts", ""]
    for name, title in made:
        h.append("<h3>%s</h3><a href='%s.svg'><img src='%s.png' alt='%s'></a>" % (html.escape(title), name, name, html.escape(title)))
        md += ["### %s" % title, "", "![%s](%s.png)" % (title, name), ""]
    if missing:
        h.append("<h3>Not drawn</h3><ul>%s</ul>" % "".join("<li>%s: %s</li>" % (html.escape(c), html.escape(m)) for c, m in missing))
        md += ["### Not drawn", ""] + ["- %s: %s" % (c, m) for c, m in missing] + [""]
    md += ["## Results", ""]
    for family in sorted({r["family"] for r in rows}):
        fam = [r for r in rows if r["family"] == family]
        h.append("<h2>%s</h2><table class='sortable'><thead><tr>%s</tr></thead><tbody>" % (html.escape(family), "".join("<th>%s</th>" % c for c in cols)))
        md += ["### %s" % family, "", "| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
        for r in fam:
            cells = []
            for c in cols:
                v = r.get(c, "")
                cells.append("<td data-v='%s'>%s</td>" % (html.escape(str(v)), html.escape(fmt(v))))
            h.append("<tr>%s</tr>" % "".join(cells))
            md.append("| " + " | ".join(fmt(r.get(c, "")).replace("|", "\\|") for c in cols) + " |")
        h.append("</tbody></table>")
        md.append("")
    h.append(SORTER + "</body></html>")
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(h))
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="plots/plot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="Google Benchmark JSON written by bench")
    ap.add_argument("--out", required=True, help="folder for the charts and the report")
    ap.add_argument("--chart", action="append", choices=sorted(CHARTS), help="draw only these charts")
    a = ap.parse_args(argv)
    status = 0
    runs = []
    for path in a.json:
        try:
            runs.append(pbjson.load(path))
        except pbjson.LoadError as e:
            print("plot: %s" % e, file=sys.stderr)
            status = 2
    os.makedirs(a.out, exist_ok=True)
    stats = collect(runs)
    cv = Canvas(a.out, machine(runs))
    missing = []
    for name in a.chart or sorted(CHARTS):
        try:
            CHARTS[name](stats, cv)
        except NoData as e:
            missing.append((name, str(e)))
            print("plot: chart %s not drawn: %s" % (name, e), file=sys.stderr)
            if a.chart:
                status = 2
    write_report(a.out, runs, cv.made, missing)
    print("plot: %d charts, report in %s" % (len(cv.made), os.path.join(a.out, "index.html")))
    if not runs:
        status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
