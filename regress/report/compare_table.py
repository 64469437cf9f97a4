"""The verdict document (regress/verdict/document.py) as the console table
and as Markdown for a pull request. Both lay out the same cells, computed
once per row (cells)."""
from dataclasses import dataclass
from typing import Optional

from regress.load import fmt
from regress.load.fmt import fmt_time
from regress.verdict.document import ordered

_pct = fmt.pct


@dataclass(frozen=True)
class Cells:
    """One row of the table, as text."""
    verdict: str
    change: str
    interval: Optional[tuple]   # (low, high), or None: no change estimated
    threshold: str
    sees: str                   # the smallest change these rounds find with 95% power (paired)
    noise: str
    run_noise: str
    p: str
    n: str
    base: str
    new: str
    rate: str
    name: str
    reason: Optional[str]


def _time(v, unit):
    if v is not None and unit != "s":
        return "%.4g" % v
    return fmt_time(v, "-", "us")


def _rate(r):
    """The declared rate's change, mirroring the time's (one verdict): "-9.09% GFLOPS"."""
    rate = r.get("rate")
    return "-" if not rate else "%s %s" % (_pct(rate["change"]), rate["counter"])


def _run_noise(r):
    """The run-to-run noise and where it came from: "1.10% prior", "0.40% h14" (history, 14 runs), "0.30% A/A"."""
    v = r.get("run_noise")
    if v is None:
        return "-"
    src = r.get("run_noise_source") or ""
    short = "h" + src.split()[-1] if src.startswith("history") else src
    return "%s %s" % (_pct(v, False), short)


def _unsigned(v):
    return _pct(v, False) if v is not None else "-"


def _counts(r):
    """Values per side, "10/10"; paired rounds, "12 duet" or "12 intl" by how they ran."""
    if "n_base" not in r:
        return "-"
    if r.get("round_mode"):
        return "%d %s" % (r["n_base"], "duet" if r["round_mode"] == "duet" else "intl")
    return "%d/%d" % (r["n_base"], r["n_new"])


def cells(r, unit):
    """The cells of one benchmark of the document."""
    ci = r.get("ci") or [None, None]
    return Cells(verdict=r["verdict"], change=_pct(r.get("change")),
                 interval=(_pct(ci[0]), _pct(ci[1])) if r.get("change") is not None else None,
                 threshold=_unsigned(r.get("threshold")), sees=_unsigned(r.get("detectable")),
                 noise=_unsigned(r.get("noise")), run_noise=_run_noise(r),
                 p="%.2g" % r["p"] if r.get("p") is not None else "-",
                 n=_counts(r),
                 base=_time(r.get("base"), unit), new=_time(r.get("new"), unit), rate=_rate(r),
                 name=r["name"], reason=r.get("reason") or None)


# ---------------------------------------------------------------- console

CONSOLE_HEAD = ("verdict", "change", "interval", "thresh", "sees", "noise", "run noise", "p(adj)", "n", "base",
                "new", "rate", "benchmark")
# Across hardware the base and new columns are fractions of each run's ceiling.
ACROSS_HEAD = CONSOLE_HEAD[:9] + ("base frac", "new frac") + CONSOLE_HEAD[11:]
ACROSS_LINE = ("across hardware: each entry's rate over its own run's ceiling of the rate's kind, device and source "
               "(copy bandwidth, the library GEMM), compared as a fraction, never by time: a change says the entry "
               "reaches more or less of its machine's ceiling than on the other machine, not that its code got "
               "faster; the rate column is the raw rate's change from machine to machine")


def _across_lines(doc):
    """The line that says a document compares across hardware, or none."""
    across = doc.get("across_hardware")
    if not across:
        return []
    return ["%s. BASE ran on %s; NEW on %s." % (ACROSS_LINE, across["base_machine"], across["new_machine"])]


def _console_line(c):
    return (c.verdict, c.change, "[%s, %s]" % c.interval if c.interval else "-", c.threshold, c.sees, c.noise,
            c.run_noise, c.p, c.n, c.base, c.new, c.rate, c.name + ("  (%s)" % c.reason if c.reason else ""))


