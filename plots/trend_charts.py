"""The trends' charts and page (ci/trends draws them through
regress/trends.py): one chart per changed benchmark, one per family, and
index.html listing what changed, worst first."""
import html
import math
import os
import re

import numpy as np

from plots import report_html, trend_health
from regress.store import alerts as alerts_mod
from regress.stats import changepoint
from regress.store import history
from regress.load import fmt
from regress.load.fmt import commit_range, family_stem, short_rev, when
from regress.stats.series import BASELINE_RUNS, measured

MAX_TICKS = 40           # x tick labels at most (every k-th run beyond)
MAX_THIN_LINES = 40      # a family chart draws each benchmark faintly up to this many

SLOWER_C, FASTER_C, SEGMENT_C, SERIES_C = "#d62728", "#2ca02c", "#7f7f7f", "#1f77b4"


def fmt_p(p):
    if p is None:
        return ""
    if p == 0:
        return "0"
    return "%.2g" % p


def wrap_name(name, width):
    """A run name in lines of about `width` characters, broken after its slashes."""
    lines, cur = [], ""
    for part in re.split(r"(?<=/)", name):
        if cur and len(cur) + len(part) > width:
            lines.append(cur)
            cur = ""
        cur += part
    if cur:
        lines.append(cur)
    return "\n".join(lines)


def describe_segment_change(change, limit=None):
    """ "gpu_driver 580 -> 590, cuda_runtime 12.8 -> 13.0" from [[key, old, new], ...]."""
    parts = ["%s %s \u2192 %s" % (k, history.context_text(a) or "(none)", history.context_text(b) or "(none)")
             for k, a, b in change]
    if not parts:
        return "segment changed"
    if limit is not None and len(parts) > limit:
        parts = parts[:limit] + ["+%d more" % (len(parts) - limit)]
    return ", ".join(parts)


def time_unit(values):
    """(scale, unit) so that the values read between 1 and 1000."""
    vals = [v for v in values if v is not None and v > 0]
    ref = float(np.median(vals)) if vals else 1.0
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "\u00b5s")):
        if ref >= scale:
            return scale, unit
    return 1e-9, "ns"


def family_key(family):
    """Families by name: the history keeps no registration order to follow."""
    return family


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "parbench-trends"   # the same SVG for the same data
    import matplotlib.pyplot as pyplot
    return pyplot


def _save(fig, out, stem):
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(out, "%s.%s" % (stem, ext))
        fig.savefig(path, dpi=110, bbox_inches="tight",
                    metadata={"Date": None} if ext == "svg" else None)
        paths.append(path)
    _plt().close(fig)
    return paths


def _fig_width(n):
    return max(9.0, min(20.0, 5.5 + 0.16 * n))


def _axes(ax, labels, lo, hi, ylabel, headroom):
    """Both axes of a trend chart, with room above the data for the change labels."""
    _x_axis(ax, labels, lo, hi)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(axis="y", alpha=0.3)
    ymin, ymax = ax.get_ylim()
    ax.set_ylim(ymin, ymax + headroom * (ymax - ymin))


def _x_axis(ax, labels, lo, hi):
    """Run ordinals lo..hi as ticks labelled "date revision", rotated, at most MAX_TICKS of them."""
    xs = list(range(lo, hi + 1))
    step = max(1, math.ceil(len(xs) / MAX_TICKS))
    ticks = xs[::step]
    ax.set_xticks(ticks)
    ax.set_xticklabels([labels[i] for i in ticks], rotation=55, ha="right", rotation_mode="anchor", fontsize=7)
    ax.set_xlim(lo - 0.6, hi + 0.6)
    ax.set_xlabel("run (date, revision)", fontsize=8)


LABEL_SIZE = 7.5


def _vline_label(labels, x, text, color, top=True, alpha=1.0):
    """A label along a vertical line, placed by _place_labels once the axes has its size."""
    labels.append((x, text, color, top, alpha))


