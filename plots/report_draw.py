"""Drawing helpers of the charts (plots/report.py): matplotlib behind plt()
(imported on first use, Agg backend), the Canvas that titles, saves and
remembers each figure with its findings, one style per variant across the
report, the per-family figure limit (MAX_FIGS), legends, log and thread axes,
and the two shared figure kinds: log-log lines and fraction-of-ceiling bars."""
import collections
import dataclasses
import math
import os
import re
import textwrap

from regress.load import derived
from plots.report_stats import label, natural, problem_label

MAX_FIGS = 6  # per chart kind and family: the problems with the most data points


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


_InView = None


def in_view(locator):
    """`locator` with its ticks outside the axis's view dropped. A locator
    returns the ticks of whole steps or decades around the view, and
    matplotlib builds a Tick (two marks, a grid line, two labels) for every
    one, drawn or not: a quarter of a report's time. The drawn figure is the
    same (docs/perf/report.md)."""
    global _InView
    if _InView is None:
        import matplotlib.ticker

        class InView(matplotlib.ticker.Locator):
            def __init__(self, inner):
                self.inner = inner

            def set_axis(self, axis):
                self.axis = axis
                self.inner.set_axis(axis)

            def __call__(self):
                lo, hi = sorted(self.axis.get_view_interval())
                eps = (hi - lo) * 1e-9
                return [v for v in self.inner() if lo - eps <= v <= hi + eps]

            def tick_values(self, vmin, vmax):
                return self.inner.tick_values(vmin, vmax)

            def nonsingular(self, vmin, vmax):
                return self.inner.nonsingular(vmin, vmax)

            def view_limits(self, vmin, vmax):
                return self.inner.view_limits(vmin, vmax)

        _InView = InView
    return locator if isinstance(locator, _InView) else _InView(locator)


MARKERS = ("o", "s", "^", "D", "v", "P")
MEASURED, IDEAL = "-", "--"
# A source's measured lines: the first (or only) source solid, the next ones
# dotted and dash-dotted, never dashed (IDEAL); each with a marker of its own.
SOURCE_LINES = (MEASURED, ":", "-.", (0, (6, 1.5, 1, 1.5, 1, 1.5)))
# A variant's knob values (threads, block, GPUs) are its hue from light to
# dark: HLS lightness RAMP_LIGHT (the smallest value) to RAMP_DARK (the
# largest), saturation at least RAMP_SATURATION, so the lightest shade of a
# pale hue still reads on white.
RAMP_LIGHT, RAMP_DARK, RAMP_SATURATION = 0.68, 0.22, 0.45


def ramp(colour, i, n):
    """The i-th of n shades of `colour` (RGB or RGBA), light to dark; the colour itself when n is 1."""
    import colorsys

    if n <= 1:
        return tuple(colour[:3]) + (1.0,)
    h, _, sat = colorsys.rgb_to_hls(*colour[:3])
    light = RAMP_LIGHT + (RAMP_DARK - RAMP_LIGHT) * i / (n - 1)
    return tuple(min(max(c, 0.0), 1.0) for c in colorsys.hls_to_rgb(h, light, max(sat, RAMP_SATURATION))) + (1.0,)


def knob_text(lbl):
    """The knob values of a chart label, "V (threads 4) [a]" -> "4",
    "V (ranks 2, threads 4)" -> "ranks 2, threads 4"; "" without knobs."""
    knob = lbl.partition(" [")[0].partition(" (")[2].rstrip(")")
    parts = [k for k in knob.split(", ") if k]
    return parts[0].rpartition(" ")[2] if len(parts) == 1 else ", ".join(parts)


def end_label(ax, xs, ys, lbl, colour):
    """The knob value of a line written at its last point, in its colour: the
    shades of one variant read without the legend."""
    text = knob_text(lbl)
    pts = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None and y == y]
    if text and pts:
        ax.annotate(text, pts[-1], xytext=(3, 0), textcoords="offset points", fontsize=6, color=colour,
                    va="center", ha="left", annotation_clip=False)


