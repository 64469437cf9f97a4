"""The report's entries and tables (plots/report_html.py): one Instance a
run name and source (its repetitions grouped), the columns of a family's
table chosen by counter kind, each cell's sort value and text, and the
unsupported entries grouped by reason.

Results tables: one row per instance (aggregate entries are not rows).
Columns: source (with several sources), variant, the family's run-name
arguments, median time, reps, CV (when some instance has repetitions),
status (when some instance failed), then the family's counters chosen by
kind (schema 1: rate, result and time kinds except seconds_per_call; files
without counter kinds: every counter that neither repeats a run-name
argument nor the time itself)."""
import os
import re

from regress.load import derived
from regress.load import fmt
from regress.load import results
from plots.report_format import fmt_num, fmt_time, numeric  # noqa: F401  numeric: for the summary

DISPOSITIONS = results.DISPOSITIONS
ERRORS = results.ERROR_DISPOSITIONS
DISPOSITION_LABEL = {"passed": "passed", "unsupported": "unsupported", "incorrect": "incorrect",
                     "out_of_memory": "out of memory", "failed": "failed"}
# Worst first: an instance with one failed repetition is failed.
SEVERITY = {"failed": 0, "out_of_memory": 1, "incorrect": 2, "unsupported": 3, "passed": 4}

# Counter kinds (schema 1) shown as table columns; seconds_per_call is the time column itself.
SHOWN_KINDS = ("rate", "time", "energy", "power", "result", "share")
KIND_ORDER = {"rate": 0, "time": 1, "energy": 1, "power": 1, "result": 2, None: 3}
NOT_COUNTERS = {"seconds_per_call"}


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
