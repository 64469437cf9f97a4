"""Every chart of plots/plot: one chart_NAME(stats, cv) function per chart
kind, which selects its data from the Stats (report_stats.py), draws its
figures through the Canvas (report_draw.py) or raises NoData saying what the
input lacks, and CHARTS, the table of them by the name --chart takes. The
scaling charts are here; the rates against size in report_rates.py, the
ceilings and costs in report_ceiling.py. A chart selects entries by what
their JSON says (roles, counters, run-name arguments), never by a family's
name; its section is the entry's family."""
import math

from regress.load import derived
from regress.load import results
from plots.report_ceiling import chart_ceiling, chart_energy, chart_per_joule, chart_roofline
from plots.report_draw import IDEAL, FamilyLimit, _grid, end_label, errorbars, legend, plain_log, plt, thread_axis
from plots.report_rates import (chart_breakdown, chart_gflops, chart_iteration, chart_mlp_share, chart_mlp_throughput,
                                chart_rate, chart_sor_bandwidth, chart_throughput)
from plots.report_stats import (NoData, baselines, missing_roles, own_single, problem_label, several_sources,
                                work)


def chart_speedup(stats, cv):
    """Per problem: speedup over the family baseline (left) and parallel
    efficiency against the variant's own 1-thread run (right), vs threads.
    The efficiency checks of "Suspicious" read every problem; the per-family
    limit only decides which are drawn."""
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
    # Problems with a baseline entry first: their left panel has something to show.
    has_base = {(fam, prob) for (_, fam, prob) in base}
    ordered = sorted(series.items(), key=lambda kv: (kv[0] not in has_base, -len(kv[1]), -work(kv[0][1])))
    panels = [(key, ss, speedup_panels(key, ss, base, single, several, cv)) for key, ss in ordered]
    limit = FamilyLimit(cv, "speedup")
    drawn = 0
    for (family, problem), ss, (speed, eff, no_base, no_single) in panels:
        if (not speed and not eff) or limit.full(family, problem):
            continue
        draw_speedup(cv, family, problem, ss, base, speed, eff, no_base, no_single)
        limit.drew(family)
        drawn += 1
    limit.done()
    if not drawn:
        raise NoData("no threaded variant (without ranks: those are in the heatmap) with a family baseline or a "
                     "1-thread run of its own on the same problem")


def speedup_panels(key, ss, base, single, several, cv):
    """One problem's speedup and efficiency series {label: [(threads, value)]},
    the sources without a baseline and the labels without a 1-thread run;
    the efficiencies beyond one thread's or below LOW_EFFICIENCY are findings."""
    family, problem = key
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
        if one is None:
            no_single.add(lbl)
            continue
        eff[lbl] = [(s.arg("threads", int), derived.efficiency(one.seconds, s.seconds, s.workers())) for s in pts]
        for t, e in eff[lbl]:
            if e > 1.0 + derived.CEILING_NOISE:
                cv.finding("info", "%s %s %s: efficiency %.2f at %d threads (superlinear: caches, or a slow "
                                   "1-thread run)" % (family, lbl, problem_label(problem), e, t),
                           "superlinear", variant)
            elif t > 1 and e < derived.LOW_EFFICIENCY:
                cv.finding("warning", "%s %s %s: efficiency %.3g at %d threads, slower than one thread "
                                      "would be: more threads than free cores, or a disturbed run"
                           % (family, lbl, problem_label(problem), e, t), "low-efficiency", variant)
    return speed, eff, no_base, no_single


