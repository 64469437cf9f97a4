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
a segment whose best split is not significant is left whole, unless it
holds an isolated outlier: then that run is split off and the rest of the
segment searched again (Outliers, below).

Significance: not Matteson & James's permutation test (hundreds of reruns
per candidate, and random) but Hunter/Otava's: a two-sample Student t-test
between the two samples the candidate separates, p <= max_pvalue, here made
robust to outliers (robust_ttest, regress/stats/ttests.py). Otava uses
0.001; here it is 0.0002, because a nightly job tests every series again
every night, and a false change that any one night confirms fails that
night. Measured on synthetic series as tests/test_changepoint.py makes them (1% noise; 3000
series without a step checked every night from the 8th to the 30th; 1000
series with a 5% step, 3 nights after it):

    max_pvalue   no step: series ever confirmed   5% step: confirmed
    0.001        1.40%                            98.1%
    0.0003       0.63%                            96.0%
    0.0002       0.43%                            94.6%
    0.0001       0.27%                            91.1%

0.001 misses the target of 1 false change per 100 series; 0.0002 meets it
with room and keeps a margin of nearly 5 points on the 90% confirmation
target.
Pooled variance (Student, as Otava's TTestSignificanceTester, i.e.
scipy's ttest_ind_from_stats with its default equal_var=True), not Welch:
a series' run-to-run noise is one property of the benchmark on both sides of
a step, and the step that matters most is the newest, with 2 or 3 runs after
it. Welch's degrees of freedom then fall to about 2 (the variance of 3 values
is itself a guess): on the synthetic series of tests/test_changepoint.py (5%
step, 1% noise; max_pvalue 0.001) Welch confirms 43% of steps 3 nights after
them and 94% after 5, Student 98% after 3. equal_var=False gives Welch where wanted.

Outliers. One disturbed run (a one-night spike, a run at x0.5 or x2) must
neither be reported as a change nor hide one. A plain t-test does the
second: one run at x1.6 among the 5 before a 26% step gives that side a
variance that the step cannot beat, and the step goes unreported. So:

  - The noise of the search (diff_noise) is 1.4826 x the median |difference|
    of consecutive runs, / sqrt(2). A step adds one large difference and an
    outlier two, which the median does not see; the residuals about the
    median of a segment are as wide as any step in it, and the search tests
    exactly the segments that hold one. Residuals about a running median
    would do too, but their spread depends on the window (a run is part of
    its own median) and needs a factor for each; a difference of two runs
    has exactly sqrt(2) x their sd.
  - Gross outliers are set aside before the search (isolated_outliers: a run
    further than GROSS_CUT = 8 x noise from both its neighbours, on one side
    of both). The energy statistic sums distances, so one run at x2 weighs in
    Q like many runs of a 10% step, and the best split lands next to it
    instead of at the step. The cut is 8, not 4: with the noise estimated
    from a few runs, the first run of a new step, or an ordinary one, can
    stand 4 x noise from both neighbours, and setting it aside would lose
    that run's evidence (a new step confirmed a night later).
  - Every split of the search is tested with robust_ttest (noise: the
    above): a value further than 8 x noise from its side's median is left
    out, one further than 4 x noise stays, pulled in to 4 x noise. Pulled
    in rather than left out: the noise, a median of few values, comes out at
    half the true one now and then, and leaving out all values beyond 4 x it
    then removes ordinary runs, shrinks the variance and makes steps of
    chance significant (more false alarms than the plain t-test had).
  - A segment whose best split is not significant and that holds an
    isolated outlier at OUTLIER_CUT = 4 x noise is searched again without
    it (the outlier is split off), as often as such outliers are found.
    Splitting off rather than testing the next-best splits: every further
    split tested is another chance of a false change in every clean series,
    whereas this acts only where an outlier is there to explain the failure:
    one at 7 x a noise that few runs estimate high, say, which the test
    keeps, pulled in.

