#!/usr/bin/env python3
"""Tests of the change-point detector (regress/stats/changepoint.py).

1. The energy statistic against exact numbers and a brute-force double loop;
   the t-tests against scipy.
2. Detection of placed steps, and edge cases: series of 0, 1, 2 runs, a constant series (no noise: the
   threshold is the floor), errors (None) skipped, the commit range; a step sized at its jump, not
   mixed with a second step nearby that is too small to report.
3. One outlier (a run x0.5 .. x2) at the start, in the middle or at the end: it hides no step and is
   no change itself; the noise estimate, the outlier mask and the robust test it relies on.

Its accuracy on synthetic series and its speed: tests/test_changepoint_accuracy.py.
"""
import itertools
import math
import os
import sys
import unittest

import numpy as np
from scipy import stats as sps

from regress.stats import changepoint as cp
from regress.stats import ttests as tt

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

FLOOR = 0.02   # the comparator's GPU floor (decide.DEFAULT_FLOORS)
NOISE = 0.01   # 1% log-normal run-to-run noise
STEP = math.log(1.05)


def points(logx, missing=()):
    """One dict per run, as history.py gives them; runs in `missing` failed."""
    return [{"median": None if i in missing else float(math.exp(v)),
             "revision": "rev%02d" % i, "date": "2025-01-%02d" % (i % 28 + 1)}
            for i, v in enumerate(logx)]


def brute_q(x, tau, kappa):
    X, Y = x[:tau], x[tau:kappa]
    n, m = len(X), len(Y)
    cross = sum(abs(a - b) for a in X for b in Y)
    wx = sum(abs(X[i] - X[k]) for i in range(n) for k in range(i + 1, n))
    wy = sum(abs(Y[j] - Y[k]) for j in range(m) for k in range(j + 1, m))
    e = 2.0 * cross / (n * m)
    if n > 1:
        e -= wx / (n * (n - 1) / 2.0)
    if m > 1:
        e -= wy / (m * (m - 1) / 2.0)
    return n * m / (n + m) * e


def report(what, value):
    print("changepoint: %s: %s" % (what, value), file=sys.stderr)