def draw_speedup(cv, family, problem, ss, base, speed, eff, no_base, no_single):
    pyplot = plt()
    fig, (a1, a2) = pyplot.subplots(1, 2, figsize=(11, 4.2))
    threads = [t for pts in list(speed.values()) + list(eff.values()) for t, _ in pts]
    # One style per series, in both panels and in every chart.
    style = {lbl: cv.label_style(lbl) for lbl in set(speed) | set(eff)}
    for lbl, pts in sorted(speed.items()):
        a1.plot([t for t, _ in pts], [v for _, v in pts], label=lbl, **style[lbl])
    for lbl, pts in sorted(eff.items()):
        a2.plot([t for t, _ in pts], [v for _, v in pts], label=lbl, **style[lbl])
    a2.axhline(1.0, color="k", ls="--", lw=1, label="ideal")
    base_names = sorted({b.run.variant for (src, fam, prob), b in base.items() if fam == family and prob == problem})
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
    cv.save(fig, cv.name("speedup", family, problem_label(problem)),
            "%s speedup and parallel efficiency: %s" % (family, problem_label(problem)), family,
            {s.source for s in ss})


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
                       % (family, variant, problem_label(problem), source), "heatmap", variant)
            continue
        if b is None:
            cv.finding("info", "%s %s %s: no baseline entry in the same source, so the heatmap shows efficiency only"
                       % (family, variant, problem_label(problem)), "heatmap", variant)
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
        cv.save(fig, cv.name("heatmap", family, variant, problem_label(problem), source if several else ""),
                "%s %s ranks x threads: %s%s%s" % (
                    family, variant, problem_label(problem), " [%s]" % source if several else "",
                    "" if b is not None else " (no baseline entry: speedup not drawn)"), family, {source})
    if not drawn:
        raise NoData("ranks x threads runs without a family baseline or a 1 x 1 cell in the same source")


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
    for (family, problem), variants in limit.take(good):
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6.5, 4.2))
        threads = []
        for (v, source), pts in sorted(variants.items()):
            pts.sort()
            threads += [t for t, _, _ in pts]
            st = cv.style(v, source)
            errorbars(ax, [t for t, _, _ in pts], [x for _, x, _ in pts], [e for _, _, e in pts],
                      label=v + (" [%s]" % source if several else ""), capsize=2, **st)
            t0, x0, _ = pts[0]
            ax.plot([t for t, _, _ in pts], [x0 * t0 / t for t, _, _ in pts], IDEAL, color=st["color"], lw=1)
        ax.set(yscale="log", xlabel="threads", ylabel="seconds per call (dashed: ideal from the first point)")
        plain_log(ax.yaxis)
        thread_axis(ax, threads)
        ax.grid(True, alpha=0.3)
        legend(ax, len(variants))
        cv.save(fig, cv.name("strong", family, problem_label(problem)),
                "%s strong scaling: %s" % (family, problem_label(problem)), family,
                {src for _, src in variants})
    limit.done()