def _place_labels(fig, ax, labels):
    """The labels of the vertical lines, rotated, at the top (changes) or the bottom (segments) of the
    axes, each cut ("...") to fit the axes' height: a label never pushes the axes smaller."""
    import matplotlib.transforms as mtransforms
    renderer = fig.canvas.get_renderer()
    room = 0.95 * ax.get_window_extent(renderer).height
    tr = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for x, text, color, top, alpha in labels:
        t = ax.text(x, 0.985 if top else 0.015, text, transform=tr, rotation=90, ha="right",
                    va="top" if top else "bottom", fontsize=LABEL_SIZE, color=color, alpha=alpha, zorder=6,
                    clip_on=True, bbox=dict(boxstyle="square,pad=0.15", fc="white", ec="none", alpha=0.75))
        keep = len(text)
        while keep > 8 and t.get_window_extent(renderer).height > room:
            keep -= max(1, int(keep * (1 - room / t.get_window_extent(renderer).height)))
            t.set_text(text[:keep].rstrip(" ,:") + "\u2026")


def _segment_lines(ax, labels, bounds):
    """Grey vertical lines where a new segment starts, labelled with what changed (at the bottom)."""
    for x, text in bounds:
        ax.axvline(x, color=SEGMENT_C, lw=1.6, ls="-", alpha=0.8, zorder=1)
        _vline_label(labels, x, text, "#555555", top=False)


def _finish(fig, ax, handles, title, labels):
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _place_labels(fig, ax, labels)


def draw_benchmark(s, labels, machine_label, out):
    pyplot = _plt()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    scale, unit = time_unit([p["median"] for p in s.points])
    lo, hi = min(s.x), max(s.x)
    fig, ax = pyplot.subplots(figsize=(_fig_width(hi - lo + 1), 4.8))
    handles, labels_ = [], []
    # the threshold band around the latest segment's median, across the latest machine segment
    if s.centre is not None and s.threshold is not None:
        t = s.threshold
        start = s.x[s.segments[-1][0]]
        ax.fill_between([start - 0.5 if len(s.segments) > 1 else lo - 0.6, hi + 0.6],
                        s.centre / (1 + t) / scale, s.centre * (1 + t) / scale, color="#bbbbbb", alpha=0.3, lw=0,
                        zorder=0)
        handles.append(Patch(color="#bbbbbb", alpha=0.5,
                             label="\u00b1 threshold (%s) around the latest median"
                             % fmt.pct(t, signed=False, digits=1, missing="")))
    # the series, one line per machine segment, with the repetitions' spread
    for a, b in s.segments:
        xs = [s.x[i] for i in range(a, b) if measured(s.points[i])]
        pts = [s.points[i] for i in range(a, b) if measured(s.points[i])]
        if not pts:
            continue
        ys = [p["median"] / scale for p in pts]
        lows = [(p["low"] if p["low"] is not None else p["median"]) / scale for p in pts]
        highs = [(p["high"] if p["high"] is not None else p["median"]) / scale for p in pts]
        ax.vlines(xs, lows, highs, color=SERIES_C, alpha=0.4, lw=3, zorder=2)
        ax.plot(xs, ys, "-o", color=SERIES_C, lw=1.1, ms=3.5, zorder=3)
    handles.append(Line2D([], [], color=SERIES_C, marker="o", ms=3.5, lw=1.1, label="median of the repetitions"))
    handles.append(Line2D([], [], color=SERIES_C, alpha=0.4, lw=3, label="repetitions: min to max"))
    # the detector's segment medians
    for x0, x1, m in s.pieces:
        ax.hlines(m / scale, x0 - 0.35, x1 + 0.35, colors="#333333", lw=1.3, zorder=4)
    if s.pieces:
        handles.append(Line2D([], [], color="#333333", lw=1.3, label="segment median"))
    # runs with no time (error entries)
    errs = [s.x[i] for i, p in enumerate(s.points) if not measured(p)]
    if errs:
        import matplotlib.transforms as mtransforms
        tr = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
        ax.plot(errs, [0.03] * len(errs), "x", color=SLOWER_C, ms=6, mew=1.5, transform=tr, zorder=5)
        handles.append(Line2D([], [], color=SLOWER_C, marker="x", ls="", ms=6, mew=1.5,
                              label="no time (error entry)"))
    # machine segment boundaries
    bounds = []
    for a, _ in s.segments[1:]:
        p = s.points[a]
        x = (s.x[a - 1] + s.x[a]) / 2.0
        bounds.append((x, describe_segment_change(p["segment_change"], limit=1)))
    _segment_lines(ax, labels_, bounds)
    if bounds:
        handles.append(Line2D([], [], color=SEGMENT_C, lw=1.6, label="new segment (driver, toolkit, build...)"))
    # change points
    kinds = set()
    for c in s.changes:
        x1 = s.x[c["index"]]
        x0 = s.prev_x(c)
        x = (x0 + x1) / 2.0
        color = SLOWER_C if c["direction"] == "slower" else FASTER_C
        tentative = c["status"] != "confirmed"
        ax.axvline(x, color=color, lw=1.6, ls=":" if tentative else "--", alpha=0.55 if tentative else 1.0,
                   zorder=5)
        if tentative:
            ax.axvspan(x0, x1, facecolor="none", edgecolor=color, hatch="///", lw=0, alpha=0.35, zorder=1)
        text = "%s, %s%s" % (commit_range(c), fmt.pct(c["step"], digits=1, missing=""),
                             " (tentative)" if tentative else "")
        _vline_label(labels_, x, text, color, top=True, alpha=0.7 if tentative else 1.0)
        kinds.add((c["direction"], tentative))
    for direction, tentative in sorted(kinds):
        color = SLOWER_C if direction == "slower" else FASTER_C
        handles.append(Line2D([], [], color=color, lw=1.6, ls=":" if tentative else "--",
                              alpha=0.55 if tentative else 1.0,
                              label="%s, %s" % (direction if not getattr(s, "metric", None) else
                                                {"slower": "more", "faster": "less"}.get(direction, direction),
                                                "tentative" if tentative else "confirmed")))
    metric = getattr(s, "metric", None)
    if metric == "joules_per_call":
        ylabel = "median energy per call (%s)" % unit.replace("s", "J")
    elif metric:
        ylabel = "median %s (x %g)" % (metric, 1 / scale)
    else:
        ylabel = "median time per iteration (%s)" % unit
    _axes(ax, labels, lo, hi, ylabel, 0.12)
    _finish(fig, ax, handles, "%s\n%s" % (wrap_name(s.name, int(_fig_width(hi - lo + 1) * 11)), machine_label),
            labels_)
    return _save(fig, out, s.stem)


