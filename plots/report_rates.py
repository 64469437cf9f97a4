"""The charts of a rate against size (plots/report_charts.py): each kind
claims the entries whose counters and run-name arguments it reads (GFLOP/s
against (M*N*K)^(1/3), elements/s against the total, ...), whatever their
family is called; `rate` draws, for every other family, each entry's rate
counter (the JSON's parbench.rate) against its numeric problem axes. The
phase shares (breakdown, mlp_share) too."""
from plots.report_draw import (MAX_FIGS, FamilyLimit, draw_lines, end_label, errorbars, legend, plain_log, plt)
from plots.report_stats import (NoData, at_most_threads, ceilings, label, natural, problem_label, several_sources,
                                source_suffix, work)

# What each rate-against-size kind reads of an entry, whatever its family:
# its counter and the run-name arguments of its x axis. A family none of them
# claims gets the generic `rate` chart.
CLAIMS = {
    "sor_bandwidth": lambda s: (s.counter("GBps") is not None and s.arg("M", int) and s.arg("N", int)
                                and s.arg("sweeps") is not None),
    "gflops": lambda s: s.counter("GFLOPS") is not None and all(s.arg(k, int) for k in ("M", "N", "K")),
    "iteration": lambda s: bool(s.counter("seconds_per_iteration")) and s.arg("N", int) is not None,
    "throughput": lambda s: bool(s.counter("elements_per_second")) and s.arg("n") is not None
    and s.arg("n") == s.arg("length"),
    "mlp_throughput": lambda s: bool(s.counter("samples_per_second")) and s.arg("batch", int) is not None,
}


def claimed(stats, kind):
    """The measured entries (no ceilings) that chart `kind` reads."""
    return [s for s in stats if s.role != "ceiling" and CLAIMS[kind](s)]


def chart_sor_bandwidth(stats, cv):
    """SOR: effective bandwidth (the family's GBps model) vs grid size, one
    line per variant, and the device copy ceiling measured in the same run as
    a dashed line: how near the memory limit each stencil gets."""
    sor = claimed(stats, "sor_bandwidth")
    groups = groups_varying(sor, ("field", "sweeps", "omega"), lambda s: (s.arg("M"), s.arg("N")))
    if not groups:
        raise NoData("no stencil variant (GBps over an M x N grid and its sweeps) was run at more than one grid")
    ceil = ceilings(stats)
    several = several_sources(stats)
    for (family, field, sweeps, omega), ss in groups:
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7.5, 4.8))
        lines = {}
        for s in ss:  # every thread count: its own line
            mb = s.arg("M", int) * s.arg("N", int) * 8 / 1e6
            per_gpu = s.counter("GBps") / (s.arg("gpus", int) or 1)  # against one GPU's ceiling
            spread = s.spread_of(per_gpu)
            lines.setdefault(label(s, several), []).append((mb, per_gpu, spread))
        style = cv.styles(lines)
        for lbl, pts in sorted(lines.items(), key=lambda kv: natural(kv[0])):
            pts.sort()
            st = style[lbl]
            errorbars(ax, [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], label=lbl, capsize=2,
                      ms=3, **st)
            end_label(ax, [p[0] for p in pts], [p[1] for p in pts], lbl, st["color"])
        drawn = set()
        for s in ss:
            c = ceil.get((s.source, "bandwidth", s.device))
            if c is None or (s.source, s.device) in drawn:
                continue
            drawn.add((s.source, s.device))
            what = "ceiling: %s (%s)%s, %.0f GB/s" % (c[1].run.variant, s.device, source_suffix(s, several), c[0])
            ax.axhline(c[0], color="#37474f", ls="--", lw=1, label=what)
        if not drawn:
            cv.finding("info", "%s bandwidth vs grid (field %s): no bandwidth ceiling in the same run to draw; "
                               "run the Ceiling family too (--benchmark_filter='^(%s|Ceiling)/')"
                       % (family, field, family))
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
                "%s %s (%s sweeps, omega %s): bandwidth vs grid, against the copy ceiling"
                % (family, field, sweeps, omega), family, {s.source for s in ss})


