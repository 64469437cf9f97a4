#!/usr/bin/env python3
"""Turn parbench JSON into charts (PNG and SVG) and an offline report.

    plots/plot RUN.json [RUN.json ...] --out DIR [--label NAME ...] [--merge] [--chart NAME ...]

DIR receives one PNG and one SVG per chart, index.html (opens with no network:
images are files beside it, styles and the table sorter are inline) and
report.md, its Markdown twin. Charts and report files an earlier report left
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
  gflops      GEMM GFLOP/s vs size per variant, error bars from repetitions
  iteration   k-means time per iteration vs N per variant
  throughput  sorts: elements per second vs total per variant (one array each)
  blocks      time vs CUDA block size
  breakdown   k-means host-to-device / kernel / device-to-host / host shares
  ceiling     each entry's rate (the counter its JSON names) as a fraction of
              the ceiling of the same kind, device and source; a fraction above
              1 + %(noise)s is drawn as a measurement problem, not a result

Derived figures are defined in plots/derived.py.

Exit status: 0 when every input was read in full and every requested chart
drawn; 2 when an input could not be read or only in part (missing, a
directory, not JSON, cut off mid-run, malformed entries), when a chart named
with --chart had no data, or when DIR cannot be used. Each problem is one line
on stderr; everything that can be drawn is still drawn. Without --chart, a
chart whose data is not in the input is listed in the report as not drawn,
with the reason.
"""
import argparse
import math
import os
import re
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import derived  # noqa: E402
import pbjson  # noqa: E402
import report_html  # noqa: E402

__doc__ = __doc__ % {"noise": derived.CEILING_NOISE}

MAX_FIGS = 6  # per chart kind and family: the problems with the most data points
MANIFEST = ".parbench-report"  # what the last report wrote into DIR


class NoData(Exception):
    """The input holds nothing this chart can draw; the message says what is missing."""


class Stat:
    """One instance of one source across repetitions: median seconds, spread, counters."""

    def __init__(self, entries):
        e0 = entries[0]
        self.run, self.entries, self.source = e0.run, entries, e0.source
        self.role, self.device, self.rate = e0.role, e0.device, e0.rate
        secs = [e.seconds() for e in entries]
        self.seconds = derived.median(secs)
        self.stdev = _stdev(secs)
        self.cv = derived.cv(secs)
        self.n = len(secs)

    def counter(self, key):
        vals = [e.counter(key) for e in self.entries if e.counter(key) is not None]
        return derived.median(vals) if vals else None

    def counter_stdev(self, key):
        return _stdev([e.counter(key) for e in self.entries if e.counter(key) is not None])

    def arg(self, key, cast=str):
        v = self.run.args.get(key)
        if v is None:
            return None
        try:
            return cast(v)
        except ValueError:
            return None

    def problem(self):
        """The run's arguments without knobs: equal for all variants of one problem."""
        return self.run.problem()

    def workers(self):
        """threads x ranks (1 where the run name has neither)."""
        return (self.arg("threads", int) or 1) * (self.arg("ranks", int) or 1)


def _stdev(vals):
    if len(vals) < 2:
        return 0.0
    mean = sum(vals) / len(vals)
    return math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))


def collect(runs):
    groups = {}
    for run in runs:
        for e in run.passed():
            if e.seconds() is not None:
                groups.setdefault((e.source, e.run.base()), []).append(e)
    return [Stat(es) for es in groups.values()]


def machine(runs):
    ctx = runs[0].context if runs else {}
    parts = [ctx.get("cpu_model") or ctx.get("host_name", "")]
    gpu = ctx.get("gpu", "")
    if isinstance(gpu, str) and gpu and not gpu.startswith("none"):
        parts.append(gpu)
    return " / ".join(str(p) for p in parts if p)


def work(problem):
    """Size of a problem, for choosing which to draw: the product of its numeric dimensions."""
    w = 1.0
    for k, v in problem:
        if k in ("M", "N", "K", "D", "n"):
            try:
                w *= float(v)
            except ValueError:
                pass
    return w


def problem_label(problem):
    return " ".join("%s=%s" % (k, v) for k, v in problem)


def several_sources(stats):
    return len({s.source for s in stats}) > 1


def source_suffix(s, several):
    return " [%s]" % s.source if several else ""


def label(s, several=False):
    knob = [("%s %s" % (k, s.run.args[k])) for k in pbjson.KNOBS if k in s.run.args]
    return s.run.variant + (" (%s)" % ", ".join(knob) if knob else "") + source_suffix(s, several)


