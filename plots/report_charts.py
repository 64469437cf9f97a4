"""Every chart of plots/plot: one chart_NAME(stats, cv) function per chart
kind, which selects its data from the Stats (report_stats.py), draws its
figures through the Canvas (report_draw.py) or raises NoData saying what the
input lacks, and CHARTS, the table of them by the name --chart takes."""
import math

from regress.load import derived
from regress.load import results
from plots.report_draw import (IDEAL, MAX_FIGS, FamilyLimit, _grid, draw_fractions, draw_lines, errorbars,
                               legend, plain_log, plt, thread_axis)
from plots.report_stats import (NoData, at_most_threads, baselines, by_family, ceilings, fractions, label,
                                missing_roles, natural, own_single, problem_label, roofline_points, roofs,
                                several_sources, source_suffix, work)


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
                                           "1-thread run)" % (family, lbl, problem_label(problem), e, t),
                                   "superlinear", variant)
                    elif t > 1 and e < derived.LOW_EFFICIENCY:
                        cv.finding("warning", "%s %s %s: efficiency %.3g at %d threads, slower than one thread "
                                              "would be: more threads than free cores, or a disturbed run"
                                   % (family, lbl, problem_label(problem), e, t), "low-efficiency", variant)
            else:
                no_single.add(lbl)
        if not speed and not eff:
            continue
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
        cv.save(fig, cv.name("speedup", family, problem_label(problem)),
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


def chart_sor_bandwidth(stats, cv):
    """SOR: effective bandwidth (the family's GBps model) vs grid size, one
    line per variant, and the device copy ceiling measured in the same run as
    a dashed line: how near the memory limit each stencil gets."""
    sor = [s for s in by_family(stats, "SOR") if s.counter("GBps") is not None and s.arg("M", int)]
    groups = groups_varying(sor, ("field", "sweeps", "omega"), lambda s: (s.arg("M"), s.arg("N")))
    if not groups:
        raise NoData("no SOR variant was run at more than one grid")
    ceil = ceilings(stats)
    several = several_sources(stats)
    for (field, sweeps, omega), ss in groups:
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7.5, 4.8))
        lines = {}
        for s in ss:  # every thread count: its own line
            mb = s.arg("M", int) * s.arg("N", int) * 8 / 1e6
            per_gpu = s.counter("GBps") / (s.arg("gpus", int) or 1)  # against one GPU's ceiling
            spread = s.spread_of(per_gpu)
            lines.setdefault(label(s, several), []).append((mb, per_gpu, spread))
        for lbl, pts in sorted(lines.items(), key=lambda kv: natural(kv[0])):
            pts.sort()
            st = cv.label_style(lbl)
            errorbars(ax, [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], label=lbl, capsize=2,
                      ms=3, **st)
        drawn = set()
        for s in ss:
            c = ceil.get((s.source, "bandwidth", s.device))
            if c is None or (s.source, s.device) in drawn:
                continue
            drawn.add((s.source, s.device))
            what = "ceiling: %s (%s)%s, %.0f GB/s" % (c[1].run.variant, s.device, source_suffix(s, several), c[0])
            ax.axhline(c[0], color="#37474f", ls="--", lw=1, label=what)
        if not drawn:
            cv.finding("info", "SOR bandwidth vs grid (field %s): no bandwidth ceiling in the same run to draw; "
                               "run the Ceiling family too (--benchmark_filter='^(SOR|Ceiling)/')" % field)
        devices = {s.device for s in ss}
        per = " per GPU" if devices == {"gpu"} else "" if "gpu" not in devices else " (a GPU variant's: per GPU)"
        ax.set(xscale="log", xlabel="grid size: MB of one field (M x N doubles)",
               ylabel="GB/s%s (24 B per interior point per sweep)" % per)
        plain_log(ax.xaxis)
        # From 0, so distances to the ceiling read as fractions; headroom above
        # the highest of lines and ceiling, so a ceiling the best variant nearly
        # reaches is not drawn on the frame.
        ax.set_ylim(bottom=0, top=1.1 * ax.get_ylim()[1])
        plain_log(ax.xaxis)
        ax.grid(True, alpha=0.3, which="both")
        legend(ax, len(lines) + len(drawn))
        cv.save(fig, cv.name("sor_bandwidth", field, "%s sweeps" % sweeps, "omega %s" % omega),
                "SOR %s (%s sweeps, omega %s): bandwidth vs grid, against the copy ceiling" % (field, sweeps, omega),
                "SOR", {s.source for s in ss})


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
        for s in ss:  # every thread count: its own line
            size = (s.arg("M", int) * s.arg("N", int) * s.arg("K", int)) ** (1 / 3)
            lines.setdefault(label(s, several), []).append((size, s.counter("GFLOPS"), s.counter_stdev("GFLOPS")))
        draw_lines(cv, lines, "(M*N*K)^(1/3)", "GFLOP/s (error bars: spread of repetitions)",
                   cv.name("gflops", op, typ),
                   "GEMM %s %s: GFLOP/s vs size" % (op, typ), "GEMM", {s.source for s in ss})


