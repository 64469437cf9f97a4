"""How trustworthy the gate is, from what it did night after night: the
figures a team asks for before it lets a gate fail builds (the trends page's
"Gate health", the nightly summary).

- overlap(a, b): the Jaccard index of two nights' alert sets, |a & b| /
  |a | b|. A real change stays alerted night after night (near 1); alerts
  that come and go with the noise barely overlap (near 0).
- sign_test(up, down): the two-sided exact binomial test of up against
  down changes. A symmetric noise process moves identical code up as often
  as down, so a small p on the A/A checks means a bias of the machine or
  the procedure (the order of the sides, a drift), not chance.
- rate_interval(k, n): the false-alarm rate k / n with its Clopper-Pearson
  interval, exact for a binomial count, so 0 alarms in n still says how
  high the rate might be.
"""
from scipy import stats

from regress.load import fmt

LEVEL = 0.95
WINDOW = 30   # nights the sign test reads


def overlap(a, b):
    """(Jaccard index or None when both sets are empty, |a & b|, |a | b|)."""
    a, b = set(a), set(b)
    union = len(a | b)
    return (len(a & b) / union if union else None), len(a & b), union


def sign_test(up, down):
    """The two-sided exact p of `up` successes in up + down fair coin flips
    (1.0 with no flips: nothing to test)."""
    n = up + down
    if n == 0:
        return 1.0
    return float(stats.binomtest(up, n, 0.5, alternative="two-sided").pvalue)


def rate_interval(k, n, level=LEVEL):
    """(k / n, low, high): the Clopper-Pearson interval of a binomial rate;
    None for each with n = 0."""
    if n <= 0:
        return None, None, None
    tail = (1 - level) / 2
    low = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return k / n, low, high


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
    if r["nights"]:
        out.append((r["low"] <= r["alpha"], "A/A: %d of %d nights with a false alarm (%d alarms in %d comparisons), "
                    "%s of nights (%d%% interval %s to %s; the comparator's alpha %s a night)" % (
                        r["nights_alarmed"], r["nights"], r["alarms"], r["compared"], _pct(r["rate"]),
                        round(100 * r["level"]), _pct(r["low"]), _pct(r["high"]), _pct(r["alpha"]))))
    s = h["aa_sign"]
    if s["up"] + s["down"]:
        out.append((s["p"] >= SIGN_P, "A/A sign test over the last %d nights: %d nights mostly up, %d mostly down, "
                    "p = %.3g%s" % (s["nights"], s["up"], s["down"], s["p"],
                                    " (one-sided: a bias of the machine or the order of the sides, not noise)"
                                    if s["p"] < SIGN_P else "")))
    if s["slower"] + s["faster"]:
        out.append((s["p_alarms"] >= SIGN_P, "A/A alarms over the last %d nights: %d nights mostly SLOWER, %d mostly "
                    "FASTER, p = %.3g" % (s["nights"], s["slower"], s["faster"], s["p_alarms"])))
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
