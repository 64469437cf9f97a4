"""The comparator's chart (compare --plot FILE): one row per benchmark, its
estimated change as a dot, the confidence interval as a line and +-threshold as
a grey band, coloured by verdict. Rows are ordered as in the table (most urgent
first); past MAX_ROWS the SAME rows with the smallest changes are left out,
and the title says how many are shown. matplotlib is imported here only, so
compare.py itself needs numpy alone."""
import math

from plots.report_draw import legend

MAX_ROWS = 60
COLOURS = {"SLOWER": "#c62828", "ERROR": "#6a1b9a", "FASTER": "#2e7d32", "SAME": "#546e7a",
           "AMBIGUOUS": "#ef6c00", "UNRELIABLE": "#8d6e63", "NOT_SAME_WORK": "#ad1457"}


def _short(name, width=70):
    return name if len(name) <= width else name[:width - 3] + "..."


def pick_rows(rows, limit=MAX_ROWS):
    """The rows to draw, in table order: rows with a change (ERROR, MISSING,
    NEW and NOT_SAME_WORK rows have none). Past the limit the SAME rows go
    first, smallest changes first; if the others still do not fit, every
    verdict keeps its largest changes in turn, so none disappears."""
    drawable = [r for r in rows if r.get("change") is not None]
    if len(drawable) <= limit:
        return drawable
    others = [r for r in drawable if r["verdict"] != "SAME"]
    same = sorted((r for r in drawable if r["verdict"] == "SAME"), key=lambda r: -abs(r["change"]))
    if len(others) <= limit:
        keep = others + same[:limit - len(others)]
    else:
        groups = {}
        for r in sorted(others, key=lambda r: -abs(r["change"])):
            groups.setdefault(r["verdict"], []).append(r)
        keep, i = [], 0
        while len(keep) < limit:
            for g in groups.values():
                if i < len(g) and len(keep) < limit:
                    keep.append(g[i])
            i += 1
    ids = {id(r) for r in keep}
    return [r for r in drawable if id(r) in ids]


MARGIN = "#78909c"


def plot(doc, rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = pick_rows(rows)
    drawable = sum(1 for r in rows if r.get("change") is not None)
    n = max(1, len(shown))
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.28 * n))
    for i, r in enumerate(shown):
        y = n - 1 - i
        thr = 100 * r["threshold"]
        ax.add_patch(matplotlib.patches.Rectangle((-thr, y - 0.35), 2 * thr, 0.7, color="#eceff1", zorder=0))
        if r.get("margin"):
            # Two files: what two processes' offsets alone can give; a change
            # whose interval does not clear it is AMBIGUOUS.
            m = 100 * r["margin"]
            ax.plot([-m, -m], [y - 0.35, y + 0.35], color=MARGIN, lw=1.2, zorder=1)
            ax.plot([m, m], [y - 0.35, y + 0.35], color=MARGIN, lw=1.2, zorder=1)
        c = COLOURS.get(r["verdict"], "#37474f")
        lo, hi = r["ci"]
        x = 100 * r["change"]
        left = 100 * lo if lo is not None else x
        right = 100 * hi if hi is not None else x
        ax.plot([left, right], [y, y], color=c, lw=2, solid_capstyle="butt", zorder=2)
        ax.plot([x], [y], "o", color=c, ms=5, zorder=3)
    ax.axvline(0, color="#263238", lw=0.8)
    ax.set_yticks(range(n))
    ax.set_yticklabels([_short(r["name"]) + "  " + r["verdict"] for r in reversed(shown)], fontsize=7)
    ax.set_ylim(-0.7, n - 0.3)
    xs = [abs(100 * v) for r in shown for v in (r["change"], r["ci"][0], r["ci"][1], r["threshold"])
          if v is not None and math.isfinite(v)]
    lim = max(xs + [2.0]) * 1.1
    ax.set_xlim(-lim, lim)
    if doc.get("across_hardware"):
        ax.set_xlabel("change of 1 / fraction of its own run's ceiling, %% (right: NEW reaches less of its machine's)")
    else:
        ax.set_xlabel("change of the time per iteration%s, %% (right: NEW slower)"
                      % ("" if doc["metric"]["name"] == "real_time" else " (from %s)" % doc["metric"]["name"]))
    title = "%s\n%s" % (doc["title"], doc["summary_line"])
    if len(shown) < drawable:
        title += "\n%d of %d benchmarks shown (the smallest changes left out, SAME ones first)" % (
            len(shown), drawable)
    undrawn = len(rows) - drawable
    if undrawn:
        title += "\n%d without a change to draw (ERROR, MISSING, NEW, NOT_SAME_WORK, too few): see the table" % undrawn
    ax.set_title(title, fontsize=9, loc="left")
    ax.grid(axis="x", color="#cfd8dc", lw=0.5)
    handles = [matplotlib.lines.Line2D([], [], color=COLOURS[v], marker="o", lw=2, label=v)
               for v in COLOURS if any(r["verdict"] == v for r in shown)]
    handles.append(matplotlib.patches.Patch(color="#eceff1", label="+-threshold"))
    if any(r.get("margin") for r in shown):
        handles.append(matplotlib.lines.Line2D([], [], color=MARGIN, lw=1.2,
                                               label="+-margin: two processes' offsets (8 x run noise)"))
    legend(ax, len(handles), handles=handles)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.15)  # long names are never clipped
    plt.close(fig)
