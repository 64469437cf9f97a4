#!/usr/bin/env python3
"""What a series can see (issue 68): the arithmetic of regress/stats/plan.py
with exact numbers, ci/history plan on a history, the comparator's "sees"
column and --delta's first look, and the plan's power against the
comparator's measured power on the committed replays (within 10 points)."""
import glob
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from scipy import stats

from regress.stats import plan
from test_compare_cpu import CPU_BENCH
from test_trends import build_history, nightly

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
Z95 = stats.norm.ppf(0.95)


class Arithmetic(unittest.TestCase):
    def test_detectable_and_rounds(self):
        # noise 1%, 16 rounds, floor 1%, alpha 0.01: se = sqrt(2) 1% / 4.
        se = math.sqrt(2) * 0.01 / 4
        expect = max(math.log1p(0.01) + Z95 * se, (stats.norm.ppf(1 - 0.005) + Z95) * se)
        self.assertAlmostEqual(plan.paired_detectable(0.01, 16, 0.01, 0.01), math.expm1(expect), places=15)
        # The fewest rounds for 2% are the first n whose detectable change is at most 2%.
        n = plan.rounds_for(0.02, 0.01, 0.01, 0.01)
        self.assertLessEqual(plan.paired_detectable(0.01, n, 0.01, 0.01), 0.02)
        self.assertGreater(plan.paired_detectable(0.01, n - 1, 0.01, 0.01), 0.02)
        # Within the threshold (the floor, or one run's noise): never.
        self.assertIsNone(plan.rounds_for(0.02, 0.03, 0.01, 0.01))
        self.assertIsNone(plan.rounds_for(0.01, 0.001, 0.01, 0.01))
        # Power at the detectable change is the 95% it was asked for.
        d = plan.paired_detectable(0.01, 16, 0.01, 0.01)
        self.assertAlmostEqual(plan.paired_power(d, 0.01, 16, 0.01, 0.01), 0.95, places=9)
        self.assertEqual(plan.files_detectable(0.01, 0.10, 7.0), 0.10)
        self.assertAlmostEqual(plan.files_detectable(0.02, 0.02, 8.0, 1.5), math.expm1(0.24), places=15)

    def test_effective_noise(self):
        # A robust noise of 1% over 24 rounds whose 95% interval is +-3% wide in log time.
        z = stats.norm.ppf(0.975)
        row = {"noise": 0.01, "n_base": 24, "ci": [math.expm1(-0.03), math.expm1(0.03)]}
        self.assertAlmostEqual(plan.effective_noise(row, 0.95), 0.03 / z * math.sqrt(24) / math.sqrt(2), places=12)
        self.assertEqual(plan.effective_noise({"noise": 0.5, "n_base": 24, "ci": row["ci"]}, 0.95), 0.5)
        self.assertEqual(plan.effective_noise({"noise": 0.01}, 0.95), 0.01)


def floor_for_change(change, floor, same_floor):
    """The floor a change must clear to be found, as a suite's power
    (suite_power below) sees it: a change inside the SAME floor (the smallest
    change of interest: CPU 5%) can end SAME, its interval inside
    +-same_floor, before SLOWER is proven, as it does on noisy rounds; a
    change at or beyond it meets the paired floor. An approximation for the
    suite: a quiet benchmark proves such a change before its interval fits
    (SLOWER overrides SAME), so one series' plan keeps the paired floor."""
    return same_floor if change < same_floor else floor


def suite_power(change, noises, rounds, floors, alpha_look, family=None):
    """Each benchmark's chance of SLOWER when every one of `noises` changes
    by `change` and Benjamini-Hochberg corrects over `family` (default: all
    of them): BH rejects at p <= alpha_look x R / family, R the rejections,
    so the expected R is the fixed point of R = sum of the powers at that
    level, found from R = family down (Genovese and Wasserman's
    approximation). Where most benchmarks change, it is paired_power at
    alpha_look; where few can be found, it falls towards alpha_look / family,
    Bonferroni's."""
    family = family or len(noises)
    r = float(family)
    for _ in range(100):
        level = alpha_look * max(r, 1.0) / family
        powers = [plan.paired_power(change, n, rounds, f, level) for n, f in zip(noises, floors)]
        if sum(powers) >= r - 1e-9:
            break
        r = sum(powers)
    return powers