def chart_gflops(stats, cv):
    gemm = claimed(stats, "gflops")
    if not gemm:
        raise NoData("no passed entries with a GFLOPS counter and M, N, K arguments")
    several = several_sources(gemm)
    groups = {}
    for s in gemm:
        groups.setdefault((s.run.family, s.arg("op"), s.arg("type")), []).append(s)
    for (family, op, typ), ss in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        lines = {}
        for s in ss:  # every thread count: its own line
            size = (s.arg("M", int) * s.arg("N", int) * s.arg("K", int)) ** (1 / 3)
            lines.setdefault(label(s, several), []).append((size, s.counter("GFLOPS"), s.counter_stdev("GFLOPS")))
        draw_lines(cv, lines, "(M*N*K)^(1/3)", "GFLOP/s (error bars: spread of repetitions)",
                   cv.name("gflops", op, typ),
                   "%s %s %s: GFLOP/s vs size" % (family, op, typ), family, {s.source for s in ss})


def groups_varying(ss, keys, axis):
    """[((family, values of the args `keys`), entries)] of ss grouped by family and those args,
    sorted, keeping the groups run at more than one value of `axis` (a
    function of an entry): the lines of a chart over that axis."""
    groups = {}
    for s in ss:
        groups.setdefault((s.run.family,) + tuple(s.arg(k) for k in keys), []).append(s)
    return sorted(((k, v) for k, v in groups.items() if len({axis(s) for s in v}) > 1),
                  key=lambda kv: tuple(str(x) for x in kv[0]))


def chart_iteration(stats, cv):
    km = claimed(stats, "iteration")
    several = several_sources(km)
    groups = groups_varying(km, ("cfg", "D", "dist"), lambda s: s.arg("N"))
    if not groups:
        raise NoData("no configuration with a seconds_per_iteration counter was run at more than one N")
    for (family, cfg, d, dist), ss in groups:
        lines = {}
        for s in ss:
            spi = s.counter("seconds_per_iteration")
            spread = s.spread_of(spi * 1e3)
            lines.setdefault(label(s, several), []).append((s.arg("N", int), spi * 1e3, spread))
        ks = sorted({s.arg("K", int) for s in ss if s.arg("K", int) is not None})
        kdesc = "K=%d" % ks[0] if len(ks) == 1 else "K varies with N: %s" % ", ".join(map(str, ks))
        draw_lines(cv, lines, "N (points)", "ms per iteration", cv.name("iteration", cfg, "D%s" % d, dist),
                   "%s %s (D=%s, %s, %s): time per iteration vs N" % (family, cfg, d, kdesc, dist), family,
                   {s.source for s in ss})


def chart_throughput(stats, cv):
    """Sorts of one array: elements/s vs total, one figure per key type,
    payload, order and distribution; threaded variants at their most threads."""
    srt = claimed(stats, "throughput")
    several = several_sources(srt)
    groups = groups_varying(srt, ("key", "payload", "order", "dist"), lambda s: s.arg("n"))
    if not groups:
        raise NoData("no sort of one array was run at more than one total")
    for (family, *key), ss in groups[:MAX_FIGS]:
        lines = {}
        for s in ss:  # every thread count: its own line
            eps = s.counter("elements_per_second")
            spread = s.spread_of(eps)
            lines.setdefault(label(s, several), []).append((s.arg("n", int), eps, spread))
        draw_lines(cv, lines, "elements (one array)", "elements per second", cv.name("throughput", *key),
                   "%s %s %s %s %s: elements/s vs size" % (family, *key), family, {s.source for s in ss})


def chart_breakdown(stats, cv):
    """Where each GPU run's time goes: host-to-device, kernel, device-to-host
    and host shares, one horizontal bar per variant with its total."""
    parts = ("h2d_s", "kernel_s", "d2h_s", "host_s")
    several = several_sources(stats)
    groups = {}
    for s in stats:
        if all(s.counter(p) is not None for p in parts) and sum(s.counter(p) for p in parts[:3]) > 0:
            groups.setdefault((s.run.family, s.problem()), []).append(s)
    if not groups:
        raise NoData("no entries with device phases (h2d_s / kernel_s / d2h_s; CPU runs are all host time)")
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), -work(kv[0][1])))
    colours = {"h2d_s": "tab:orange", "kernel_s": "tab:green", "d2h_s": "tab:red", "host_s": "tab:grey"}
    limit = FamilyLimit(cv, "breakdown")
    for (family, problem), ss in limit.take(ordered):
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
                "%s run breakdown: %s" % (family, problem_label(problem)), family, {s.source for s in ss})
    limit.done()