class EnergyStatistic(unittest.TestCase):
    def test_exact_numbers(self):
        # x = 0 0 1 1: tau = 2 separates the two values: E = 2, Q = 4/4 x 2 = 2.
        # tau = 1: cross 2 -> 2/3 x 2 = 4/3; Y = 0 1 1 has pairs 1, 1, 0 -> 2/3;
        # E = 2/3, Q = 3/4 x 2/3 = 1/2 (tau = 3 by symmetry).
        q = cp.energy_q([0.0, 0.0, 1.0, 1.0])
        self.assertTrue(math.isnan(q[0]))
        np.testing.assert_allclose(q[1:], [0.5, 2.0, 0.5], rtol=0, atol=1e-15)
        # The same from the (tau, kappa) matrix; kappa = 3: X = 0 0, Y = 1:
        # E = 2/2 x 2 - 0 - 0 = 2, Q = 2/3 x 2 = 4/3.
        Q = cp.energy_q_matrix([0.0, 0.0, 1.0, 1.0])
        self.assertAlmostEqual(Q[2, 4], 2.0, places=15)
        self.assertAlmostEqual(Q[2, 3], 4.0 / 3.0, places=15)
        self.assertTrue(math.isnan(Q[0, 2]) and math.isnan(Q[3, 2]))

    def test_against_double_loop(self):
        rng = np.random.default_rng(11)
        for n in (2, 3, 5, 9, 14):
            x = rng.normal(0, 1, n) + np.where(np.arange(n) >= n // 2, 1.5, 0.0)
            q = cp.energy_q(x)
            for tau in range(1, n):
                self.assertAlmostEqual(q[tau], brute_q(list(x), tau, n), delta=1e-12 * max(1, abs(q[tau])))
            Q = cp.energy_q_matrix(x)
            for tau, kappa in itertools.combinations(range(1, n + 1), 2):
                self.assertAlmostEqual(Q[tau, kappa], brute_q(list(x), tau, kappa),
                                       delta=1e-12 * max(1, abs(Q[tau, kappa])))

    def test_ttests_match_scipy(self):
        rng = np.random.default_rng(12)
        for n1, n2 in ((3, 3), (2, 9), (10, 3), (25, 4)):
            a, b = rng.normal(0, 1, n1), rng.normal(0.7, 2, n2)
            for ev in (True, False):
                ref = sps.ttest_ind(a, b, equal_var=ev)
                t, p = tt.ttest(a, b, equal_var=ev)
                self.assertAlmostEqual(t, -ref.statistic, places=10)
                self.assertAlmostEqual(p, ref.pvalue, places=12)
        # No variance: equal means are no change, different ones are certain.
        self.assertEqual(tt.ttest([1, 1, 1], [1, 1])[1], 1.0)
        self.assertEqual(tt.ttest([1, 1, 1], [2, 2])[1], 0.0)

    def test_side_median_resists_one_outlier(self):
        self.assertEqual(tt.side_median([0.0, 20.0], other=0.0), 0.0)
        self.assertEqual(tt.side_median([0.0, 20.0], other=30.0), 20.0)
        self.assertEqual(tt.side_median([20.0, 1.0, 2.0], other=0.0), 2.0)


class Detection(unittest.TestCase):
    def test_step_found_at_its_place(self):
        rng = np.random.default_rng(21)
        x = rng.normal(0, NOISE, 40)
        x[17:] += math.log(1.10)
        self.assertEqual(cp.e_divisive(x), [17])
        ch = cp.detect(points(x), FLOOR)
        self.assertEqual(len(ch), 1)
        c = ch[0]
        self.assertEqual((c["index"], c["revision_before"], c["revision_after"], c["date"]),
                         (17, "rev16", "rev17", "2025-01-18"))
        self.assertAlmostEqual(c["step"], 0.10, delta=0.01)
        self.assertEqual((c["direction"], c["status"]), ("slower", "confirmed"))
        self.assertLess(c["p"], 1e-6)
        self.assertAlmostEqual(c["threshold"], max(FLOOR, 2.0 * c["noise"]))
        self.assertEqual(cp.gating(ch), ch)
        # Accepted with a later baseline: reported, no longer gating.
        self.assertEqual(cp.gating([dict(c, accepted=True) for c in ch]), [])
        # Faster: reported, never gating.
        ch = cp.detect(points(-x), FLOOR)
        self.assertEqual([(c["index"], c["direction"]) for c in ch], [(17, "faster")])
        self.assertAlmostEqual(ch[0]["step"], 1 / 1.10 - 1, delta=0.01)
        self.assertEqual(cp.gating(ch), [])

    def test_regression_fixed_later_and_several_steps(self):
        rng = np.random.default_rng(22)
        x = rng.normal(0, NOISE, 60)
        x[30:35] += STEP  # a regression fixed 5 nights later
        ch = cp.detect(points(x), FLOOR)
        self.assertEqual([c["direction"] for c in ch], ["slower", "faster"])
        self.assertLessEqual(abs(ch[0]["index"] - 30), 1)
        self.assertLessEqual(abs(ch[1]["index"] - 35), 1)
        x = rng.normal(0, NOISE, 200)
        for at, s in ((40, 0.08), (90, -0.05), (150, 0.12)):
            x[at:] += math.log(1 + s)
        ch = cp.detect(points(x), FLOOR)
        self.assertEqual([c["index"] for c in ch], [40, 90, 150])
        for c, s in zip(ch, (0.08, -0.05, 0.12)):
            self.assertAlmostEqual(c["step"], s, delta=0.01)
        # Hunter's sliding windows find the same changes.
        self.assertEqual([c["index"] for c in cp.detect(points(x), FLOOR, window=50)], [40, 90, 150])

    def test_step_sized_at_its_jump(self):
        # +14.6% at run 15, then +6.7% more at run 20 (22.3% in all): under
        # the CPU floor of 10%, the second step is no change of its own, and
        # the first is sized by the runs at its jump (the 5 runs 15..19 after
        # it), not by its whole segment after it, mostly at +22.3%. A
        # difference of two medians of 5 runs of 1% noise has an sd of 0.8
        # points, so the size is checked over 20 series: each within 2.5
        # points, half within 1, on average within 0.5 (the segments'
        # medians: +22.3%). Then the same with an outlier among the 5 runs
        # after the jump.
        for outlier in (False, True):
            steps = []
            for seed in range(20):
                rng = np.random.default_rng(seed)
                x = rng.normal(0, NOISE, 45)
                x[15:] += math.log(1.146)
                x[20:] += math.log(1.223 / 1.146)
                if outlier:
                    x[17] += math.log(2.0)
                ch = cp.detect(points(x), 0.10)
                self.assertEqual([(c["index"], c["direction"]) for c in ch], [(15, "slower")])
                self.assertLess(ch[0]["p"], 1e-12)
                steps.append(ch[0]["step"])
            err = np.abs(np.array(steps) - 0.146)
            report("+14.6%% jump, +6.7%% 5 runs on%s, 20 series" % (" (an outlier after the jump)" if outlier else ""),
                   "step %.1f%% on average, |error| median %.1f, max %.1f points"
                   % (100 * np.mean(steps), 100 * np.median(err), 100 * err.max()))
            self.assertLess(err.max(), 0.025)
            self.assertLess(np.median(err), 0.01)
            self.assertLess(abs(np.mean(steps) - 0.146), 0.005)

    def test_below_threshold_not_reported(self):
        # 3% in 1% noise is significant, but under a 5% floor (CPU, paired).
        rng = np.random.default_rng(23)
        x = rng.normal(0, NOISE, 40)
        x[20:] += math.log(1.03)
        self.assertEqual([c["index"] for c in cp.detect(points(x), FLOOR)], [20])
        self.assertEqual(cp.detect(points(x), 0.05), [])

    # ------------------------------------------------------ edge cases

    def test_short_series(self):
        for n in range(0, 4):
            pts = points([0.0] * n)
            self.assertEqual(cp.detect(pts, FLOOR), [])
            self.assertEqual(cp.e_divisive(np.zeros(n)), [])
            self.assertEqual(cp.e_divisive(np.arange(n, dtype=float), min_size=1), [])
        self.assertEqual(cp.detect(points([0.0, 1.0]), FLOOR), [])
        self.assertEqual(cp.energy_q([]).size, 0)

    def test_constant_series(self):
        self.assertEqual(cp.detect(points([math.log(0.25)] * 30), FLOOR), [])
        self.assertEqual(cp.e_divisive(np.full(30, 3.0)), [])
        # No noise: a step is certain, and the threshold is the floor.
        x = [0.0] * 10 + [math.log(1.03)] * 10
        ch = cp.detect(points(x), FLOOR)
        self.assertEqual(len(ch), 1)
        self.assertEqual((ch[0]["index"], ch[0]["p"], ch[0]["threshold"]), (10, 0.0, FLOOR))
        self.assertAlmostEqual(ch[0]["step"], 0.03, places=12)
        self.assertEqual(cp.detect(points([0.0] * 10 + [math.log(1.01)] * 10), FLOOR), [])
        # A spike in a constant series is no change either.
        x = [0.0] * 30
        x[12] = math.log(1.2)
        self.assertEqual(cp.detect(points(x), FLOOR), [])

    def test_missing_runs_skipped_and_commit_range(self):
        rng = np.random.default_rng(41)
        x = rng.normal(0, NOISE, 30)
        x[15:] += math.log(1.10)
        # Run 14 (the last before the step) and 15 (the first after) failed:
        # the change is first measured at 16, and the range starts at 13.
        pts = points(x, missing={3, 14, 15})
        ch = cp.detect(pts, FLOOR)
        self.assertEqual(len(ch), 1)
        c = ch[0]
        self.assertEqual((c["index"], c["revision_before"], c["revision_after"], c["date"]),
                         (16, "rev13", "rev16", "2025-01-17"))
        # Failed runs do not confirm a change: 2 measured runs after it.
        pts = points(x[:19], missing={17})
        ch = cp.detect(pts, FLOOR)
        self.assertEqual([(c["index"], c["runs_after"], c["status"]) for c in ch], [(15, 3, "confirmed")])
        pts = points(x[:19], missing={16, 17})
        ch = cp.detect(pts, FLOOR)
        self.assertEqual([(c["index"], c["runs_after"], c["status"]) for c in ch], [(15, 2, "tentative")])
        self.assertEqual(cp.gating(ch), [])
        # Only errors: nothing to say.
        self.assertEqual(cp.detect(points(x, missing=set(range(30))), FLOOR), [])
        # Times stand in for an absent median.
        pts = [{"times": [math.exp(v)] * 3, "revision": str(i), "date": None} for i, v in enumerate(x)]
        self.assertEqual([c["index"] for c in cp.detect(pts, FLOOR)], [15])


class Outliers(unittest.TestCase):
    """One disturbed run, x0.5 .. x2, near a step of 10% or more with 5 or
    more runs on each side: the step is found at its place, sized within a
    point, and the outlier is no change of its own."""

    def assert_one_change(self, x, at, step, max_p=1e-6):
        self.assertEqual(cp.e_divisive(x, cp.MIN_SIZE), [at])
        ch = cp.detect(points(x), FLOOR)
        self.assertEqual([(c["index"], c["direction"], c["status"]) for c in ch], [(at, "slower", "confirmed")])
        self.assertAlmostEqual(ch[0]["step"], step, delta=0.01)
        self.assertLess(ch[0]["p"], max_p)

    def series(self, seed, n, at, step):
        """n runs of 1% log-normal noise, values 1 x (1 + N(0, 0.01)), `step` slower from run `at` on."""
        rng = np.random.default_rng(seed)
        x = np.log1p(rng.normal(0, NOISE, n))
        x[at:] += math.log(1 + step)
        return x

    def test_outlier_at_the_start(self):
        # The reported case: one disturbed early run, 4 clean runs, then 10
        # runs 26% slower. A plain t-test between runs 0..4 and the rest sees
        # the outlier's variance and finds nothing.
        for f in (1.6, 0.6, 2.0, 0.5):
            for seed in (100, 101, 102):
                with self.subTest(factor=f, seed=seed):
                    x = self.series(seed, 15, 5, 0.26)
                    x[0] += math.log(f)
                    self.assert_one_change(x, 5, 0.26)
                    # Without the disturbed run: the same change, one run earlier.
                    ch = cp.detect(points(x[1:]), FLOOR)
                    self.assertEqual([c["index"] for c in ch], [4])

    def test_outlier_at_the_end(self):
        for f in (2.0, 0.5, 1.15):
            with self.subTest(factor=f):
                x = self.series(51, 20, 12, 0.10)
                x[-1] += math.log(f)
                self.assert_one_change(x, 12, 0.10)

    def test_outlier_in_the_middle(self):
        # Before the step, after it, and next to it on either side. The first
        # run after the step disturbed: the change is placed at the first
        # undisturbed one (the disturbed run's own level is unknown).
        for f in (2.0, 0.5):
            for o, at in ((5, 12), (11, 12), (12, 13), (17, 12)):
                with self.subTest(factor=f, outlier=o):
                    x = self.series(52, 24, 12, 0.10)
                    x[o] += math.log(f)
                    self.assert_one_change(x, at, 0.10)

    def test_outlier_alone_is_no_change(self):
        for f in (2.0, 0.5, 1.2, 0.85):
            for o in (0, 1, 9, 18, 19):
                with self.subTest(factor=f, outlier=o):
                    x = self.series(53, 20, 20, 0.0)
                    x[o] += math.log(f)
                    self.assertEqual(cp.e_divisive(x, cp.MIN_SIZE), [])
                    self.assertEqual(cp.detect(points(x), FLOOR), [])
                    # Nor on the night it arrives, as the newest run.
                    self.assertEqual(cp.detect(points(x[:o + 1]), FLOOR), [])

    def test_noise_blind_to_steps_and_outliers(self):
        rng = np.random.default_rng(54)
        x = rng.normal(0, NOISE, 200)
        clean = cp.diff_noise(x)
        self.assertAlmostEqual(clean, NOISE, delta=0.15 * NOISE)
        x[60:] += math.log(1.5)
        x[120:] -= math.log(1.3)
        x[[10, 90, 150]] += math.log(2.0)
        self.assertAlmostEqual(cp.diff_noise(x), clean, delta=0.1 * clean)
        # The residuals about the whole series' median see the steps.
        self.assertGreater(cp.stats.robust_sd(x - np.median(x), axis=0), 10 * NOISE)
        self.assertTrue(math.isnan(cp.diff_noise([0.0, 1.0, 2.0])))
        # Coarse timers: most differences 0, the noise is not.
        q = np.array([0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0], dtype=float) * 0.01
        self.assertGreater(cp.diff_noise(q), 0.001)

    def test_isolated_outliers(self):
        x = np.zeros(12)
        x[6:] = 0.10
        lim = 0.01
        self.assertFalse(cp.isolated_outliers(x, lim / 4, 4).any())  # a step is none
        for o, v in ((0, 0.5), (3, -0.5), (11, -0.4)):
            y = x.copy()
            y[o] = v
            self.assertEqual(list(np.flatnonzero(cp.isolated_outliers(y, lim / 4, 4))), [o])
        # The outlier undoes the step on the run after it: the run between
        # the step and the outlier is no outlier (both neighbours of each
        # are far, on one side: the most isolated goes first).
        y = x.copy()
        y[7] = -0.5
        self.assertEqual(list(np.flatnonzero(cp.isolated_outliers(y, lim / 4, 4))), [7])
        # Two runs out together are an excursion, not isolated outliers.
        y = x.copy()
        y[[2, 3]] = 0.5
        self.assertFalse(cp.isolated_outliers(y, lim / 4, 4).any())
        self.assertFalse(cp.isolated_outliers(y, float("nan"), 4).any())

    def test_robust_ttest_leaves_out_gross_and_tames_moderate_outliers(self):
        left = np.array([0.0, 0.01, -0.01, 0.005, -0.005])
        right = left + 0.05
        p0 = tt.robust_ttest(left, right, 0.01)
        self.assertAlmostEqual(p0, tt.ttest(left, right)[1], places=15)
        # Beyond 8 x noise: left out, p as without it.
        gross = np.append(left, 0.5)
        self.assertAlmostEqual(tt.robust_ttest(gross, right, 0.01), p0, places=15)
        # 5 x noise: kept, pulled in to 4 x noise from the side's median.
        left = left[1:]
        moderate = np.append(left, 0.055)
        self.assertEqual(np.median(moderate), 0.005)
        p = tt.robust_ttest(moderate, right, 0.01)
        self.assertAlmostEqual(p, tt.ttest(np.append(left, 0.045), right)[1], places=15)
        self.assertGreater(p, tt.ttest(left, right)[1])
        self.assertLess(p, tt.ttest(moderate, right)[1])

    def test_outlier_split_off_when_the_best_split_fails(self):
        # 11 runs: an outlier of +15.5% at the start, a 10% step at run 5.
        # The noise comes out at 1.8% from so few runs, so the outlier is not
        # gross (7 x noise) and the robust test between runs 0..4 and 5..10
        # keeps it, pulled in: p 7e-4, not significant. The search splits it
        # off and finds the step.
        x = np.array([14.4, -0.3, 1.6, 0.5, -0.7, 10.0, 8.4, 10.5, 9.3, 10.2, 7.7]) / 100
        noise = cp.diff_noise(x)
        self.assertFalse(cp.isolated_outliers(x, noise).any())
        self.assertGreater(tt.robust_ttest(x[:5], x[5:], noise), cp.MAX_PVALUE)
        self.assertEqual(list(np.flatnonzero(cp.isolated_outliers(x, noise, cp.OUTLIER_CUT))), [0])
        self.assert_one_change(x, 5, 0.10, max_p=1e-5)


if __name__ == "__main__":
    unittest.main()
