"""The charts against a ceiling or a cost (plots/report_charts.py): each
entry's rate as a fraction of its ceiling, the roofline, time against energy
and work per joule."""
from regress.load import derived
from regress.load import results
from plots.report_draw import IDEAL, FamilyLimit, draw_fractions, draw_lines, legend, plain_log, plt
from plots.report_stats import (NoData, fractions, label, missing_roles, natural, problem_label, roofline_points,
                                roofs, several_sources, source_suffix, work)


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
            no_roof.add((s.run.family, "on %s%s" % (s.device, source_suffix(s, several_sources(stats)))))
    cv.drop("roofline", sorted(no_roof), "rooflines without a ceiling of their device in the same source (run the "
                                         "Ceiling family too)")
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
        style = cv.styles(by_label)
        for lbl, pts in sorted(by_label.items(), key=lambda kv: natural(kv[0])):
            st = style[lbl]
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
        pts, style = [], cv.styles({label(s, several) for s in ss})
        for s in sorted(ss, key=lambda s: natural(label(s, several))):
            j = s.counter("joules_per_call")
            pts.append((s.seconds, j))
            lbl = label(s, several)
            ax.plot([s.seconds], [j], label=lbl, **dict(style[lbl], ls="none", ms=6))
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


def work_per_call(s, counter):
    """The work of one call, per joule x joules per call, to 6 significant
    digits: the product of two measured numbers differs in its last bits
    between entries of one size, and those must be one point on the x axis."""
    return float("%.6g" % (s.counter(counter) * s.counter("joules_per_call")))


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
        return {work_per_call(s, counter) for s in ss}
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
            lines.setdefault(label(s, several), []).append((work_per_call(s, counter), per_j, None))
        args = " ".join("%s=%s" % kv for kv in cats)
        title = "%s%s: %s per joule vs work per call" % (family, " " + args if args else "", unit)
        draw_lines(cv, lines, "%s per call" % unit, "%s per joule" % unit,
                   cv.name("per_joule", family, counter, *[v for _, v in cats]), title, family,
                   {s.source for s in ss})
    limit.done()
