"""The offline report of plots/plot: out/index.html and out/report.md.

    write_report(out, runs, charts, missing, findings) -> ["index.html", "report.md"]

  runs      results.Run objects (one per source file)
  charts    (name, title, section): out/name.png exists (and out/name.svg, linked
            from the figure, with plots/plot --svg); section is
            a family ("GEMM", "KMeans", "Sort", "Ceiling") or "Scaling"
  missing   (chart kind, reason) of the charts not drawn
  findings  (severity, text), severity "warning" or "info", from the chart code

The page is what a performance engineer opens first: a summary (what ran, on
what, how it went, what looks suspicious), one section per family (charts,
then a sortable results table with only that family's columns, then the
unsupported entries in a collapsed toggle), the charts not drawn, and the
machine and build context of every source. It opens with no network: CSS and
the table sorter are inline, the images are files beside it.

Results tables: one row per instance (the repetitions of one run name grouped:
median time, repetitions, coefficient of variation; aggregate entries are not
rows). Columns: source (with several sources), variant, the family's run-name
arguments, median time, reps, CV (when some instance has repetitions), status
(when some instance failed), then the family's counters chosen by kind
(schema 1: rate, result and time kinds except seconds_per_call; files without
counter kinds: every counter that neither repeats a run-name argument nor the
time itself).

Only the Python standard library is used.
"""
import html
import math
import os
import re

from regress.load import derived
from regress.load import results
from regress.load import fmt
from regress.load.fmt import fmt_time, sig4

DISPOSITIONS = results.DISPOSITIONS
ERRORS = results.ERROR_DISPOSITIONS
DISPOSITION_LABEL = {"passed": "passed", "unsupported": "unsupported", "incorrect": "incorrect",
                     "out_of_memory": "out of memory", "failed": "failed"}
# Worst first: an instance with one failed repetition is failed.
SEVERITY = {"failed": 0, "out_of_memory": 1, "incorrect": 2, "unsupported": 3, "passed": 4}

FAMILY_ORDER = ("GEMM", "KMeans", "Sort", "Ceiling")
# Counter kinds (schema 1) shown as table columns; seconds_per_call is the time column itself.
SHOWN_KINDS = ("rate", "time", "energy", "power", "result", "share")
KIND_ORDER = {"rate": 0, "time": 1, "energy": 1, "power": 1, "result": 2, None: 3}
NOT_COUNTERS = {"seconds_per_call"}


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


# ---- reading entries -------------------------------------------------------

def source_labels(runs):
    """Run.label (file name without .json), made unique across the sources."""
    labels, seen = [], {}
    for i, r in enumerate(runs):
        lab = getattr(r, "label", None)
        if not lab:
            lab = os.path.basename(getattr(r, "path", "") or "") or "run %d" % (i + 1)
            if lab.endswith(".json"):
                lab = lab[:-5]
        if lab in seen:
            seen[lab] += 1
            lab = "%s (%d)" % (lab, seen[lab])
        else:
            seen[lab] = 1
        labels.append(lab)
    return labels


def kind_of(run, counter):
    """The kind of a counter ("rate", "time", ...) or None when the file does not say."""
    return run.kind_of(counter)


def counter_info(runs, counter):
    for r in runs:
        info = r.counter_kinds.get(counter)
        if isinstance(info, dict):
            return info
    return {}


def numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class Instance:
    """One run name of one source: its repetitions (aggregates left out)."""

    def __init__(self, src, label, run, entries):
        self.src, self.label, self.source_run = src, label, run
        self.entries = entries
        first = entries[0]
        self.run = first.run
        self.name = first.run.base()
        self.family, self.variant = first.run.family, first.run.variant
        self.args = dict(first.run.args)
        self.arg_order = list(first.run.arg_order)
        worst = min(entries, key=lambda e: SEVERITY[e.disposition])
        self.disposition, self.reason = worst.disposition, worst.reason
        self.passed = [e for e in entries if e.disposition == "passed"]
        secs = [x for x in (e.seconds() for e in self.passed) if x is not None]
        self.seconds = derived.median(secs) if secs else None
        self.n = len(secs)
        self.cv = derived.cv(secs)
        self.counters = {}
        for e in self.passed:
            for k, v in e.counters().items():
                self.counters.setdefault(k, []).append(v)
        self.counters = {k: derived.median(v) for k, v in self.counters.items()}
        self.throttled = sum(1 for e in entries if e.counter("throttled") == 1 and e.device == "gpu")


