"""The two-sample t-tests of the change-point search (regress/stats/changepoint.py
states why these tests and these cuts): Student's pooled test, or Welch's,
from sizes, means and variances; the same made robust to outliers
(robust_ttest); and side_median, the median of one side of a split that one
outlier does not move. numpy and scipy.stats only."""
import numpy as np
from scipy import stats as sps

OUTLIER_CUT = 4.0   # a value beyond OUTLIER_CUT x noise from its side's median is pulled in to it


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
    """The t-test's p with outliers tamed. Each value is measured from its
    side's median (side_median, robust to one outlier in any count): beyond
    2 x cut x noise it is left out (a gross outlier says nothing about the
    level or the spread); between cut and 2 x cut x noise it stays, pulled in
    to cut x noise (winsorised). So a one-night spike next to an ordinary run
    does not make a step significant, and a noise estimate that comes out low
    (it is a median of a few values) pulls ordinary values in a little
    instead of leaving them out: leaving them out would shrink the variance
    and make steps of chance significant. noise: the series' robust sd (0 or
    NaN: only values equal to their side's median stay)."""
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    if left.size < 1 or right.size < 1:
        return 1.0
    ml, mr = np.median(left), np.median(right)
    cl, cr = side_median(left, mr), side_median(right, ml)
    lim = cut * noise if noise is not None and np.isfinite(noise) else 0.0
    lim = max(lim, 1e-12 * max(1.0, abs(cl), abs(cr)))
    left = left[np.abs(left - cl) <= 2.0 * lim]
    right = right[np.abs(right - cr) <= 2.0 * lim]
    return ttest(np.clip(left, cl - lim, cl + lim), np.clip(right, cr - lim, cr + lim), equal_var)[1]


def side_median(v, other):
    """The median of v, robust to one outlier also for an even count: of the
    two middle values, the one nearer `other` (the other side's median)."""
    v = np.sort(np.asarray(v, dtype=float))
    k = v.size
    if k % 2:
        return float(v[k // 2])
    lo, hi = float(v[k // 2 - 1]), float(v[k // 2])
    return lo if abs(lo - other) <= abs(hi - other) else hi
