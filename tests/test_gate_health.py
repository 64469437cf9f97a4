#!/usr/bin/env python3
"""The gate's health (issue 68): the figures with exact numbers
(regress/stats/health.py), the ledgers they are read from
(regress/store/trends.py gate_health), their lines (health.health_lines),
and ci/trends writing the night's alert set and showing the section."""
import json
import os
import shutil
import tempfile
import unittest

import numpy as np

from regress.stats import health
from regress.store import qualification
from regress.store import trends as store
from test_trends import build_history, nightly, run_tool


class Figures(unittest.TestCase):
    def test_overlap(self):
        self.assertEqual(health.overlap({"a", "b"}, {"b", "c"}), (1 / 3, 1, 3))
        self.assertEqual(health.overlap(set(), set()), (None, 0, 0))
        self.assertEqual(health.overlap({"a"}, {"a"}), (1.0, 1, 1))

    def test_sign_test(self):
        self.assertEqual(health.sign_test(10, 0), 2 * 0.5 ** 10)
        self.assertEqual(health.sign_test(0, 10), 2 * 0.5 ** 10)
        self.assertEqual(health.sign_test(5, 5), 1.0)
        self.assertEqual(health.sign_test(0, 0), 1.0)
        # 8 of 10: P(X >= 8) = (45 + 10 + 1) / 1024, doubled.
        self.assertAlmostEqual(health.sign_test(8, 2), 2 * 56 / 1024, places=15)

    def test_rate_interval(self):
        # 0 in 100: the upper end solves (1 - p)^100 = 0.025.
        rate, low, high = health.rate_interval(0, 100)
        self.assertEqual((rate, low), (0.0, 0.0))
        self.assertAlmostEqual(high, 1 - 0.025 ** (1 / 100), places=12)
        # 1 in 10: the lower end solves 1 - (1 - p)^10 = 0.025.
        rate, low, high = health.rate_interval(1, 10)
        self.assertEqual(rate, 0.1)
        self.assertAlmostEqual(low, 1 - 0.975 ** (1 / 10), places=12)
        self.assertAlmostEqual(high, 0.445016, places=6)
        self.assertEqual(health.rate_interval(0, 0), (None, None, None))