def instances(runs, labels):
    out = []
    for i, (run, lab) in enumerate(zip(runs, labels)):
        groups = {}
        for e in run.entries:
            if e.aggregate:
                continue
            groups.setdefault(e.run.base(), []).append(e)
        out += [Instance(i, lab, run, es) for es in groups.values()]
    return out


def family_order(names):
    return sorted(names, key=lambda f: (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER), f))


# ---- formatting -------------------------------------------------------------

def fmt_num(v):
    """4 significant digits; integers as integers; large values with SI prefixes."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if not numeric(v):
        return str(v)
    a = abs(v)
    if a >= 1e6:
        for div, suf in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
            if a >= div:
                s = "%.4g" % (v / div)
                if "e" not in s:
                    return s + suf
        return "%.4g" % v
    if a >= 1e4:  # 4 significant digits, written out: 42181.3 -> 42180
        return "%d" % round(float("%.4g" % v))
    if float(v).is_integer():
        return str(int(v))
    return "%.4g" % v


def fmt_bytes(n):
    for div, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div:
            return "%s %s" % (sig4(n / div), unit)
    return "%d B" % n


def fmt_caches(caches, ctx):
    cpus = ctx.get("num_cpus") if numeric(ctx.get("num_cpus")) else None
    parts = []
    for c in caches:
        if not isinstance(c, dict):
            parts.append(fmt_value(c))
            continue
        s = "L%s %s %s" % (c.get("level", "?"), c.get("type", ""),
                           fmt_bytes(c["size"]) if numeric(c.get("size")) else "?")
        share = c.get("num_sharing")
        if cpus and numeric(share) and share > 0:
            s += " (x%d)" % max(1, int(cpus // share))
        parts.append(" ".join(s.split()))
    return ", ".join(parts)


def fmt_value(v):
    """Any JSON value as readable text, never a Python repr."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return fmt_num(v) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return ", ".join(fmt_value(x) for x in v)
    if isinstance(v, dict):
        return "; ".join("%s: %s" % (k, fmt_value(x)) for k, x in v.items())
    return str(v)


def fmt_context(key, value, ctx):
    if key == "caches" and isinstance(value, list):
        return fmt_caches(value, ctx)
    if key == "load_avg" and isinstance(value, list):
        return ", ".join("%.2f" % x if numeric(x) else fmt_value(x) for x in value)
    if key.endswith("_bytes") and isinstance(value, str) and value.isdigit() and int(value) >= 1024:
        return "%s (%s)" % (value, fmt_bytes(int(value)))
    return fmt_value(value)


def esc(s):
    return html.escape(str(s), quote=True)


def md_esc(s):
    """Text for a Markdown table cell or list item: HTML-escaped, pipes and newlines neutralised."""
    s = html.escape(str(s), quote=False)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("*", "\\*").replace("\n", " ")


def slug(text):
    """The anchor GitHub gives a Markdown heading, used for the HTML ids too."""
    s = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return s.replace(" ", "-")


def header_html(name):
    """A column header that may wrap after underscores and dots."""
    return esc(name).replace("_", "_<wbr>").replace(".", ".<wbr>")


# ---- columns ----------------------------------------------------------------

class Column:
    def __init__(self, key, title, kind, tip="", cls=""):
        self.key, self.title, self.kind, self.tip, self.cls = key, title, kind, tip, cls


def _as_float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def family_columns(rows, runs, several):
    """The columns of one family's table (rows: its passed and error instances)."""
    cols = []
    if several:
        cols.append(Column("source", "source", "source"))
    cols.append(Column("variant", "variant", "variant"))
    arg_keys = []
    for r in rows:
        for k in r.arg_order:
            if k not in arg_keys:
                arg_keys.append(k)
    cols += [Column("arg:" + k, k, "arg", "run-name argument") for k in arg_keys]
    cols.append(Column("time", "median time", "time", "median of the repetitions (real time per iteration)"))
    cols.append(Column("reps", "reps", "reps", "repetitions with a time"))
    if any(r.n > 1 for r in rows):
        cols.append(Column("cv", "CV", "cv", "coefficient of variation of the repetitions' times"))
    cols += counter_columns(rows, runs, arg_keys)
    if any(r.disposition in ERRORS for r in rows):
        cols.append(Column("status", "status", "status", "incorrect / out of memory / failed, with the reason"))
    return cols


