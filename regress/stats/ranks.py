"""Rank statistics for the comparator, vectorised over many benchmarks at once.

Both tests the comparator uses (regress/verdict/judge.py) reduce to one shape. For each benchmark
there is a set S of "pairwise effects" in log time:

  two files (unpaired)  S = { log y_j - log x_i }   for every repetition i of
                        BASE and j of NEW (n*m values). The number of positive
                        values is the Mann-Whitney U statistic; the median of S
                        is the Hodges-Lehmann shift.
  paired rounds         d_r = log b_r - log a_r for each round r, and
                        S = { (d_r + d_s) / 2 : r <= s } (the Walsh averages,
                        n(n+1)/2 values). The number of positive values is the
                        Wilcoxon signed-rank statistic W+; the median of S is the
                        Hodges-Lehmann estimate of the paired shift.

In both cases the statistic's exact null distribution is known (null_counts),
p-values are its tails, and the distribution-free confidence interval of the
shift is a pair of order statistics of S (Lehmann, "Nonparametrics", ch. 2
and 4). Everything here works on a (benchmarks x |S|) array, so a synthetic
suite of 300,000 benchmarks is a handful of numpy calls.

numpy only: the exact distributions are computed here (a few polynomial
products), so the comparator needs no scipy for them (t_shift, the
paired t-test of a sequential comparison's early looks, imports it).
"""
import functools

import math

import numpy as np