class Ledgers(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, lines):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write("".join(json.dumps(x) + "\n" for x in lines))

    def test_health_from_the_ledgers(self):
        self.write(store.AA_LEDGER, [
            {"machine": "m1", "date": "2026-11-%02d" % d, "compared": 10, "false_alarms": 1 if d == 3 else 0,
             "counts": {"SAME": 9 if d == 3 else 10, "SLOWER": 1 if d == 3 else 0}, "up": 9, "down": 1}
            for d in range(1, 11)] + [{"machine": "m2", "date": "2026-11-01", "compared": 5, "false_alarms": 5,
                                      "counts": {"SLOWER": 5}}, "not an object"])
        self.write(store.ALERT_SETS, [
            {"machine": "m1", "run_id": 1, "date": "2026-11-01", "alerted": ["A slower", "B slower"]},
            {"machine": "m1", "run_id": 2, "date": "2026-11-02", "alerted": ["A slower"]},
            {"machine": "m1", "run_id": 3, "date": "2026-11-03", "alerted": ["C faster"]},
            # run 3 recorded again (ci/trends rerun): the last record counts
            {"machine": "m1", "run_id": 3, "date": "2026-11-03", "alerted": ["A slower", "C faster"]},
            {"machine": "m2", "run_id": 9, "date": "2026-11-03", "alerted": ["Z slower"]}])
        nights, totals = store.read_aa_ledger(self.dir, "m1")
        self.assertEqual((totals["nights"], totals["compared"], totals["false_alarms"], totals["unreadable"]),
                         (10, 100, 1, 1))
        h = store.gate_health(self.dir, "m1", nights, totals)
        self.assertEqual(h["overlap"]["last"], {"dates": ["2026-11-02", "2026-11-03"], "jaccard": 0.5, "common": 1,
                                                "union": 2})
        self.assertEqual((h["overlap"]["nights"], h["overlap"]["pairs"]), (3, 2))
        self.assertAlmostEqual(h["overlap"]["mean"], (0.5 + 0.5) / 2)
        # A night is one draw: 10 nights mostly up, 0 mostly down; one night mostly SLOWER.
        s = h["aa_sign"]
        self.assertEqual((s["nights"], s["up"], s["down"], s["slower"], s["faster"]), (10, 10, 0, 1, 0))
        self.assertEqual(s["p"], 2 * 0.5 ** 10)
        self.assertEqual(s["p_alarms"], 1.0)
        # The false-alarm rate: nights with an alarm (1 of 10), against alpha a night.
        r = h["false_alarm_rate"]
        self.assertEqual((r["nights_alarmed"], r["nights"], r["alarms"], r["compared"], r["rate"]),
                         (1, 10, 1, 100, 0.1))
        self.assertEqual((r["low"], r["high"]), health.rate_interval(1, 10)[1:])
        self.assertIsNone(h["qualification"])
        lines = health.health_lines(h)
        self.assertEqual([ok for ok, _ in lines], [True, True, False, True, True])
        self.assertEqual(lines[1][1], "A/A: 1 of 10 nights with a false alarm (1 alarms in 100 comparisons), 10.00% of "
                                      "nights (95% interval 0.25% to 44.50%; the comparator's alpha 5.00% a night)")
        self.assertIn("A/A sign test over the last 10 nights: 10 nights mostly up, 0 mostly down, p = 0.00195",
                      lines[2][1])
        self.assertIn("(one-sided: a bias of the machine or the order of the sides, not noise)", lines[2][1])
        self.assertEqual(lines[4][1], "alert sets of the last two nights overlap 0.50 (1 in common of 2); mean 0.50 "
                                      "over 2 pairs of nights")

    def test_the_qualification_of_the_machine(self):
        st = qualification.State(os.path.join(self.dir, qualification.FILE))
        ctx = {"cpu_model": "C", "num_cpus": 2}
        doc = {"benchmarks": [{"name": "A", "verdict": "SLOWER", "change": 0.04}, {"name": "B", "verdict": "SAME"}]}
        st.add(qualification.make_record(ctx, doc, "nightly A/A", when="2026-11-05T02:00:00Z"))
        machine = qualification.machine_of(ctx)
        h = store.gate_health(self.dir, machine, [], {"false_alarms": 0, "compared": 0})
        self.assertEqual(h["qualification"]["state"], "unqualified")
        ok, line = health.health_lines(h)[0]
        self.assertFalse(ok)
        self.assertTrue(line.startswith("qualification: unqualified since 2026-11-05: 1 of 2 benchmarks moved on "
                                        "identical code (nightly A/A: A SLOWER)"), line)


class TrendsShowsIt(unittest.TestCase):
    def test_the_night_is_recorded_and_the_page_has_the_section(self):
        tmp = tempfile.mkdtemp()
        try:
            hist = os.path.join(tmp, "hist")
            build_history(hist, nightly(np.random.default_rng(15)), tmp)
            out = os.path.join(tmp, "out")
            for _ in range(2):
                p = run_tool("--history", hist, "--out", out)
                self.assertEqual(p.returncode, 1, p.stderr)
            with open(os.path.join(out, "changes.json")) as f:
                doc = json.load(f)
            sets = store.read_alert_sets(hist, doc["machine"]["id"])
            self.assertEqual(len(sets), 1)   # one night, recorded twice: one set
            self.assertEqual(len(sets[0][1]), 1)
            self.assertEqual(doc["health"]["overlap"]["nights"], 1)
            self.assertIn("health: qualification: none recorded", p.stdout)
            with open(os.path.join(out, "index.html")) as f:
                page = f.read()
            self.assertIn("<h2 id='health'>Gate health</h2>", page)
            self.assertIn("<a href='#health'>Gate health</a>", page)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