def draw_family(family, series, labels, run_bounds, machine_label, out):
    """Each benchmark's median / its baseline; the family's median per run with the interquartile band;
    the runs where some benchmark of the family had a confirmed change."""
    pyplot = _plt()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    per_x = {}
    thin = []
    for s in series:
        base = s.baseline()
        if not base:
            continue
        pts = [(x, p["median"] / base) for x, p in zip(s.x, s.points) if measured(p)]
        thin.append(pts)
        for x, v in pts:
            per_x.setdefault(x, []).append(v)
    if not per_x:
        return None
    xs = sorted(per_x)
    lo, hi = xs[0], xs[-1]
    fig, ax = pyplot.subplots(figsize=(_fig_width(hi - lo + 1), 4.4))
    handles, labels_ = [], []
    if len(thin) <= MAX_THIN_LINES:
        for pts in thin:
            ax.plot([x for x, _ in pts], [v for _, v in pts], "-", color="#999999", lw=0.7, alpha=0.45, zorder=1)
        handles.append(Line2D([], [], color="#999999", lw=0.7, alpha=0.6, label="each benchmark"))
    # one band and median line per machine segment (no line across a segment change)
    cuts = [b for b, _, _ in run_bounds]
    groups, cur = [], []
    for x in xs:
        if cur and any(cur[-1] < b <= x for b in cuts):
            groups.append(cur)
            cur = []
        cur.append(x)
    groups.append(cur)
    for g in groups:
        q1 = [float(np.percentile(per_x[x], 25)) for x in g]
        q3 = [float(np.percentile(per_x[x], 75)) for x in g]
        med = [float(np.median(per_x[x])) for x in g]
        ax.fill_between(g, q1, q3, color=SERIES_C, alpha=0.22, lw=0, zorder=2)
        ax.plot(g, med, "-o", color=SERIES_C, lw=1.4, ms=3, zorder=3)
    handles.append(Line2D([], [], color=SERIES_C, marker="o", ms=3, lw=1.4,
                          label="median over the family's benchmarks"))
    handles.append(Patch(color=SERIES_C, alpha=0.3, label="interquartile range"))
    ax.axhline(1.0, color="#333333", lw=0.8, ls="-", alpha=0.6, zorder=1)
    _segment_lines(ax, labels_, [(b - 0.5, describe_segment_change(ch, limit=1)) for b, _, ch in run_bounds
                                 if lo < b <= hi])
    if any(lo < b <= hi for b, _, _ in run_bounds):
        handles.append(Line2D([], [], color=SEGMENT_C, lw=1.6, label="new segment (driver, toolkit, build...)"))
    # confirmed changes, by run: one line and label per run (red when some change there is slower)
    marks = {}
    for s in series:
        for c in s.changes:
            if c["status"] == "confirmed":
                marks.setdefault(s.x[c["index"]], []).append(c)
    directions = set()
    for x, cs in sorted(marks.items()):
        slower = [c for c in cs if c["direction"] == "slower"]
        color = SLOWER_C if slower else FASTER_C
        directions.add("slower" if slower else "faster")
        parts = []
        for d in ("slower", "faster"):
            mine = [c for c in cs if c["direction"] == d]
            if mine:
                worst = max(mine, key=lambda c: abs(c["step"]))
                parts.append("%s%s (%d %s)" % ("up to " if len(mine) > 1 else "",
                                               fmt.pct(worst["step"], digits=1, missing=""), len(mine), d))
        worst = max(slower or cs, key=lambda c: abs(c["step"]))
        ax.axvline(x - 0.5, color=color, lw=1.5, ls="--", zorder=4)
        _vline_label(labels_, x - 0.5, "%s, %s" % (", ".join(parts), commit_range(worst)), color, top=True)
    for direction in sorted(directions):
        handles.append(Line2D([], [], color=SLOWER_C if direction == "slower" else FASTER_C, lw=1.5, ls="--",
                              label="a confirmed change in some benchmark%s" % (
                                  " (a slower one)" if direction == "slower" else " (faster)")))
    what = next((s.metric for s in series if getattr(s, "metric", None)), None) or "time"
    what = "energy" if what == "joules_per_call" else what
    _axes(ax, labels, lo, hi, "%s / median of its first %d runs\nof the latest segment" % (what, BASELINE_RUNS), 0.15)
    _finish(fig, ax, handles, "%s: %d benchmark%s, normalised\n%s" % (
        family or "(no family)", len(thin), "" if len(thin) == 1 else "s", machine_label), labels_)
    return _save(fig, out, family_stem(family))