def missing_roles(stats, what):
    """NoData for files written before parbench described its entries."""
    if stats and all(s.role is None for s in stats):
        return NoData("%s needs the roles parbench writes into each entry (schema 1); these files predate them: "
                      "ci/upgrade_json.py FILE stamps an old file" % what)
    return None


# ---- drawing ---------------------------------------------------------------


def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def thread_axis(ax, values):
    """A log2 thread axis with a tick at each thread count, written as integers."""
    import matplotlib.ticker

    ticks = sorted(set(values))
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: "%d" % round(x)))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())


MARKERS = ("o", "s", "^", "D", "v", "P")
LINES = ("-", "--", ":", "-.")


class Canvas:
    """Saves figures into the report folder and remembers them, what looked
    wrong while drawing (findings for the report's summary) and the problems
    left out by the per-family limit. `machines`: {source: machine}."""

    def __init__(self, out, machines):
        if isinstance(machines, str):
            machines = {None: machines}
        self.out, self.machines, self.made, self.findings, self.dropped = out, machines, [], [], []
        self.colours, self.sources = {}, {}

    def machine(self, sources):
        known = [self.machines.get(src) for src in sorted(sources, key=str)] if sources else []
        if not known or any(m is None for m in known):
            known = list(self.machines.values())
        names = sorted({m for m in known if m})
        if len(names) <= 1:
            return names[0] if names else ""
        return "; ".join("%s: %s" % (src, self.machines.get(src, ""))
                         for src in sorted(sources or self.machines, key=str))

    def save(self, fig, name, title, section, sources=None):
        # Long titles (problem and baseline) wrap to the figure's width.
        width = max(40, int(fig.get_figwidth() * 12))
        mach = textwrap.fill(self.machine(sources), width)
        fig.suptitle("%s\n%s" % (textwrap.fill(title, width), mach), fontsize=10)
        fig.tight_layout()
        for ext in ("png", "svg"):
            # bbox "tight": a legend placed beside the axes stays in the picture.
            fig.savefig(os.path.join(self.out, "%s.%s" % (name, ext)), dpi=110, bbox_inches="tight")
        plt().close(fig)
        self.made.append((name, title, section))

    def style(self, key, source=None):
        """The same colour for the same variant in every chart of the report
        (20 distinct hues: tab20's strong ones, then its light ones); its knob
        values and the sources differ by marker and line style."""
        variant, _, knob = key.partition(" (")
        if variant not in self.colours:
            i = len(self.colours)
            self.colours[variant] = (plt().get_cmap("tab20")((2 * i) % 20 + (i // 10) % 2), {})
        colour, knobs = self.colours[variant]
        knobs.setdefault(knob, len(knobs))
        if source not in self.sources:
            self.sources[source] = len(self.sources)
        m = knobs[knob] + self.sources[source]
        return {"color": colour, "marker": MARKERS[m % len(MARKERS)],
                "ls": LINES[(knobs[knob] + 2 * self.sources[source]) % len(LINES)]}

    def drop(self, chart, problems):
        if problems:
            self.dropped.append((chart, "not drawn for %d more problem%s (at most %d a family): %s" % (
                len(problems), "" if len(problems) == 1 else "s", MAX_FIGS, "; ".join(problems))))

    def name(self, stem):
        n = sum(1 for m in self.made if re.fullmatch(re.escape(stem) + r"_\d+", m[0])) + 1
        return "%s_%d" % (stem, n)

    def finding(self, severity, text):
        if (severity, text) not in self.findings:
            self.findings.append((severity, text))


class FamilyLimit:
    """At most MAX_FIGS figures of a chart kind a family; the problems beyond
    are listed under "Charts not drawn"."""

    def __init__(self, cv, chart):
        self.cv, self.chart, self.count, self.left = cv, chart, {}, []

    def full(self, family, problem):
        if self.count.get(family, 0) < MAX_FIGS:
            return False
        self.left.append("%s %s" % (family, problem_label(problem)))
        return True

    def drew(self, family):
        self.count[family] = self.count.get(family, 0) + 1

    def done(self):
        self.cv.drop(self.chart, self.left)


def legend(ax, n, **kw):
    """Inside the axes for a few series; beside them, out of the data's way, for more."""
    if n > 3:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  ncol=1 if n <= 24 else 2, **kw)
    else:
        ax.legend(fontsize=7, **kw)


def plain_log(axis):
    """A log axis labelled with plain numbers (1, 2, 5 of each decade)."""
    import matplotlib.ticker

    lo, hi = sorted(abs(v) for v in axis.get_view_interval())
    wide = lo > 0 and hi / lo > 300  # beyond 2.5 decades, 1-2-5 ticks would collide
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def natural(text):
    """Sort key that orders the numbers inside labels by value (block 32 < block 128)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def by_family(stats, family):
    return [s for s in stats if s.run.family == family]


def baselines(stats):
    """{(source, family, problem): Stat} of the entries marked baseline."""
    return {(s.source, s.run.family, s.problem()): s for s in stats if s.role == "baseline"}


def own_single(stats):
    """{(source, family, variant, problem): Stat} of each variant's 1-thread (1-rank) run."""
    out = {}
    for s in stats:
        if s.arg("threads", int) == 1 and s.arg("ranks", int) in (None, 1):
            out[(s.source, s.run.family, s.run.variant, s.problem())] = s
    return out


def chart_speedup(stats, cv):
    """Per problem: speedup over the family baseline (left) and parallel
    efficiency against the variant's own 1-thread run (right), vs threads."""
    absent = missing_roles(stats, "speedup")
    if absent:
        raise absent
    base, single = baselines(stats), own_single(stats)
    several = several_sources(stats)
    series = {}
    for s in stats:
        t = s.arg("threads", int)
        if t is None or s.arg("ranks") is not None or s.role != "variant":
            continue
        series.setdefault((s.run.family, s.problem()), []).append(s)
    drawn = 0
    # Problems with a baseline entry first: their left panel has something to show.
    has_base = {(fam, prob) for (_, fam, prob) in base}
    ordered = sorted(series.items(), key=lambda kv: (kv[0] not in has_base, -len(kv[1]), -work(kv[0][1])))
    limit = FamilyLimit(cv, "speedup")
    for (family, problem), ss in ordered:
        if limit.full(family, problem):
            continue
        lines = {}
        for s in ss:
            lines.setdefault((s.source, s.run.variant), []).append(s)
        speed, eff, no_base, no_single = {}, {}, set(), set()
        for (source, variant), pts in lines.items():
            pts.sort(key=lambda s: s.arg("threads", int))
            lbl = variant + (" [%s]" % source if several else "")
            b = base.get((source, family, problem))
            if b is not None:
                speed[lbl] = [(s.arg("threads", int), derived.speedup(b.seconds, s.seconds)) for s in pts]
            else:
                no_base.add(source)
            one = single.get((source, family, variant, problem))
            if one is not None:
                eff[lbl] = [(s.arg("threads", int), derived.efficiency(one.seconds, s.seconds, s.workers()))
                            for s in pts]
                for t, e in eff[lbl]:
                    if e > 1.0 + derived.CEILING_NOISE:
                        cv.finding("info", "%s %s %s: efficiency %.2f at %d threads (superlinear: caches, or a slow "
                                           "1-thread run)" % (family, lbl, problem_label(problem), e, t))
                    elif t > 1 and e < derived.LOW_EFFICIENCY:
                        cv.finding("warning", "%s %s %s: efficiency %.3g at %d threads, slower than one thread "
                                              "would be: more threads than free cores, or a disturbed run"
                                   % (family, lbl, problem_label(problem), e, t))
            else:
                no_single.add(lbl)
        if not speed and not eff:
            continue
        pyplot = plt()
        fig, (a1, a2) = pyplot.subplots(1, 2, figsize=(11, 4.2))
        threads = [t for pts in list(speed.values()) + list(eff.values()) for t, _ in pts]
        # One style per series, in both panels and in every chart.
        style = {lbl: cv.style(lbl.split(" [")[0], lbl.partition(" [")[2] or None) for lbl in set(speed) | set(eff)}
        for lbl, pts in sorted(speed.items()):
            a1.plot([t for t, _ in pts], [v for _, v in pts], label=lbl, **style[lbl])
        for lbl, pts in sorted(eff.items()):
            a2.plot([t for t, _ in pts], [v for _, v in pts], label=lbl, **style[lbl])
        a2.axhline(1.0, color="k", ls="--", lw=1, label="ideal")
        base_names = sorted({b.run.variant for (src, fam, prob), b in base.items()
                             if fam == family and prob == problem})
        a1.set(ylabel="speedup over %s (family baseline)" % "/".join(base_names or ["baseline"]), xlabel="threads")
        a2.set(ylabel="parallel efficiency\n(speedup over own 1-thread run / threads)", xlabel="threads",
               ylim=(0, max(1.1, max((v for pts in eff.values() for _, v in pts), default=1) * 1.05)))
        for ax in (a1, a2):
            thread_axis(ax, threads)
            ax.grid(True, alpha=0.3)
        if not speed:
            a1.text(0.5, 0.5, "no baseline entry for this problem\nin %s" % ", ".join(sorted(no_base)),
                    ha="center", va="center", transform=a1.transAxes, fontsize=8)
        elif not eff:
            legend(a1, len(speed))
        if eff:
            legend(a2, len(eff) + 1)
        if no_single:
            a2.text(0.02, 0.02, "no 1-thread run, efficiency not drawn: %s" % ", ".join(sorted(no_single)),
                    transform=a2.transAxes, fontsize=6, va="bottom")
        limit.drew(family)
        drawn += 1
        cv.save(fig, cv.name("speedup_%s" % family.lower()),
                "%s speedup and parallel efficiency: %s" % (family, problem_label(problem)), family,
                {s.source for s in ss})
    limit.done()
    if not drawn:
        raise NoData("no threaded variant (without ranks: those are in the heatmap) with a family baseline or a "
                     "1-thread run of its own on the same problem")


def chart_heatmap(stats, cv):
    """Ranks x threads grids: speedup over the family baseline (0 .. ideal)
    and efficiency against the grid's own 1 x 1 cell (0 .. 1)."""
    cells = {}
    for s in stats:
        r, t = s.arg("ranks", int), s.arg("threads", int)
        if r is None or t is None:
            continue
        cells.setdefault((s.source, s.run.family, s.run.variant, s.problem()), {})[(r, t)] = s
    if not cells:
        raise NoData("no runs with both ranks and threads arguments (benchmarks run under mpirun)")
    base = baselines(stats)
    pyplot = plt()
    drawn = 0
    for (source, family, variant, problem), grid in sorted(cells.items()):
        b, one = base.get((source, family, problem)), grid.get((1, 1))
        ranks = sorted({r for r, _ in grid})
        threads = sorted({t for _, t in grid})
        panels = []
        if b is not None:
            m = _grid(ranks, threads, grid, lambda s: derived.speedup(b.seconds, s.seconds))
            panels.append(("speedup over %s (family baseline)" % b.run.variant, m, max(r * t for r, t in grid)))
        if one is not None:
            m = _grid(ranks, threads, grid, lambda s: derived.efficiency(one.seconds, s.seconds, s.workers()))
            panels.append(("efficiency against its own 1 rank x 1 thread", m, 1.0))
        if not panels:
            cv.finding("info", "%s %s %s [%s]: neither a baseline entry nor a 1 x 1 cell; heatmap not drawn"
                       % (family, variant, problem_label(problem), source))
            continue
        if b is None:
            cv.finding("info", "%s %s %s: no baseline entry in the same source, so the heatmap shows efficiency only"
                       % (family, variant, problem_label(problem)))
        fig, axes = pyplot.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), squeeze=False)
        for ax, (what, m, top) in zip(axes[0], panels):
            # Anchored scale: 0 is no speedup, the top is the ideal (ranks x
            # threads for speedup, 1 for efficiency); values beyond are the top colour.
            im = ax.imshow(m, origin="lower", cmap="viridis", vmin=0.0, vmax=top)
            ax.set(xticks=range(len(threads)), xticklabels=threads, yticks=range(len(ranks)), yticklabels=ranks,
                   xlabel="threads per rank", ylabel="ranks", title=what)
            ax.title.set_fontsize(8)
            for i in range(len(ranks)):
                for j in range(len(threads)):
                    if not math.isnan(m[i][j]):
                        ax.text(j, i, "%.2f" % m[i][j], ha="center", va="center", fontsize=7,
                                color="k" if m[i][j] > 0.6 * top else "w")
            fig.colorbar(im, ax=ax)
        drawn += 1
        several = len({k[0] for k in cells}) > 1
        cv.save(fig, cv.name("heatmap"), "%s %s ranks x threads: %s%s%s" % (
            family, variant, problem_label(problem), " [%s]" % source if several else "",
            "" if b is not None else " (no baseline entry: speedup not drawn)"), family, {source})
    if not drawn:
        raise NoData("ranks x threads runs without a family baseline or a 1 x 1 cell in the same source")