def chart_mlp_throughput(stats, cv):
    """MLP: samples per second vs batch size, one line per backend (threaded
    ones at their most threads), one figure per network, activation and
    precision."""
    mlp = claimed(stats, "mlp_throughput")
    groups = groups_varying(mlp, ("widths", "act", "type"), lambda s: s.arg("batch"))
    if not groups:
        raise NoData("no network was run at more than one batch size (--mlp-batch=32,256,1024)")
    several = several_sources(mlp)
    for (family, widths, act, typ), ss in groups[:MAX_FIGS]:
        lines = {}
        for s in ss:  # every thread count: its own line
            sps = s.counter("samples_per_second")
            spread = s.spread_of(sps)
            lines.setdefault(label(s, several), []).append((s.arg("batch", int), sps, spread))
        draw_lines(cv, lines, "batch size", "samples per second (one SGD step)",
                   cv.name("mlp_throughput", widths, act, typ),
                   "%s %s %s %s: samples/s vs batch size" % (family, widths, act, typ), family,
                   {s.source for s in ss})


def chart_mlp_share(stats, cv):
    """MLP: the share of a training step spent in GEMM calls (gemm_share, from
    the untimed profiling pass) and in the rest (bias, activation, softmax,
    loss, update), per backend and batch size: where the seed's 'the GEMMs
    are all the time' holds and where it stops."""
    mlp = [s for s in stats if s.counter("gemm_share") is not None and s.arg("batch", int)]
    if not mlp:
        raise NoData("no entries with a gemm_share counter and a batch size")
    several = several_sources(mlp)
    groups = {}
    for s in at_most_threads(mlp):
        groups.setdefault((s.run.family, s.arg("widths"), s.arg("act"), s.arg("type")), []).append(s)
    for (family, widths, act, typ), ss in sorted(groups.items(),
                                                 key=lambda kv: tuple(str(x) for x in kv[0]))[:MAX_FIGS]:
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
                "%s %s %s %s: where a step's time goes" % (family, widths, act, typ), family,
                {s.source for s in ss})


def chart_rate(stats, cv):
    """Every family no chart above claims: each entry's rate counter (the
    JSON's parbench.rate) against each numeric problem axis (a run-name
    argument that is a number in all of the family's entries and takes more
    than one value), one figure per counter and value of the other
    arguments, one line per variant, knob value and source."""
    covered = {s.run.family for kind in CLAIMS for s in claimed(stats, kind)}
    fams = {}
    for s in stats:
        if s.role != "ceiling" and s.rate and s.run.family not in covered and s.counter(s.rate[0]) is not None:
            fams.setdefault(s.run.family, []).append(s)
    groups = []
    for family, ss in fams.items():
        for axis in numeric_axes(ss):
            by = {}
            for s in ss:
                rest = tuple((k, v) for k, v in s.problem() if k != axis)
                by.setdefault((s.rate[0], rest), []).append(s)
            groups += [((family, (("axis", axis), ("counter", c)) + rest), v) for (c, rest), v in by.items()
                       if len({s.arg(axis, float) for s in v}) > 1]
    if not groups:
        raise NoData("no family outside the charts above has a rate counter (parbench.rate) measured at more than "
                     "one value of a numeric run-name argument")
    several = several_sources(stats)
    limit = FamilyLimit(cv, "rate")
    # FamilyLimit takes (family, problem) keys: here the axis, the counter, then the other arguments.
    for (family, what), ss in limit.take(groups):
        axis, counter, rest = what[0][1], what[1][1], what[2:]
        unit = str((ss[0].declared.get(counter) or {}).get("unit", ""))
        lines = {}
        for s in ss:
            v = s.counter(s.rate[0])
            lines.setdefault(label(s, several), []).append((s.arg(axis, float), v, s.counter_stdev(counter)))
        draw_lines(cv, lines, axis, "%s%s (error bars: spread of repetitions)" % (counter, " (%s)" % unit if unit
                                                                                  else ""),
                   cv.name("rate", family, counter, axis, *["%s %s" % kv for kv in rest]),
                   "%s %s vs %s%s" % (family, counter, axis, ": " + problem_label(rest) if rest else ""), family,
                   {s.source for s in ss})
    limit.done()


def numeric_axes(ss):
    """The problem arguments of `ss` that are numbers in every entry and take more than one value."""
    keys = list(dict.fromkeys(k for s in ss for k, _ in s.problem()))
    return [k for k in keys if all(s.arg(k, float) is not None for s in ss) and len({s.arg(k, float) for s in ss}) > 1]
