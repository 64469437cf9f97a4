#!/usr/bin/env python3
"""Tests of the alerts (regress/store/alerts.py, ci/alerts): raised by ci/trends
from confirmed changes, grouped by culprit or run, triaged with who and why,
detected fixed when the series returns, an invalid change never raised
again; the store under four processes at once; bad input in one line."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from regress.store import alerts

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
try:  # the synthetic nightly history: beside this file when run as a script
    import test_trends as tt
except ImportError:
    from tests import test_trends as tt

CLI = os.path.join(ROOT, "ci", "alerts")


def change(name, ordinal, step=0.08, direction="slower", culprit=None, segment="s1"):
    return {"name": name, "direction": direction, "step": step, "threshold": 0.02, "ordinal": ordinal,
            "run_id": ordinal + 1, "segment": segment, "revision_before": "r%d" % ordinal,
            "revision_after": "r%d" % (ordinal + 1), "date": "2026-11-%02dT02:00:00+00:00" % (ordinal + 1),
            "culprit": {"commit": culprit, "subject": "the culprit"} if culprit else None}


def never(_row):
    return False, "not back"


def cli(*args, env=None):
    return subprocess.run([CLI] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, **(env or {})))


class Store(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="alerts-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_grouping_rerun_and_a_change_that_moved_a_run(self):
        with alerts.Alerts(self.dir) as store:
            # A and B changed at one run, C at another; D and E have one culprit.
            cs = [change("A", 6), change("B", 6, step=0.2), change("C", 9, direction="faster", step=-0.1),
                  change("D", 12, culprit="c0ffee"), change("E", 14, culprit="c0ffee")]
            r = store.sync("m", cs, never, when="2026-11-27T00:00:00+00:00")
            self.assertEqual(r, {"raised": [1, 2, 3], "closed": [], "suppressed": []})
            self.assertEqual([c["alert"] for c in cs], [{"id": 1, "state": "untriaged"}] * 2 + [
                {"id": 2, "state": "untriaged"}] + [{"id": 3, "state": "untriaged"}] * 2)
            a = store.alert(1)
            self.assertEqual([b["name"] for b in a["benchmarks"]], ["B", "A"])   # worst first
            self.assertEqual(a["worst_step"], 0.2)
            self.assertEqual(store.alert(3)["culprit"], "c0ffee")
            # Worst first: open regressions by size, then the improvement.
            self.assertEqual([x["id"] for x in store.alerts("m")], [1, 3, 2])
            # Rerun: nothing new. The next night's detector places A one run later: the same alert.
            again = [change("A", 7), change("B", 6, step=0.2), change("C", 9, direction="faster", step=-0.1),
                     change("D", 12, culprit="c0ffee"), change("E", 14, culprit="c0ffee")]
            self.assertEqual(store.sync("m", again, never)["raised"], [])
            self.assertEqual(store.alert(1)["benchmarks"][1]["ordinal"], 7)
            # Another machine has its own alerts.
            self.assertEqual(store.sync("other", [change("A", 6)], never)["raised"], [4])
            self.assertEqual(len(store.alerts("m")), 3)

    def test_triage_invalid_is_not_raised_again_and_detected_fixed(self):
        with alerts.Alerts(self.dir) as store:
            store.sync("m", [change("A", 6), change("B", 10)], never)
            self.assertEqual(store.triage(1, "invalid", who="ana", why="a noisy neighbour",
                                          when="2026-11-27T10:00:00+00:00"), "untriaged")
            # The same change, a run later: suppressed, still invalid, no new alert.
            cs = [change("A", 8), change("B", 10)]
            r = store.sync("m", cs, never)
            self.assertEqual((r["raised"], r["suppressed"]), ([], [1]))
            self.assertEqual(cs[0]["alert"], {"id": 1, "state": "invalid"})
            events = store.alert(1)["events"]
            self.assertEqual([(e["who"], e["state_from"], e["state_to"], e["why"]) for e in events],
                             [("parbench", None, "untriaged", "confirmed change of A"),
                              ("ana", "untriaged", "invalid", "a noisy neighbour")])
            # B's series returns: detected fixed, with the figures that say so.
            r = store.sync("m", cs, lambda row: (row["name"] == "B", "back"))
            self.assertEqual(r["closed"], [2])
            self.assertEqual(store.alert(2)["state"], "detected_fixed")
            self.assertEqual(store.alert(2)["events"][-1]["why"], "B: back")
            # Closed alerts are not detected fixed again; reopening works.
            self.assertEqual(store.sync("m", cs, lambda row: (True, "back"))["closed"], [])
            store.triage(2, "untriaged", who="bo")
            self.assertEqual(store.alert(2)["state"], "untriaged")

    def test_recovery_in_exact_numbers(self):
        from regress.stats.series import measured
        pts = [{"run_id": i, "segment": "s", "median": m} for i, m in
               enumerate([1.0, 1.0, 1.0, 1.10, 1.10, 1.10, 1.01, 1.02, 1.0])]
        ordinal = {i: i for i in range(9)}
        row = {"segment": "s", "ordinal": 3, "threshold": 0.02}
        ok, why = alerts.recovery(pts, ordinal, row, measured)
        # The last 3 runs' median 1.01 against 1.0 before: +1.0% within 2%.
        self.assertTrue(ok)
        self.assertEqual(why, "the last 3 runs +1.0% from the level before the change (threshold 2.0%)")
        self.assertFalse(alerts.recovery(pts[:6], ordinal, row, measured)[0])   # still at the changed level
        self.assertEqual(alerts.recovery(pts[:5], ordinal, row, measured)[1], "too few runs since the change")
        self.assertFalse(alerts.recovery(pts, ordinal, dict(row, threshold=0.005), measured)[0])

    def test_bad_input_is_one_line(self):
        p = cli("--history", self.dir, "list")
        self.assertEqual((p.returncode, p.stderr.strip()),
                         (2, "alerts: %s holds no alerts yet (ci/trends raises them)" % self.dir))
        with alerts.Alerts(self.dir) as store:
            store.sync("m", [change("A", 6)], never)
        for args, text in ((["show", "7"], "no alert 7"), (["triage", "7", "fixed"], "no alert 7"),
                           (["triage", "1", "closed"], "invalid choice: 'closed'"),
                           (["triage", "1", "detected_fixed"], "invalid choice: 'detected_fixed'"),
                           (["list", "--state", "gone"], "invalid choice"),
                           (["--history", os.path.join(self.dir, "none"), "list"], "not a history directory")):
            full = args if args[0] == "--history" else ["--history", self.dir] + args
            p = cli(*full)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
        with alerts.Alerts(self.dir) as store:
            self.assertEqual(store.alert(1)["state"], "untriaged")   # nothing changed
        # A second writer that holds the lock past the timeout: one line, nothing written.
        con = sqlite3.connect(os.path.join(self.dir, alerts.FILE), isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        try:
            p = cli("--history", self.dir, "triage", "1", "acknowledged", env={"PARBENCH_LOCK_SECONDS": "0.3"})
        finally:
            con.execute("ROLLBACK")
            con.close()
        self.assertEqual(p.returncode, 2)
        self.assertIn("another command holds it; try again", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        p = cli("--history", self.dir, "triage", "1", "acknowledged", "--why", "on it", "--who", "cy")
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "alert #1: untriaged -> acknowledged"))
        p = cli("--history", self.dir, "show", "1")
        self.assertIn("cy: untriaged -> acknowledged (on it)", p.stdout)
        p = cli("--history", self.dir, "list", "--json")
        self.assertEqual([a["state"] for a in json.loads(p.stdout)], ["acknowledged"])

    def test_a_newer_schema_is_refused(self):
        with alerts.Alerts(self.dir):
            pass
        con = sqlite3.connect(os.path.join(self.dir, alerts.FILE))
        con.execute("UPDATE parbench_schema SET version = 99 WHERE component = 'alerts'")
        con.commit()
        con.close()
        p = cli("--history", self.dir, "list")
        self.assertEqual(p.returncode, 2)
        self.assertIn("schema version 99", p.stderr)

    def test_four_processes_triage_at_once(self):
        with alerts.Alerts(self.dir) as store:
            store.sync("m", [change("B%d" % i, 10 * i) for i in range(4)], never)
        code = ("import sys\nfrom regress.store import alerts\n"
                "with alerts.Alerts(sys.argv[1]) as s:\n"
                "    for k in range(25):\n"
                "        s.triage(1 + k % 4, ('acknowledged', 'untriaged')[k % 2], who='p' + sys.argv[2])\n")
        env = dict(os.environ, PYTHONPATH=ROOT)
        procs = [subprocess.Popen([sys.executable, "-c", code, self.dir, str(i)], env=env,
                                  stderr=subprocess.PIPE, universal_newlines=True) for i in range(4)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        with alerts.Alerts(self.dir) as store:
            events = [e for a in store.alerts("m", alerts.STATES) for e in a["events"] if e["who"] != "parbench"]
        self.assertEqual(len(events), 100)   # none lost
        self.assertEqual(sorted({e["who"] for e in events}), ["p0", "p1", "p2", "p3"])


class EndToEnd(unittest.TestCase):
    """ci/trends raises the alert, the nightly stops failing on a triaged
    one, and a series that comes back closes its alert."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="alerts-e2e-")
        self.hist = os.path.join(self.dir, "hist")
        # 18 nights, no driver change; STEPPED is 8% slower from r7 to r12,
        # back from r13.
        self.docs = tt.nightly(np.random.default_rng(15), runs=18, driver_run=99)
        for d in self.docs[12:]:
            for e in d["benchmarks"]:
                if e["name"] == tt.STEPPED:
                    e["real_time"] /= 1.08
                    e["cpu_time"] /= 1.08

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def trends(self, n):
        tt.build_history(self.hist, self.docs[:n], self.dir)
        out = os.path.join(self.dir, "out-%d" % n)
        p = tt.run_tool("--history", self.hist, "--out", out)
        self.assertNotIn("Traceback", p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            doc = json.load(f)
        with open(os.path.join(out, "index.html")) as f:
            return p, doc, f.read()

    def test_raised_triaged_and_detected_fixed(self):
        p, doc, page = self.trends(12)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("alerts: 1 raised (#1)", p.stdout)
        self.assertEqual(doc["changes"][0]["alert"], {"id": 1, "state": "untriaged"})
        self.assertEqual(doc["alerts"][0]["benchmarks"], [tt.STEPPED])
        self.assertIn("id='alerts-table'", page)
        self.assertIn("(alert #1, untriaged)", page)
        # Acknowledged: still an open regression, still failing.
        self.assertEqual(cli("--history", self.hist, "triage", "1", "acknowledged", "--who", "ana").returncode, 0)
        self.assertEqual(self.trends(12)[0].returncode, 1)
        # Won't fix: the nightly passes; the page says so.
        self.assertEqual(cli("--history", self.hist, "triage", "1", "wontfix", "--who", "ana",
                             "--why", "the new tile is worth it").returncode, 0)
        p, doc, page = self.trends(12)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(">wontfix</td>", page)
        self.assertIn("the new tile is worth it", page)
        # Reopened, then the series comes back: detected fixed, nothing fails.
        self.assertEqual(cli("--history", self.hist, "triage", "1", "untriaged").returncode, 0)
        p, doc, page = self.trends(18)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("1 detected fixed (#1)", p.stdout)
        states = {a["id"]: a["state"] for a in doc["alerts"]}
        self.assertEqual(states[1], "detected_fixed")
        show = cli("--history", self.hist, "show", "1").stdout
        self.assertIn("parbench: untriaged -> detected_fixed", show)
        self.assertIn("from the level before the change", show)

    def test_invalid_is_not_raised_again(self):
        p, doc, _ = self.trends(12)
        self.assertEqual(cli("--history", self.hist, "triage", "1", "invalid", "--why", "bad night").returncode, 0)
        # One more night at the stepped level: the same change, not raised again.
        self.docs[12] = tt.nightly(np.random.default_rng(15), runs=13, driver_run=99)[12]
        p, doc, _ = self.trends(13)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("raised", p.stdout)
        self.assertEqual([a["state"] for a in doc["alerts"]], ["invalid"])


if __name__ == "__main__":
    unittest.main()