def _grid(ranks, threads, grid, value):
    m = [[float("nan")] * len(threads) for _ in ranks]
    for (r, t), s in grid.items():
        m[ranks.index(r)][threads.index(t)] = value(s)
    return m


def chart_strong(stats, cv):
    series = {}
    several = several_sources(stats)
    for s in stats:
        t = s.arg("threads", int)
        if t is not None and s.arg("ranks") is None and s.role != "ceiling":
            series.setdefault((s.run.family, s.problem()), {}).setdefault((s.run.variant, s.source), []).append(
                (t, s.seconds, s.stdev))
    good = [(k, v) for k, v in series.items() if any(len(p) > 1 for p in v.values())]
    if not good:
        raise NoData("no variant was run at more than one thread count (without ranks: those are in the heatmap)")
    good.sort(key=lambda kv: (-sum(map(len, kv[1].values())), -work(kv[0][1])))
    limit = FamilyLimit(cv, "strong")
    for (family, problem), variants in good:
        if limit.full(family, problem):
            continue
        limit.drew(family)
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6.5, 4.2))
        threads = []
        for (v, source), pts in sorted(variants.items()):
            pts.sort()
            threads += [t for t, _, _ in pts]
            st = cv.style(v, source)
            ax.errorbar([t for t, _, _ in pts], [x for _, x, _ in pts], yerr=[e for _, _, e in pts],
                        label=v + (" [%s]" % source if several else ""), capsize=2, **st)
            t0, x0, _ = pts[0]
            ax.plot([t for t, _, _ in pts], [x0 * t0 / t for t, _, _ in pts], ":", color=st["color"], lw=1)
        ax.set(yscale="log", xlabel="threads", ylabel="seconds per call (dotted: ideal from the first point)")
        plain_log(ax.yaxis)
        thread_axis(ax, threads)
        ax.grid(True, alpha=0.3)
        legend(ax, len(variants))
        cv.save(fig, cv.name("strong"), "%s strong scaling: %s" % (family, problem_label(problem)), family,
                {src for _, src in variants})
    limit.done()