@functools.lru_cache(maxsize=None)
def null_counts(kind, n, m=0):
    """Counts (float64 array, index = statistic value) of the exact null
    distribution: kind "mw" (Mann-Whitney U of sizes n, m: 0..n*m) or "wsr"
    (Wilcoxon signed-rank W+ of n pairs: 0..n(n+1)/2)."""
    if kind == "wsr":
        # Generating function prod_{i=1..n} (1 + q^i): each rank is positive or not.
        c = np.zeros(n * (n + 1) // 2 + 1)
        c[0] = 1.0
        top = 0
        for i in range(1, n + 1):
            c[i:top + i + 1] += c[:top + 1].copy()
            top += i
        return c
    if kind == "mw":
        # Number of ways U = u for sizes (a, b): N(a, b) = N(a-1, b) shifted by b + N(a, b-1).
        # Built column by column: table[a] holds N(a, b) for the current b.
        table = [np.ones(1) for _ in range(n + 1)]  # b = 0: U is 0
        for b in range(1, m + 1):
            new = [np.ones(1)]  # a = 0
            for a in range(1, n + 1):
                size = a * b + 1
                v = np.zeros(size)
                # Counting T = #(x > y) (same distribution as U): if the
                # largest of the a + b values is an x it beats all b values
                # of y (N(a-1, b) shifted by b), else it adds nothing (N(a, b-1)).
                left = new[a - 1]
                v[b:b + len(left)] += left
                right = table[a]
                v[:len(right)] += right
                new.append(v)
            table = new
        return table[n]
    raise ValueError("unknown null distribution %r" % kind)


@functools.lru_cache(maxsize=None)
def _cdf(kind, n, m=0):
    c = null_counts(kind, n, m)
    total = c.sum()
    le = np.cumsum(c) / total               # P(T <= t)
    ge = np.cumsum(c[::-1])[::-1] / total   # P(T >= t)
    return le, ge


def min_two_sided_p(kind, n, m=0):
    """The smallest two-sided p-value the exact test can give at these sizes."""
    le, _ = _cdf(kind, n, m)
    return min(1.0, 2.0 * le[0])


def ci_rank(kind, n, m, level):
    """k such that [S_(k), S_(|S|+1-k)] (1-based order statistics) is an
    interval of coverage >= level; 0 when no such interval exists."""
    le, _ = _cdf(kind, n, m)
    half = (1.0 - level) / 2.0
    # P(T <= k-1) <= half: the interval excludes at most half in each tail.
    k = int(np.searchsorted(le, half, side="right"))  # number of t with P(T<=t) <= half
    return k


def shift_test(S, kind, n, m=0, level=0.90):
    """Hodges-Lehmann estimate, exact one-sided p-values and confidence interval
    of the shift, for every row of S (benchmarks x pairwise effects).

    Returns a dict of arrays (one value per row): est, lo, hi (lo = -inf,
    hi = +inf when the sizes are too small for the level), p_up (evidence that
    the shift is > 0: NEW slower), p_down (< 0), p_two = min(1, 2 min(p_up, p_down))."""
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError("S must be benchmarks x effects")
    rows, size = S.shape
    expected = n * m if kind == "mw" else n * (n + 1) // 2
    if size != expected:
        raise ValueError("S has %d effects per row; %s(%d, %d) needs %d" % (size, kind, n, m, expected))
    Ssorted = np.sort(S, axis=1)
    est = np.median(Ssorted, axis=1)
    pos = (Ssorted > 0).sum(axis=1)
    zero = (Ssorted == 0).sum(axis=1)
    # A tie at 0 counts as half; round towards the less significant side.
    t_up = pos + zero // 2            # statistic for "shift > 0"
    t_down = pos + (zero + 1) // 2
    le, ge = _cdf(kind, n, m)
    p_up = ge[t_up]
    p_down = le[t_down]
    p_two = np.minimum(1.0, 2.0 * np.minimum(p_up, p_down))
    k = ci_rank(kind, n, m, level)
    if k >= 1:
        lo = Ssorted[:, k - 1]
        hi = Ssorted[:, size - k]
    else:
        lo = np.full(rows, -np.inf)
        hi = np.full(rows, np.inf)
    return {"est": est, "lo": lo, "hi": hi, "p_up": p_up, "p_down": p_down, "p_two": p_two}


def t_shift(D, level=0.90):
    """The paired t-test of each row of D (benchmarks x rounds of log
    ratios), in shift_test's shape: est the mean, lo/hi its t interval,
    p_up, p_down, p_two. For the early looks of a sequential comparison,
    where the exact signed-rank test cannot give a p below 2 / 2^n; scipy is
    imported here only."""
    from scipy import stats as sps
    D = np.asarray(D, dtype=float)
    n = D.shape[1]
    mean = D.mean(axis=1)
    se = D.std(axis=1, ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    p_up = sps.t.sf(t, n - 1)
    p_down = sps.t.cdf(t, n - 1)
    q = float(sps.t.ppf(1.0 - (1.0 - level) / 2.0, n - 1))
    return {"est": mean, "lo": mean - q * se, "hi": mean + q * se, "p_up": p_up, "p_down": p_down,
            "p_two": np.minimum(1.0, 2.0 * np.minimum(p_up, p_down))}


def unpaired_effects(X, Y):
    """S for two-file comparisons: X (rows x n) BASE log times, Y (rows x m) NEW."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    return (Y[:, None, :] - X[:, :, None]).reshape(X.shape[0], -1)


def walsh_averages(D):
    """S for paired rounds: D (rows x n) per-round log ratios; the n(n+1)/2 Walsh averages."""
    D = np.asarray(D, dtype=float)
    i, j = np.triu_indices(D.shape[1])
    return (D[:, i] + D[:, j]) / 2.0


def robust_sd(V, axis=1):
    """1.4826 x the median absolute deviation: the standard deviation for
    normal data, unmoved by a few outliers. NaN with fewer than 3 values."""
    V = np.asarray(V, dtype=float)
    if V.shape[axis] < 3:
        return np.full(np.delete(V.shape, axis), np.nan) if V.ndim > 1 else float("nan")
    med = np.median(V, axis=axis, keepdims=True)
    return 1.4826 * np.median(np.abs(V - med), axis=axis)


def _adjusted(p, step):
    """Adjusted p-values: step(sorted finite p-values, m) -> their adjusted
    values in the same order; NaN stays NaN and does not count towards m."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    if q.size == 0:
        return out
    order = np.argsort(q, kind="stable")
    res = np.empty(q.size)
    res[order] = step(q[order], q.size)
    out[ok] = res
    return out


def holm(p):
    """Holm's step-down adjustment of p-values (family-wise error control):
    adjusted p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)). NaN stays NaN and
    does not count towards m."""
    return _adjusted(p, lambda q, m: np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * q)))


def bh(p):
    """Benjamini-Hochberg adjusted p-values (false discovery rate):
    adjusted p_(i) = min_{j >= i} min(1, m p_(j) / j). NaN stays NaN and does
    not count towards m. With no true change at all a rejection at alpha has
    probability <= alpha, as Holm's."""
    return _adjusted(p, lambda q, m: np.minimum.accumulate(
        np.minimum(1.0, q * m / np.arange(1, m + 1))[::-1])[::-1])


def sizes_for(min_p_needed, kind, m_other=None, limit=64):
    """The smallest n (paired: rounds; unpaired: repetitions per side, equal
    sizes) whose exact test can reach a two-sided p <= min_p_needed."""
    for n in range(2, limit + 1):
        if min_two_sided_p(kind, n, n if kind == "mw" else 0) <= min_p_needed:
            return n
    return None
