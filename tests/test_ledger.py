#!/usr/bin/env python3
"""The ledger of what the gate caught and missed (issue 68): the counts and
medians of regress/store/ledger.py on hand-made alerts, the culprit's
naming kept as an event, and ci/alerts ledger on a history whose change a
backfill found (a missed change) and on an empty one."""
import json
import os
import subprocess
import unittest

from regress.store import ledger
import test_backfill
from test_bisect import FLAT

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def alert(aid, date, state, direction="slower", raised=None, culprit=None, named=None, run_id=1):
    events = [{"at": raised or date, "state_from": None, "state_to": "untriaged", "why": "confirmed"}]
    if named:
        events.append({"at": named, "state_from": "untriaged", "state_to": "untriaged",
                       "why": "culprit %s named by ci/bisect" % culprit[:12]})
    return {"id": aid, "date": date, "state": state, "direction": direction, "culprit": culprit, "events": events,
            "benchmarks": [{"name": "B%d" % aid, "run_id": run_id}]}


class Counts(unittest.TestCase):
    def test_months_states_medians(self):
        alerts = [alert(1, "2026-10-03T02:00:00+00:00", "fixed", raised="2026-10-04T02:00:00+00:00",
                        culprit="a" * 40, named="2026-10-06T02:00:00+00:00"),
                  alert(2, "2026-10-10T02:00:00+00:00", "untriaged", raised="2026-10-13T02:00:00+00:00"),
                  alert(3, "2026-10-20T02:00:00+00:00", "invalid", raised="2026-10-21T02:00:00+00:00"),
                  alert(4, "2026-11-02T02:00:00+00:00", "acknowledged", direction="faster",
                        raised="2026-11-02T14:00:00+00:00", culprit="b" * 40),
                  alert(5, "2026-09-01T02:00:00+00:00", "untriaged", run_id=7)]   # a backfilled run
        doc = ledger.ledger(alerts, backfilled_runs={7})
        months = {m["month"]: m for m in doc["months"]}
        self.assertEqual(sorted(months), ["2026-09", "2026-10", "2026-11"])
        oct_ = months["2026-10"]
        self.assertEqual((oct_["regressions"], oct_["improvements"], oct_["false_alarms"], oct_["missed"]),
                         ({"fixed": 1, "untriaged": 1}, {}, 1, 0))
        self.assertEqual(oct_["nights_to_alert"], 1.0)          # the median of 1, 3 and 1 nights
        self.assertEqual(oct_["nights_to_culprit"], 3.0)        # alert 1: named 3 nights after its change
        self.assertEqual((months["2026-09"]["missed"], months["2026-09"]["missed_alerts"]), (1, [5]))
        self.assertIsNone(months["2026-09"]["nights_to_alert"])   # a missed change has no time to alert
        self.assertEqual(months["2026-11"]["improvements"], {"acknowledged": 1})
        self.assertEqual(months["2026-11"]["nights_to_culprit"], 0.5)   # raised with its culprit
        t = doc["total"]
        self.assertEqual((t["false_alarms"], t["missed"], t["nights_to_alert"]), (1, 1, 1.0))
        self.assertEqual(ledger.ledger(alerts, set(), since="2026-10-15")["total"]["regressions"], {})
        md = ledger.markdown(doc, "m1")
        self.assertIn("| 2026-10 | 2 (1 fixed, 1 untriaged) | 0 | 1 | 0 | 1.0 | 3.0 |", md)
        self.assertIn("| **all** | 2 (1 fixed, 1 untriaged) | 1 (1 acknowledged) | 1 | 1 | 1.0 | 1.8 |", md)


class Command(test_backfill.Backfill):
    # The backfill's own tests run in test_backfill.py; this class borrows its project and history only.
    test_a_range_into_the_history_finds_its_step = test_every_commits_stop_and_resume = test_refusals = None

    def test_a_backfilled_change_is_a_missed_one(self):
        self.series([FLAT] * 6 + [dict(FLAT, A=1.3)] * 6)
        s = self.p.shas
        self.assertEqual(self.backfill("%s..%s" % (s[0], s[-1])).returncode, 0)
        trends = subprocess.run([os.path.join(ROOT, "ci", "trends"), "--history", self.hist, "--out",
                                 os.path.join(self.tmp, "t")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True)
        self.assertEqual(trends.returncode, 1, trends.stderr)
        p = subprocess.run([os.path.join(ROOT, "ci", "alerts"), "--history", self.hist, "ledger", "--json",
                            os.path.join(self.tmp, "l.json")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| 2026-10 | 0 | 0 | 0 | 1 | - | - |", p.stdout)
        with open(os.path.join(self.tmp, "l.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["total"]["missed"], doc["total"]["missed_alerts"]), (1, [1]))
        with open(os.path.join(self.tmp, "t", "index.html")) as f:
            self.assertIn("<h2 id='ledger'>What the gate caught and missed</h2>", f.read())

    def test_bad_input(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        for args, text in ((["--history", empty, "ledger"], "alerts: "),
                           (["--history", self.hist, "ledger", "--since", "last week"], "")):
            p = subprocess.run([os.path.join(ROOT, "ci", "alerts")] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertTrue(p.stderr.startswith("alerts: "), p.stderr)


if __name__ == "__main__":
    unittest.main()