# What a chart found while drawing, for the report's "Suspicious": its cause
# (the group it is listed under) and the variant it concerns, where one does.
Finding = collections.namedtuple("Finding", "severity text cause variant", defaults=("other", None))


@dataclasses.dataclass(frozen=True)
class Dropped:
    """What a chart kind left out, for "Charts not drawn": the report gives
    one line per reason, with the count by kind and family. items: (family,
    what) pairs, "what" the problem or device left out."""
    chart: str
    reason: str
    items: tuple


class Canvas:
    """Saves figures into the report folder and remembers them, what looked
    wrong while drawing (findings for the report's summary) and the problems
    left out by the per-family limit. `machines`: {source: machine}."""

    def __init__(self, out, machines, formats=("png",)):
        if isinstance(machines, str):
            machines = {None: machines}
        self.out, self.machines, self.made, self.findings, self.dropped = out, machines, [], [], []
        self.colours, self.sources = {}, {}
        self.formats, self.failed = tuple(formats), []
        self._names = set()

    def assign_styles(self, keys, sources):
        """Colours and markers fixed before any chart is drawn: `keys` ("variant"
        or "variant (knob)") in natural order, `sources` in input order. Charts
        drawn in separate processes (plots/report.py) then agree on them."""
        for key in sorted(keys, key=natural):
            self.style(key)
        for src in sources:
            self.sources.setdefault(src, len(self.sources))

    def part(self):
        """An empty Canvas with this one's folder, machines, formats, styles and
        file names taken: what one chart kind draws into in a worker."""
        c = Canvas(self.out, self.machines, self.formats)
        c.colours = {v: (colour, dict(knobs)) for v, (colour, knobs) in self.colours.items()}
        c.sources, c._names = dict(self.sources), set(self._names)
        return c

    def drawn(self):
        """What this Canvas drew and found, for absorb() in the parent (picklable)."""
        return self.made, self.findings, self.dropped, self.failed, self._names

    def absorb(self, drawn):
        made, findings, dropped, failed, names = drawn
        self.made += made
        for f in findings:
            self.finding(*f)
        self.dropped += dropped
        self.failed += failed
        self._names |= names

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
        self._render(fig, name)
        self.made.append((name, title, section))

    def _render(self, fig, name):
        # One layout pass: the figure widens by the width of a legend beside
        # its axes, so the axes keep their width however many series there
        # are, then tight_layout makes room for the titles, the tick labels
        # and the legend; the file is written at the figure's size without a
        # second, "tight" bounding-box pass.
        try:
            renderer, beside = fig.canvas.get_renderer(), 0.0
            for ax in fig.axes:
                for axis in (ax.xaxis, ax.yaxis):
                    axis.set_major_locator(in_view(axis.get_major_locator()))
                    axis.set_minor_locator(in_view(axis.get_minor_locator()))
                leg = ax.get_legend()
                if leg is not None:
                    box = leg.get_window_extent(renderer)
                    if box.x0 >= ax.get_window_extent(renderer).x1:
                        beside = max(beside, box.width / fig.dpi)
            if beside:
                fig.set_figwidth(fig.get_figwidth() + beside)
            fig.tight_layout()
            for ext in self.formats:
                fig.savefig(os.path.join(self.out, "%s.%s" % (name, ext)), dpi=110)
        except Exception:  # noqa: BLE001  reported by the caller as a chart not written
            self.failed.append(name)
        finally:
            plt().close(fig)

    def finish(self):
        """The names of the figures that could not be written."""
        return self.failed

    def style(self, key, source=None):
        """The same hue for the same variant in every chart of the report (20
        distinct hues: tab20's strong ones, then its light ones); its knob
        values (threads, block size, GPUs) are shades of that hue, light to
        dark in their natural order (assign_styles fixes them all first);
        each source has a line style and a marker of its own (SOURCE_LINES,
        MARKERS). An ideal line is dashed (IDEAL), in every chart."""
        variant, _, knob = key.partition(" (")
        if variant not in self.colours:
            i = len(self.colours)
            self.colours[variant] = (plt().get_cmap("tab20")((2 * i) % 20 + (i // 10) % 2), {})
        hue, knobs = self.colours[variant]
        if knob:
            knobs.setdefault(knob, len(knobs))
        colour = ramp(hue, knobs[knob], len(knobs)) if knob else tuple(hue)
        # No source named: the first source's style (a report of one input).
        src = 0 if source is None else self.sources.setdefault(source, len(self.sources))
        return {"color": colour, "marker": MARKERS[src % len(MARKERS)], "ls": SOURCE_LINES[src % len(SOURCE_LINES)]}

    def styles(self, labels):
        """{label: label_style} of one chart's labels, every knob value known
        before a shade is taken, so the shades agree within the chart also
        where assign_styles did not fix them first."""
        labels = sorted(labels, key=natural)
        for lbl in labels:
            self.label_style(lbl)
        return {lbl: self.label_style(lbl) for lbl in labels}

    def label_style(self, lbl):
        """style() of a chart label, "variant (knob) [source]" (label() of report_stats)."""
        key, _, src = lbl.partition(" [")
        return self.style(key, src[:-1] if src.endswith("]") else None)

    def drop(self, chart, items, reason=None):
        """`items` (family, what) that `chart` left out; the default reason is the per-family limit."""
        if items:
            self.dropped.append(Dropped(chart, reason or "problems beyond the %d a family draws" % MAX_FIGS,
                                        tuple(items)))

    def name(self, stem, *what):
        """A chart's file name: its kind, then what it shows (family, problem,
        ...) as a slug, "ceiling_gemm_gflops_op-ab-type-f32-m-64-n-64-k-64"; a
        number after it only where two charts would show the same."""
        parts = [re.sub(r"[^a-z0-9.]+", "-", str(w).lower()).strip("-.") for w in what]
        base = "_".join([stem] + [p for p in parts if p])[:150]
        name, n = base, 1
        while name in self._names:
            n += 1
            name = "%s_%d" % (base, n)
        self._names.add(name)
        return name

    def finding(self, severity, text, cause="other", variant=None):
        if all((f.severity, f.text) != (severity, text) for f in self.findings):
            self.findings.append(Finding(severity, text, cause, variant))


class FamilyLimit:
    """At most MAX_FIGS figures of a chart kind a family; the problems beyond
    are listed under "Charts not drawn"."""

    def __init__(self, cv, chart):
        self.cv, self.chart, self.count, self.left = cv, chart, {}, []

    def full(self, family, problem):
        if self.count.get(family, 0) < MAX_FIGS:
            return False
        self.left.append((family, problem_label(problem)))
        return True

    def drew(self, family):
        self.count[family] = self.count.get(family, 0) + 1

    def take(self, groups):
        """The ((family, problem), value) pairs of `groups` that still fit, in
        order, each counted as drawn (for charts that draw every one they take)."""
        for (family, problem), value in groups:
            if not self.full(family, problem):
                self.drew(family)
                yield (family, problem), value

    def done(self):
        self.cv.drop(self.chart, self.left)


LEGEND_OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}


def legend(ax, n, **kw):
    """Beside the axes, never over the data: the figure's tight layout
    narrows the axes to hold it."""
    return ax.legend(fontsize=6 if n > 3 else 7, ncol=1 if n <= 24 else 2, **LEGEND_OUTSIDE, **kw)


def errorbars(ax, xs, ys, errs, **kw):
    """ax.errorbar where a point has a spread (repetitions), its plain line or
    bars elsewhere: a point measured once gets no error bar that could read as
    data."""
    errs = [math.nan if e is None else e for e in errs]
    if all(math.isnan(e) for e in errs):
        kw.pop("capsize", None)
        return ax.plot(xs, ys, **kw)
    return ax.errorbar(xs, ys, yerr=errs, **kw)


def plain_log(axis):
    """A log axis labelled with plain numbers (1, 2, 5 of each decade)."""
    import matplotlib.ticker

    lo, hi = sorted(abs(v) for v in axis.get_view_interval())
    wide = lo > 0 and hi / lo > 300  # beyond 2.5 decades, 1-2-5 ticks would collide
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _grid(ranks, threads, grid, value):
    m = [[float("nan")] * len(threads) for _ in ranks]
    for (r, t), s in grid.items():
        m[ranks.index(r)][threads.index(t)] = value(s)
    return m


def draw_lines(cv, lines, xlabel, ylabel, name, title, section, sources=None):
    """One log-log line per label: points (x, y) or (x, y, spread), spread as
    error bars. Labels may end in " [source]"; one size only: horizontal bars."""
    pyplot = plt()
    if len({p[0] for pts in lines.values() for p in pts}) == 1:
        x = next(iter(lines.values()))[0][0]
        rows = sorted(((pts[0][1], pts[0][2] if len(pts[0]) > 2 else None, lbl) for lbl, pts in lines.items()),
                      key=lambda r: r[0])
        fig, ax = pyplot.subplots(figsize=(7.5, 1.0 + 0.28 * len(rows)))
        style = cv.styles(lines)
        spread = [math.nan if r[1] is None else r[1] for r in rows]
        ax.barh(range(len(rows)), [r[0] for r in rows], capsize=2,
                xerr=None if all(math.isnan(e) for e in spread) else spread,
                color=[style[r[2]]["color"] for r in rows])
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r[2] for r in rows], fontsize=6)
        ax.set(xscale="log", xlabel="%s (%s = %g)" % (ylabel, xlabel, x))
        plain_log(ax.xaxis)
        ax.grid(True, alpha=0.3, axis="x")
        cv.save(fig, name, title, section, sources)
        return
    fig, ax = pyplot.subplots(figsize=(7.5, 4.8))
    style = cv.styles(lines)
    for lbl, pts in sorted(lines.items(), key=lambda kv: natural(kv[0])):
        pts.sort()
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        st = style[lbl]
        errorbars(ax, xs, ys, [p[2] if len(p) > 2 else None for p in pts], label=lbl, capsize=2, ms=3, **st)
        end_label(ax, xs, ys, lbl, st["color"])
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel)
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.grid(True, alpha=0.3, which="both")
    legend(ax, len(lines))
    cv.save(fig, name, title, section, sources)


