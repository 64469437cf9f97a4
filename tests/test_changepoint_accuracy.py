#!/usr/bin/env python3
"""Accuracy and speed of the change-point detector (regress/stats/changepoint.py;
the unit tests are tests/test_changepoint.py).

Its accuracy on synthetic nightly series (log-normal noise of 1%, floor 2%,
fixed seeds), each printing the measured rate to stderr:
  - no step: at most 1 change point per 100 series x 30 nights, both on the
    whole 30 nights and checked every night as a nightly job does (a series
    counts when any night shows it a confirmed change);
  - a 5% step at a random night between 8 and 22, the nights arriving one by
    one: by 3 nights after the step, "confirmed" in >= 90% of series and
    located within +-1 run in >= 80%;
  - a one-night +20% spike: no change point in >= 99% of series;
  - one outlier (a run x0.5 .. x0.91 or x1.1 .. x2) at the start, in the
    middle or at the end of a series with a 10% or 26% step, 5 to 15 runs on
    each side: the step found (slower, within +-1 run) in >= 95% of series
    per case; without a step: a change in <= 0.5% of series per case;
  - 500 series x 200 runs in under 30 s on the 2-core machine (asserted
    under 60 s for CI slack).
"""
import math
import time
import unittest

import numpy as np

from regress.stats import changepoint as cp
from test_changepoint import FLOOR, NOISE, STEP, points, report


