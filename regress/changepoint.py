"""Change points in a benchmark's nightly history: E-Divisive means.

A series is one benchmark's median time per nightly run, in log time (a step
is then a ratio, whatever the benchmark's scale). The question per series:
where did it move, by how much, and is that move real?

Candidates: E-Divisive (Matteson & James, "A Nonparametric Approach for
Multiple Change Point Analysis of Multivariate Data", JASA 109, 2014,
arXiv:1306.4933), the algorithm MongoDB (signal-processing-algorithms) and
Hunter / Apache Otava (Fleming et al., "Hunter: Using Change Point Detection
to Hunt for Performance Regressions", ICPE 2023, doi:10.1145/3578244.3583719)
run on their performance histories. For a split of a segment into
X = x[a:tau] (n values) and Y = x[tau:kappa] (m values), with alpha = 1,

    E(X, Y) = 2/(nm) sum |X_i - Y_j| - 1/C(n,2) sum_{i<k} |X_i - X_k|
                                     - 1/C(m,2) sum_{j<k} |Y_j - Y_k|
    Q(X, Y) = nm/(n+m) E(X, Y)

E is the energy distance: 0 when X and Y come from one distribution, larger
the more they differ. Every Q of a segment comes from one matrix of 2-D prefix
sums P of the strict upper triangle of |x_i - x_j| (energy_prefix): the three
sums above are differences of four entries of P, so all O(n^2) splits cost
O(n^2) numpy work and no Python loop over pairs (energy_q, energy_q_matrix).
As in Matteson & James (and Otava), the candidate of a segment [a, b) is the
tau of the largest Q(x[a:tau], x[tau:kappa]) over tau and kappa <= b, with at
least min_size values on each side: letting kappa stop short of b finds a
step that was undone later (a regression fixed a few nights on), which a
split of the whole segment dilutes. Recursive bisection: the best split of
each segment is kept if significant, then both sides are searched again;
a segment whose best split is not significant is left whole.

Significance: not Matteson & James's permutation test (hundreds of reruns
per candidate, and random) but Hunter/Otava's: a two-sample Student t-test
between the two samples the candidate separates, p <= max_pvalue. Otava uses
0.001; here it is 0.0002, because a nightly job tests every series again every
night, and a false change that any one night confirms fails that night.
Measured on synthetic series as tests/test_changepoint.py makes them (1%
noise; 3000 series without a step checked every night from the 8th to the
30th; 1000 series with a 5% step, 3 nights after it):

    max_pvalue   no step: series ever confirmed   5% step: confirmed
    0.001        1.63%                            98.8%
    0.0003       0.77%                            96.7%
    0.0002       0.50%                            95.7%
    0.0001       0.27%                            91.3%

0.001 misses the target of 1 false change per 100 series; 0.0002 meets it
with room and keeps 5-point margins on the 90% confirmation target.
Pooled variance (Student, as Otava's TTestSignificanceTester, i.e.
scipy's ttest_ind_from_stats with its default equal_var=True), not Welch:
a series' run-to-run noise is one property of the benchmark on both sides of
a step, and the step that matters most is the newest, with 2 or 3 runs after
it. Welch's degrees of freedom then fall to about 2 (the variance of 3 values
is itself a guess): on the synthetic series of tests/test_changepoint.py (5%
step, 1% noise; max_pvalue 0.001) Welch confirms 40% of steps 3 nights after
them and 96% after 5, Student 97% after 3. equal_var=False gives Welch where wanted.

Then Hunter's merge step, on the series as a whole (detect): each change is
tested again between its two full neighbouring segments (p) and sized by the
ratio of their medians (step); the weakest change goes while any has
p > max_pvalue or a |step| below the threshold, and its neighbours are
recomputed. The threshold is the comparator's rule (compare.thresholds):
max(floor, multiple x noise), noise = stats.robust_sd (1.4826 x MAD) of the
log medians' residuals about their segment medians; a series with no noise
(a constant one) has the floor alone. So a change is reported when it is
both significant (p) and larger than the threshold (step), as the
comparator's SLOWER needs both.

A single outlier must not split a series (a one-night spike of +20%). Every
segment has at least min_size = 2 runs; a segment's median is robust also
for an even count (side_median: of the two middle values, the one nearer the
other side's median), so one wild run in a segment of 2, 3, ... does not move
it; and the merge step's t-test leaves out runs further than 4 x noise from
their segment's median (robust_ttest), so a spike next to an ordinary run
that happens to be high is not significant either.

A change with fewer than `confirm` runs from it on (the change's own run
included) is "tentative": a few more nights (or a paired A/B rerun with
compare --run) must confirm it; with `confirm` or more it is "confirmed".
Only a confirmed regression should fail a nightly job (gating()).

No window by default: Otava searches sliding windows (window_len runs, 50
by default, overlapping by half) and merges their change points. Here the
prefix sums are computed once per series and a segment of L runs costs one
L x L block of them, so the whole history is searched: 500 series x 200 runs
take about 3 s on 2 cores (tests/test_changepoint.py), and steps a dozen runs
apart in 200 are all found. `window` restricts the search to windows as
Otava does, for histories of thousands of runs; the merge step then joins
the windows' change points.

numpy and scipy.stats only (no Debian package ships E-Divisive).
"""
import math

