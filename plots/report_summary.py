"""The report's summary (plots/report_html.py): what ran by family and
disposition, on what machine, and what looks suspicious, grouped by cause
with the machine-wide causes first; the families in the order the input
registered them."""
from regress.load import derived
from regress.load import fmt
from plots.report_format import fmt_context, fmt_num, fmt_value, numeric
from plots.report_table import DISPOSITION_LABEL, DISPOSITIONS, ERRORS


# Context keys of the summary's machine table, in order: (label, keys tried in turn).
MACHINE_KEYS = (
    ("host", ("host_name",)),
    ("CPU", ("cpu_model",)),
    ("cores", ("cpu_cores", "num_cpus")),
    ("CPU kernels", ("cpu_simd",)),
    ("GPU", ("gpu",)),
    ("GPU driver", ("gpu_driver",)),
    ("CUDA", ("cuda_runtime",)),
    ("git revision", ("parbench_git_revision",)),
    ("profile", ("parbench_profile",)),
    ("build", ("parbench_build_type",)),
    ("date", ("date",)),
)


def suspicious(insts, runs, labels, findings):
    """(severity, cause, variant, text) items: findings, errors, warnings,
    load, high CV, throttling. cause is the group it is listed under
    (SUSPICIOUS_GROUPS); variant the variant it concerns, or None."""
    from plots.report_draw import Finding
    several = len(runs) > 1
    pre = (lambda i: "[%s] " % labels[i]) if several else (lambda i: "")
    items = []
    for f in findings:
        f = Finding(*f)
        items.append(("warning" if f.severity == "warning" else "info", f.cause, f.variant, f.text))
    for i, run in enumerate(runs):
        warns = list(run.warnings)
        for w in warns:
            items.append(("warning", "loader", None, pre(i) + str(w)))
        ctx = run.context if isinstance(run.context, dict) else {}
        if ctx.get("truncated_repair") and not any("truncat" in str(w).lower() for w in warns):
            items.append(("warning", "loader", None, pre(i) + "file repaired: " + fmt_value(ctx["truncated_repair"])))
        la, cpus = ctx.get("load_avg"), ctx.get("num_cpus")
        if isinstance(la, list) and la and numeric(la[0]) and numeric(cpus) and cpus > 0 and la[0] > cpus / 2:
            items.append(("info", "load", None, pre(i) + "load average %.1f on %d CPUs when the run started: other "
                          "work may have shared the machine" % (la[0], cpus)))
    for r in insts:
        if r.disposition in ERRORS:
            items.append(("error", "error", r.variant,
                          "%s%s %s: %s" % (pre(r.src), DISPOSITION_LABEL[r.disposition], r.name, r.reason)))
    for r in sorted(insts, key=lambda r: -(r.cv or 0)):  # the noisiest first
        if r.cv is not None and r.cv > derived.HIGH_CV:
            items.append(("info", "cv", r.variant, "%s%s: CV %s over %d repetitions (above %s)"
                          % (pre(r.src), r.name, fmt.pct(r.cv, digits=3, missing="", sig=True), r.n,
                             fmt.pct(derived.HIGH_CV, digits=3, missing="", sig=True))))
    for r in insts:
        if r.throttled:
            lo = [e.counter("sm_clock_min_mhz") for e in r.entries if e.counter("sm_clock_min_mhz") is not None]
            clock = "; SM clock down to %s MHz" % fmt_num(min(lo)) if lo else ""
            items.append(("warning", "throttled", r.variant, "%s%s: GPU throttled in %d of %d repetitions%s"
                          % (pre(r.src), r.name, r.throttled, len(r.entries), clock)))
    return items


# The groups of "Suspicious", in the order shown: what concerns the whole
# machine (it may explain the rest) first, then entries that did not pass,
# then the findings by cause. (cause, title, machine-wide)
# A machine-wide group is shown open when it is this short; a longer one is
# one line like the others (43 throttled entries would be a wall again).
OPEN_AT_MOST = 3