def draw_lines(cv, lines, xlabel, ylabel, name, title, section, sources=None):
    """One log-log line per label: points (x, y) or (x, y, spread), spread as
    error bars. Labels may end in " [source]"; one size only: horizontal bars."""
    pyplot = plt()
    if len({p[0] for pts in lines.values() for p in pts}) == 1:
        x = next(iter(lines.values()))[0][0]
        rows = sorted(((pts[0][1], pts[0][2] if len(pts[0]) > 2 else 0.0, lbl) for lbl, pts in lines.items()),
                      key=lambda r: r[0])
        fig, ax = pyplot.subplots(figsize=(7.5, 1.0 + 0.28 * len(rows)))
        ax.barh(range(len(rows)), [r[0] for r in rows], xerr=[r[1] for r in rows], capsize=2,
                color=[cv.style(r[2].split(" [")[0], r[2].partition(" [")[2] or None)["color"] for r in rows])
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r[2] for r in rows], fontsize=6)
        ax.set(xscale="log", xlabel="%s (%s = %g)" % (ylabel, xlabel, x))
        plain_log(ax.xaxis)
        ax.grid(True, alpha=0.3, axis="x")
        cv.save(fig, name, title, section, sources)
        return
    fig, ax = pyplot.subplots(figsize=(7.5, 4.8))
    for lbl, pts in sorted(lines.items(), key=lambda kv: natural(kv[0])):
        pts.sort()
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        st = cv.style(lbl.split(" [")[0], lbl.partition(" [")[2] or None)
        if len(pts[0]) > 2:
            ax.errorbar(xs, ys, yerr=[p[2] for p in pts], label=lbl, capsize=2, ms=3, **st)
        else:
            ax.plot(xs, ys, label=lbl, ms=3, **st)
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel)
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.grid(True, alpha=0.3, which="both")
    legend(ax, len(lines))
    cv.save(fig, name, title, section, sources)