def _console_header(doc):
    if doc.get("sequential"):
        how = "sequential, Benjamini-Hochberg over %d benchmarks at each look (below)" % doc["settings"]["tested"]
    else:
        how = "%d%% intervals; %s over %d benchmarks at alpha %g" % (
            round(doc["settings"]["level"] * 100), doc["settings"]["correction"], doc["settings"]["tested"],
            doc["settings"]["alpha"])
    lines = [doc["title"]] + _across_lines(doc)
    lines += ["metric: %s; %s" % (doc["metric"]["describe"], how), "threshold: " + doc["settings"]["threshold_rule"]]
    lines += ["warning: " + w for w in doc["warnings"]]
    lines += ["note: " + w for w in doc.get("notes", ())]
    lines += ["%s: %s" % (k, doc[k]["line"]) for k in ("qualification", "gate") if doc.get(k)]
    return lines


def _sequential_line(seq):
    at = sorted(seq["decided_at"].items(), key=lambda kv: int(kv[0]))
    decided = ", ".join("%s rounds: %d" % (k, v) for k, v in at)
    stopped = ""
    if seq.get("delta") is not None:
        stopped = "; --delta %.2f%%: %d stopped before the cap, unlikely to find it or to be SAME there" % (
            100 * seq["delta"], seq.get("stopped", 0))
    return ("sequential: looks at %s rounds (alpha %.3g, %.1f%% intervals each); verdicts after %s; "
            "%.1f rounds per benchmark on average%s" % (
                ", ".join(map(str, seq["looks"])), seq["alpha_per_look"], 100 * seq["level_per_look"], decided,
                seq["mean_rounds"], stopped))


def render_console(doc, only_changes=False):
    unit = doc["metric"]["unit"]
    table = [_console_line(cells(r, unit)) for r in ordered(doc["benchmarks"])
             if not (only_changes and r["verdict"] == "SAME")]
    head = ACROSS_HEAD if doc.get("across_hardware") else CONSOLE_HEAD
    widths = [max(len(head[i]), *(len(t[i]) for t in table)) if table else len(head[i]) for i in range(len(head))]
    line = "  ".join("%%-%ds" % w if i in (0, 12) else "%%%ds" % w for i, w in enumerate(widths))
    lines = _console_header(doc) + [line % head] + [line % t for t in table]
    if doc.get("sequential"):
        lines.append(_sequential_line(doc["sequential"]))
    lines.append(doc["summary_line"])
    return "\n".join(l.rstrip() for l in lines) + "\n"


# --------------------------------------------------------------- Markdown

MARKDOWN_HEAD = ["| verdict | benchmark | change | interval | threshold | sees | noise | run noise | p (adj.) | n "
                 "| base | new | rate |",
                 "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]


def _markdown_line(c):
    name = "`%s`" % c.name + (" (%s)" % c.reason.replace("|", "\\|") if c.reason else "")
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        c.verdict, name, c.change, "%s ... %s" % c.interval if c.interval else "-", c.threshold, c.sees, c.noise,
        c.run_noise, c.p, c.n, c.base, c.new, c.rate)


def _floors(doc):
    """The floors of SAME in force: the equivalence floors by device, then
    those --floor gave ("GEMM/cpu", "gpu"); older documents: the threshold's."""
    f = dict(doc["settings"].get("same_floors") or
             {k.split("/")[0]: v for k, v in doc["settings"]["default_floors"].items()})
    f.update(doc["settings"]["floors"])
    return ", ".join("%s %s" % (k, _pct(v, False)) for k, v in sorted(f.items()))