Measured (tests/test_changepoint_accuracy.py; 500 series per case: 5 to 15
runs on each side of a 10% or 26% step, one run at x0.5 .. x0.91 or x1.1 ..
x2 at the start, in the middle or at the end; 1% noise): the step found,
within a run, in 99.4% or more of the series of each case (with the plain
t-test in the search: 22%, 27% and 66% for 10% steps, at the start, in the
middle and at the end; 69%, 71% and 91% for 26% steps); none of 1500 series
with the outlier alone shows a change. A step whose first run is the outlier
is placed at the run after it (that run's own level is unknown); one whose
second run is an outlier that undoes it can be placed two runs late (the
first run then looks as isolated as the outlier).

Then Hunter's merge step, on the series as a whole (detect): each change is
tested again between its two full neighbouring segments (p: robust_ttest,
noise = stats.robust_sd (1.4826 x MAD) of the log medians' residuals about
their segment medians, free of steps once they are found) and sized at its
jump (step): between the medians of the up to LOCAL_RUNS = 5 runs just
before it and just after it, no further than the neighbouring change points,
each without its runs beyond 4 x noise (an outlier among 5 runs would move
their median by one rank; _level). Not between the medians of the whole
segments: those mix in any level that the merge step has joined to a segment,
as a second step too small to report; a +14.6% jump followed five runs on by
+6.7% more measures +22.3% between its segments' medians. The weakest change
goes while any has p > max_pvalue or a size below the threshold, and its
neighbours are recomputed; the size is the smaller of the step at the jump and
the step between the segments' medians. A change must be large where it
happens, so that a reported step always exceeds the threshold, and over its
segments: a median of 5 runs has a standard error of half the noise, and
the local steps alone let changes of chance pass (0.61% of no-step series
ever confirmed, instead of 0.35%; 10000 series checked every night). The threshold is the comparator's rule
(decide.thresholds): max(floor, multiple x noise); a series with no noise
(a constant one) has the floor alone. So a change is reported when it is both
significant (p) and larger than the threshold (step), as the comparator's
SLOWER needs both. Every segment has at least min_size = 2 runs, a segment's
median is robust also for an even count (side_median: of the two middle
values, the one nearer the other side's median), and robust_ttest makes a
spike next to an ordinary run that happens to be high no step either.

A change with fewer than `confirm` runs from it on (the change's own run
included) is "tentative": a few more nights (or a paired A/B rerun with
compare --run) must confirm it; with `confirm` or more it is "confirmed".
Only a confirmed regression should fail a nightly job (gating()).

No window by default: Otava searches sliding windows (window_len runs, 50
by default, overlapping by half) and merges their change points. Here the
prefix sums are computed once per series (and again for a segment searched
without an outlier) and a segment of L runs costs one L x L block of them, so
the whole history is searched: 500 series x 200 runs take about 2 to 3 s on 2
cores (tests/test_changepoint_accuracy.py), and steps a dozen runs
apart in 200 are all found. `window` restricts the search to windows as
Otava does, for histories of thousands of runs; the merge step then joins
the windows' change points.

numpy and scipy.stats only (no Debian package ships E-Divisive).
"""
import math

import numpy as np

from regress.stats import decide
from regress.stats import ranks as stats
from regress.stats.ttests import OUTLIER_CUT, robust_ttest, side_median

MIN_SIZE = 2
MAX_PVALUE = 0.0002
MULTIPLE = 2.0
CONFIRM = 3
GROSS_CUT = 2.0 * OUTLIER_CUT
LOCAL_RUNS = 5


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


# ---------------------------------------------------------------- E-Divisive

def diff_noise(x):
    """The run-to-run noise of x, robust and blind to steps: 1.4826 x the
    median of |x[i+1] - x[i]|, / sqrt(2) (a difference of two runs has
    sqrt(2) x their sd). About 0, not about the differences' median: a
    piecewise-constant series' differences are 0 but at its steps, and the
    few large ones (a step, the two sides of an outlier) all of one sign would
    move their median. Where more than half of the differences are 0
    (coarse timers), the mean |difference| (x sqrt(pi/2)) stands in, so that
    a quantised series has a noise. NaN with fewer than 3 differences."""
    d = np.abs(np.diff(np.asarray(x, dtype=float)))
    if d.size < 3:
        return float("nan")
    s = 1.4826 * float(np.median(d))
    if s == 0.0:
        s = math.sqrt(math.pi / 2.0) * float(d.mean())
    return s / math.sqrt(2.0)


def isolated_outliers(x, noise, cut=GROSS_CUT):
    """Boolean mask of the isolated outliers of x: a run further than
    cut x noise from both its neighbours, on the same side of both (the
    first and last runs: from the two runs next to them). The most isolated
    goes first and its neighbours are judged again without it, so a run next
    to an outlier is not taken for one. A run between the two levels of a
    step is never isolated; nor is either run of a two-run excursion. No
    noise (NaN): none."""
    x = np.asarray(x, dtype=float)
    n = x.size
    out = np.zeros(n, dtype=bool)
    if n < 3 or noise is None or not np.isfinite(noise):
        return out
    lim = max(cut * noise, 1e-12 * max(1.0, float(np.max(np.abs(x)))))
    pos = np.arange(n)
    while pos.size >= 3:
        v = x[pos]
        left = np.empty(v.size)   # v[i] - its left neighbour (the first run: - v[2])
        right = np.empty(v.size)  # v[i] - its right neighbour (the last run: - v[-3])
        left[1:] = v[1:] - v[:-1]
        right[:-1] = -left[1:]
        left[0] = v[0] - v[2]
        right[-1] = v[-1] - v[-3]
        score = np.where(left * right > 0, np.minimum(np.abs(left), np.abs(right)), 0.0)
        i = int(np.argmax(score))
        if not score[i] > lim:
            break
        out[pos[i]] = True
        pos = np.delete(pos, i)
    return out


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
    split is kept when the robust t-test (robust_ttest, noise: diff_noise of
    x) between x[a:tau] and x[tau:kappa] (the two samples of the best Q)
    gives p <= max_pvalue. Isolated outliers (isolated_outliers) are in
    neither sample nor in Q: those at GROSS_CUT from the start, those at
    OUTLIER_CUT of a segment whose best split fails, which is then searched
    again without them; a tau next to one is the first run after it.
    equal_var: Student (True, as Hunter/Otava) or Welch. search_kappa:
    maximise Q over the end of the second sample too (Matteson & James) or
    split whole segments only (MongoDB). window: None searches the whole
    series; an int searches windows of that many values, overlapping by half
    (as Hunter), and joins their change points (at least min_size apart).
    details: return [(tau, p, q)] instead of [tau]."""
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
    noise = diff_noise(x)
    out = []
    _bisect(x, np.flatnonzero(~isolated_outliers(x, noise, GROSS_CUT)), noise, min_size, max_pvalue,
            equal_var, search_kappa, out)
    out.sort()
    return out if details else [t for t, _, _ in out]


def _bisect(x, runs, noise, min_size, max_pvalue, equal_var, search_kappa, out):
    """E-Divisive's recursive bisection of the runs x[runs] (indices into x,
    increasing), appending (tau, p, q) to out; tau indexes x. A segment whose
    best split fails the robust test but holds an isolated outlier at
    OUTLIER_CUT is searched again without it."""
    if runs.size < 2 * min_size:
        return
    y = x[runs]
    P = energy_prefix(y)
    todo = [(0, runs.size)]
    while todo:
        a, b = todo.pop()
        c = _candidate(P, a, b, min_size, search_kappa)
        if c is None:
            continue
        tau, kappa, q = c
        p = robust_ttest(y[a:tau], y[tau:kappa], noise, equal_var=equal_var) if q > 0 else 1.0
        if p <= max_pvalue:
            out.append((int(runs[tau]), p, q))
            todo.append((tau, b))
            todo.append((a, tau))
            continue
        # Not significant. An outlier may be what hides a step here: split it
        # off (at the test's cut, no longer only a gross one) and search the
        # rest of the segment again.
        seg = runs[a:b]
        odd = isolated_outliers(x[seg], noise, OUTLIER_CUT)
        if odd.any():
            _bisect(x, seg[~odd], noise, min_size, max_pvalue, equal_var, search_kappa, out)


# ------------------------------------------------------------------ detect

def _segment_stats(x, cps, equal_var, local=LOCAL_RUNS):
    """Per change point (p, log step at the jump, log step between the
    segments), and the noise: robust sd of the residuals about the segment
    medians. p: robust_ttest between the two full neighbouring segments (all
    the evidence on either side). The step at the jump: between the local
    levels (_level) of the up to `local` runs just before it and just after
    it, no further than the neighbouring change points, so that a change is
    sized by what happened at it, not mixed with a level further away that
    the merge step has joined to its segment (a second step too small to
    report, a drift). The step between the segments: their side_medians."""
    bounds = [0] + list(cps) + [x.size]
    segs = [x[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]
    resid = np.concatenate([s - np.median(s) for s in segs]) if x.size else x
    noise = stats.robust_sd(resid, axis=0) if resid.size >= 3 else float("nan")
    lim = OUTLIER_CUT * noise if np.isfinite(noise) else np.inf
    out = []
    for i, c in enumerate(cps):
        p = robust_ttest(segs[i], segs[i + 1], noise, equal_var=equal_var)
        mb, ma = np.median(segs[i]), np.median(segs[i + 1])
        seg_step = side_median(segs[i + 1], mb) - side_median(segs[i], ma)
        before = x[max(bounds[i], c - local):c]
        after = x[c:min(bounds[i + 2], c + local)]
        out.append((p, _level(after, before, lim) - _level(before, after, lim), seg_step))
    return out, noise


def _level(v, other, lim):
    """The level of the local window v next to the window `other`: the
    median of its runs within lim of side_median(v, median of other), so
    that an outlier among them neither is the level (side_median) nor
    shifts the median by one order statistic. No noise (lim infinite):
    side_median."""
    c = side_median(v, np.median(other))
    if not np.isfinite(lim):
        return c
    return float(np.median(v[np.abs(v - c) <= lim]))


def threshold(noise, floor, multiple=MULTIPLE):
    """The comparator's rule, decide.thresholds: max(floor, multiple x noise);
    no noise (NaN, None) counts as 0."""
    return float(decide.thresholds(np.nan if noise is None else noise, floor, multiple))


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
    first run after), step (median after / median before - 1 at the jump,
    of the up to LOCAL_RUNS runs on each side: +0.05 is 5% slower),
    direction ("slower" / "faster"), p (robust t-test between the two
    neighbouring segments), threshold, noise, runs_after (measured runs from
    the change on, its own included) and status: "confirmed" with at least
    `confirm` of them, else "tentative". A change is reported when p <=
    max_pvalue and its size exceeds the threshold, in log time as the
    comparator does: |log(1 + step)| > log(1 + threshold), both at the jump
    (step) and between the medians of its neighbouring segments."""
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
        size = np.expm1(np.minimum(np.abs([s[1] for s in st]), np.abs([s[2] for s in st])))
        if ps.max() > max_pvalue:
            del cps[int(np.argmax(ps))]
        elif size.min() <= thr:
            del cps[int(np.argmin(size))]
        else:
            break
    out = []
    for c, (p, lstep, _) in zip(cps, st):
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
    ci/trends --accepted-through) or "triaged" (its alert closed: invalid,
    won't fix, fixed, backed out or detected fixed)."""
    return [c for c in changes if c["status"] == "confirmed" and c["direction"] == "slower" and not c.get("accepted")
            and not c.get("triaged")]