def chart_gpus(stats, cv):
    """Scaling over GPUs: time per call and efficiency against the variant's
    own 1-GPU run vs the gpus knob, one figure per family and problem. Strong
    (one problem): ideal t(1)/g, derived.efficiency. Weak (the run name's
    scaling:weak, each GPU's share fixed): ideal t(1), derived.weak_efficiency.
    A series of other knobs (ranks: one run a rank count, read as one source
    with --merge) that has no 1-GPU point of its own is read against the
    variant's 1-GPU run in another series."""
    series, one = {}, {}
    for s in stats:
        g = s.arg("gpus", int)
        if g is not None and s.role != "ceiling" and s.seconds and s.seconds > 0:
            series.setdefault((s.run.family, s.problem()), {}).setdefault(
                (label_without_gpus(s), s.source, s.run.variant), []).append((g, s.seconds, s.stdev))
            if g == 1:
                one.setdefault((s.run.family, s.problem(), s.run.variant, s.source), s.seconds)
    good = [(k, v) for k, v in series.items()
            if any((k[0], k[1], var, src) in one and max(g for g, _, _ in p) > 1 for (_, src, var), p in v.items())]
    if not good:
        raise NoData("no variant was run at 1 GPU and more (e.g. --sor-gpus=1,2 on a machine with two GPUs)")
    several = several_sources(stats)
    good.sort(key=lambda kv: -work(kv[0][1]))
    limit = FamilyLimit(cv, "gpus")
    for (family, problem), variants in limit.take(good):
        weak = dict(problem).get("scaling") == "weak"
        pyplot = plt()
        fig, (ax, ax_eff) = pyplot.subplots(1, 2, figsize=(9.5, 4.0))
        counts, top = set(), 1.0
        for v, source, _ in variants:  # every shade known before one is taken
            cv.style(v, source)
        for (v, source, variant), pts in sorted(variants.items()):
            pts.sort()
            t1 = one.get((family, problem, variant, source))
            if t1 is None:
                continue
            counts |= {g for g, _, _ in pts}
            st = cv.style(v, source)
            name = v + (" [%s]" % source if several else "")
            errorbars(ax, [g for g, _, _ in pts], [t for _, t, _ in pts], [e for _, _, e in pts], label=name,
                      capsize=2, **st)
            ax.plot([g for g, _, _ in pts], [t1 if weak else t1 / g for g, _, _ in pts], IDEAL, color=st["color"],
                    lw=1)
            eff = [derived.weak_efficiency(t1, t) if weak else derived.efficiency(t1, t, g) for g, t, _ in pts]
            top = max([top] + eff)
            ax_eff.plot([g for g, _, _ in pts], eff, label=name, **st)
            end_label(ax_eff, [g for g, _, _ in pts], eff, name, st["color"])
        if weak:  # from 0: a flat line reads as flat, not as a zoomed-in wiggle
            ax.set(xlabel="GPUs", ylabel="seconds per call (dashed: ideal, the 1-GPU time)")
            ax.set_ylim(bottom=0, top=1.15 * ax.get_ylim()[1])
        else:
            ax.set(yscale="log", xlabel="GPUs", ylabel="seconds per call (dashed: ideal from 1 GPU)")
            plain_log(ax.yaxis)
        ax_eff.axhline(1.0, color="#78909c", lw=0.8, ls=IDEAL)
        ax_eff.set(xlabel="GPUs", ylabel="efficiency: t(1 GPU) / t" if weak else "efficiency: t(1 GPU) / (GPUs x t)",
                   ylim=(0, 1.1 * top))
        for a in (ax, ax_eff):
            a.set_xticks(sorted(counts))
            a.grid(True, alpha=0.3)
        legend(ax, len(variants))
        cv.save(fig, cv.name("gpus", family, problem_label(problem)),
                "%s %s scaling over GPUs: %s" % (family, "weak" if weak else "strong", problem_label(
                    [(k, v) for k, v in problem if k != "scaling"]) + (", a GPU's share" if weak else "")), family,
                {src for _, src, _ in variants})
    limit.done()


def label_without_gpus(s):
    knob = [("%s %s" % (k, s.run.args[k])) for k in results.KNOBS if k != "gpus" and k in s.run.args]
    return s.run.variant + (" (%s)" % ", ".join(knob) if knob else "")


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
    for (family, problem), variants in limit.take(good):
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6.5, 4.2))
        for v, pts in sorted(variants.items()):
            pts.sort()
            errorbars(ax, [b for b, _, _ in pts], [x * 1e3 for _, x, _ in pts],
                      [None if e is None else e * 1e3 for _, _, e in pts], label=v, capsize=2,
                      **cv.label_style(v))
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
        cv.save(fig, cv.name("blocks", family, problem_label(problem)),
                "%s time vs block size: %s" % (family, problem_label(problem)), family,
                {src for p in variants for src in [p.partition(" [")[2][:-1] or None]} if several else None)
    limit.done()


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
    "gpus": chart_gpus,
    "mlp_throughput": chart_mlp_throughput,
    "mlp_share": chart_mlp_share,
    "sor_bandwidth": chart_sor_bandwidth,
    "roofline": chart_roofline,
    "energy": chart_energy,
    "per_joule": chart_per_joule,
    "rate": chart_rate,
}
