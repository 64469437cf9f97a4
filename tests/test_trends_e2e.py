#!/usr/bin/env python3
"""The trend report end to end (regress/trends.py, ci/trends; the stepped
history of tests/test_trends.py): --floor and --confirm, --accepted-through,
--all, the machine chosen among several, a one-run history, the A/A ledger on
the page and in the JSON, and the page rendered in headless Chromium (skipped,
saying so, without it).
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np

from regress.store import history
from test_trends import CHROMIUM, STEPPED, TrendsBase, build_history, nightly, run_tool


class TrendsEndToEnd(TrendsBase):
    def test_floor_and_confirm(self):
        out = os.path.join(self.dir, "out-floor")
        p = run_tool("--history", self.hist, "--out", out, "--floor", "GEMM/gpu=12")
        self.clean(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            d = json.load(f)
        self.assertEqual(d["changes"], [])
        self.assertEqual(d["settings"]["floors"], {"GEMM/gpu": 0.12})
        out = os.path.join(self.dir, "out-confirm")
        p = run_tool("--history", self.hist, "--out", out, "--confirm", "4")
        self.clean(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)   # tentative: does not fail
        with open(os.path.join(out, "changes.json")) as f:
            d = json.load(f)
        self.assertEqual([(c["name"], c["status"]) for c in d["changes"]], [(STEPPED, "tentative")])
        self.assertEqual(d["summary"]["tentative_regressions"], 1)

    def test_accepted_through_the_baseline(self):
        import datetime
        date = self.doc["changes"][0]["date"]  # the first run measured after the step
        before = (datetime.datetime.fromisoformat(date) - datetime.timedelta(seconds=1)).isoformat()
        out = os.path.join(self.dir, "out-accepted")
        p = run_tool("--history", self.hist, "--out", out, "--accepted-through", before)
        self.clean(p)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)  # a baseline older than the step: still fails
        p = run_tool("--history", self.hist, "--out", out, "--accepted-through", date)
        self.clean(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            d = json.load(f)
        self.assertEqual([(c["name"], c["status"], c["accepted"]) for c in d["changes"]],
                         [(STEPPED, "confirmed", True)])
        self.assertEqual((d["summary"]["confirmed_regressions"], d["summary"]["accepted_regressions"],
                          d["summary"]["fails_nightly"]), (0, 1, False))
        self.assertIn("(and 1 regression accepted with the baseline)", p.stdout)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            self.assertIn("confirmed slower (accepted)", f.read())
        self.fails("--history", self.hist, "--out", out, "--accepted-through", "last tuesday", match="ISO date")

    def test_all_draws_every_benchmark(self):
        out = os.path.join(self.dir, "out-all")
        p = run_tool("--history", self.hist, "--out", out, "--all")
        self.assertEqual(p.returncode, 1, p.stderr)
        pngs = [n for n in os.listdir(os.path.join(out, "charts")) if n.endswith(".png")]
        self.assertEqual(len(pngs), 6)   # 4 benchmarks, 2 families

    # ---- bad input, one run, several machines

    def test_one_run(self):
        work = tempfile.mkdtemp(dir=self.dir)
        hist = os.path.join(work, "hist")
        build_history(hist, nightly(np.random.default_rng(1), runs=1), work)
        out = os.path.join(work, "out")
        p = run_tool("--history", hist, "--out", out)
        self.clean(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn("One run: no trend yet", page)
        with open(os.path.join(out, "changes.json")) as f:
            d = json.load(f)
        self.assertEqual((d["runs"], d["changes"], d["summary"]["benchmarks"]), (1, [], 4))

    def test_several_machines(self):
        work = tempfile.mkdtemp(dir=self.dir)
        hist = os.path.join(work, "hist")
        docs = nightly(np.random.default_rng(15)) + nightly(np.random.default_rng(2), step_run=99, driver_run=99,
                                                            gpu="NVIDIA H100", gpu_sm_count="132")
        build_history(hist, docs, work)
        out = os.path.join(work, "out")
        p = self.fails("--history", hist, "--out", out, match="2 machines")
        self.assertIn("NVIDIA H100", p.stderr)
        with history.History(hist, log=lambda line: None) as h:
            ms = {m["gpu"]: m["machine"] for m in h.machines()}
        p = run_tool("--history", hist, "--out", out, "--machine", ms["NVIDIA H100"][:6])
        self.clean(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            d = json.load(f)
        self.assertEqual((d["machine"]["gpu"], d["changes"], d["segments"]), ("NVIDIA H100", [], []))
        p = run_tool("--history", hist, "--out", out, "--machine", ms["NVIDIA H200"])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)

    def test_aa_ledger_on_the_page_and_in_the_json(self):
        work = tempfile.mkdtemp(dir=self.dir)
        hist = os.path.join(work, "hist")
        build_history(hist, nightly(np.random.default_rng(3), runs=2), work)
        out = os.path.join(work, "out")
        p = run_tool("--history", hist, "--out", out)
        self.clean(p)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            self.assertIn("No A/A check of this machine", f.read())
        with open(os.path.join(out, "changes.json")) as f:
            d = json.load(f)
        self.assertEqual(d["aa"]["summary"]["nights"], 0)
        self.assertIsNone(d["aa"]["summary"]["rate"])
        me = d["machine"]["id"]
        lines = [{"machine": me, "date": "2026-11-02T01:00:00+00:00", "revision": "r2", "compared": 12,
                  "counts": {"SAME": 11, "SLOWER": 1}, "false_alarms": 1},
                 {"machine": "another", "date": "2026-11-02T01:00:00+00:00", "revision": "r2", "compared": 50,
                  "counts": {"SAME": 40, "FASTER": 10}, "false_alarms": 10},
                 {"machine": me, "date": "2026-11-01T01:00:00+00:00", "revision": "r1", "compared": 12,
                  "counts": {"SAME": 12}, "false_alarms": 0}]
        with open(os.path.join(hist, "aa-ledger.jsonl"), "w") as f:
            f.write("".join(json.dumps(e) + "\n" for e in lines) + '{"machine": "cut off by a kill\n')
        p = run_tool("--history", hist, "--out", out)
        self.clean(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            aa = json.load(f)["aa"]
        self.assertEqual(aa["summary"], {"nights": 2, "compared": 24, "false_alarms": 1, "rate": 1 / 24,
                                         "unreadable": 1})
        self.assertEqual([n["revision"] for n in aa["nights"]], ["r1", "r2"])  # date order
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn("1 false alarm in 24 comparisons over 2 nights (4.17%)", page)
        self.assertIn("1 unreadable ledger line skipped", page)
        self.assertIn("href='#aa'", page)

    # ---- rendering

    def test_renders_in_chromium(self):
        if not os.access(CHROMIUM, os.X_OK):
            self.skipTest("Chromium not installed (apt-get install chromium): trends page rendering not tested")
        shot = os.path.join(self.dir, "page.png")
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--user-data-dir=" + tempfile.mkdtemp(dir=self.dir), "--virtual-time-budget=5000"]
        url = "file://" + os.path.join(self.out, "index.html")
        p = subprocess.run([CHROMIUM] + flags + ["--screenshot=" + shot, "--window-size=1400,2400", url],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertTrue(os.path.isfile(shot), p.stderr[-2000:])
        with open(shot, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(shot), 20000)   # a blank page is a few kB
        p = subprocess.run([CHROMIUM] + flags[:-2] + ["--user-data-dir=" + tempfile.mkdtemp(dir=self.dir),
                                                      "--virtual-time-budget=5000", "--dump-dom", url],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        dom = p.stdout
        self.assertIn("<h1>parbench trends: NVIDIA H200</h1>", dom)
        loaded = re.search(r'data-images-loaded="(\d+)"', dom)
        total = re.search(r'data-images-total="(\d+)"', dom)
        self.assertTrue(loaded and total, dom[-500:])
        self.assertEqual(loaded.group(1), total.group(1))
        self.assertEqual(int(total.group(1)), 3)


if __name__ == "__main__":
    unittest.main()