def groups_varying(ss, keys, axis):
    """[(values of the args `keys`, entries)] of ss grouped by those args,
    sorted, keeping the groups run at more than one value of `axis` (a
    function of an entry): the lines of a chart over that axis."""
    groups = {}
    for s in ss:
        groups.setdefault(tuple(s.arg(k) for k in keys), []).append(s)
    return sorted(((k, v) for k, v in groups.items() if len({axis(s) for s in v}) > 1),
                  key=lambda kv: tuple(str(x) for x in kv[0]))


def chart_iteration(stats, cv):
    km = [s for s in by_family(stats, "KMeans") if s.counter("seconds_per_iteration")]
    several = several_sources(km)
    groups = groups_varying(km, ("cfg", "D", "dist"), lambda s: s.arg("N"))
    if not groups:
        raise NoData("no k-means configuration was run at more than one N")
    for (cfg, d, dist), ss in groups:
        lines = {}
        for s in ss:
            spi = s.counter("seconds_per_iteration")
            spread = s.spread_of(spi * 1e3)
            lines.setdefault(label(s, several), []).append((s.arg("N", int), spi * 1e3, spread))
        ks = sorted({s.arg("K", int) for s in ss if s.arg("K", int) is not None})
        kdesc = "K=%d" % ks[0] if len(ks) == 1 else "K varies with N: %s" % ", ".join(map(str, ks))
        draw_lines(cv, lines, "N (points)", "ms per iteration", cv.name("iteration", cfg, "D%s" % d, dist),
                   "KMeans %s (D=%s, %s, %s): time per iteration vs N" % (cfg, d, kdesc, dist), "KMeans",
                   {s.source for s in ss})