def at_most_threads(ss):
    """Threaded variants at their most threads only (one line per variant and source)."""
    most = {}
    for s in ss:
        t = s.arg("threads", int)
        if t is not None:
            key = (s.source, s.run.variant)
            most[key] = max(most.get(key, 0), t)
    return [s for s in ss if s.arg("threads", int) in (None, most.get((s.source, s.run.variant)))]


def chart_gflops(stats, cv):
    gemm = [s for s in by_family(stats, "GEMM") if s.counter("GFLOPS") is not None]
    if not gemm:
        raise NoData("no passed GEMM entries with a GFLOPS counter")
    several = several_sources(gemm)
    groups = {}
    for s in gemm:
        groups.setdefault((s.arg("op"), s.arg("type")), []).append(s)
    for (op, typ), ss in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        lines = {}
        for s in at_most_threads(ss):
            size = (s.arg("M", int) * s.arg("N", int) * s.arg("K", int)) ** (1 / 3)
            lines.setdefault(label(s, several), []).append((size, s.counter("GFLOPS"), s.counter_stdev("GFLOPS")))
        draw_lines(cv, lines, "(M*N*K)^(1/3)", "GFLOP/s (error bars: spread of repetitions)", cv.name("gflops"),
                   "GEMM %s %s: GFLOP/s vs size" % (op, typ), "GEMM", {s.source for s in ss})


