#!/usr/bin/env python3
"""One history for a team: the same store on SQLite (a directory) and on
PostgreSQL (a URL, a throwaway server the test starts on a local socket).
Both give the same runs, series and trends; four processes ingesting and
triaging at once lose nothing, duplicate nothing and never deadlock; a
server that goes away mid-ingest leaves nothing half-written, the ingest
retried or reported in one line."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

from regress.store import alerts
from regress.store import history

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
try:  # helpers beside this file when run as a script
    import pg_server
    import test_trends as tt
except ImportError:
    from tests import pg_server
    from tests import test_trends as tt

WHY_NOT = pg_server.available()
WORKER = """
import json, random, sys
from regress.store import alerts, history
spec, files, seed = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
random.Random(seed).shuffle(files)
added = 0
for i, path in enumerate(files):
    with history.open_history(spec, log=lambda line: None) as h:
        added += h.ingest(path)[1]
    if i % 3 == 0:
        with alerts.Alerts(spec) as a:
            a.triage(1, ("acknowledged", "untriaged")[i % 2], who="w%d" % seed)
print(added)
"""


class Backends(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="history-backends-")
        cls.server = None if WHY_NOT else pg_server.Server()
        docs = tt.nightly(np.random.default_rng(15), runs=36)
        cls.files = []
        for i, d in enumerate(docs):
            path = os.path.join(cls.work, "run-%02d.json" % i)
            with open(path, "w") as f:
                json.dump(d, f)
            cls.files.append(path)

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            cls.server.close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def stores(self, tag):
        """(name, spec) of an empty history on each backend."""
        out = [("sqlite", os.path.join(self.work, "dir-" + tag))]
        if self.server:
            out.append(("postgresql", self.server.database("h_" + tag)))
        return out

    def need_pg(self):
        if WHY_NOT:
            self.skipTest(WHY_NOT)

    def test_the_same_runs_series_and_trends(self):
        self.need_pg()
        got = {}
        for name, spec in self.stores("same"):
            with history.open_history(spec, create=True, log=lambda line: None) as h:
                ids = [h.ingest(p) for p in self.files[:12]]
                self.assertEqual(ids, [(i + 1, True) for i in range(12)])
                self.assertEqual(h.ingest(self.files[3]), (4, False))
                m = h.machines()[0]["machine"]
                runs = [{k: v for k, v in r.items() if k not in ("archived", "data")} for r in h.runs(m)]
                series = {n: h.series(n, m) for n in h.names(m)}
            out = os.path.join(self.work, "trends-" + name)
            p = tt.run_tool("--history", spec, "--out", out)
            self.assertEqual(p.returncode, 1, p.stderr)
            with open(os.path.join(out, "changes.json")) as f:
                changes = json.load(f)
            got[name] = (runs, series, changes["changes"], changes["summary"], changes["alerts"])
        self.assertEqual(got["sqlite"], got["postgresql"])
        self.assertEqual(got["sqlite"][2][0]["revision_after"], "r7")

    def test_trends_of_a_url_reads_the_nightlys_files_elsewhere(self):
        # The nightly keeps its bisection reports in a directory (--history),
        # the runs in the shared database (--store): trends reads both.
        self.need_pg()
        url = self.server.database("h_files")
        with history.open_history(url, create=True, log=lambda line: None) as h:
            for p in self.files[:12]:
                h.ingest(p)
        files = os.path.join(self.work, "nightly-files")
        os.makedirs(os.path.join(files, "bisect", "r6-r7"))
        with open(os.path.join(files, "bisect", "r6-r7", "report.json"), "w") as f:
            culprit = {"commit": "ab" * 20, "subject": "s", "benchmarks": [tt.STEPPED]}
            json.dump({"good": "r6", "bad": "r7", "culprits": [culprit]}, f)
        out = os.path.join(self.work, "trends-files")
        p = tt.run_tool("--history", url, "--files", files, "--out", out)
        self.assertEqual(p.returncode, 1, p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["changes"][0]["culprit"]["commit"], "ab" * 20)
        self.assertEqual(doc["alerts"][0]["culprit"], "ab" * 20)   # one culprit, one alert

    def test_four_processes_ingest_and_triage_at_once(self):
        for name, spec in self.stores("four"):
            with self.subTest(backend=name):
                with history.open_history(spec, create=True, log=lambda line: None) as h:
                    for p in self.files[:12]:
                        h.ingest(p)
                self.assertEqual(tt.run_tool("--history", spec, "--out", os.path.join(self.work, "t-" + name))
                                 .returncode, 1)   # alert #1 raised
                # Each process ingests all 24 later runs, in its own order: every
                # run is offered four times, at the same time.
                env = dict(os.environ, PYTHONPATH=ROOT)
                procs = [subprocess.Popen([sys.executable, "-c", WORKER, spec, json.dumps(self.files[12:]), str(i)],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          universal_newlines=True) for i in range(4)]
                added = 0
                for p in procs:
                    out, err = p.communicate(timeout=300)   # a deadlock would time out here
                    self.assertEqual(p.returncode, 0, err)
                    added += int(out.strip())
                self.assertEqual(added, 24)   # each run stored by exactly one process
                with history.open_history(spec, log=lambda line: None) as h:
                    runs = h.runs()
                    self.assertEqual(len(runs), 36)
                    self.assertEqual(len({r["content"] for r in runs}), 36)
                    self.assertEqual(sorted(r["id"] for r in runs), list(range(1, 37)))
                    counts = h._query("SELECT run_id, count(*) FROM entries GROUP BY run_id")
                    self.assertEqual(sorted(c[1] for c in counts), [4] * 36)   # every run whole
                with alerts.Alerts(spec) as a:
                    events = [e for e in a.alert(1)["events"] if e["who"].startswith("w")]
                self.assertEqual(len(events), 4 * 8)   # 8 triages a process, none lost

    def test_a_server_that_goes_away_mid_ingest(self):
        self.need_pg()
        url = self.server.database("h_gone")
        import psycopg2
        from regress.store import db as dbm
        admin = psycopg2.connect(url)
        admin.autocommit = True
        real = dbm.Db.executemany
        kills = []

        def dies(db, sql, rows):
            # The entries of a run are being written when the server drops the
            # connection (as a restart or a network cut does).
            if len(kills) < kills_wanted[0]:
                pid = db.con.get_backend_pid()
                admin.cursor().execute("SELECT pg_terminate_backend(%s)", (pid,))
                kills.append(pid)
            return real(db, sql, rows)

        dbm.Db.executemany = dies
        lines = []
        try:
            kills_wanted = [1]
            with history.open_history(url, create=True, log=lines.append) as h:
                self.assertEqual(h.ingest(self.files[0]), (1, True))   # retried once, stored once
            self.assertEqual(len(kills), 1)
            self.assertIn("went away mid-ingest", lines[0])
            self.assertIn("retrying", lines[0])
            # Gone twice: reported, nothing of it written.
            kills_wanted = [3]
            with history.open_history(url, log=lines.append) as h:
                with self.assertRaises(history.HistoryError) as e:
                    h.ingest(self.files[1])
            self.assertIn("not stored", str(e.exception))
            self.assertIn("ingest it again", str(e.exception))
            self.assertEqual(len(str(e.exception).splitlines()), 1)
        finally:
            dbm.Db.executemany = real
            admin.close()
        with history.open_history(url, log=lambda line: None) as h:
            self.assertEqual([r["id"] for r in h.runs()], [1])
            self.assertEqual(h._query("SELECT count(*) FROM entries")[0][0], 4)
            self.assertEqual(h._query("SELECT count(*) FROM runs WHERE data IS NULL")[0][0], 0)
            self.assertEqual(h.ingest(self.files[1]), (2, True))   # ingesting it again works

    def test_a_server_restarted_while_an_ingest_opens_the_history(self):
        """The restart drops the ingest inside its first transaction (it
        waits for the writers' lock, which the test holds): the ingest waits
        for the server and stores the run once. It failed the nightly's
        ingest step (tests/test_nightly_faults.py)."""
        self.need_pg()
        import psycopg2
        from regress.store import db as dbm
        url = self.server.database("h_restart")
        with history.open_history(url, create=True, log=lambda line: None) as h:
            h.ingest(self.files[0])
        admin = psycopg2.connect(url)
        admin.autocommit = True
        admin.cursor().execute("SELECT pg_advisory_lock(%s)", (dbm.LOCK_KEY,))
        p = subprocess.Popen([os.path.join(ROOT, "ci", "history"), "--history", url, "ingest", self.files[1]],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        cur = admin.cursor()
        for _ in range(3000):
            cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            if cur.fetchone()[0]:
                break
            time.sleep(0.01)
        self.server.stop("fast")
        self.server.restart()
        out, err = p.communicate(timeout=120)
        admin.close()
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("the server went away", err)
        self.assertIn("waiting up to 30 s for it to come back", err)
        self.assertIn("added as run 2", out)
        with history.open_history(url, log=lambda line: None) as h:
            self.assertEqual([r["id"] for r in h.runs()], [1, 2])

    def test_compare_reads_the_noise_of_a_database(self):
        """compare --history URL: the nightly's baseline step on a --store
        said "no such history" every night after the first."""
        self.need_pg()
        got = {}
        for name, spec in self.stores("noise"):
            with history.open_history(spec, create=True, log=lambda line: None) as h:
                for p in self.files[:12]:
                    h.ingest(p)
            out = os.path.join(self.work, "noise-%s.json" % name)
            p = subprocess.run([sys.executable, "-m", "regress.compare", self.files[10], self.files[11],
                                "--history", spec, "--json", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            self.assertIn(p.returncode, (0, 1), p.stderr)
            with open(out) as f:
                got[name] = [(b["name"], b["verdict"]) for b in json.load(f)["benchmarks"]]
        self.assertEqual(got["sqlite"], got["postgresql"])

    def test_bad_input_is_one_line(self):
        self.need_pg()
        base = self.server.url.replace("/postgres?", "/%s?")
        for args, text in ((["--history", base % "nothere", "list"], 'database "nothere" does not exist'),
                           (["--history", "postgresql://postgres@/x?host=/nonexistent-dir", "list"],
                            "cannot reach postgresql://postgres@/x"),
                           (["--history", self.server.database("h_empty"), "list"], "no history there"),
                           (["--history", self.server.database("h_rb"), "rebuild"], "no history there")):
            p = subprocess.run([os.path.join(ROOT, "ci", "history")] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)
        # A password in the URL is not printed.
        p = subprocess.run([os.path.join(ROOT, "ci", "alerts"), "--history",
                            "postgresql://u:s3cret@/x?host=/nonexistent-dir", "list"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 2)
        self.assertNotIn("s3cret", p.stderr)
        self.assertIn("u:***@", p.stderr)


if __name__ == "__main__":
    unittest.main()