def chart_throughput(stats, cv):
    """Sorts of one array: elements/s vs total, one figure per key type,
    payload, order and distribution; threaded variants at their most threads."""
    srt = [s for s in by_family(stats, "Sort") if s.counter("elements_per_second") and s.arg("n") == s.arg("length")]
    several = several_sources(srt)
    groups = groups_varying(srt, ("key", "payload", "order", "dist"), lambda s: s.arg("n"))
    if not groups:
        raise NoData("no sort of one array was run at more than one total")
    for key, ss in groups[:MAX_FIGS]:
        lines = {}
        for s in ss:  # every thread count: its own line
            eps = s.counter("elements_per_second")
            spread = s.spread_of(eps)
            lines.setdefault(label(s, several), []).append((s.arg("n", int), eps, spread))
        draw_lines(cv, lines, "elements (one array)", "elements per second", cv.name("throughput", *key),
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
        cv.save(fig, cv.name("breakdown", problem_label(problem)),
                "KMeans run breakdown: %s" % problem_label(problem), "KMeans",
                {s.source for s in ss})


def chart_mlp_throughput(stats, cv):
    """MLP: samples per second vs batch size, one line per backend (threaded
    ones at their most threads), one figure per network, activation and
    precision."""
    mlp = [s for s in by_family(stats, "MLP") if s.counter("samples_per_second") and s.arg("batch", int)]
    groups = groups_varying(mlp, ("widths", "act", "type"), lambda s: s.arg("batch"))
    if not groups:
        raise NoData("no MLP network was run at more than one batch size (--mlp-batch=32,256,1024)")
    several = several_sources(mlp)
    for (widths, act, typ), ss in groups[:MAX_FIGS]:
        lines = {}
        for s in ss:  # every thread count: its own line
            sps = s.counter("samples_per_second")
            spread = s.spread_of(sps)
            lines.setdefault(label(s, several), []).append((s.arg("batch", int), sps, spread))
        draw_lines(cv, lines, "batch size", "samples per second (one SGD step)",
                   cv.name("mlp_throughput", widths, act, typ),
                   "MLP %s %s %s: samples/s vs batch size" % (widths, act, typ), "MLP", {s.source for s in ss})


def chart_mlp_share(stats, cv):
    """MLP: the share of a training step spent in GEMM calls (gemm_share, from
    the untimed profiling pass) and in the rest (bias, activation, softmax,
    loss, update), per backend and batch size: where the seed's 'the GEMMs
    are all the time' holds and where it stops."""
    mlp = [s for s in by_family(stats, "MLP") if s.counter("gemm_share") is not None and s.arg("batch", int)]
    if not mlp:
        raise NoData("no MLP entries with a gemm_share counter")
    several = several_sources(mlp)
    groups = {}
    for s in at_most_threads(mlp):
        groups.setdefault((s.arg("widths"), s.arg("act"), s.arg("type")), []).append(s)
    for (widths, act, typ), ss in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0]))[:MAX_FIGS]:
        ss.sort(key=lambda s: (natural(label(s, several)), s.arg("batch", int)))
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(8.5, 1.2 + 0.24 * len(ss)))
        gemm = [min(max(s.counter("gemm_share"), 0.0), 1.0) for s in ss]
        ax.barh(range(len(ss)), gemm, color="tab:blue", label="GEMM calls")
        ax.barh(range(len(ss)), [1 - g for g in gemm], left=gemm, color="tab:grey", label="element-wise and the rest")
        ax.set_yticks(range(len(ss)))
        ax.set_yticklabels(["%s, batch %s: %.3g ms" % (label(s, several), s.arg("batch"), s.seconds * 1e3)
                            for s in ss], fontsize=6)
        ax.invert_yaxis()
        ax.set(xlabel="share of a training step's time (untimed profiling pass)", xlim=(0, 1))
        ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2)
        cv.save(fig, cv.name("mlp_share", widths, act, typ),
                "MLP %s %s %s: where a step's time goes" % (widths, act, typ), "MLP", {s.source for s in ss})


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
                                              c.rate[1], c.device), "above-ceiling", s.run.variant)
    groups = {}
    for s, f, c in rows:
        groups.setdefault((s.run.family, s.problem()), []).append((s, f, c))
    limit = FamilyLimit(cv, "ceiling")
    for (family, problem), rs in limit.take(sorted(groups.items(), key=lambda kv: (kv[0][0], -work(kv[0][1])))):
        counter = rs[0][0].rate[0]
        kinds = sorted({"%s (%s)" % (c.run.variant, c.device) for _, _, c in rs})
        draw_fractions(cv, rs, several, cv.name("ceiling", family, counter, problem_label(problem)),
                       "%s %s as a fraction of the ceiling measured in the same run (%s): %s"
                       % (family, counter, ", ".join(kinds), problem_label(problem)), family)
    limit.done()


def flop_rate(gflops):
    """560 GFLOP/s, 51.4 TFLOP/s: a roof's label."""
    return "%.3g TFLOP/s" % (gflops / 1e3) if gflops >= 1e3 else "%.3g GFLOP/s" % gflops


