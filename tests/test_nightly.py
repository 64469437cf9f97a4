#!/usr/bin/env python3
"""The nightly job end to end on a few groups of the smoke suite (--filter),
twice, with the bench of this build (no build, no tests inside): history, A/A
ledger, change points, baseline, report; then a baseline accepted by hand; a
night in two calls; and the role survey with the real bench.

    test_nightly.py BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from regress.run import nightly_select

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NIGHTLY = ["-m", "regress.nightly"]
BUILD = None
# A few instances of the smoke suite: under a second of bench per run, CPU
# variants the A/A subset can use, and a baseline for the role survey.
FILTER = "^GEMM/(OpenBLAS|Naive)/op:AB/type:f32/M:64/"


def load(path):
    with open(path) as f:
        return json.load(f)


def nightly(*args, env=None):
    return subprocess.run([sys.executable, *NIGHTLY] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)


class FakeRapl:
    """A powercap tree (PARBENCH_POWERCAP_ROOT) whose package counter a
    thread advances as a 50 W package would, every millisecond, so the
    metered runs of a host without RAPL (this one) get energy figures."""
    WATTS = 50.0

    def __init__(self, root):
        self.zone = os.path.join(root, "intel-rapl:0")
        os.makedirs(self.zone)
        for name, text in (("name", "package-0"), ("max_energy_range_uj", "262143328850"), ("energy_uj", "0")):
            with open(os.path.join(self.zone, name), "w") as f:
                f.write(text + "\n")
        self.root, self.done = root, threading.Event()
        self.thread = threading.Thread(target=self.advance, daemon=True)

    def advance(self):
        t0 = time.monotonic()
        path = os.path.join(self.zone, "energy_uj")
        while not self.done.wait(0.001):
            with open(path + ".new", "w") as f:
                f.write("%d\n" % ((time.monotonic() - t0) * self.WATTS * 1e6))
            os.replace(path + ".new", path)

    def __enter__(self):
        self.thread.start()
        return dict(os.environ, PARBENCH_POWERCAP_ROOT=self.root)

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


class Nightly(unittest.TestCase):
    def test_two_nights(self):
        """Two nights of one history; the first runs in two calls (stopped by
        --max-seconds, then --resume), so three calls cover both the nights
        and the resumed night."""
        with tempfile.TemporaryDirectory() as tmp, FakeRapl(os.path.join(tmp, "powercap")) as env:
            hist = os.path.join(tmp, "history")
            for night in (1, 2):
                out = os.path.join(tmp, "night%d" % night)
                common = ["--history", hist, "--out", out, "--suite", "smoke", "--filter", FILTER,
                          "--build-dir", BUILD, "--skip-build", "--skip-tests", "--energy-seconds", "0.2"]
                if night == 1:
                    self.check_first_call_stops(common, out)
                p = nightly(*(common + (["--resume"] if night == 1 else [])), env=env)
                self.assertNotIn("Traceback", p.stderr)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                for f in ("suite.json", "aa.json", "changes.json", "report/index.html", "report/trends/index.html",
                          "nightly.json"):
                    self.assertTrue(os.path.exists(os.path.join(out, f)), f)
                steps = [s["step"] for s in load(os.path.join(out, "nightly.json"))["steps"]]
                self.assertEqual(steps, ["suite", "A/A", "ingest", "changes", "bisect", "baseline", "energy", "report"])
                # Two quiet nights confirm no change: nothing to bisect.
                self.assertEqual(load(os.path.join(out, "bisect.json")), [])
                # The energy step metered the A/A subset (the fake 50 W
                # package) into its own history, whose trends it drew.
                metered = [e for e in load(os.path.join(out, "energy.json"))["benchmarks"]
                           if e.get("run_type") == "iteration" and "joules_per_call" in e]
                self.assertTrue(metered and all(e["joules_per_call"] > 0 for e in metered), metered)
                # Each over a window of about --energy-seconds (0.2 s), far
                # from the nightly's own 2 s that a lost option would give.
                # The bound is loose on both sides: Google Benchmark fixes a
                # repetition's iterations from the first, so a later one may
                # run a little under the window (0.2986 s of 0.3 seen) or, on
                # a 2-core machine busy with other tests, well over it (0.62 s
                # of 0.2 seen in CI).
                windows = [e["energy_window_s"] for e in metered]
                self.assertTrue(all(0.1 <= w <= 1.2 for w in windows), windows)
                energy = load(os.path.join(out, "energy-changes.json"))
                self.assertEqual((energy["runs"], energy["settings"]["metric"]), (night, "joules_per_call"))
                self.assertTrue(os.path.exists(os.path.join(out, "report", "energy", "index.html")))
                status = {s["step"]: s["status"] for s in load(os.path.join(out, "nightly.json"))["steps"]}
                self.assertIn("entries metered; energy series: " + energy["summary_line"], status["energy"])
                if night == 1:
                    self.check_the_night_in_two_calls(p, out)
            self.assertTrue(os.path.exists(os.path.join(tmp, "night2", "baseline.json")))
            with open(os.path.join(hist, "aa-ledger.jsonl")) as f:
                ledger = [json.loads(l) for l in f]
            self.assertEqual(len(ledger), 2)
            self.assertTrue(all(e["compared"] > 0 for e in ledger))
            # The ledger keeps each night's signs and paired noise (gate health,
            # ci/history plan), and each night's A/A qualifies the machine.
            self.assertTrue(all(0 < e["up"] + e["down"] <= e["compared"] and e["noise"] for e in ledger), ledger)
            with open(os.path.join(hist, "qualification.json")) as f:
                records = json.load(f)["records"]
            self.assertEqual([r["source"] for r in records], ["nightly A/A", "nightly A/A"])
            self.assertIn("health: qualification: ", p.stderr)
            p = subprocess.run([os.path.join(ROOT, "ci", "history"), "--history", hist, "list"],
                               stdout=subprocess.PIPE, universal_newlines=True)
            self.assertEqual(p.returncode, 0)
            # A baseline accepted on purpose, with its reason logged.
            p = nightly("--accept-baseline", os.path.join(tmp, "night2", "suite.json"), "--history", hist,
                        "--reason", "test")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(hist, "baselines", "log.jsonl")) as f:
                self.assertEqual([json.loads(l)["reason"] for l in f], ["the first night on this machine", "test"])
            p = nightly("--accept-baseline", os.path.join(tmp, "nope.json"), "--history", hist)
            self.assertEqual(p.returncode, 2)
            self.assertNotIn("Traceback", p.stderr)
            p = nightly("--energy-seconds", "0", "--history", hist)
            self.assertEqual((p.returncode, p.stderr.strip()),
                             (2, "nightly: --energy-seconds must be a positive number of seconds "
                                 "(see ci/nightly --help)"))

    def check_first_call_stops(self, common, out):
        p = nightly(*(common + ["--max-seconds", "0"]))
        self.assertEqual(p.returncode, 4, p.stderr[-2000:])
        self.assertIn("--resume", p.stderr)
        first = load(os.path.join(out, "nightly.json"))
        self.assertEqual((first["parbench_nightly"], first["exit"]), (1, 4))
        # Every step respects --max-seconds, and the record says which ran.
        self.assertEqual([s["step"] for s in first["steps"]],
                         ["suite", "A/A", "ingest", "changes", "bisect", "baseline", "energy", "report"])
        self.assertEqual(first["steps"][0]["status"], "stopped")
        self.assertTrue(all(s["status"].startswith("skipped: the night was stopped in suite")
                            for s in first["steps"][1:]))
        self.assertIn("steps: suite stopped", p.stderr)
        self.assertNotIn("suite done", p.stderr)

    def check_the_night_in_two_calls(self, p, out):
        """A night in two calls keeps both calls' steps."""
        self.assertIn("the night so far, 2 calls", p.stderr)
        doc = load(os.path.join(out, "nightly.json"))
        self.assertEqual([c["exit"] for c in doc["calls"]], [4, 0])
        self.assertEqual([s["step"] for s in doc["steps"]], ["suite", "A/A", "ingest", "changes", "bisect",
                                                             "baseline", "energy", "report"])
        by_call = [{s["step"]: s["seconds"] for s in c["steps"]} for c in doc["calls"]]
        self.assertAlmostEqual(doc["night_step_seconds"]["suite"], by_call[0]["suite"] + by_call[1]["suite"],
                               places=6)
        self.assertAlmostEqual(doc["night_seconds"], sum(doc["night_step_seconds"].values()), places=6)
        with open(os.path.join(out, "nightly-calls.jsonl")) as f:
            self.assertEqual(len(f.readlines()), 2)

    def test_suite_only_stops_after_the_suite(self):
        """--suite-only: the suite runs and is timed, the later steps are
        skipped saying why, and no history is written."""
        beside = ("--lane-cores", "1") if len(os.sched_getaffinity(0)) > 1 else ()
        with tempfile.TemporaryDirectory() as tmp:
            hist, out = os.path.join(tmp, "history"), os.path.join(tmp, "night")
            p = nightly("--history", hist, "--out", out, "--suite", "smoke", "--filter", FILTER, "--build-dir",
                        BUILD, "--skip-build", "--skip-tests", "--suite-only", *beside)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            # --lane-cores reaches the runner: one core a lane, the CPU
            # instances beside it.
            if beside:
                self.assertEqual(load(os.path.join(out, "suite.json"))["context"]["parbench_suite"]["lane_cores"], 1)
            doc = load(os.path.join(out, "nightly.json"))
            self.assertEqual(doc["steps"][0]["step"], "suite")
            self.assertGreater(doc["steps"][0]["seconds"], 0)
            self.assertEqual([s["status"] for s in doc["steps"][1:]], ["skipped: --suite-only"] * 7)
            self.assertGreater(len(load(os.path.join(out, "suite.json"))["benchmarks"]), 0)
            self.assertFalse(os.path.exists(os.path.join(out, "aa.json")))
            self.assertFalse(os.path.exists(hist))

    def test_the_role_survey_reads_roles_from_bench(self):
        with tempfile.TemporaryDirectory() as tmp:
            roles = nightly_select.survey_roles(os.path.join(BUILD, "bench"), tmp, {"GEMM/Naive", "GEMM/OpenBLAS"})
        self.assertEqual(roles, {"GEMM/Naive": "baseline", "GEMM/OpenBLAS": "variant"})


if __name__ == "__main__":
    BUILD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