import numpy as np
from scipy import stats as sps

from regress import compare
from regress import stats

MIN_SIZE = 2
MAX_PVALUE = 0.0002
MULTIPLE = 2.0
CONFIRM = 3
OUTLIER_CUT = 4.0


# ------------------------------------------------------------ energy statistic

def energy_prefix(x):
    """(n+1) x (n+1) prefix sums: P[r, c] = sum of |x_i - x_j| over i < j,
    i < r, j < c (the strict upper triangle of the distance matrix)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    P = np.zeros((n + 1, n + 1))
    if n:
        U = np.triu(np.abs(x[:, None] - x[None, :]), 1)
        np.cumsum(U, axis=0, out=U)
        np.cumsum(U, axis=1, out=P[1:, 1:])
    return P


def _within_coef(k):
    """1 / C(k, 2), 0 where k < 2 (no pairs)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k >= 2, 2.0 / (k * (k - 1.0)), 0.0)


def _q_block(P, a, taus, kappas):
    """Q(x[a:tau], x[tau:kappa]) for arrays of tau and kappa (broadcast)."""
    n1 = taus - a
    n2 = kappas - taus
    Ptt = P[taus, taus]
    Pat = P[a, taus]
    Ptk = P[taus, kappas]
    within_x = Ptt - Pat
    cross = Ptk - P[a, kappas] - Ptt + Pat
    within_y = P[kappas, kappas] - Ptk
    with np.errstate(divide="ignore", invalid="ignore"):
        e = 2.0 * cross / (n1 * n2) - _within_coef(n1) * within_x - _within_coef(n2) * within_y
        return n1 * n2 / (n1 + n2) * e


def energy_q(x, P=None):
    """Q for every split of the whole of x: q[tau] = Q(x[:tau], x[tau:]) for
    tau = 1 .. n-1 (q has length n; q[0], no split, is NaN)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    q = np.full(n, np.nan)
    if n < 2:
        return q
    if P is None:
        P = energy_prefix(x)
    taus = np.arange(1, n)
    q[1:] = _q_block(P, 0, taus, np.full(n - 1, n))
    return q


def energy_q_matrix(x, P=None):
    """Q[tau, kappa] = Q(x[:tau], x[tau:kappa]) for 1 <= tau < kappa <= n, NaN
    elsewhere: (n+1) x (n+1)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    Q = np.full((n + 1, n + 1), np.nan)
    if n < 2:
        return Q
    if P is None:
        P = energy_prefix(x)
    t, k = np.triu_indices(n + 1, 1)
    keep = t >= 1
    t, k = t[keep], k[keep]
    Q[t, k] = _q_block(P, 0, t, k)
    return Q


# -------------------------------------------------------------- significance

def _t_from_stats(n1, m1, v1, n2, m2, v2, equal_var=True):
    """Two-sided two-sample t-test from sizes, means and variances (ddof 1;
    arrays broadcast): (t, p). Student's pooled test (equal_var, as
    Hunter/Otava) or Welch's. No variance on either side: p = 0 when the
    means differ, 1 when they agree (where scipy would give NaN)."""
    n1, m1, v1, n2, m2, v2 = (np.asarray(a, dtype=float) for a in (n1, m1, v1, n2, m2, v2))
    diff = m2 - m1
    with np.errstate(divide="ignore", invalid="ignore"):
        df_pooled = n1 + n2 - 2
        pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / df_pooled
        se2_p = pooled * (1.0 / n1 + 1.0 / n2)
        a, b = v1 / n1, v2 / n2
        se2_w = a + b
        df_w = se2_w * se2_w / (a * a / np.maximum(n1 - 1, 1) + b * b / np.maximum(n2 - 1, 1))
        welch = (not equal_var) & (n1 >= 2) & (n2 >= 2) & (se2_w > 0)
        se2 = np.where(welch, se2_w, se2_p)
        df = np.where(welch, df_w, df_pooled)
        # Differences at rounding level (a constant series) are no step.
        tiny = 1e-12 * np.maximum(1.0, np.maximum(np.abs(m1), np.abs(m2)))
        flat = se2 <= tiny * tiny
        t = np.where(flat, np.where(np.abs(diff) <= tiny, 0.0, np.sign(diff) * np.inf),
                     diff / np.sqrt(np.where(flat, 1.0, se2)))
        p = np.where(flat, np.where(np.abs(diff) <= tiny, 1.0, 0.0),
                     2.0 * sps.t.sf(np.abs(t), np.maximum(df, 1e-9)))
    p = np.where((n1 < 1) | (n2 < 1) | (n1 + n2 < 3), 1.0, p)
    return t, p


