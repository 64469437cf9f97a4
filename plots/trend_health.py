"""The gate's health in words (regress/store/trends.py gate_health gives the
figures): the lines ci/trends prints and the nightly summary repeats, and
the trends page's "Gate health" section."""
import html

from regress.load import fmt

# A sign test below this p calls the A/A checks one-sided: the machine or
# the procedure is biased (checked against a noise process that is not).
SIGN_P = 0.01
# Consecutive nights' alert sets overlapping less than this on average (over
# at least MIN_PAIRS pairs) are alerts that come and go with the noise.
FLICKER = 0.5
MIN_PAIRS = 3


def _pct(v):
    return fmt.pct(v, signed=False, digits=2, missing="-")


def health_lines(h):
    """[(ok: bool, line)] for each health figure there is something to say of."""
    out = []
    q = h.get("qualification")
    if q:
        out.append((q["state"] == "qualified", "qualification: " + q["line"]))
    else:
        out.append((True, "qualification: none recorded for this machine (ci/compare --qualify, or a nightly A/A)"))
    r = h["false_alarm_rate"]
    if r["compared"]:
        out.append((r["low"] <= 0.05, "A/A false alarms: %d in %d comparisons, %s (%d%% interval %s to %s)" % (
            r["alarms"], r["compared"], _pct(r["rate"]), round(100 * r["level"]), _pct(r["low"]), _pct(r["high"]))))
    s = h["aa_sign"]
    if s["up"] + s["down"]:
        out.append((s["p"] >= SIGN_P, "A/A sign test over the last %d nights: %d changes up, %d down, p = %.3g%s" % (
            s["nights"], s["up"], s["down"], s["p"],
            " (one-sided: a bias of the machine or the order of the sides, not noise)" if s["p"] < SIGN_P else "")))
    if s["slower"] + s["faster"]:
        out.append((s["p_alarms"] >= SIGN_P, "A/A alarms over the last %d nights: %d SLOWER, %d FASTER, p = %.3g"
                    % (s["nights"], s["slower"], s["faster"], s["p_alarms"])))
    o = h["overlap"]
    if o["last"]:
        last = o["last"]
        j = "-" if last["jaccard"] is None else "%.2f" % last["jaccard"]
        mean = "" if o["mean"] is None else "; mean %.2f over %d pairs of nights" % (o["mean"], o["pairs"])
        ok = o["mean"] is None or o["pairs"] < MIN_PAIRS or o["mean"] >= FLICKER
        out.append((ok, "alert sets of the last two nights overlap %s (%d in common of %d)%s%s" % (
            j, last["common"], last["union"], mean,
            "" if ok else ": alerts that come and go with the noise")))
    return out


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

    def count(states):
        n = sum(states.values())
        return "0" if not n else "%d (%s)" % (n, ", ".join("%d %s" % (v, k) for k, v in sorted(states.items())))

    def nights(v):
        return "-" if v is None else "%.1f" % v
    out.append("<div class='scroll'><table class='kv'><thead><tr><th>month</th><th>regressions confirmed</th>"
               "<th>improvements confirmed</th><th>false alarms (invalid)</th><th>missed (found by a backfill)</th>"
               "<th>nights to alert</th><th>nights to culprit</th></tr></thead><tbody>")
    for m in doc["months"] + [dict(doc["total"], month="all")]:
        out.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>" % (
            esc(m["month"]), esc(count(m["regressions"])), esc(count(m["improvements"])), m["false_alarms"],
            m["missed"], nights(m["nights_to_alert"]), nights(m["nights_to_culprit"])))
    out.append("</tbody></table></div>")
    out.append("<p class='note'>By the month of each change. A missed change is one found in a backfilled run "
               "(ci/backfill), which no night had measured; nights are medians, from the change's run to the "
               "alert and to the naming of its culprit (ci/alerts ledger prints the same).</p>")
    return out