def draw_fractions(cv, rows, several, name, title, section):
    rows = sorted(rows, key=lambda r: (r[0].device or "", -r[1]))
    texts = []  # (row, where the bar and its error bar end): the value goes beside it
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(8.5, 1.1 + 0.3 * len(rows)))
    top = 1.0 + derived.CEILING_NOISE
    low = min(f for _, f, _ in rows)
    log = 0 < low < 0.05  # small fractions would be invisible on a linear axis
    for y, (s, f, c) in enumerate(rows):
        cls = derived.classify_fraction(f)
        if cls == "above ceiling":
            # Not a result: a grey hatched bar to the edge, the value in words.
            ax.barh(y, top, color="none", edgecolor="tab:red", hatch="///", lw=0.8)
            ax.text(top * 0.98, y, "%.2f: above the ceiling - a measurement problem" % f, ha="right", va="center",
                    fontsize=6, color="tab:red")
        elif log:
            # A bar on a log axis has the length the axis minimum gives it:
            # a dot says the value alone.
            ax.errorbar([f], [y], xerr=None if s.cv is None else [f * s.cv], fmt="o", ms=4, capsize=2,
                        color="tab:green" if s.device == "gpu" else "tab:blue", lw=0.8)
            texts.append((y, f * (1 + (s.cv or 0.0))))
        else:
            ax.barh(y, f, xerr=None if s.cv is None else f * s.cv,
                    color="tab:green" if s.device == "gpu" else "tab:blue", capsize=2, error_kw={"lw": 0.8})
            texts.append((y, f * (1 + (s.cv or 0.0))))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label(s, several) for s, _, _ in rows], fontsize=6)
    ax.axvline(1.0, color="k", lw=1)
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