def ttest(left, right, equal_var=True):
    """Two-sided two-sample t-test between two samples: (t, p); see _t_from_stats."""
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    n1, n2 = left.size, right.size
    if n1 < 1 or n2 < 1 or n1 + n2 < 3:
        return 0.0, 1.0
    t, p = _t_from_stats(n1, left.mean(), left.var(ddof=1) if n1 > 1 else 0.0,
                         n2, right.mean(), right.var(ddof=1) if n2 > 1 else 0.0, equal_var)
    return float(t), float(p)


def robust_ttest(left, right, noise, cut=OUTLIER_CUT, equal_var=True):
    """The t-test's p without outliers: values further than cut x noise from
    their side's median (side_median, robust to one outlier in any count) are
    left out, so that a one-night spike next to an ordinary run does not make
    a step significant. noise: the series' robust sd (0 or NaN: only values
    equal to their side's median stay)."""
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    if left.size < 1 or right.size < 1:
        return 1.0
    ml, mr = np.median(left), np.median(right)
    cl, cr = side_median(left, mr), side_median(right, ml)
    lim = cut * noise if noise is not None and np.isfinite(noise) else 0.0
    lim = max(lim, 1e-12 * max(1.0, abs(cl), abs(cr)))
    return ttest(left[np.abs(left - cl) <= lim], right[np.abs(right - cr) <= lim], equal_var)[1]


# ---------------------------------------------------------------- E-Divisive

def _candidate(P, a, b, min_size, search_kappa):
    """(tau, kappa, q) of the best split of segment [a, b), or None."""
    if b - a < 2 * min_size:
        return None
    taus = np.arange(a + min_size, b - min_size + 1)
    if not search_kappa:
        q = _q_block(P, a, taus, np.full(taus.size, b))
        i = int(np.argmax(q))
        return int(taus[i]), b, float(q[i])
    kappas = np.arange(a + 2 * min_size, b + 1)
    T = taus[:, None]
    K = kappas[None, :]
    q = _q_block(P, a, T, K)
    q = np.where(K - T >= min_size, q, -np.inf)
    i, j = np.unravel_index(int(np.argmax(q)), q.shape)
    return int(taus[i]), int(kappas[j]), float(q[i, j])