# ------------------------------------------------------------------- page

CSS = report_html.CSS + """
p.summary{font-size:15px;font-weight:600;margin:.6em 0}
p.summary.bad{color:#b00}p.summary.good{color:#070}ul.health li.bad{color:#b00}ul.health li.good{color:#070}
tr.slower.confirmed td{background:#fde2e2}tr.closed td{color:#555}tr.slower.tentative td{background:#fff3e6}
tr.faster td{background:#e8f6e8}tr.faster.tentative td{background:#f4fbf4}
td.status{font-weight:600;white-space:nowrap}td.name{overflow-wrap:anywhere;min-width:18em;max-width:40em}
div.charts.wide{grid-template-columns:1fr}
figure .changes{font-size:12px;margin:.1em 0 .3em}
"""


def esc(s):
    return html.escape(str(s), quote=True)


def aa_section(nights, totals):
    h = ["<h2 id='aa'>The comparator on itself (A/A)</h2>"]
    if not nights:
        h.append("<p>No A/A check of this machine in the history yet: the nightly job adds one per night.</p>")
    else:
        h.append("<p class='summary %s'>%d false alarm%s in %d comparisons over %d night%s (%s).</p>" % (
            "bad" if totals["false_alarms"] else "good", totals["false_alarms"],
            "" if totals["false_alarms"] == 1 else "s", totals["compared"], totals["nights"],
            "" if totals["nights"] == 1 else "s", fmt.pct(totals["rate"], signed=False, digits=2, missing="")))
        verdicts = sorted({k for n in nights for k, v in n["counts"].items() if v} | {"SAME", "SLOWER", "FASTER"})
        h.append("<div class='scroll'><table class='kv'><thead><tr><th>date</th><th>revision</th><th>compared</th>%s"
                 "<th>false alarms</th></tr></thead><tbody>" % "".join("<th>%s</th>" % esc(v) for v in verdicts))
        for n in nights:
            h.append("<tr%s><td>%s</td><td>%s</td><td>%d</td>%s<td>%d</td></tr>" % (
                " class='slower confirmed'" if n["false_alarms"] else "", esc(when(n["date"])),
                esc(short_rev(n["revision"])), n["compared"],
                "".join("<td>%d</td>" % n["counts"].get(v, 0) for v in verdicts), n["false_alarms"]))
        h.append("</tbody></table></div>")
    h.append("<p class='note'>Each night the job runs the comparator's paired rounds (ci/compare --run) with the "
             "night's bench on both sides, on a few fast, stable benchmarks. The code is the same, so any SLOWER "
             "or FASTER is a false alarm: this is the comparator's false-alarm rate on this machine, measured.%s"
             "</p>" % (" %d unreadable ledger line%s skipped." % (
                 totals["unreadable"], "" if totals["unreadable"] == 1 else "s") if totals["unreadable"] else ""))
    return h