def chart_iteration(stats, cv):
    km = [s for s in by_family(stats, "KMeans") if s.counter("seconds_per_iteration")]
    several = several_sources(km)
    groups = {}
    for s in km:
        groups.setdefault((s.arg("cfg"), s.arg("D"), s.arg("dist")), []).append(s)
    groups = {k: v for k, v in groups.items() if len({s.arg("N") for s in v}) > 1}
    if not groups:
        raise NoData("no k-means configuration was run at more than one N")
    for (cfg, d, dist), ss in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        lines = {}
        for s in ss:
            spi = s.counter("seconds_per_iteration")
            spread = spi * s.stdev / s.seconds if s.seconds else 0.0
            lines.setdefault(label(s, several), []).append((s.arg("N", int), spi * 1e3, spread * 1e3))
        ks = sorted({s.arg("K", int) for s in ss if s.arg("K", int) is not None})
        kdesc = "K=%d" % ks[0] if len(ks) == 1 else "K varies with N: %s" % ", ".join(map(str, ks))
        draw_lines(cv, lines, "N (points)", "ms per iteration", cv.name("iteration"),
                   "KMeans %s (D=%s, %s, %s): time per iteration vs N" % (cfg, d, kdesc, dist), "KMeans",
                   {s.source for s in ss})


def chart_throughput(stats, cv):
    """Sorts of one array: elements/s vs total, one figure per key type,
    payload, order and distribution; threaded variants at their most threads."""
    srt = [s for s in by_family(stats, "Sort") if s.counter("elements_per_second") and s.arg("n") == s.arg("length")]
    several = several_sources(srt)
    groups = {}
    for s in srt:
        groups.setdefault((s.arg("key"), s.arg("payload"), s.arg("order"), s.arg("dist")), []).append(s)
    groups = {k: v for k, v in groups.items() if len({s.arg("n") for s in v}) > 1}
    if not groups:
        raise NoData("no sort of one array was run at more than one total")
    for key, ss in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0]))[:MAX_FIGS]:
        lines = {}
        for s in at_most_threads(ss):
            eps = s.counter("elements_per_second")
            spread = eps * s.stdev / s.seconds if s.seconds else 0.0
            lines.setdefault(label(s, several), []).append((s.arg("n", int), eps, spread))
        draw_lines(cv, lines, "elements (one array)", "elements per second", cv.name("throughput"),
                   "Sort %s %s %s %s: elements/s vs size" % key, "Sort", {s.source for s in ss})


def chart_blocks(stats, cv):
    several = several_sources(stats)
    series = {}
    for s in stats:
        b = s.arg("block", int)
        if b is not None:
            series.setdefault((s.run.family, s.problem()), {}).setdefault(
                s.run.variant + (" [%s]" % s.source if several else ""), []).append((b, s.seconds, s.stdev))
    good = [(k, v) for k, v in series.items() if any(len(p) > 1 for p in v.values())]
    if not good:
        raise NoData("no CUDA variant was run at more than one block size")
    good.sort(key=lambda kv: -max(x for p in kv[1].values() for _, x, _ in p))
    import matplotlib.ticker

    limit = FamilyLimit(cv, "blocks")
    for (family, problem), variants in good:
        if limit.full(family, problem):
            continue
        limit.drew(family)
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6.5, 4.2))
        for v, pts in sorted(variants.items()):
            pts.sort()
            ax.errorbar([b for b, _, _ in pts], [x * 1e3 for _, x, _ in pts], yerr=[e * 1e3 for _, _, e in pts],
                        label=v, capsize=2, **cv.style(v.split(" [")[0], v.partition(" [")[2] or None))
        ax.set(xscale="log", xlabel="block size (threads or tile edge)", ylabel="ms per call")
        times = [x for p in variants.values() for _, x, _ in p if x > 0]
        if times and max(times) > 20 * min(times):  # a linear axis would flatten the fast ones
            ax.set_yscale("log")
            plain_log(ax.yaxis)
        ax.set_xticks(sorted({b for p in variants.values() for b, _, _ in p}))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.grid(True, alpha=0.3)
        legend(ax, len(variants))
        cv.save(fig, cv.name("blocks"), "%s time vs block size: %s" % (family, problem_label(problem)), family,
                {src for p in variants for src in [p.partition(" [")[2][:-1] or None]} if several else None)
    limit.done()