def _instructions_first(rows):
    """The rows whose instruction counts moved while the time could not
    tell (--instrument), before everything else: on a noisy CPU machine they
    are what a pull request changed."""
    moved = [r for r in rows if (r.get("instructions") or {}).get("moved") and r["verdict"] in ("SAME", "AMBIGUOUS")]
    if not moved:
        return []
    out = ["**Instructions moved where the time could not tell** (%d; callgrind, each side counted twice):" % len(
        moved), "", "| instructions | per call, base | new | time | verdict | benchmark |",
        "| ---: | ---: | ---: | ---: | --- | --- |"]
    for r in sorted(moved, key=lambda r: -abs(r["instructions"]["change"])):
        i = r["instructions"]
        out.append("| %s | %.6g | %.6g | %s | %s | `%s` |"
                   % (_pct(i["change"]), i["base"], i["new"], _pct(r.get("change")), r["verdict"], r["name"]))
    return out + [""]


def _correction(doc):
    """How significance was decided: Holm over the benchmarks, or a sequential
    comparison's Benjamini-Hochberg at each look."""
    seq = doc.get("sequential")
    if seq:
        return "p < %.3g at a look, Benjamini-Hochberg over %d benchmarks (%d looks)" % (
            seq["alpha_per_look"], doc["settings"]["tested"], len(seq["looks"]))
    return "p < %g after Holm over %d benchmarks" % (doc["settings"]["alpha"], doc["settings"]["tested"])


def _level(doc):
    seq = doc.get("sequential")
    return "%.1f%%" % (100 * seq["level_per_look"]) if seq else "%d%%" % round(doc["settings"]["level"] * 100)


def _qualification_lines(doc):
    """The gate's qualification first: an unqualified gate is the first thing
    a reader of the pull request must see."""
    out = []
    for key in ("qualification", "gate"):
        q = doc.get(key)
        if q:
            bold = "**The gate is unqualified on this machine**: " if q["state"] == "unqualified" else ""
            out += ["> %s%s: %s" % (bold, key, q["line"]), ""]
    return out


def render_markdown(doc):
    rows = ordered(doc["benchmarks"])
    unit = doc["metric"]["unit"]
    out = ["### parbench compare: %s" % doc["summary_line"], "", doc["title"] + ".", ""]
    for line in _across_lines(doc):
        out += [line, ""]
    out += ["Metric: %s. Threshold per benchmark = %s; SLOWER/FASTER need the change beyond it and %s; SAME "
            "needs the %s interval inside +-floor, the smallest change of interest (%s); a change the noise hides "
            "is AMBIGUOUS with the size it cannot rule out." % (
                doc["metric"]["describe"], doc["settings"]["threshold_rule"], _correction(doc), _level(doc),
                _floors(doc)), ""]
    out += _qualification_lines(doc)
    out += ["> warning: " + w for w in doc["warnings"]]
    out += ["> note: " + w for w in doc.get("notes", ())]
    if doc["warnings"] or doc.get("notes"):
        out.append("")

    head = MARKDOWN_HEAD
    if doc.get("across_hardware"):  # the base and new columns are fractions of each run's ceiling
        head = [MARKDOWN_HEAD[0].replace("| base | new |", "| base (fraction) | new (fraction) |"), MARKDOWN_HEAD[1]]

    def table(rs):
        return head + [_markdown_line(cells(r, unit)) for r in rs]
    out += _instructions_first(rows)
    notable = [r for r in rows if r["verdict"] != "SAME"]
    if notable:
        out += table(notable) + [""]
    same = [r for r in rows if r["verdict"] == "SAME"]
    if same:
        out += ["<details><summary>%d SAME</summary>" % len(same), ""] + table(same) + ["", "</details>", ""]
    return "\n".join(out + _not_comparable(doc))


def _not_comparable(doc):
    """Across hardware: the benchmarks left out, each with its reason, folded."""
    left = (doc.get("across_hardware") or {}).get("not_comparable")
    if not left:
        return []
    return (["<details><summary>%d not comparable across hardware</summary>" % len(left), "",
             "| benchmark | why |", "| --- | --- |"] +
            ["| `%s` | %s |" % (r["name"], r["reason"].replace("|", "\\|")) for r in left] + ["", "</details>", ""])