def alerts_section(alerts, settings):
    """The alerts, worst first, with their state and last triage."""
    h = ["<h2 id='alerts'>Alerts, worst first</h2>"]
    if settings.get("metric"):
        h.append("<p class='note'>Alerts follow the time series; this page's series (%s) raises none.</p>"
                 % esc(settings["metric"]))
        return h
    if not alerts:
        h.append("<p class='ok'>No alert: no confirmed change on this machine.</p>")
        return h
    cols = ("alert", "state", "direction", "worst step", "benchmarks", "commit range", "culprit", "last triage")
    h.append("<div class='scroll'><table class='sortable' id='alerts-table'><thead><tr>%s</tr></thead><tbody>"
             % "".join("<th>%s</th>" % c for c in cols))
    for a in alerts:
        names = [b["name"] for b in a["benchmarks"]]
        shown = ", ".join(names[:3]) + (" and %d more" % (len(names) - 3) if len(names) > 3 else "")
        last = a["events"][-1] if a["events"] else None
        triage = "" if not last else "%s by %s%s" % (when(last["at"]), last["who"],
                                                     ": " + last["why"] if last["why"] else "")
        culprit = "" if not a["culprit"] else "%s %s" % (a["culprit"][:12], a["culprit_subject"] or "")
        cells = [("num", str(a["id"]), "#%d" % a["id"]), ("status", a["state"], esc(a["state"].replace("_", " "))),
                 ("text", a["direction"], esc(a["direction"])),
                 ("num", repr(a["worst_step"]), esc(fmt.pct(a["worst_step"], digits=1, missing=""))),
                 ("name", shown, "%d: %s" % (len(names), esc(shown))),
                 ("text", "", esc("%s..%s" % (short_rev(a["revision_before"]), short_rev(a["revision_after"])))),
                 ("text", a["culprit"] or "", esc(culprit)), ("text", triage, esc(triage))]
        kind = "confirmed" if a["state"] in alerts_mod.OPEN else "closed"
        h.append("<tr class='%s %s'>%s</tr>" % (a["direction"], kind, "".join(
            "<td class='%s' data-v='%s'>%s</td>" % (c, esc(v), t) for c, v, t in cells)))
    h.append("</tbody></table></div>")
    h.append("<p class='note'>An alert groups the benchmarks of one cause: one culprit commit (ci/bisect), else one "
             "run. Untriaged and acknowledged alerts fail the nightly job; invalid, won't fix, fixed, backed out "
             "and detected fixed (every benchmark back within its noise) do not, and an invalid change is not "
             "raised again. Triage: <code>ci/alerts --history %s triage ID STATE --why TEXT</code>.</p>"
             % esc(settings.get("history") or "DIR"))
    return h


