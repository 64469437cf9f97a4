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