SUSPICIOUS_GROUPS = (
    ("load", "Machine load", True),
    ("mixed-inputs", "Inputs from more than one revision or profile", True),
    ("throttled", "GPU clocks throttled", True),
    ("error", "Entries that did not pass", False),
    ("above-ceiling", "Faster than the ceiling measured in the same run", False),
    ("low-efficiency", "Slower with more threads than one thread would be", False),
    ("superlinear", "Superlinear efficiency", False),
    ("cv", "Noisy repetitions (coefficient of variation above %s)"
     % fmt.pct(derived.HIGH_CV, digits=3, missing="", sig=True), False),
    ("loader", "Warnings about the input", False),
    ("heatmap", "Heatmaps drawn in part or not at all", False),
    ("other", "Other findings of the charts", False),
)


def suspicious_groups(items):
    """[(title, machine-wide, severity, [text], "by variant" line or "")] in
    SUSPICIOUS_GROUPS' order, the empty groups left out; a cause not listed
    there goes with "other"."""
    known = {k for k, _, _ in SUSPICIOUS_GROUPS}
    out = []
    for key, title, machine in SUSPICIOUS_GROUPS:
        mine = [it for it in items if (it[1] if it[1] in known else "other") == key]
        if not mine:
            continue
        sev = "error" if any(it[0] == "error" for it in mine) else (
            "warning" if any(it[0] == "warning" for it in mine) else "info")
        counts = {}
        for it in mine:
            if it[2]:
                counts[it[2]] = counts.get(it[2], 0) + 1
        by = ", ".join("%s %d" % (v, n) for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        out.append((title, machine, sev, [it[3] for it in mine], by))
    return out


def nothing_measured(insts):
    """The line a report with no passed entry leads with: what there was instead."""
    counts = {}
    for r in insts:
        counts[r.disposition] = counts.get(r.disposition, 0) + 1
    what = ", ".join("%d %s" % (counts[d], DISPOSITION_LABEL[d]) for d in DISPOSITIONS if counts.get(d))
    return "Nothing was measured: %d entr%s, none passed%s. No chart was drawn." % (
        len(insts), "y" if len(insts) == 1 else "ies", " (%s)" % what if what else "")


def family_order(insts):
    """The families of `insts` in the order the input registered them: the
    order they first appear in the files (bench writes each family's entries
    in its registration order)."""
    return list(dict.fromkeys(r.family for r in insts))


def what_ran(insts, labels):
    """Rows (source, family, variants, instances, counts by disposition)."""
    rows = []
    for src, lab in enumerate(labels):
        mine = [r for r in insts if r.src == src]
        for fam in family_order(mine):
            rs = [r for r in mine if r.family == fam]
            counts = {d: sum(1 for r in rs if r.disposition == d) for d in DISPOSITIONS}
            rows.append((lab, fam, len({r.variant for r in rs}), len(rs), counts))
        counts = {d: sum(1 for r in mine if r.disposition == d) for d in DISPOSITIONS}
        rows.append((lab, "all", len({(r.family, r.variant) for r in mine}), len(mine), counts))
    return rows


def machine_rows(runs):
    rows = []
    for label, keys in MACHINE_KEYS:
        vals = []
        for r in runs:
            v = ""
            for k in keys:
                if r.context.get(k) not in (None, ""):
                    v = fmt_context(k, r.context[k], r.context)
                    break
            vals.append(v)
        if any(vals):
            rows.append((label, vals))
    return rows


def context_rows(runs):
    keys = []
    for r in runs:
        for k in r.context:
            if k not in keys and k != "parbench_counters":
                keys.append(k)
    rows = []
    for k in keys:
        rows.append((k, [fmt_context(k, r.context[k], r.context) if k in r.context else "" for r in runs]))
    return rows


def declared_kinds(runs):
    out = {}
    for r in runs:
        for c, info in r.counter_kinds.items():
            if isinstance(info, dict):
                out.setdefault(c, info)
    return out