def chart_roofline(stats, cv):
    """Per family, device and source: each entry's achieved GFLOP/s against
    its arithmetic intensity (the JSON's work and traffic models), under the
    roofs of the ceilings measured in the same source on that device."""
    absent = missing_roles(stats, "roofline")
    if absent:
        raise absent
    points = roofline_points(stats)
    if not points:
        raise NoData("no entry declares a work model in flop and a traffic model in bytes (flops_per_call and "
                     "bytes_per_call in parbench_counters): files written before the roofline models, or only "
                     "families without floating-point work (sort)")
    limits = roofs(stats)
    groups, no_roof = {}, set()
    for s, ai, rate in points:
        if (s.source, s.device) in limits:
            # An entry rated against a compute ceiling (gemm_f32, ...) is drawn
            # under that roof alone: precisions apart, each with its own peak.
            # So is one whose JSON names the compute roof of its work (roof).
            kinds = {c.rate[1] for _, c in limits[(s.source, s.device)][0]}
            kind = s.rate[1] if s.rate and s.rate[1] in kinds else s.roof if s.roof in kinds else ""
            groups.setdefault((s.run.family, s.device, s.source, kind), []).append((s, ai, rate))
        else:
            no_roof.add("%s on %s%s" % (s.run.family, s.device, source_suffix(s, several_sources(stats))))
    if no_roof:
        cv.drop("roofline", ["%s (no ceiling of that device in the same source: run the Ceiling family too)" % w
                             for w in sorted(no_roof)])
    if not groups:
        raise NoData("no Ceiling entries of the devices the modelled entries ran on, in the same source: run bench "
                     "with the Ceiling family too (e.g. --benchmark_filter='^(GEMM|Ceiling)/')")
    several = several_sources(stats)
    pyplot = plt()
    for (family, device, source, kind), rows in sorted(groups.items()):
        peaks, bw = limits[(source, device)]
        peaks = [(p, c) for p, c in peaks if not kind or c.rate[1] == kind]
        fig, ax = pyplot.subplots(figsize=(8.0, 4.8))
        ais = [ai for _, ai, _ in rows]
        top_peak = max((p for p, _ in peaks), default=None)
        lo, hi = min(ais) / 4, max(ais) * 4
        if bw is not None and top_peak:  # the ridge, where the roofs meet, inside the axis
            ridge = top_peak / bw[0]
            lo, hi = min(lo, ridge / 4), max(hi, ridge * 4)
        xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        for peak, c in sorted(peaks, key=lambda pc: -pc[0]):
            ax.plot(xs, [derived.roof(peak, bw[0] if bw else None, x) for x in xs], ls=IDEAL, color="0.25", lw=1)
            ax.text(hi, peak, "%s (%s) %s " % (c.run.variant, c.rate[1], flop_rate(peak)), ha="right",
                    va="bottom", fontsize=6, color="0.25")
        if bw is not None:
            if not peaks:
                ax.plot(xs, [derived.roof(None, bw[0], x) for x in xs], ls=IDEAL, color="0.25", lw=1)
            ax.text(lo, derived.roof(None, bw[0], lo), " %s %.4g GB/s" % (bw[1].run.variant, bw[0]), fontsize=6,
                    color="0.25", rotation=0, va="bottom")
        by_label = {}
        for s, ai, rate in rows:
            by_label.setdefault(label(s, several), []).append((ai, rate, s))
            top = derived.roof(top_peak, bw[0] if bw else None, ai)
            if rate > top * (1 + derived.CEILING_NOISE):
                cv.finding("info", "%s %s %s: %.4g GFLOP/s, above the roof at intensity %.3g flop/B (%.4g): the "
                                   "traffic model counts more bytes than the kernel moves (data kept on chip), or a "
                                   "ceiling was measured low" % (family, label(s, several), problem_label(s.problem()),
                                                                 rate, ai, top), "above-ceiling", s.run.variant)
        for lbl, pts in sorted(by_label.items(), key=lambda kv: natural(kv[0])):
            st = cv.label_style(lbl)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls="none", marker=st["marker"], color=st["color"],
                    ms=4, label=lbl)
        ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (flop per byte of the traffic model)",
               ylabel="GFLOP/s" + (" per GPU" if device == "gpu" else ""))
        plain_log(ax.xaxis)
        plain_log(ax.yaxis)
        ax.grid(True, alpha=0.3, which="both")
        legend(ax, len(by_label))
        what = "%s roofline on the %s%s: every size measured, under the ceilings measured in the same run" % (
            family, "GPU" if device == "gpu" else "CPU", ", %s work" % kind.split("_")[-1] if kind else "")
        cv.save(fig, cv.name("roofline", family, kind, device, source if several else ""),
                what + (" [%s]" % source if several else ""), family, {source})


