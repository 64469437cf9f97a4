"""The offline report of plots/plot: out/index.html and out/report.md.

    write_report(out, runs, charts, missing, findings) -> ["index.html", "report.md"]

  runs      results.Run objects (one per source file)
  charts    (name, title, section): out/name.png exists (and out/name.svg, linked
            from the figure, with plots/plot --svg); section is a family or
            "Scaling"
  missing   (chart kind, reason) of the chart kinds not drawn, and the
            Dropped records of the problems a kind left out
  findings  (severity, text, cause, variant) from the chart code (Finding)

The page is what a performance engineer opens first: a summary (what ran, on
what, how it went, what looks suspicious: plots/report_summary.py), one page
per family in the order the input registered them (charts, then a sortable
results table with only that family's columns, plots/report_table.py, then
the unsupported entries in a collapsed toggle), the charts not drawn, and the
machine and build context of every source. It opens with no network: CSS and
the table sorter are inline, the images are files beside it.

Only the Python standard library is used.
"""
import dataclasses
import os

from plots.report_draw import Dropped
from plots.report_format import esc, header_html, md_esc, slug
from plots.report_summary import (DISPOSITION_LABEL, DISPOSITIONS, ERRORS, OPEN_AT_MOST, context_rows, declared_kinds,
                                  family_order, machine_rows, nothing_measured, suspicious, suspicious_groups,
                                  what_ran)
from plots.report_table import (KIND_ORDER, cell, family_columns, instances, source_labels,
                                unsupported_groups)

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


def sections(insts, charts):
    """Section names in order: the families as the input registered them
    (the order they first appear in the files), then Scaling, then the rest."""
    fams = family_order(insts)
    extra = sorted({c[2] for c in charts} - set(fams), key=lambda s: (s != "Scaling", s))
    return fams + extra


@dataclasses.dataclass
class Report:
    """What every step of write_report reads: the input and what was drawn."""
    out: str
    runs: list
    labels: list
    insts: list
    secs: list
    charts: list  # (name, title, section), in chart_rank order
    several: bool
    kinds_known: list


def write_report(out, runs, charts, missing, findings):
    runs = list(runs)
    labels = source_labels(runs)
    insts = instances(runs, labels)
    charts = sorted((tuple(c) for c in charts), key=chart_rank)
    rep = Report(out, runs, labels, insts, sections(insts, charts), charts, len(runs) > 1,
                 [bool(r.counter_kinds) for r in runs])
    h = page_head("parbench report") + ["<h1>parbench report</h1>"]
    md = ["# parbench report", ""]
    contents(rep, h, md)
    summary(rep, suspicious(insts, runs, labels, findings), h, md)
    family_cards(rep, h)
    pages = {}
    for sec in rep.secs:
        pages[page_of(sec)] = family_page(rep, sec, md)
    not_drawn(missing, h, md)
    machine_and_build(rep, h, md)
    pages["index.html"] = h
    for name, lines in pages.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines + [SCRIPT + "</body></html>"]) + "\n")
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    return ["index.html", "report.md"] + sorted(n for n in pages if n != "index.html")


def contents(rep, h, md):
    """The sources and the contents: the summary, charts not drawn and the
    machine on this page; each family (and Scaling) on a page of its own."""
    h.append("<p class='note'>%s</p>" % esc("Sources: " + ", ".join(
        "%s (%s)" % (lab, getattr(r, "path", "")) if rep.several else getattr(r, "path", lab)
        for lab, r in zip(rep.labels, rep.runs))))
    md += ["Sources: " + ", ".join("%s (%s)" % (md_esc(lab), md_esc(getattr(r, "path", "")))
                                   for lab, r in zip(rep.labels, rep.runs)), ""]
    toc = [("Summary", "#summary")] + [(s, page_of(s)) for s in rep.secs] + [
        ("Charts not drawn", "#charts-not-drawn"), ("Machine and build", "#machine-and-build")]
    h.append("<nav><b>Contents</b><ul>%s</ul></nav>"
             % "".join("<li><a href='%s'>%s</a></li>" % (a, esc(t)) for t, a in toc))
    md += ["Contents: " + " · ".join("[%s](#%s)" % (md_esc(t), a.lstrip("#") if a.startswith("#") else slug(t))
                                     for t, a in toc), ""]


def summary(rep, items, h, md):
    h.append("<h2 id='summary'>Summary</h2>")
    md += ["## Summary", ""]
    nothing = not any(r.disposition == "passed" for r in rep.insts)
    if nothing:
        line = nothing_measured(rep.insts)
        h.append("<p class='summary bad' id='nothing-measured'>%s</p>" % esc(line))
        md += ["**%s**" % md_esc(line), ""]
    what_ran_table(rep, h, md)
    on_what(rep, h, md)
    suspicious_section(items, nothing, h, md)