def counter_columns(rows, runs, arg_keys):
    names = []
    for r in rows:
        for k in sorted(r.counters):
            if k not in names:
                names.append(k)
    fam_runs = []
    for r in rows:
        if r.source_run not in fam_runs:
            fam_runs.append(r.source_run)
    chosen = []
    for c in names:
        if c in NOT_COUNTERS:
            continue
        kinds = {kind_of(run, c) for run in fam_runs} - {None}
        if kinds:
            kind = sorted(kinds)[0]
            if kind not in SHOWN_KINDS:
                continue
        else:
            kind = None
            if c in arg_keys or _repeats_argument(rows, c) or _repeats_time(rows, c):
                continue
        chosen.append((KIND_ORDER.get(kind, 3), c, kind))
    chosen.sort()
    cols = []
    for _, c, kind in chosen:
        info = counter_info(fam_runs, c)
        tip = ", ".join(x for x in (kind or "kind not declared", info.get("unit", ""),
                                    ("%s is better" % info["better"]) if info.get("better") else "") if x)
        title = c
        if info.get("unit") and kind != "time" and info["unit"] != "1/s" and _letters(info["unit"]) != _letters(c):
            title = "%s (%s)" % (c, info["unit"])
        cols.append(Column("counter:" + c, title, "counter-time" if _is_time(c, kind, info) else "counter", tip))
    return cols


def _letters(s):
    return re.sub(r"[^a-z]", "", s.lower())


def _is_time(c, kind, info):
    if kind is not None:
        return kind == "time" and info.get("unit", "s") == "s"
    return c.endswith("_s") or c.startswith("seconds_")


def _repeats_argument(rows, c):
    """Files without kinds: a counter whose value is, in every row, one of the row's
    numeric run-name arguments (e.g. cpu_threads = threads:16, elements = n:...)."""
    seen = False
    trivial = True
    for r in rows:
        if c not in r.counters:
            continue
        v = r.counters[c]
        seen = True
        if v not in (0, 1):
            trivial = False
        if not any(_as_float(a) == v for a in r.args.values()):
            return False
    return seen and not trivial


def _repeats_time(rows, c):
    seen = False
    for r in rows:
        if c not in r.counters or r.seconds is None:
            continue
        seen = True
        if r.seconds == 0 or abs(r.counters[c] - r.seconds) > 1e-6 * abs(r.seconds):
            return False
    return seen


def _text_class(v):
    return "text long" if len(v) > 18 else "text"


def cell(row, col):
    """(sort value, text, css class) of one cell."""
    k = col.key
    if k == "source":
        return row.label, row.label, _text_class(row.label)
    if k == "variant":
        return row.variant, row.variant, _text_class(row.variant)
    if k.startswith("arg:"):
        v = row.args.get(k[4:], "")
        return v, v, _text_class(v)
    if k == "time":
        return ("" if row.seconds is None else repr(row.seconds)), fmt_time(row.seconds), "num"
    if k == "reps":
        if row.n == 0:
            return "", "", "num"
        return str(row.n), str(row.n), "num"
    if k == "cv":
        if row.cv is None:
            return "", "", "num"
        return (repr(row.cv), fmt.pct(row.cv, digits=3, missing="", sig=True),
                "num hicv" if row.cv > derived.HIGH_CV else "num")
    if k == "status":
        if row.disposition in ERRORS:
            text = DISPOSITION_LABEL[row.disposition] + (": " + row.reason if row.reason else "")
            return text, text, "reason"
        return "", "", "reason"
    c = k[len("counter:"):]
    v = row.counters.get(c)
    if v is None:
        return "", "", "num"
    text = fmt_time(v) if col.kind == "counter-time" else fmt_num(v)
    return repr(v), text, "num"


# ---- the summary ------------------------------------------------------------

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


def what_ran(insts, labels):
    """Rows (source, family, variants, instances, counts by disposition)."""
    rows = []
    for src, lab in enumerate(labels):
        mine = [r for r in insts if r.src == src]
        for fam in family_order({r.family for r in mine}):
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