def chart_breakdown(stats, cv):
    """Where each GPU run's time goes: host-to-device, kernel, device-to-host
    and host shares, one horizontal bar per variant with its total."""
    parts = ("h2d_s", "kernel_s", "d2h_s", "host_s")
    several = several_sources(stats)
    groups = {}
    for s in by_family(stats, "KMeans"):
        if all(s.counter(p) is not None for p in parts) and sum(s.counter(p) for p in parts[:3]) > 0:
            groups.setdefault(s.problem(), []).append(s)
    if not groups:
        raise NoData("no k-means entries with device phases (h2d_s / kernel_s / d2h_s; CPU runs are all host time)")
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), -work(kv[0])))
    cv.drop("breakdown", ["KMeans %s" % problem_label(p) for p, _ in ordered[MAX_FIGS:]])
    colours = {"h2d_s": "tab:orange", "kernel_s": "tab:green", "d2h_s": "tab:red", "host_s": "tab:grey"}
    for problem, ss in ordered[:MAX_FIGS]:
        ss.sort(key=lambda s: natural(label(s, several)))
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(8.5, 1.2 + 0.24 * len(ss)))
        # Shares of each run (stacked bars on a log axis would misstate them);
        # the run's total is in its label.
        totals = [sum(s.counter(p) for p in parts) for s in ss]
        left = [0.0] * len(ss)
        for p in parts:
            vals = [s.counter(p) / t if t > 0 else 0.0 for s, t in zip(ss, totals)]
            ax.barh(range(len(ss)), vals, left=left, label=p[:-2], color=colours[p])
            left = [a + v for a, v in zip(left, vals)]
        ax.set_yticks(range(len(ss)))
        ax.set_yticklabels(["%s: %.3g ms" % (label(s, several), t * 1e3) for s, t in zip(ss, totals)], fontsize=6)
        ax.invert_yaxis()
        ax.set(xlabel="share of the run's time", xlim=(0, 1))
        ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=4, borderaxespad=0.2)
        cv.save(fig, cv.name("breakdown"), "KMeans run breakdown: %s" % problem_label(problem), "KMeans",
                {s.source for s in ss})


def ceilings(stats):
    """{(source, kind, device): (rate, Stat)} of the entries marked ceiling,
    read through their own rate counter (the best of their kind if several)."""
    out = {}
    for s in stats:
        if s.role != "ceiling" or not s.rate:
            continue
        v = s.counter(s.rate[0])
        if v and v > 0:
            key = (s.source, s.rate[1], s.device)
            if key not in out or v > out[key][0]:
                out[key] = (v, s)
    return out


def fractions(stats):
    """[(Stat, fraction, ceiling Stat)] of every non-ceiling entry whose rate
    has a ceiling of its kind on its device in its source."""
    ceil = ceilings(stats)
    rows = []
    for s in stats:
        if s.role == "ceiling" or not s.rate or s.device is None:
            continue
        c = ceil.get((s.source, s.rate[1], s.device))
        v = s.counter(s.rate[0])
        if c is None or v is None:
            continue
        rows.append((s, derived.fraction(v, c[0]), c[1]))
    return rows


def chart_ceiling(stats, cv):
    """Each entry's declared rate as a fraction of the ceiling of its kind on
    its device, measured in the same source; one figure per family and
    problem (the largest problems first)."""
    absent = missing_roles(stats, "fraction of ceiling")
    if absent:
        raise absent
    if not any(s.role == "ceiling" for s in stats):
        raise NoData("no Ceiling entries in the input: run bench with the Ceiling family too "
                     "(e.g. --benchmark_filter='^(GEMM|Ceiling)/')")
    rows = fractions(stats)
    if not rows:
        raise NoData("no entry has a ceiling of its kind on its device in the same source")
    several = several_sources(stats)
    for s, f, c in rows:
        if derived.classify_fraction(f) == "above ceiling":
            cv.finding("warning", "%s at %.2f of %s %s (%s): above the ceiling measured in the same run, a "
                                  "measurement problem (the ceiling is too low or the run disturbed), not drawn as a "
                                  "result" % (s.run.base() + source_suffix(s, several), f, c.run.variant,
                                              c.rate[1], c.device))
    groups = {}
    for s, f, c in rows:
        groups.setdefault((s.run.family, s.problem()), []).append((s, f, c))
    limit = FamilyLimit(cv, "ceiling")
    for (family, problem), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], -work(kv[0][1]))):
        if limit.full(family, problem):
            continue
        limit.drew(family)
        counter = rs[0][0].rate[0]
        kinds = sorted({"%s (%s)" % (c.run.variant, c.device) for _, _, c in rs})
        draw_fractions(cv, rs, several, cv.name("ceiling"),
                       "%s %s as a fraction of the ceiling measured in the same run (%s): %s"
                       % (family, counter, ", ".join(kinds), problem_label(problem)), family)
    limit.done()