def write_page(path, info, rows, series, family_charts, bench_charts, bounds, settings, aa, alerts=(), health=None,
               ledger=None):
    """The trends page: the summary, the gate's health, alerts, what changed, segments, families,
    benchmarks, the A/A ledger and the method, in that order."""
    h = page_top(info, settings)
    h += trend_health.health_section(health)
    h += alerts_section(alerts, settings)
    h += trend_health.ledger_section(ledger)
    h += changes_section(info, rows, bench_charts, settings)
    h += segments_section(bounds)
    h += families_section(info, family_charts)
    h += benchmarks_section(info, series, bench_charts)
    h.extend(aa_section(*aa))
    h += method_section(settings)
    h.append(report_html.SCRIPT + "</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(h) + "\n")


def page_top(info, settings):
    """The head of the page: title, description, the summary line and the contents."""
    h = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
         "<meta name='viewport' content='width=device-width, initial-scale=1'>",
         "<title>parbench trends: %s</title><style>%s</style></head><body>" % (esc(info["hardware"]), CSS),
         "<h1>parbench trends: %s</h1>" % esc(info["hardware"])]
    h.append("<p class='note'>%s</p>" % esc(info["description"]))
    summary_cls = "bad" if info["summary"]["confirmed_regressions"] else "good"
    h.append("<p class='summary %s' id='summary'>%s%s</p>" % (
        summary_cls, esc(info["summary_line"]),
        "" if not info["summary"]["confirmed_regressions"] else
        " The nightly job reports a confirmed increase of this series; it fails on the time's only."
        if settings.get("metric") else " A confirmed regression fails the nightly job."))
    if info["one_run"]:
        h.append("<p>Changes are searched for from %d runs of a segment on.</p>"
                 % (2 * changepoint.MIN_SIZE))
    toc = [("Gate health", "health"), ("Alerts", "alerts"), ("Caught and missed", "ledger"),
           ("What changed", "changes"), ("Segments", "segments"), ("Families", "families"),
           ("Benchmarks", "benchmarks"), ("The comparator on itself (A/A)", "aa"), ("How changes are found", "method")]
    h.append("<nav><b>Contents</b><ul>%s</ul></nav>" % "".join(
        "<li><a href='#%s'>%s</a></li>" % (a, esc(t)) for t, a in toc))
    return h


def changes_section(info, rows, bench_charts, settings):
    """What changed, worst first: a sortable table of the changes."""
    h = []
    h.append("<h2 id='changes'>What changed, worst first</h2>")
    if rows:
        culprits = any(c.get("culprit") for c in rows)
        cols = ("status", "benchmark", "step", "commit range", "date", "p", "threshold", "noise", "runs after") + (
            ("culprit (ci/bisect)",) if culprits else ())
        h.append("<div class='scroll'><table class='sortable' id='changes-table'><thead><tr>%s</tr></thead><tbody>"
                 % "".join("<th>%s</th>" % esc(c) for c in cols))
        for c in rows:
            link = "#b-%s" % c["stem"] if c["stem"] in bench_charts else ""
            name = ("<a href='%s'>%s</a>" % (esc(link), esc(c["name"]))) if link else esc(c["name"])
            status = "%s %s%s%s" % (c["status"], c["direction"], " (accepted)" if c["accepted"] else "",
                                    " (alert #%d, %s)" % (c["alert"]["id"], c["alert"]["state"].replace("_", " "))
                                    if c.get("alert") else "")
            cells = [("status", status, esc(status)),
                     ("name", c["name"], name),
                     ("num", repr(c["step"]), esc(fmt.pct(c["step"], digits=1, missing=""))),
                     ("text", commit_range(c), esc(commit_range(c))),
                     ("text", c["date"] or "", esc(when(c["date"]))),
                     ("num", repr(c["p"]), esc(fmt_p(c["p"]))),
                     ("num", repr(c["threshold"]), esc(fmt.pct(c["threshold"], signed=False, digits=1, missing=""))),
                     ("num", "" if c["noise"] is None else repr(c["noise"]),
                      esc(fmt.pct(c["noise"], signed=False, digits=2, missing=""))),
                     ("num", str(c["runs_after"]), str(c["runs_after"]))]
            if culprits:
                k = c.get("culprit")
                text = "" if not k else "<a href='%s'>%s</a> %s (chance wrong %.2g)" % (
                    esc("file://" + os.path.abspath(k["report"])), esc(k["commit"][:12]), esc(k.get("subject") or ""),
                    k.get("chance_wrong") or 0.0)
                cells.append(("text", k["commit"] if k else "", text))
            h.append("<tr class='%s %s'>%s</tr>" % (c["direction"], c["status"], "".join(
                "<td class='%s' data-v='%s'>%s</td>" % (cls, esc(v), t) for cls, v, t in cells)))
        h.append("</tbody></table></div>")
        h.append("<p class='note'>Step: the median after the change over the median before it (+ is slower). "
                 "Commit range: the last revision measured before the change and the first after it. p: the "
                 "t-test between the two segments the change separates. Threshold: max(floor, %g x noise); noise: "
                 "the run-to-run spread of the log medians (robust sd). Runs after: measured runs from the "
                 "change on; %d or more confirm it. Click a column header to sort.</p>"
                 % (settings["multiple"], settings["confirm"]))
    else:
        h.append("<p class='ok'>No change in any benchmark%s.</p>" % (
            "" if not info["one_run"] else " (one run: no trend yet)"))
    return h


