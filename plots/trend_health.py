"""The trends page's "Gate health" and "What the gate caught and missed"
sections (regress/stats/health.py words the figures, regress/store/ledger.py
counts the ledger)."""
import html

from regress.stats.health import health_lines
from regress.store import ledger


def health_section(h):
    """The page's "Gate health" section."""
    esc = html.escape
    rows = health_lines(h) if h else []
    out = ["<h2 id='health'>Gate health</h2>"]
    if not rows:
        out.append("<p>Nothing measured yet: the nightly job records the A/A checks and each night's alerts.</p>")
    out.append("<ul class='health'>%s</ul>" % "".join(
        "<li class='%s'>%s</li>" % ("good" if ok else "bad", esc(line)) for ok, line in rows))
    out.append("<p class='note'>Can the gate be trusted to fail builds? The qualification runs one binary on both "
               "sides of the gate's own selection: any finding there is a false alarm. The A/A checks of each night "
               "give the false-alarm rate with its exact (Clopper-Pearson) interval, and a sign test: noise moves "
               "identical code up as often as down, so one-sided changes mean a bias. A real change stays alerted "
               "night after night, so consecutive nights' alert sets (the open alerts and the tentative changes) "
               "overlap near 1 (Jaccard index); alerts of the noise barely overlap.</p>")
    return out


def ledger_section(doc):
    """The page's "What the gate caught and missed" section: the ledger
    (regress/store/ledger.py), a month a row."""
    esc = html.escape
    out = ["<h2 id='ledger'>What the gate caught and missed</h2>"]
    if not doc or not doc["months"]:
        out.append("<p>No alert yet: the ledger starts with the first confirmed change.</p>")
        return out

    out.append("<div class='scroll'><table class='kv'><thead><tr><th>month</th><th>regressions confirmed</th>"
               "<th>improvements confirmed</th><th>false alarms (invalid)</th><th>missed (found by a backfill)</th>"
               "<th>nights to alert</th><th>nights to culprit</th></tr></thead><tbody>")
    for m in doc["months"] + [dict(doc["total"], month="all")]:
        out.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>" % (
            esc(m["month"]), esc(ledger.count_text(m["regressions"])), esc(ledger.count_text(m["improvements"])),
            m["false_alarms"], m["missed"], ledger.nights_text(m["nights_to_alert"]),
            ledger.nights_text(m["nights_to_culprit"])))
    out.append("</tbody></table></div>")
    out.append("<p class='note'>By the month of each change. A missed change is one found in a backfilled run "
               "(ci/backfill), which no night had measured; nights are medians, from the change's run to the "
               "alert and to the naming of its culprit (ci/alerts ledger prints the same).</p>")
    return out