# ---- HTML -------------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.2em 1.5em;color:#222;\
max-width:1400px}
h1{margin:.2em 0}h2{border-bottom:2px solid #ddd;padding-bottom:.15em;margin-top:1.6em}h3{margin:1.1em 0 .4em}
nav ul{columns:3;list-style:none;padding-left:0;margin:.3em 0}nav li{margin:.1em 0}
.families{display:flex;flex-wrap:wrap;gap:.8em}.family{display:flex;flex-direction:column;width:260px;\
border:1px solid #ddd;border-radius:6px;padding:.5em;text-decoration:none;color:#222}\
.family:hover{border-color:#1565c0}.family span{font-size:.85em;color:#555}.family img{width:100%;margin-top:.4em}
table{border-collapse:collapse;font-size:12px;margin:.4em 0}
td,th{border:1px solid #ccc;padding:2px 5px;vertical-align:top}
th{background:#eee;text-align:left}
table.sortable th{cursor:pointer}table.sortable th:hover{background:#dde}
table.sortable th[data-asc="1"]::after{content:" \\25B2"}table.sortable th[data-asc="0"]::after{content:" \\25BC"}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.text{white-space:nowrap}td.long{overflow-wrap:anywhere;min-width:8em}
.counts td.zero{color:#aaa}
td.reason{overflow-wrap:anywhere;min-width:12em;max-width:30em;color:#900}
td.hicv{background:#fff3c4}
tr.err td{background:#fde2e2}
table.kv th{white-space:nowrap;font-weight:600}table.kv td{overflow-wrap:break-word;max-width:40em}
.counts td{text-align:right}.counts td.bad{color:#b00;font-weight:600}
ul.sus{padding-left:1.2em}ul.sus li{margin:.15em 0;overflow-wrap:anywhere}\
details.sus-group.error summary b{color:#b00}details.sus-group.warning summary b{color:#8a5a00}
.warning{color:#a40}.error{color:#b00}.info{color:#555}
.ok{color:#070}
.note{color:#555;font-size:13px}
details{margin:.4em 0}summary{cursor:pointer;color:#335}
details ul{margin:.2em 0 .6em}details p.why{font-size:13px;font-weight:600;margin:.6em 0 .1em}\
details li{font-size:12px;overflow-wrap:anywhere}
div.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(620px,1fr));gap:.6em 1.2em}
figure{margin:.6em 0 1.2em}figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:12px;color:#555;margin-bottom:.2em}
div.scroll{overflow:auto;max-height:85vh;max-width:100%}
table.results thead th{position:sticky;top:0;z-index:1}
"""

SCRIPT = """
<script>
document.querySelectorAll('table.sortable').forEach(table => table.tHead.querySelectorAll('th').forEach((th, col) => \
th.addEventListener('click', () => {
  const body = table.tBodies[0], rows = Array.from(body.rows);
  const asc = th.dataset.asc = th.dataset.asc === '1' ? '0' : '1';
  table.tHead.querySelectorAll('th').forEach(o => { if (o !== th) delete o.dataset.asc; });
  const key = r => { const c = r.cells[col]; const t = c ? (c.dataset.v ?? c.textContent).trim() : '';
                     if (t === '') return [2, '']; const n = Number(t); return isNaN(n) ? [1, t] : [0, n]; };
  const dir = asc === '1' ? 1 : -1;
  rows.sort((a, b) => { const x = key(a), y = key(b);
    if (x[0] !== y[0]) return x[0] - y[0];
    if (x[0] === 2) return 0;
    if (x[0] === 0) return (x[1] - y[1]) * dir;
    return x[1].localeCompare(y[1], undefined, {numeric: true}) * dir; });
  rows.forEach(r => body.appendChild(r));
})));
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  document.body.dataset.imagesTotal = imgs.length;
  document.body.dataset.imagesLoaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
});
</script>
"""


def _html_values_row(label, vals, th_cls=""):
    """A context row: one merged cell when every source agrees."""
    if len(vals) > 1 and len(set(vals)) == 1:
        return "<tr><th%s>%s</th><td colspan='%d'>%s</td></tr>" % (th_cls, esc(label), len(vals), esc(vals[0]))
    return "<tr><th%s>%s</th>%s</tr>" % (th_cls, esc(label), "".join("<td>%s</td>" % esc(v) for v in vals))


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def unsupported_groups(unsup, several):
    """[(header or None, [item, ...])], biggest group first. Reasons that differ only
    in their numbers form one group: the header is the reason with the numbers that
    vary replaced by "…", each item the name with its own values of those numbers.
    Reasons of one entry come last, as items "name: reason" under no header."""
    groups = {}
    for r in unsup:
        why = r.reason or "(no reason given)"
        name = ("[%s] " % r.label if several else "") + r.name
        groups.setdefault(_NUMBER.sub("#", why), []).append((name, why))
    out, singles = [], []
    for members in groups.values():
        if len(members) == 1:
            singles.append("%s: %s" % members[0])
            continue
        reasons = [w for _, w in members]
        if len(set(reasons)) == 1:
            out.append((reasons[0], [n for n, _ in members]))
            continue
        values = [_NUMBER.findall(w) for w in reasons]
        vary = [len(set(col)) > 1 for col in zip(*values)]
        pieces, last = [], 0
        for i, m in enumerate(_NUMBER.finditer(reasons[0])):
            pieces.append(reasons[0][last:m.start()])
            pieces.append("\u2026" if vary[i] else m.group())
            last = m.end()
        pieces.append(reasons[0][last:])
        items = ["%s (%s)" % (n, ", ".join(v for v, x in zip(vals, vary) if x))
                 for (n, _), vals in zip(members, values)]
        out.append(("".join(pieces), items))
    out.sort(key=lambda g: (-len(g[1]), g[0]))
    if singles:
        out.append((None, sorted(singles)))
    return out


def sections(insts, charts):
    """Section names in order: families with results or charts, then Scaling, then the rest."""
    fams = family_order({r.family for r in insts} | {c[2] for c in charts if c[2] in FAMILY_ORDER})
    extra = sorted({c[2] for c in charts} - set(fams), key=lambda s: (s != "Scaling", s))
    return fams + extra


def write_report(out, runs, charts, missing, findings):
    runs = list(runs)
    charts = [tuple(c) for c in charts]
    labels = source_labels(runs)
    several = len(runs) > 1
    insts = instances(runs, labels)
    secs = sections(insts, charts)
    items = suspicious(insts, runs, labels, findings)
    kinds_known = [bool(r.counter_kinds) for r in runs]

    h = page_head("parbench report") + ["<h1>parbench report</h1>"]
    md = ["# parbench report", ""]
    h.append("<p class='note'>%s</p>" % esc("Sources: " + ", ".join(
        "%s (%s)" % (lab, getattr(r, "path", "")) if several else getattr(r, "path", lab)
        for lab, r in zip(labels, runs))))
    md += ["Sources: " + ", ".join("%s (%s)" % (md_esc(lab), md_esc(getattr(r, "path", "")))
                                   for lab, r in zip(labels, runs)), ""]

    # contents: the summary, charts not drawn and the machine on this page;
    # each family (and Scaling) on a page of its own
    toc = [("Summary", "#summary")] + [(s, page_of(s)) for s in secs] + [
        ("Charts not drawn", "#charts-not-drawn"), ("Machine and build", "#machine-and-build")]
    h.append("<nav><b>Contents</b><ul>%s</ul></nav>"
             % "".join("<li><a href='%s'>%s</a></li>" % (a, esc(t)) for t, a in toc))
    md += ["Contents: " + " · ".join("[%s](#%s)" % (md_esc(t), a.lstrip("#") if a.startswith("#") else slug(t))
                                     for t, a in toc), ""]

    # summary
    h.append("<h2 id='summary'>Summary</h2>")
    md += ["## Summary", ""]
    nothing = not any(r.disposition == "passed" for r in insts)
    if nothing:
        line = nothing_measured(insts)
        h.append("<p class='summary bad' id='nothing-measured'>%s</p>" % esc(line))
        md += ["**%s**" % md_esc(line), ""]
    h.append("<h3>What ran</h3>")
    md += ["### What ran", ""]
    counts_cols = ((["source"] if several else []) + ["family", "variants", "instances"]
                   + [DISPOSITION_LABEL[d] for d in DISPOSITIONS])
    h.append("<table class='counts' id='what-ran'><thead><tr>%s</tr></thead><tbody>"
             % "".join("<th>%s</th>" % esc(c) for c in counts_cols))
    md += ["| " + " | ".join(counts_cols) + " |", "|" + " --- |" * len(counts_cols)]
    wr = what_ran(insts, labels)
    for lab, fam, nvar, ninst, counts in wr:
        if fam == "all" and sum(1 for x in wr if x[0] == lab) == 2:
            continue  # one family: its row is the total
        cells = ([lab] if several else []) + [fam if fam != "all" else "all families", str(nvar), str(ninst)]
        tds = "".join("<td style='text-align:left'>%s</td>" % (
            "<a href='%s'>%s</a>" % (page_of(c), esc(c)) if c == fam and fam in secs else esc(c))
            for c in cells[:len(cells) - 2])
        tds += "".join("<td>%s</td>" % esc(c) for c in cells[len(cells) - 2:])
        for d in DISPOSITIONS:
            bad = d in ERRORS and counts[d] > 0
            tds += "<td class='%s'>%d</td>" % ("bad" if bad else "zero" if counts[d] == 0 else "", counts[d])
        style = " style='font-weight:600'" if fam == "all" else ""
        h.append("<tr%s>%s</tr>" % (style, tds))
        md.append("| " + " | ".join([md_esc(c) for c in cells] + [str(counts[d]) for d in DISPOSITIONS]) + " |")
    h.append("</tbody></table><p class='note'>Instances are run names with their repetitions grouped; "
             "variants count each family's distinct variant names.</p>")
    md += ["", "Instances are run names with their repetitions grouped.", ""]

    h.append("<h3>On what</h3>")
    md += ["### On what", ""]
    mrows = machine_rows(runs)
    if mrows:
        head = "<tr><th></th>%s</tr>" % "".join("<th>%s</th>" % esc(l) for l in labels) if several else ""
        h.append("<table class='kv' id='on-what'>%s%s</table>"
                 % (head, "".join(_html_values_row(l, v) for l, v in mrows)))
        md += ["| | " + " | ".join(md_esc(l) for l in labels) + " |", "| --- |" + " --- |" * len(labels)]
        md += ["| %s | %s |" % (md_esc(l), " | ".join(md_esc(x) for x in v)) for l, v in mrows]
        md.append("")
    else:
        h.append("<p>No machine information in the input.</p>")
        md += ["No machine information in the input.", ""]

    h.append("<h3 id='suspicious'>Suspicious</h3>")
    md += ["### Suspicious", ""]
    if not items and nothing:
        h.append("<p>Nothing to judge: no entry passed.</p>")
        md += ["Nothing to judge: no entry passed.", ""]
    elif not items:
        h.append("<p class='ok'>Nothing suspicious: no findings, every entry passed or was unsupported, no loader "
                 "warnings, no noisy repetitions, no GPU throttling.</p>")
        md += ["Nothing suspicious: no findings, every entry passed or was unsupported, no loader warnings, "
               "no noisy repetitions, no GPU throttling.", ""]
    groups = suspicious_groups(items)
    machine_wide = any(m for _, m, _, _, _ in groups)
    for title, machine, sev, texts, by in groups:
        hint = " The machine-wide causes above may explain these." if machine_wide and not machine else ""
        head = "%s: %d%s" % (title, len(texts), " (by variant: %s)" % by if by else "")
        h.append("<details class='sus-group %s'%s><summary><b>%s</b>%s</summary><ul class='sus'>%s</ul></details>"
                 % (sev, " open" if machine and len(texts) <= OPEN_AT_MOST else "", esc(head), esc(hint), "".join(
                     "<li class='%s'>%s</li>" % (sev, esc(t)) for t in texts)))
        md += ["**%s**%s" % (md_esc(head), md_esc(hint)), ""] + ["- %s" % md_esc(t) for t in texts] + [""]

    # one page per family: the summary links each, with its first chart
    h.append("<h3 id='families'>Families</h3><div class='families'>")
    pages = {}
    charts = sorted(charts, key=chart_rank)
    for sec in secs:
        mine = [c for c in charts if c[2] == sec]
        fam = [r for r in insts if r.family == sec]
        what = "%d chart%s, %d instance%s" % (len(mine), "" if len(mine) == 1 else "s",
                                              len(fam), "" if len(fam) == 1 else "s")
        thumb = "<img src='%s.png' alt='%s'>" % (esc(mine[0][0]), esc(mine[0][1])) if mine else ""
        h.append("<a class='family' href='%s'><b>%s</b><span>%s</span>%s</a>" % (page_of(sec), esc(sec), what, thumb))
    h.append("</div>")
    for sec in secs:
        main_h, h = h, page_head("parbench report: %s" % sec) + [
            "<p class='note'><a href='index.html'>&larr; the summary</a> &middot; %s</p>" % " &middot; ".join(
                "<a href='%s'>%s</a>" % (page_of(s), esc(s)) if s != sec else "<b>%s</b>" % esc(s) for s in secs)]
        h.append("<h1 id='%s'>%s</h1>" % (slug(sec), esc(sec)))
        pages[page_of(sec)] = h
        md += ["## %s" % md_esc(sec), ""]
        mine = [c for c in charts if c[2] == sec]
        if mine:
            h.append("<div class='charts'>")
        for name, title, s in mine:
            big = "svg" if os.path.exists(os.path.join(out, name + ".svg")) else "png"
            # The title is in the picture: no caption repeats it.
            h.append("<figure><a href='%s.%s'><img src='%s.png' alt='%s'></a></figure>"
                     % (esc(name), big, esc(name), esc(title)))
            md += ["[![%s](%s.png)](%s.%s)" % (md_esc(title), name, name, big), ""]
        if mine:
            h.append("</div>")
        fam = [r for r in insts if r.family == sec]
        if not fam:
            h = main_h
            continue
        rows = [r for r in fam if r.disposition != "unsupported"]
        unsup = [r for r in fam if r.disposition == "unsupported"]
        h.append("<h3>%s results</h3>" % esc(sec))
        md += ["### %s results" % md_esc(sec), ""]
        fam_srcs = sorted({r.src for r in fam})
        fam_several = len({r.src for r in rows}) > 1
        notes = []
        if several and not fam_several and rows:
            notes.append("From %s." % rows[0].label)
        old = [labels[i] for i in fam_srcs if not kinds_known[i]]
        if old:
            notes.append("%s %s no counter kinds (written before schema 1): the counters shown are all those that "
                         "repeat neither a run-name argument nor the time."
                         % (", ".join(old) if several else "The input", "has" if len(old) == 1 else "have"))
        if notes:
            h.append("<p class='note'>%s</p>" % esc(" ".join(notes)))
            md += [md_esc(" ".join(notes)), ""]
        if rows:
            cols = family_columns(rows, runs, fam_several)
            h.append("<div class='scroll'><table class='sortable results' id='table-%s'>"
                     "<thead><tr>%s</tr></thead><tbody>"
                     % (slug(sec), "".join("<th title='%s'>%s</th>" % (esc(c.tip), header_html(c.title))
                                           for c in cols)))
            md += ["| " + " | ".join(md_esc(c.title) for c in cols) + " |",
                   "|" + "".join(" ---: |" if c.kind not in ("source", "variant", "arg", "status") else " --- |"
                                 for c in cols)]
            for r in rows:
                cells = [cell(r, c) for c in cols]
                h.append("<tr%s>%s</tr>" % (" class='err'" if r.disposition in ERRORS else "", "".join(
                    "<td class='%s' data-v='%s'>%s</td>" % (cls, esc(v), esc(t)) for v, t, cls in cells)))
                md.append("| " + " | ".join(md_esc(t) for _, t, _ in cells) + " |")
            h.append("</tbody></table></div><p class='note'>Click a column header to sort. Times are medians of the "
                     "repetitions; counters are medians too.</p>")
            md.append("")
        else:
            h.append("<p>No %s entry ran.</p>" % esc(sec))
            md += ["No %s entry ran." % md_esc(sec), ""]
        if unsup:
            groups = unsupported_groups(unsup, len({r.src for r in unsup}) > 1)
            h.append("<details class='unsupported' id='unsupported-%s'><summary>%d unsupported entr%s</summary>"
                     % (slug(sec), len(unsup), "y" if len(unsup) == 1 else "ies"))
            md += ["%d unsupported entr%s:" % (len(unsup), "y" if len(unsup) == 1 else "ies"), ""]
            for why, names in groups:
                if why is None:
                    h.append("<ul>%s</ul>" % "".join("<li>%s</li>" % esc(n) for n in names))
                    md += ["- %s" % md_esc(n) for n in names]
                else:
                    h.append("<p class='why'>%s (%d entries)</p><ul>%s</ul>" % (esc(why), len(names), "".join(
                        "<li>%s</li>" % esc(n) for n in names)))
                    md.append("- %s (%d entries):" % (md_esc(why), len(names)))
                    md += ["  - %s" % md_esc(n) for n in names]
            h.append("</details>")
            md.append("")
        h = main_h

    # charts not drawn
    h.append("<h2 id='charts-not-drawn'>Charts not drawn</h2>")
    md += ["## Charts not drawn", ""]
    if missing:
        h.append("<ul>%s</ul>" % "".join("<li><b>%s</b>: %s</li>" % (esc(c), esc(m)) for c, m in missing))
        md += ["- **%s**: %s" % (md_esc(c), md_esc(m)) for c, m in missing] + [""]
    else:
        h.append("<p>None: every chart kind had data.</p>")
        md += ["None: every chart kind had data.", ""]

    # machine and build
    h.append("<h2 id='machine-and-build'>Machine and build</h2>")
    md += ["## Machine and build", ""]
    crows = context_rows(runs)
    if several:
        h.append("<p class='note'>One column per source; a value shared by every source is shown once.</p>")
    head = "<tr><th>key</th>%s</tr>" % "".join("<th>%s</th>" % esc(l) for l in labels) if several else ""
    h.append("<table class='kv' id='context'>%s%s</table>" % (head, "".join(_html_values_row(k, v) for k, v in crows)))
    md += ["| key | " + " | ".join(md_esc(l) for l in labels) + " |", "| --- |" + " --- |" * len(labels)]
    for k, vals in crows:
        if several and len(set(vals)) == 1:
            md.append("| %s | %s |" % (md_esc(k), " | ".join([md_esc(vals[0])] + ["〃"] * (len(vals) - 1))))
        else:
            md.append("| %s | %s |" % (md_esc(k), " | ".join(md_esc(v) for v in vals)))
    md.append("")
    kinds = declared_kinds(runs)
    if kinds:
        h.append("<h3>Counters the harness declares (parbench_counters)</h3>")
        md += ["### Counters the harness declares (parbench_counters)", ""]
        by_kind = {}
        for c, info in kinds.items():
            by_kind.setdefault(info.get("kind", "?"), []).append((c, info))
        h.append("<table class='kv'><tr><th>kind</th><th>counters (unit, better)</th></tr>")
        md += ["| kind | counters (unit, better) |", "| --- | --- |"]
        for k in sorted(by_kind, key=lambda k: (KIND_ORDER.get(k, 3), k)):
            txt = ", ".join(c + (" (%s)" % ", ".join(x for x in (info.get("unit", ""), info.get("better", "")) if x)
                                 if info.get("unit") or info.get("better") else "") for c, info in by_kind[k])
            h.append("<tr><th>%s</th><td>%s</td></tr>" % (esc(k), esc(txt)))
            md.append("| %s | %s |" % (md_esc(k), md_esc(txt)))
        h.append("</table>")
        md.append("")
    if not all(kinds_known):
        old = [l for l, k in zip(labels, kinds_known) if not k]
        note = "%s: no parbench_counters (written before schema 1); counter kinds unknown." % ", ".join(old)
        h.append("<p class='note'>%s</p>" % esc(note))
        md += [md_esc(note), ""]

    pages["index.html"] = h
    for name, lines in pages.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines + [SCRIPT + "</body></html>"]) + "\n")
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    return ["index.html", "report.md"] + sorted(n for n in pages if n != "index.html")


# A family page shows the overview first (roofline, rate against size), then
# scaling, then the details; the summary's thumbnail is the first of them.
CHART_ORDER = ("roofline", "gflops", "throughput", "iteration", "sor_bandwidth", "mlp_throughput", "speedup",
               "strong", "gpus", "heatmap", "blocks", "breakdown", "mlp_share", "field", "ceiling")


def chart_rank(chart):
    name = chart[0]
    kinds = [k for k in CHART_ORDER if name == k or name.startswith(k + "_")]
    kind = max(kinds, key=len) if kinds else None
    return (CHART_ORDER.index(kind) if kind else len(CHART_ORDER), name)


def page_of(section):
    """The file of a family's page: "gemm.html"."""
    return "%s.html" % slug(section)


def page_head(title):
    return ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            "<title>%s</title><style>%s</style></head><body>" % (esc(title), CSS)]