def draw_fractions(cv, rows, several, name, title, section):
    rows = sorted(rows, key=lambda r: (r[0].device or "", -r[1]))
    texts = []  # (row, where the bar and its error bar end): the value goes beside it
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(8.5, 1.1 + 0.3 * len(rows)))
    top = 1.0 + derived.CEILING_NOISE
    for y, (s, f, c) in enumerate(rows):
        cls = derived.classify_fraction(f)
        if cls == "above ceiling":
            # Not a result: a grey hatched bar to the edge, the value in words.
            ax.barh(y, top, color="none", edgecolor="tab:red", hatch="///", lw=0.8)
            ax.text(top * 0.98, y, "%.2f: above the ceiling - a measurement problem" % f, ha="right", va="center",
                    fontsize=6, color="tab:red")
        else:
            ax.barh(y, f, xerr=f * (s.cv or 0.0), color="tab:green" if s.device == "gpu" else "tab:blue",
                    capsize=2, error_kw={"lw": 0.8})
            texts.append((y, f * (1 + (s.cv or 0.0))))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label(s, several) for s, _, _ in rows], fontsize=6)
    ax.axvline(1.0, color="k", lw=1)
    low = min(f for _, f, _ in rows)
    log = 0 < low < 0.05  # small fractions would be invisible on a linear axis
    if log:
        ax.set_xscale("log")
        ax.set_xlim(max(low / 2, 1e-5), top * 1.6)
        plain_log(ax.xaxis)
    else:
        ax.set_xlim(0, top + 0.15)
    for y, end in texts:
        f = rows[y][1]
        ax.text(end * 1.08 if log else end + 0.01, y, "%.3g" % f, va="center", fontsize=6)
    ax.set(xlabel="fraction of the ceiling (green: GPU, blue: CPU; error bars: CV of repetitions)")
    cv.save(fig, name, title, section, {s.source for s, _, _ in rows})


CHARTS = {
    "speedup": chart_speedup,
    "heatmap": chart_heatmap,
    "strong": chart_strong,
    "gflops": chart_gflops,
    "iteration": chart_iteration,
    "throughput": chart_throughput,
    "blocks": chart_blocks,
    "breakdown": chart_breakdown,
    "ceiling": chart_ceiling,
}

_OWN = re.compile(r"^(%s)(_[a-z]+)?(_\d+)?\.(png|svg)$" % "|".join(CHARTS))


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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="plots/plot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="Google Benchmark JSON written by bench")
    ap.add_argument("--out", required=True, help="folder for the charts and the report")
    ap.add_argument("--label", action="append", default=[], help="name of an input in charts and tables "
                    "(once per input, in order; default: the file name)")
    ap.add_argument("--merge", action="store_true", help="read every input as one source (one run split over files)")
    ap.add_argument("--chart", action="append", choices=sorted(CHARTS), help="draw only these charts")
    a = ap.parse_args(argv)
    if a.label and len(a.label) != len(a.json):
        ap.error("--label given %d times for %d inputs (give it once per input, in order)"
                 % (len(a.label), len(a.json)))
    status = 0
    runs = []
    for i, path in enumerate(a.json):
        lbl = a.label[i] if a.label else None
        try:
            run = pbjson.load(path, lbl)
        except pbjson.LoadError as e:
            print("plot: %s" % e, file=sys.stderr)
            status = 2
            continue
        for w in run.warnings:
            print("plot: %s: %s" % (path, w), file=sys.stderr)
            status = 2
        runs.append(run)
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
    cv = Canvas(a.out, machines)
    for key, what in (("parbench_git_revision", "git revisions"), ("parbench_profile", "profiles")):
        seen = sorted({str(r.context.get(key)) for r in runs if isinstance(r.context, dict) and r.context.get(key)})
        if len(seen) > 1:
            cv.finding("info", "the inputs come from %d %s (%s): compare across them with care"
                       % (len(seen), what, ", ".join(seen)))
    missing = []
    for name in a.chart or sorted(CHARTS):
        try:
            CHARTS[name](stats, cv)
        except NoData as e:
            missing.append((name, str(e)))
            if a.chart:
                print("plot: chart %s not drawn: %s" % (name, e), file=sys.stderr)
                status = 2
    missing += cv.dropped
    written = report_html.write_report(a.out, runs, cv.made, missing, cv.findings)
    with open(os.path.join(a.out, MANIFEST), "w", encoding="utf-8") as f:
        for name, _, _ in cv.made:
            f.write("%s.png\n%s.svg\n" % (name, name))
        for name in written or ():
            f.write("%s\n" % name)
    print("plot: %d charts, report in %s" % (len(cv.made), os.path.join(a.out, "index.html")))
    if not runs:
        status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