def segments_section(bounds):
    """The machine segments and what started each."""
    h = []
    h.append("<h2 id='segments'>Segments</h2>")
    if bounds:
        h.append("<p class='note'>A driver, toolkit, compiler or build change starts a new segment: times across "
                 "it are not compared, the detector runs on each segment alone, and the charts draw the boundary "
                 "as a grey line.</p>")
        h.append("<table class='kv'><thead><tr><th>from run</th><th>date</th><th>revision</th><th>what changed"
                 "</th></tr></thead><tbody>%s</tbody></table>" % "".join(
                     "<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                         i + 1, esc(when(r["date"])), esc(short_rev(r["revision"])),
                         esc(describe_segment_change(ch))) for i, r, ch in bounds))
    else:
        h.append("<p>One segment: no driver, toolkit, compiler or build change in these runs.</p>")
    return h


def families_section(info, family_charts):
    """Each family's normalised chart."""
    h = []
    h.append("<h2 id='families'>Families, normalised</h2>")
    if family_charts:
        h.append("<p class='note'>Each benchmark's median divided by its median over the first %d runs of its "
                 "latest segment; the line is the median over the family's benchmarks per run, the band their "
                 "interquartile range. Dashed lines: runs where some benchmark of the family had a confirmed "
                 "change.</p><div class='charts wide'>" % BASELINE_RUNS)
        for family, stem in family_charts:
            h.append("<figure id='f-%s'><figcaption>%s</figcaption><a href='charts/%s.svg'>"
                     "<img src='charts/%s.png' alt='%s'></a></figure>" % (
                         esc(stem), esc(family), esc(stem), esc(stem), esc("%s, normalised" % family)))
        h.append("</div>")
    else:
        h.append("<p>No family chart: %s.</p>" % ("one run, no trend yet" if info["one_run"] else "no times"))
    return h


def benchmarks_section(info, series, bench_charts):
    """Each changed benchmark's chart; the unchanged folded."""
    h = []
    h.append("<h2 id='benchmarks'>Benchmarks</h2>")
    drawn = [s for s in series if s.stem in bench_charts]
    if drawn:
        h.append("<div class='charts wide'>")
        for s in drawn:
            cs = sorted(s.changes, key=lambda c: c["index"])
            text = "; ".join("%s %s %s at %s" % (c["status"], c["direction"], fmt.pct(c["step"], digits=1, missing=""),
                                                 commit_range(c))
                             for c in cs) or "no change"
            h.append("<figure id='b-%s'><figcaption><b>%s</b></figcaption><p class='changes'>%s</p>"
                     "<a href='charts/%s.svg'><img src='charts/%s.png' alt='%s'></a></figure>" % (
                         esc(s.stem), esc(s.name), esc(text), esc(s.stem), esc(s.stem), esc(s.name)))
        h.append("</div>")
    unchanged = [s for s in series if not s.changes]
    not_drawn = [s for s in unchanged if s.stem not in bench_charts]
    if not_drawn:
        h.append("<details id='unchanged'><summary>%d benchmark%s without a change (%s)</summary><ul>%s</ul>"
                 "</details>" % (
                     len(not_drawn), "" if len(not_drawn) == 1 else "s",
                     "one run: no charts yet" if info["one_run"] else "no chart of their own; --all draws them",
                     "".join("<li>%s</li>" % esc(s.name) for s in not_drawn)))
    elif not drawn:
        h.append("<p>No benchmark.</p>")
    return h


def method_section(settings):
    """How changes are found."""
    h = []
    h.append("<h2 id='method'>How changes are found</h2>")
    h.append("<p class='note'>Per benchmark and machine segment, on the log of the median time of each run: "
             "E-Divisive means (Matteson &amp; James) proposes splits; a split is kept when the t-test between "
             "the runs it separates gives p &le; %g and its step exceeds the threshold max(floor, %g x noise), "
             "as the comparator's SLOWER needs both. Floors: %s. A change with fewer than %d runs from it on is "
             "tentative; only a confirmed regression fails the nightly job (exit 1). regress/stats/changepoint.py "
             "describes the method.</p>" % (
                 changepoint.MAX_PVALUE, settings["multiple"], esc(settings["floors_text"]), settings["confirm"]))
    return h