def e_divisive(x, min_size=3, max_pvalue=MAX_PVALUE, equal_var=True, search_kappa=True,
               window=None, details=False):
    """Change points of the 1-D series x (use log times): the sorted indices
    tau where x[tau] is the first value after a change.

    min_size: values at least on each side of every split. max_pvalue: a
    split is kept when the t-test between x[a:tau] and x[tau:kappa] (the two
    samples of the best Q) gives p <= max_pvalue. equal_var: Student (True,
    as Hunter/Otava) or Welch. search_kappa: maximise Q over the end of the
    second sample too (Matteson & James) or split whole segments only
    (MongoDB). window: None searches the whole series; an int searches
    windows of that many values, overlapping by half (as Hunter), and joins
    their change points (at least min_size apart). details: return
    [(tau, p, q)] instead of [tau]."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1:
        raise ValueError("e_divisive needs a 1-D series")
    min_size = max(1, int(min_size))
    n = x.size
    if window is not None and n > window:
        window = max(int(window), 2 * min_size)
        found = {}
        step = max(1, window // 2)
        start = 0
        while True:
            end = min(n, start + window)
            for tau, p, q in e_divisive(x[start:end], min_size, max_pvalue, equal_var, search_kappa,
                                        None, True):
                t = tau + start
                if t not in found or p < found[t][0]:
                    found[t] = (p, q)
            if end == n:
                break
            start += step
        # Overlapping windows can place one change a run apart: keep the most
        # significant of those closer than min_size.
        kept = []
        for t in sorted(found, key=lambda t: (found[t][0], -found[t][1])):
            if all(abs(t - k) >= min_size for k in kept):
                kept.append(t)
        kept.sort()
        return [(t, found[t][0], found[t][1]) for t in kept] if details else kept
    if n < 2 * min_size:
        return []
    P = energy_prefix(x)
    out = []
    todo = [(0, n)]
    while todo:
        a, b = todo.pop()
        c = _candidate(P, a, b, min_size, search_kappa)
        if c is None:
            continue
        tau, kappa, q = c
        if not q > 0:
            continue
        _, p = ttest(x[a:tau], x[tau:kappa], equal_var)
        if p <= max_pvalue:
            out.append((tau, p, q))
            todo.append((tau, b))
            todo.append((a, tau))
    out.sort()
    return out if details else [t for t, _, _ in out]


# ------------------------------------------------------------------ detect

def side_median(v, other):
    """The median of v, robust to one outlier also for an even count: of the
    two middle values, the one nearer `other` (the other side's median)."""
    v = np.sort(np.asarray(v, dtype=float))
    k = v.size
    if k % 2:
        return float(v[k // 2])
    lo, hi = float(v[k // 2 - 1]), float(v[k // 2])
    return lo if abs(lo - other) <= abs(hi - other) else hi


def _segment_stats(x, cps, equal_var):
    """Per change point (p, log step) between its neighbouring segments, and
    the noise: robust sd of the residuals about the segment medians."""
    bounds = [0] + list(cps) + [x.size]
    segs = [x[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]
    resid = np.concatenate([s - np.median(s) for s in segs]) if x.size else x
    noise = stats.robust_sd(resid, axis=0) if resid.size >= 3 else float("nan")
    out = []
    for i in range(len(cps)):
        before, after = segs[i], segs[i + 1]
        p = robust_ttest(before, after, noise, equal_var=equal_var)
        mb, ma = np.median(before), np.median(after)
        out.append((p, side_median(after, mb) - side_median(before, ma)))
    return out, noise


def threshold(noise, floor, multiple=MULTIPLE):
    """The comparator's rule, compare.thresholds: max(floor, multiple x noise);
    no noise (NaN, None) counts as 0."""
    return float(compare.thresholds(np.nan if noise is None else noise, floor, multiple))


def _log_median(point):
    m = point.get("median")
    if m is None and "median" not in point and point.get("times"):
        t = [v for v in point["times"] if v is not None and v > 0]
        m = float(np.median(t)) if t else None
    if m is None:
        return None
    try:
        m = float(m)
    except (TypeError, ValueError):
        return None
    return math.log(m) if m > 0 and math.isfinite(m) else None


def detect(points, floor, multiple=MULTIPLE, confirm=CONFIRM, min_size=MIN_SIZE,
           max_pvalue=MAX_PVALUE, equal_var=True, window=None):
    """Change points of one benchmark's history.

    points: one dict per run, oldest first, with "median" (seconds; None for
    an error or missing run: skipped), "revision", "date", optional "times"
    (the repetitions: their median stands in when "median" is absent).

    Returns a list of dicts, oldest first: index (of points: the first run
    after the change), revision_before / revision_after (the last revision
    measured before it and the first after: the commit range), date (of the
    first run after), step (median after / median before - 1: +0.05 is 5%
    slower), direction ("slower" / "faster"), p (t-test between the two
    neighbouring segments), threshold, noise, runs_after (measured runs from
    the change on, its own included) and status: "confirmed" with at least
    `confirm` of them, else "tentative". A change is reported when p <=
    max_pvalue and its size exceeds the threshold, in log time as the
    comparator does: |log(1 + step)| > log(1 + threshold)."""
    idx, x = [], []
    for i, pt in enumerate(points):
        v = _log_median(pt)
        if v is not None:
            idx.append(i)
            x.append(v)
    x = np.asarray(x, dtype=float)
    n = x.size
    if n < 2 * min_size:
        return []
    cps = e_divisive(x, min_size, max_pvalue, equal_var, True, window)
    # Hunter's merge: drop the weakest change while any is not significant
    # between its full neighbouring segments or smaller than the threshold.
    while True:
        st, noise = _segment_stats(x, cps, equal_var)
        thr = threshold(noise, floor, multiple)
        if not cps:
            break
        ps = np.array([s[0] for s in st])
        size = np.expm1(np.abs([s[1] for s in st]))
        if ps.max() > max_pvalue:
            del cps[int(np.argmax(ps))]
        elif size.min() <= thr:
            del cps[int(np.argmin(size))]
        else:
            break
    out = []
    for c, (p, lstep) in zip(cps, st):
        i = idx[c]
        step = math.expm1(lstep)
        after = n - c
        out.append({
            "index": i,
            "revision_before": points[idx[c - 1]].get("revision"),
            "revision_after": points[i].get("revision"),
            "date": points[i].get("date"),
            "step": step,
            "direction": "slower" if step > 0 else "faster",
            "p": p,
            "threshold": thr,
            "noise": None if not np.isfinite(noise) else float(noise),
            "runs_after": after,
            "status": "confirmed" if after >= confirm else "tentative",
        })
    return out


def gating(changes):
    """The changes that fail a nightly job: confirmed regressions, but not one
    marked "accepted" (measured at or before the machine's accepted baseline:
    ci/trends --accepted-through)."""
    return [c for c in changes if c["status"] == "confirmed" and c["direction"] == "slower" and not c.get("accepted")]