class MeasuredPower(unittest.TestCase):
    """The plan's power, from each committed A/A-scaled replay's own rows
    (their noise read from their intervals), against the share of
    benchmarks the comparator called SLOWER there. Held to 10 points where
    a replay has 50 benchmarks or more: with 16 the measured share alone is
    uncertain by about 11 points (a binomial's standard error at 75%)."""
    MIN_ROWS = 50

    def predicted_and_measured(self, path, scale):
        with gzip.open(path) as f:
            doc = json.load(f)
        seq = doc["sequential"]
        rows = doc["benchmarks"]
        # The SLOWER threshold's floor (paired), or SAME's (the row's
        # `floor`) for a change inside it, which can end SAME first.
        floors = doc["settings"].get("default_floors") or {}
        power = suite_power(scale - 1, [plan.effective_noise(r, seq["level_per_look"], True) for r in rows],
                            max(seq["looks"]),
                            [floor_for_change(scale - 1, floors.get("%s/paired" % r.get("device"), 0.01),
                                              r.get("floor") or 0.0) for r in rows],
                            seq["alpha_per_look"])
        return 100 * float(np.mean(power)), 100 * sum(r["verdict"] == "SLOWER" for r in rows) / len(rows), len(rows)

    def test_within_10_points(self):
        paths = sorted(glob.glob(os.path.join(ROOT, "results", "reference", "*", "compare-*-replay-x*.json.gz")))
        held = 0
        for path in paths:
            scale = float(re.search(r"-x(\d+\.\d+)\.json\.gz$", path).group(1))
            predicted, measured, n = self.predicted_and_measured(path, scale)
            print("%s x%.2f, %d benchmarks: plan %.1f%%, measured %.1f%%"
                  % (os.path.relpath(path, ROOT), scale, n, predicted, measured), file=sys.stderr)
            if n >= self.MIN_ROWS:
                held += 1
                with self.subTest(path=path):
                    self.assertLess(abs(predicted - measured), 10.0)
        self.assertGreaterEqual(held, 4)


class Commands(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def tool(self, *args):
        p = subprocess.run([os.path.join(ROOT, "ci", args[0])] + list(args[1:]), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, cwd=self.dir)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def test_history_plan(self):
        hist = os.path.join(self.dir, "hist")
        build_history(hist, nightly(np.random.default_rng(15)), self.dir)
        p = self.tool("history", "--history", hist, "plan", "--delta", "2%", "--json", "plan.json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("4 series: 2 see 2.00% within 24 rounds, 0 need more, 2 never", p.stdout)
        with open(os.path.join(self.dir, "plan.json")) as f:
            doc = json.load(f)
        rows = {r["name"].split("/")[1]: r for r in doc["benchmarks"]}
        # The prior's GPU GEMM noise (1.1%) needs 12 rounds for 2%; the CPU's (10.5%) never sees it.
        self.assertEqual((rows["cuBLAS"]["paired_noise"], rows["cuBLAS"]["rounds_for_delta"]), (0.011, 12))
        self.assertEqual(rows["cuBLAS"]["paired_noise_source"], "prior")
        self.assertIsNone(rows["Std"]["rounds_for_delta"])
        self.assertEqual(rows["cuBLAS"]["run_noise_source"], "history 12")
        for args, text in ((["plan", "--delta", "0"], "'0' is not a change above 0"),
                           (["plan", "--noise", "/nonexistent"], "--noise /nonexistent")):
            p = self.tool("history", "--history", hist, *args)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)

    def test_compare_sees_and_delta(self):
        bench = os.path.join(self.dir, "cpu_bench.py")
        with open(bench, "w") as f:
            f.write(CPU_BENCH)
        os.chmod(bench, 0o755)
        log = ["--", "--order-log=" + os.path.join(self.dir, "order.log")]
        # Without a measured paired noise (--noise) the first look stays at 4:
        # the prior is a run-to-run noise and would put it later than most
        # benchmarks need.
        p = self.tool("compare", "--run", bench, bench, "--duet", "off", "--delta", "40%", "--json", "v.json",
                      "--markdown", "v.md", *log)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("compare: --delta 40.00%: no measured paired noise (--noise A/A.json) to plan the first look "
                      "by: the usual looks", p.stderr)
        with open(os.path.join(self.dir, "v.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["sequential"]["looks"], [4, 6, 8, 12, 16, 24])
        self.assertTrue(all(b["detectable"] > 0 for b in doc["benchmarks"]))
        with open(os.path.join(self.dir, "v.md")) as f:
            self.assertIn("| threshold | sees |", f.read())
        # An A/A that measured 10.5% a run for both: 40% needs 4 rounds, the
        # usual first look; 20% needs 13: no look before 16, and alpha split
        # over two looks, not six.
        aa = os.path.join(self.dir, "aa.json")
        with open(aa, "w") as f:
            json.dump({"parbench_compare": 1, "mode": "paired", "benchmarks": [
                {"name": "GEMM/V%d/M:64/threads:1/manual_time" % i, "noise": 0.105} for i in (0, 1)]}, f)
        p = self.tool("compare", "--run", bench, bench, "--duet", "off", "--delta", "40%", "--noise", aa,
                      "--workdir", "w1", *log)
        self.assertIn("compare: --delta 40.00%: the selection needs 4 rounds at the fewest: looks at 4, 6, 8, 12, "
                      "16, 24", p.stderr)
        p = self.tool("compare", "--run", bench, bench, "--duet", "off", "--delta", "20%", "--noise", aa,
                      "--workdir", "w2", "--json", "v2.json", *log)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the selection needs 13 rounds at the fewest: looks at 16, 24", p.stderr)
        with open(os.path.join(self.dir, "v2.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["sequential"]["looks"], doc["sequential"]["alpha_per_look"]), ([16, 24], 0.025))
        p = self.tool("compare", "a.json", "b.json", "--delta", "2%")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--delta plans the looks of a sequential --run", p.stderr)


if __name__ == "__main__":
    unittest.main()