def what_ran_table(rep, h, md):
    h.append("<h3>What ran</h3>")
    md += ["### What ran", ""]
    counts_cols = ((["source"] if rep.several else []) + ["family", "variants", "instances"]
                   + [DISPOSITION_LABEL[d] for d in DISPOSITIONS])
    h.append("<table class='counts' id='what-ran'><thead><tr>%s</tr></thead><tbody>"
             % "".join("<th>%s</th>" % esc(c) for c in counts_cols))
    md += ["| " + " | ".join(counts_cols) + " |", "|" + " --- |" * len(counts_cols)]
    wr = what_ran(rep.insts, rep.labels)
    for lab, fam, nvar, ninst, counts in wr:
        if fam == "all" and sum(1 for x in wr if x[0] == lab) == 2:
            continue  # one family: its row is the total
        cells = ([lab] if rep.several else []) + [fam if fam != "all" else "all families", str(nvar), str(ninst)]
        tds = "".join("<td style='text-align:left'>%s</td>" % (
            "<a href='%s'>%s</a>" % (page_of(c), esc(c)) if c == fam and fam in rep.secs else esc(c))
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


def on_what(rep, h, md):
    h.append("<h3>On what</h3>")
    md += ["### On what", ""]
    mrows = machine_rows(rep.runs)
    if not mrows:
        h.append("<p>No machine information in the input.</p>")
        md += ["No machine information in the input.", ""]
        return
    head = "<tr><th></th>%s</tr>" % "".join("<th>%s</th>" % esc(lb) for lb in rep.labels) if rep.several else ""
    h.append("<table class='kv' id='on-what'>%s%s</table>"
             % (head, "".join(_html_values_row(lb, v) for lb, v in mrows)))
    md += ["| | " + " | ".join(md_esc(lb) for lb in rep.labels) + " |", "| --- |" + " --- |" * len(rep.labels)]
    md += ["| %s | %s |" % (md_esc(lb), " | ".join(md_esc(x) for x in v)) for lb, v in mrows]
    md.append("")


def suspicious_section(items, nothing, h, md):
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


def family_cards(rep, h):
    """The summary links each family's page, with its first chart."""
    h.append("<h3 id='families'>Families</h3><div class='families'>")
    for sec in rep.secs:
        mine = [c for c in rep.charts if c[2] == sec]
        fam = [r for r in rep.insts if r.family == sec]
        what = "%d chart%s, %d instance%s" % (len(mine), "" if len(mine) == 1 else "s",
                                              len(fam), "" if len(fam) == 1 else "s")
        thumb = "<img src='%s.png' alt='%s'>" % (esc(mine[0][0]), esc(mine[0][1])) if mine else ""
        h.append("<a class='family' href='%s'><b>%s</b><span>%s</span>%s</a>" % (page_of(sec), esc(sec), what, thumb))
    h.append("</div>")


def family_page(rep, sec, md):
    """The lines of one family's page: its charts, its results table and its
    unsupported entries; its Markdown goes into `md`."""
    h = page_head("parbench report: %s" % sec) + [
        "<p class='note'><a href='index.html'>&larr; the summary</a> &middot; %s</p>" % " &middot; ".join(
            "<a href='%s'>%s</a>" % (page_of(s), esc(s)) if s != sec else "<b>%s</b>" % esc(s) for s in rep.secs)]
    h.append("<h1 id='%s'>%s</h1>" % (slug(sec), esc(sec)))
    md += ["## %s" % md_esc(sec), ""]
    mine = [c for c in rep.charts if c[2] == sec]
    if mine:
        h.append("<div class='charts'>")
    for name, title, _ in mine:
        big = "svg" if os.path.exists(os.path.join(rep.out, name + ".svg")) else "png"
        # The title is in the picture: no caption repeats it.
        h.append("<figure><a href='%s.%s'><img src='%s.png' alt='%s'></a></figure>"
                 % (esc(name), big, esc(name), esc(title)))
        md += ["[![%s](%s.png)](%s.%s)" % (md_esc(title), name, name, big), ""]
    if mine:
        h.append("</div>")
    fam = [r for r in rep.insts if r.family == sec]
    if fam:
        family_results(rep, sec, fam, h, md)
    return h


def family_results(rep, sec, fam, h, md):
    rows = [r for r in fam if r.disposition != "unsupported"]
    unsup = [r for r in fam if r.disposition == "unsupported"]
    h.append("<h3>%s results</h3>" % esc(sec))
    md += ["### %s results" % md_esc(sec), ""]
    fam_several = len({r.src for r in rows}) > 1
    notes = []
    if rep.several and not fam_several and rows:
        notes.append("From %s." % rows[0].label)
    old = [rep.labels[i] for i in sorted({r.src for r in fam}) if not rep.kinds_known[i]]
    if old:
        notes.append("%s %s no counter kinds (written before schema 1): the counters shown are all those that "
                     "repeat neither a run-name argument nor the time."
                     % (", ".join(old) if rep.several else "The input", "has" if len(old) == 1 else "have"))
    if notes:
        h.append("<p class='note'>%s</p>" % esc(" ".join(notes)))
        md += [md_esc(" ".join(notes)), ""]
    if rows:
        results_table(rep, sec, rows, fam_several, h, md)
    else:
        h.append("<p>No %s entry ran.</p>" % esc(sec))
        md += ["No %s entry ran." % md_esc(sec), ""]
    if unsup:
        unsupported_toggle(sec, unsup, h, md)


def results_table(rep, sec, rows, fam_several, h, md):
    cols = family_columns(rows, rep.runs, fam_several)
    h.append("<div class='scroll'><table class='sortable results' id='table-%s'><thead><tr>%s</tr></thead><tbody>"
             % (slug(sec), "".join("<th title='%s'>%s</th>" % (esc(c.tip), header_html(c.title)) for c in cols)))
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


def unsupported_toggle(sec, unsup, h, md):
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


def not_drawn(missing, h, md):
    """A chart kind without data: one line with the reason. Problems a kind
    left out (Dropped): one line per reason across the kinds, with the count
    by kind and family, the names folded."""
    h.append("<h2 id='charts-not-drawn'>Charts not drawn</h2>")
    md += ["## Charts not drawn", ""]
    kinds = [m for m in missing if not isinstance(m, Dropped)]
    left = {}
    for d in missing:
        if isinstance(d, Dropped):
            left.setdefault(d.reason, []).append(d)
    if not kinds and not left:
        h.append("<p>None: every chart kind had data.</p>")
        md += ["None: every chart kind had data.", ""]
        return
    lines = ["<li><b>%s</b>: %s</li>" % (esc(c), esc(m)) for c, m in kinds]
    md += ["- **%s**: %s" % (md_esc(c), md_esc(m)) for c, m in kinds]
    for reason, ds in left.items():
        charts = ", ".join(d.chart for d in ds)
        line = dropped_line(reason, ds)
        names = "".join("<li>%s: %s</li>" % (esc(d.chart), esc("; ".join("%s %s" % it for it in d.items))) for d in ds)
        lines.append("<li><b>%s</b>: %s <details class='dropped'><summary>the %d, by chart</summary><ul>%s</ul>"
                     "</details></li>" % (esc(charts), esc(line), sum(len(d.items) for d in ds), names))
        md.append("- **%s**: %s" % (md_esc(charts), md_esc(line)))
    h.append("<ul class='not-drawn'>%s</ul>" % "".join(lines))
    md.append("")


def dropped_line(reason, ds):
    """ "42 problems beyond the 6 a family draws (speedup 14, strong 14,
    ceiling 14; by family: GEMM 18, Sort 12, Scan 12)"."""
    n = sum(len(d.items) for d in ds)
    fams = {}
    for d in ds:
        for fam, _ in d.items:
            fams[fam] = fams.get(fam, 0) + 1
    by_chart = ", ".join("%s %d" % (d.chart, len(d.items)) for d in ds) if len(ds) > 1 else ""
    by_fam = "by family: " + ", ".join("%s %d" % kv for kv in sorted(fams.items(), key=lambda kv: (-kv[1], kv[0])))
    noun, _, rest = reason.partition(" ")
    if n == 1 and noun.endswith("s"):  # the reason's first word is its plural noun
        noun = noun[:-1]
    return "%d %s %s (%s)" % (n, noun, rest, "; ".join(x for x in (by_chart, by_fam) if x))


def machine_and_build(rep, h, md):
    h.append("<h2 id='machine-and-build'>Machine and build</h2>")
    md += ["## Machine and build", ""]
    labels, several = rep.labels, rep.several
    crows = context_rows(rep.runs)
    if several:
        h.append("<p class='note'>One column per source; a value shared by every source is shown once.</p>")
    head = "<tr><th>key</th>%s</tr>" % "".join("<th>%s</th>" % esc(lb) for lb in labels) if several else ""
    h.append("<table class='kv' id='context'>%s%s</table>" % (head, "".join(_html_values_row(k, v) for k, v in crows)))
    md += ["| key | " + " | ".join(md_esc(lb) for lb in labels) + " |", "| --- |" + " --- |" * len(labels)]
    for k, vals in crows:
        if several and len(set(vals)) == 1:
            md.append("| %s | %s |" % (md_esc(k), " | ".join([md_esc(vals[0])] + ["〃"] * (len(vals) - 1))))
        else:
            md.append("| %s | %s |" % (md_esc(k), " | ".join(md_esc(v) for v in vals)))
    md.append("")
    declared_counters(rep.runs, h, md)
    if not all(rep.kinds_known):
        old = [lb for lb, k in zip(labels, rep.kinds_known) if not k]
        note = "%s: no parbench_counters (written before schema 1); counter kinds unknown." % ", ".join(old)
        h.append("<p class='note'>%s</p>" % esc(note))
        md += [md_esc(note), ""]


def declared_counters(runs, h, md):
    kinds = declared_kinds(runs)
    if not kinds:
        return
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


# A family page shows the overview first (roofline, rate against size), then
# scaling, then the details; the summary's thumbnail is the first of them.
CHART_ORDER = ("roofline", "gflops", "throughput", "iteration", "sor_bandwidth", "mlp_throughput", "rate", "speedup",
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