def chart_energy(stats, cv):
    """Time against energy per call, one point a variant (and knob value),
    one figure per family and problem, largest problems first: the Pareto
    front (derived.pareto: nothing both faster and cheaper) joined and
    ringed."""
    groups = {}
    for s in stats:
        j = s.counter("joules_per_call")
        if j and j > 0 and s.seconds and s.seconds > 0 and s.role != "ceiling":
            groups.setdefault((s.run.family, s.problem()), []).append(s)
    good = [(k, v) for k, v in groups.items() if len(v) > 1]
    if not good:
        raise NoData("no problem has two metered variants (joules_per_call: energy is metered where NVML or RAPL "
                     "can be read, docs/running.md#energy)")
    good.sort(key=lambda kv: -work(kv[0][1]))
    several = several_sources(stats)
    limit = FamilyLimit(cv, "energy")
    for (family, problem), ss in limit.take(good):
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6.4, 4.4))
        pts = []
        for s in sorted(ss, key=lambda s: natural(label(s, several))):
            j = s.counter("joules_per_call")
            pts.append((s.seconds, j))
            lbl = label(s, several)
            ax.plot([s.seconds], [j], label=lbl, **dict(cv.label_style(lbl), ls="none", ms=6))
        front = derived.pareto(pts)
        ax.plot([t for t, _ in front], [e for _, e in front], IDEAL, color="#37474f", lw=1, drawstyle="steps-post",
                label="Pareto front")
        ax.plot([t for t, _ in front], [e for _, e in front], "o", mfc="none", mec="#37474f", ms=12, mew=1.2)
        ax.set(xscale="log", yscale="log", xlabel="seconds per call", ylabel="joules per call")
        plain_log(ax.xaxis)
        plain_log(ax.yaxis)
        ax.grid(True, alpha=0.3, which="both")
        legend(ax, len(ss) + 1)
        cv.save(fig, cv.name("energy", family, problem_label(problem)),
                "%s %s: time against energy per call; ringed, the Pareto front (no variant both faster and "
                "cheaper)" % (family, problem_label(problem)), family, {s.source for s in ss})
    limit.done()


def per_joule_counters(s):
    """The entry's work-per-joule counters: its file's rates with a unit per joule."""
    return sorted(k for k, info in s.declared.items()
                  if info.get("kind") == "rate" and str(info.get("unit", "")).endswith("/J") and s.counter(k))


def chart_per_joule(stats, cv):
    """Work per joule against work per call (the size, in the family's own
    unit of work), one line a variant, one figure per family, work counter
    and the run's non-numeric arguments (op, type, distribution ...)."""
    groups = {}
    for s in stats:
        if s.role == "ceiling" or not s.counter("joules_per_call"):
            continue
        cats = tuple((k, v) for k, v in sorted(s.run.args.items())
                     if k not in results.KNOBS and s.arg(k, float) is None)
        for k in per_joule_counters(s):
            groups.setdefault((s.run.family, k, cats), []).append(s)

    def sizes(counter, ss):
        return {s.counter(counter) * s.counter("joules_per_call") for s in ss}
    good = sorted(((k, v) for k, v in groups.items() if len(sizes(k[1], v)) > 1), key=lambda kv: str(kv[0]))
    if not good:
        raise NoData("no work per joule at more than one size (joules_per_call and a rate's per-joule companion, "
                     "docs/json.md#counters)")
    several = several_sources(stats)
    limit = FamilyLimit(cv, "per_joule")
    # FamilyLimit takes (family, problem) keys, a problem (name, value) pairs:
    # here the counter, then the arguments.
    for (family, what), ss in limit.take([((f, (("counter", c),) + cats), v) for (f, c, cats), v in good]):
        counter, cats = what[0][1], what[1:]
        unit = str(ss[0].declared[counter].get("unit", ""))[:-2] or "work"
        lines = {}
        for s in ss:
            per_j = s.counter(counter)
            lines.setdefault(label(s, several), []).append((per_j * s.counter("joules_per_call"), per_j, None))
        args = " ".join("%s=%s" % kv for kv in cats)
        title = "%s%s: %s per joule vs work per call" % (family, " " + args if args else "", unit)
        draw_lines(cv, lines, "%s per call" % unit, "%s per joule" % unit,
                   cv.name("per_joule", family, counter, *[v for _, v in cats]), title, family,
                   {s.source for s in ss})
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
}