class Accuracy(unittest.TestCase):
    def test_no_step_at_most_1_per_100_series(self):
        # The rate is measured on 1000 series (10 x the target's 100): at the
        # ~0.4 per 100 measured, any one block of 100 has 2 or more about 6%
        # of the time, so a single block would test the seed, not the rate.
        rng = np.random.default_rng(31)
        counts = [len(cp.detect(points(rng.normal(0, NOISE, 30)), FLOOR)) for _ in range(1000)]
        blocks = [sum(counts[i:i + 100]) for i in range(0, 1000, 100)]
        report("no step, 1000 series x 30 nights", "%d change points (%.2f per 100 series; per block of 100: %s)"
               % (sum(counts), sum(counts) / 10.0, " ".join(map(str, blocks))))
        self.assertLessEqual(sum(counts), 10)
        self.assertLessEqual(max(blocks), 2)

    def test_no_step_checked_every_night_at_most_1_per_100_series(self):
        # What a nightly job sees: the detector runs again on every night's
        # history (nights 8 to 30), and a confirmed change on any one night
        # fails that night. A series counts once however many nights show it.
        rng = np.random.default_rng(35)
        series = 2000
        ever = 0
        for _ in range(series):
            x = rng.normal(0, NOISE, 30)
            ever += any(c["status"] == "confirmed" for k in range(8, 31) for c in cp.detect(points(x[:k]), FLOOR))
        report("no step, %d series, checked each night 8..30" % series,
               "%d series (%.2f per 100) ever with a confirmed change" % (ever, 100.0 * ever / series))
        self.assertLessEqual(ever, series // 100)  # 0.70 per 100 here; 0.43 on the module's 3000

    def test_5_percent_step_confirmed_within_3_nights(self):
        rng = np.random.default_rng(32)
        series = 200
        confirmed = located = tentative = 0
        for _ in range(series):
            at = int(rng.integers(8, 23))
            x = rng.normal(0, NOISE, 30)
            x[at:] += STEP
            for k in range(at + 1, at + 4):  # the nights after the step arrive
                ch = cp.detect(points(x[:k]), FLOOR)
                for c in ch:  # confirmed exactly when 3 runs are in
                    self.assertEqual(c["runs_after"], k - c["index"])
                    self.assertEqual(c["status"], "confirmed" if c["runs_after"] >= 3 else "tentative")
                if k == at + 2:
                    tentative += any(abs(c["index"] - at) <= 1 for c in ch)
                if k < at + 3:
                    continue
                conf = [c for c in ch if c["status"] == "confirmed" and c["direction"] == "slower"]
                confirmed += bool(conf)
                located += any(abs(c["index"] - at) <= 1 for c in conf)
        report("5%% step in 1%% noise, %d series" % series,
               "3 nights after: confirmed %.1f%%, within +-1 run %.1f%%; 2 nights after: seen (tentative) %.1f%%"
               % (100.0 * confirmed / series, 100.0 * located / series, 100.0 * tentative / series))
        self.assertGreaterEqual(confirmed, 0.90 * series)
        self.assertGreaterEqual(located, 0.80 * series)

    def test_one_night_spike_is_no_change(self):
        rng = np.random.default_rng(33)
        series = 300
        whole = 0
        for _ in range(series):
            x = rng.normal(0, NOISE, 30)
            x[int(rng.integers(0, 30))] += math.log(1.20)
            whole += bool(cp.detect(points(x), FLOOR))
        # The spike as it arrives: every night from it to the 30th. The spike
        # is set aside, so the rest of the series is judged as a series
        # without it: false changes elsewhere come at the no-step rate (about
        # 0.5 per 100 series), none at the spike.
        arriving = at_spike = 0
        nightly = 1000
        for _ in range(nightly):
            x = rng.normal(0, NOISE, 30)
            at = int(rng.integers(10, 30))
            x[at] += math.log(1.20)
            found = [c["index"] for k in range(at + 1, 31) for c in cp.detect(points(x[:k]), FLOOR)]
            arriving += bool(found)
            at_spike += any(abs(i - at) <= 1 for i in found)
        report("+20%% one-night spike, %d series x 30 nights" % series,
               "%.1f%% of series with a change point" % (100.0 * whole / series))
        report("+20%% one-night spike, %d series, each night from it on" % nightly,
               "%.1f%% ever with a change point, %.1f%% at the spike"
               % (100.0 * arriving / nightly, 100.0 * at_spike / nightly))
        self.assertLessEqual(whole, 0.01 * series)
        self.assertEqual(at_spike, 0)
        self.assertLessEqual(arriving, 0.01 * nightly)

    @staticmethod
    def outlier_series(rng, where, step):
        """5 to 15 runs, then 5 to 15 runs `step` slower (0: none), and one
        run out by x0.5 .. x0.91 or x1.1 .. x2 (log-uniform) at the start, the
        end or anywhere between: (log series, index of the step)."""
        before, after = int(rng.integers(5, 16)), int(rng.integers(5, 16))
        x = rng.normal(0, NOISE, before + after)
        x[before:] += math.log1p(step)
        o = {"start": 0, "end": x.size - 1, "middle": int(rng.integers(1, x.size - 1))}[where]
        x[o] += rng.choice([-1, 1]) * rng.uniform(math.log(1.1), math.log(2.0))
        return x, before

    def test_outlier_hides_no_step(self):
        series = 500
        for step in (0.10, 0.26):
            for where in ("start", "middle", "end"):
                rng = np.random.default_rng(36)
                found = elsewhere = 0
                for _ in range(series):
                    x, at = self.outlier_series(rng, where, step)
                    ch = cp.detect(points(x), FLOOR)
                    found += any(abs(c["index"] - at) <= 1 and c["direction"] == "slower" for c in ch)
                    elsewhere += any(abs(c["index"] - at) > 1 for c in ch)
                report("%d%% step, one outlier at the %s, %d series" % (round(100 * step), where, series),
                       "found %.1f%%, a change elsewhere %.1f%%" % (100.0 * found / series, 100.0 * elsewhere / series))
                self.assertGreaterEqual(found, 0.95 * series)
                self.assertLessEqual(elsewhere, 0.02 * series)

    def test_outlier_alone_is_no_change(self):
        series = 500
        for where in ("start", "middle", "end"):
            rng = np.random.default_rng(37)
            false = sum(bool(cp.detect(points(self.outlier_series(rng, where, 0.0)[0]), FLOOR))
                        for _ in range(series))
            report("no step, one outlier at the %s, %d series" % (where, series),
                   "%.1f%% with a change" % (100.0 * false / series))
            self.assertLessEqual(false, 0.005 * series)

    def test_speed_500_series_x_200_runs(self):
        rng = np.random.default_rng(34)
        X = rng.normal(0, NOISE, (500, 200))
        for row in X:
            for _ in range(int(rng.integers(0, 4))):
                row[int(rng.integers(5, 195)):] += rng.choice([-1, 1]) * rng.uniform(0.02, 0.2)
        P = [points(row) for row in X]
        t = time.perf_counter()
        found = sum(len(cp.detect(p, FLOOR)) for p in P)
        dt = time.perf_counter() - t
        report("500 series x 200 runs", "%.1f s (%d change points)" % (dt, found))
        self.assertLess(dt, 60.0)


if __name__ == "__main__":
    unittest.main()
