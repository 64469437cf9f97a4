#!/usr/bin/env python3
"""Tests of the trend report (regress/trends.py, ci/trends).

A synthetic nightly history, ingested with regress/store/history.py: 12 runs
(revisions r1..r12) of 4 benchmarks in 2 families, 1% run-to-run noise; one
GPU benchmark 8% slower from r7 on; a driver update at r10 that moves another
benchmark by 10% and changes no code; another failed in r3. Expected: exactly one change, confirmed
and slower, naming r6..r7; the driver update a segment boundary, not a change;
exit 1. Then: changes.json byte-identical on a rerun (and --json the same
bytes), bad input (exit 2, one line), the page referencing only files and
anchors that exist, the charts non-empty. And bad histories: one run (no
trend yet, exit 0), a repetition timed at 0 (a failed point, left out of the
search), a file given as the history (exit 2, one line); nothing stored
changes.

The longer runs of the command (--floor and --confirm, --accepted-through,
--all, the machine chosen among several, a one-run history, the A/A ledger)
and the page rendered in headless Chromium: tests/test_trends_e2e.py.
"""
import html.parser
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

from regress.store import history

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TOOL = ["-m", "regress.trends"]
WRAPPER = os.path.join(ROOT, "ci", "trends")
CHROMIUM = "/usr/bin/chromium"

STEPPED = "GEMM/cuBLAS/op:AB/type:f32/M:1024/N:1024/K:1024/manual_time"
DRIVER = "GEMM/CUDA.Tiled/op:AB/type:f32/M:256/N:256/K:256/block:16/manual_time"
SORT_A = "Sort/Std/key:u32/n:1048576/real_time"
SORT_B = "Sort/Thrust/key:u32/n:1048576/manual_time"
BENCHMARKS = {  # name: (device, median seconds)
    STEPPED: ("gpu", 1.2e-3),
    DRIVER: ("gpu", 3.4e-5),
    SORT_A: ("cpu", 2.1e-2),
    SORT_B: ("gpu", 4.5e-4),
}
RUNS = 12
STEP_RUN = 7      # r7 is the first revision 8% slower
DRIVER_RUN = 10   # the driver update
FAILED_RUN = 3    # SORT_B failed in r3: no time

CONTEXT = {"host_name": "h", "parbench_schema": 1, "parbench_profile": "nightly", "cpu_model": "Xeon",
           "num_cpus": 16, "gpu": "NVIDIA H200", "gpu_sm_count": "132", "gpu_driver": "580.65",
           "cuda_runtime": "13.0", "parbench_build_type": "Release", "parbench_fixtures_version": "1",
           "parbench_seed": "7", "parbench_cxx_compiler": "GNU 13", "parbench_cuda_compiler": "NVIDIA 13.0",
           "openblas_config": "OpenBLAS 0.3.26"}


def entry(name, seconds, rep, reps, device, failed=False):
    """One repetition, schema 1, seconds in the "s" unit; `failed`: an error entry."""
    e = {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
         "run_type": "iteration", "repetitions": reps, "repetition_index": rep, "threads": 1,
         "iterations": 10, "real_time": seconds, "cpu_time": seconds, "time_unit": "s",
         "parbench": {"disposition": "passed", "role": "variant", "device": device}}
    if failed:
        e.update(error_occurred=True, error_message="failed: the kernel launch failed", real_time=0, cpu_time=0)
        e["parbench"].update(disposition="failed", reason="the kernel launch failed")
    return e


def doc(medians, rng, reps=5, failed=(), **ctx):
    """A run: for each benchmark, `reps` repetitions spread 0.3% around its median; the benchmarks
    in `failed` one error entry instead."""
    c = dict(CONTEXT)
    c.update(ctx)
    b = []
    for name, m in medians.items():
        device = BENCHMARKS[name][0]
        if name in failed:
            b.append(entry(name, 0.0, 0, 1, device, failed=True))
            continue
        times = m * np.exp(rng.normal(0.0, 0.003, reps))
        b += [entry(name, float(t), i, reps, device) for i, t in enumerate(times)]
    return {"context": c, "benchmarks": b}


def nightly(rng, runs=RUNS, step_run=STEP_RUN, driver_run=DRIVER_RUN, **ctx):
    """The documents of the synthetic history, oldest first."""
    docs = []
    for r in range(1, runs + 1):
        medians = {}
        for name, (_, base) in BENCHMARKS.items():
            m = base * math.exp(rng.normal(0.0, 0.01))
            if name == STEPPED and r >= step_run:
                m *= 1.08
            if name == DRIVER and r >= driver_run:
                m *= 1.10
            medians[name] = m
        c = {"date": "2026-11-%02dT02:00:00+00:00" % r, "parbench_git_revision": "r%d" % r}
        if r >= driver_run:
            c["gpu_driver"] = "590.10"
        c.update(ctx)
        docs.append(doc(medians, rng, failed=(SORT_B,) if r == FAILED_RUN else (), **c))
    return docs


def build_history(directory, docs, work):
    h = history.History(directory, create=True, log=lambda line: None)
    with h:
        for i, d in enumerate(docs):
            path = os.path.join(work, "run-%s-%02d.json" % (os.path.basename(directory), i))
            with open(path, "w") as f:
                json.dump(d, f)
            h.ingest(path)


def run_tool(*args, wrapper=False):
    cmd = ([WRAPPER] if wrapper else [sys.executable, *TOOL]) + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


class Refs(html.parser.HTMLParser):
    """The hrefs, srcs and ids of a page."""

    def __init__(self):
        super().__init__()
        self.refs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("href", "src"):
            if a.get(k) is not None:
                self.refs.append((tag, a[k]))


class TrendsBase(unittest.TestCase):
    """The stepped history, its page and changes.json, made once for the class."""
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="trends-test-")
        cls.hist = os.path.join(cls.dir, "hist")
        build_history(cls.hist, nightly(np.random.default_rng(15)), cls.dir)
        cls.out = os.path.join(cls.dir, "out")
        cls.json_copy = os.path.join(cls.dir, "copy.json")
        cls.p = run_tool("--history", cls.hist, "--out", cls.out, "--json", cls.json_copy, wrapper=True)
        with open(os.path.join(cls.out, "changes.json"), "rb") as f:
            cls.raw = f.read()
        cls.doc = json.loads(cls.raw)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def clean(self, p):
        self.assertNotIn("Traceback", p.stderr)
        for line in p.stderr.splitlines():
            self.assertTrue(line.startswith("trends: "), line)

    def fails(self, *args, match=None):
        p = run_tool(*args)
        self.clean(p)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        if match:
            self.assertIn(match, p.stderr)
        return p

    # ---- the stepped history


class Trends(TrendsBase):
    def test_one_confirmed_regression_naming_its_commit_range(self):
        self.clean(self.p)
        self.assertEqual(self.p.returncode, 1, self.p.stdout + self.p.stderr)
        changes = self.doc["changes"]
        self.assertEqual(len(changes), 1, json.dumps(changes, indent=1))
        c = changes[0]
        self.assertEqual((c["name"], c["status"], c["direction"]), (STEPPED, "confirmed", "slower"))
        self.assertEqual((c["revision_before"], c["revision_after"]), ("r6", "r7"))
        self.assertEqual((c["family"], c["device"], c["floor"]), ("GEMM", "gpu", 0.02))
        self.assertAlmostEqual(c["step"], 0.08, delta=0.025)
        self.assertEqual(c["runs_after"], DRIVER_RUN - STEP_RUN)   # the driver update ends its segment
        self.assertGreater(c["step"], c["threshold"])
        s = self.doc["summary"]
        self.assertEqual((s["benchmarks"], s["confirmed_regressions"], s["tentative_regressions"],
                          s["improvements"], s["fails_nightly"]), (4, 1, 0, 0, True))
        self.assertEqual(self.doc["runs"], RUNS)
        self.assertIn("1 confirmed regression", self.p.stdout)
        self.assertIn("r6..r7", self.p.stdout)

    def test_a_bisected_change_names_its_culprit(self):
        # The nightly keeps ci/bisect's report of a range in HIST/bisect/RANGE/;
        # the change of that range and benchmark names the commit, in the JSON
        # and in a column of the page.
        hist = os.path.join(self.dir, "hist-bisected")
        shutil.copytree(self.hist, hist)
        where = os.path.join(hist, "bisect", "r6-r7")
        os.makedirs(where)
        culprit = {"commit": "c0ffee" * 6 + "abcd", "subject": "tile loop unrolled", "chance_wrong": 0.003,
                   "benchmarks": [STEPPED], "candidates": ["c0ffee" * 6 + "abcd"]}
        with open(os.path.join(where, "report.json"), "w") as f:
            json.dump({"good": "r6", "bad": "r7", "culprits": [culprit]}, f)
        out = os.path.join(self.dir, "out-bisected")
        p = run_tool("--history", hist, "--out", out)
        self.clean(p)
        with open(os.path.join(out, "changes.json")) as f:
            c = json.load(f)["changes"][0]
        self.assertEqual((c["culprit"]["commit"], c["culprit"]["subject"]), (culprit["commit"], "tile loop unrolled"))
        self.assertEqual(c["culprit"]["report"], os.path.join(where, "report.md"))
        with open(os.path.join(out, "index.html")) as f:
            page = f.read()
        self.assertIn("<th>culprit (ci/bisect)</th>", page)
        self.assertIn("c0ffeec0ffee</a> tile loop unrolled (chance wrong 0.003)", page)
        # Without a report the column is not there.
        with open(os.path.join(self.out, "index.html")) as f:
            self.assertNotIn("culprit (ci/bisect)", f.read())
        self.assertIsNone(self.doc["changes"][0]["culprit"])

    def test_driver_update_is_a_segment_not_a_change(self):
        segs = self.doc["segments"]
        self.assertEqual(len(segs), 1)
        self.assertEqual(segs[0]["revision"], "r%d" % DRIVER_RUN)
        self.assertEqual(segs[0]["changed"], [["gpu_driver", "580.65", "590.10"]])
        self.assertFalse([c for c in self.doc["changes"] if c["name"] == DRIVER])
        with open(os.path.join(self.out, "index.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn("gpu_driver 580.65 \u2192 590.10", page)

    def test_json_byte_identical_on_rerun(self):
        with open(self.json_copy, "rb") as f:
            self.assertEqual(f.read(), self.raw)
        out2 = os.path.join(self.dir, "out-again")
        p = run_tool("--history", self.hist, "--out", out2)
        self.assertEqual(p.returncode, 1, p.stderr)
        with open(os.path.join(out2, "changes.json"), "rb") as f:
            self.assertEqual(f.read(), self.raw)
        # The first run raised the alert and said so; a rerun raises nothing.
        first = self.p.stdout.replace(self.out, out2).splitlines()
        self.assertTrue(any(ln.startswith("alerts: 1 raised (#1)") for ln in first), self.p.stdout)
        self.assertEqual(p.stdout.splitlines(), [ln for ln in first if not ln.startswith("alerts: ")])

    def test_page_references_only_what_exists(self):
        with open(os.path.join(self.out, "index.html"), encoding="utf-8") as f:
            page = f.read()
        parser = Refs()
        parser.feed(page)
        self.assertTrue(parser.refs)
        files = 0
        for tag, ref in parser.refs:
            self.assertNotRegex(ref, r"^(https?:|//)", "an external resource: %s" % ref)
            if ref.startswith("#"):
                self.assertIn(ref[1:], parser.ids, "no anchor %s" % ref)
            else:
                files += 1
                self.assertTrue(os.path.isfile(os.path.join(self.out, ref)), ref)
        self.assertGreaterEqual(files, 6)   # the changed benchmark and two families, PNG and SVG
        self.assertIn("<h1>parbench trends: NVIDIA H200</h1>", page)
        self.assertIn("r6..r7", page)
        self.assertIn("1 confirmed regression, 0 tentative regressions, 0 improvements, out of 4 benchmarks", page)
        self.assertIn("3 benchmarks without a change", page)
        self.assertIn("NVIDIA H200", page)
        # the table row links to the changed benchmark's chart
        self.assertRegex(page, r"<a href='#b-GEMM_cuBLAS[^']*'>%s</a>" % re.escape(STEPPED))

    def test_charts_exist(self):
        charts = os.path.join(self.out, "charts")
        names = sorted(os.listdir(charts))
        pngs = [n for n in names if n.endswith(".png")]
        self.assertEqual(len(pngs), 3, names)     # one changed benchmark, two families
        self.assertEqual(len(names), 6, names)
        for n in names:
            self.assertGreater(os.path.getsize(os.path.join(charts, n)), 5000, n)
        for n in pngs:
            with open(os.path.join(charts, n), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertIn("family_GEMM.png", names)
        self.assertIn("family_Sort.png", names)

    def test_bad_input(self):
        out = os.path.join(self.dir, "out-bad")
        self.fails("--history", os.path.join(self.dir, "nowhere"), "--out", out, match="no history")
        empty = os.path.join(self.dir, "empty")
        os.makedirs(empty)
        self.fails("--history", empty, "--out", out, match="holds no runs")
        self.fails("--history", self.hist, "--out", out, "--machine", "zzzz", match="no machine zzzz")
        self.fails("--history", self.hist, "--out", out, "--floor", "tpu=3", match="--floor")
        self.fails("--history", self.hist, "--out", out, "--confirm", "0", match="--confirm")
        self.fails("--out", out, match="--history")
        afile = os.path.join(self.dir, "a-file")
        with open(afile, "w") as f:
            f.write("x")
        self.fails("--history", self.hist, "--out", afile, match="is a file")

    def test_help(self):
        p = run_tool("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--floor", p.stdout)
        self.assertEqual(p.stderr, "")


class Labels(unittest.TestCase):
    def test_same_day_runs_get_labels_of_their_own(self):
        from regress import trends
        runs = [{"id": 1, "date": "2026-11-01T02:00:00+00:00", "revision": "abc"},
                {"id": 2, "date": "2026-11-01T14:30:00+00:00", "revision": "abc"},
                {"id": 3, "date": "2026-11-01T14:30:00+00:00", "revision": "abc"},
                {"id": 4, "date": "2026-11-02T02:00:00+00:00", "revision": "def"}]
        self.assertEqual(trends.run_labels(runs), ["2026-11-01 02:00 abc", "2026-11-01 14:30 abc (run 2)",
                                                   "2026-11-01 14:30 abc (run 3)", "2026-11-02 def"])


class EnergySeries(unittest.TestCase):
    """--metric joules_per_call: a history whose times are flat while one
    benchmark's energy per call rises 10% from r7 on. The energy series shows
    one confirmed change naming r6..r7; the time series none; a counter that
    is better higher, or one no run declares, is one line and exit 2."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="trends-energy-")
        cls.hist = os.path.join(cls.dir, "hist")
        rng = np.random.default_rng(21)
        docs = nightly(rng, step_run=RUNS + 1, driver_run=RUNS + 1, parbench_counters={
            "joules_per_call": {"kind": "energy", "unit": "J", "better": "lower"},
            "GFLOP_per_J": {"kind": "rate", "unit": "GFLOP/J", "better": "higher"}})
        for r, d in enumerate(docs, start=1):
            for e in d["benchmarks"]:
                if e["name"] == STEPPED:
                    j = 0.8 * math.exp(rng.normal(0.0, 0.005)) * (1.10 if r >= STEP_RUN else 1.0)
                    e.update(joules_per_call=j, GFLOP_per_J=2.0 / j)
        build_history(cls.hist, docs, cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_the_energy_series_shows_the_change_the_time_does_not(self):
        out = os.path.join(self.dir, "energy")
        p = run_tool("--history", self.hist, "--out", out, "--metric", "joules_per_call")
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        with open(os.path.join(out, "changes.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["settings"]["metric"], "joules_per_call")
        self.assertEqual(doc["summary"]["benchmarks"], 1)   # the only series with the counter
        [c] = doc["changes"]
        self.assertEqual((c["name"], c["status"], c["direction"]), (STEPPED, "confirmed", "slower"))
        self.assertEqual((c["revision_before"], c["revision_after"]), ("r6", "r7"))
        self.assertAlmostEqual(c["step"], 0.10, delta=0.02)
        self.assertIsNone(c["alert"])
        self.assertTrue(os.listdir(os.path.join(out, "charts")))
        with open(os.path.join(out, "index.html")) as f:
            self.assertIn("Series: joules_per_call", f.read())
        p = run_tool("--history", self.hist, "--out", os.path.join(self.dir, "time"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.dir, "time", "changes.json")) as f:
            self.assertEqual(json.load(f)["changes"], [])

    def test_a_counter_better_higher_or_undeclared_is_refused(self):
        for metric, text in (("GFLOP_per_J", "it is better higher"), ("nope", "no run of the machine declares")):
            p = run_tool("--history", self.hist, "--out", os.path.join(self.dir, "x"), "--metric", metric)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)


class BadHistories(unittest.TestCase):
    """A history with one run, a series with a time of 0, a file for a
    history: one clear line, the documented exit status, nothing stored
    changed."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="trends-bad-")
        self.hist = os.path.join(self.dir, "hist")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def stored(self):
        out = {}
        for base, _, files in os.walk(self.hist):
            for n in files:
                with open(os.path.join(base, n), "rb") as f:
                    out[os.path.join(base, n)] = f.read()
        return out

    def test_one_run_is_no_trend_yet(self):
        build_history(self.hist, nightly(np.random.default_rng(3), runs=1), self.dir)
        before = self.stored()
        p = run_tool("--history", self.hist, "--out", os.path.join(self.dir, "out"))
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertEqual(p.stdout.splitlines()[0], "One run: no trend yet (4 benchmarks).")
        with open(os.path.join(self.dir, "out", "changes.json")) as f:
            self.assertEqual(json.load(f)["changes"], [])
        self.assertEqual(self.stored(), before)

    def test_a_time_of_0_is_a_failed_point_left_out(self):
        # Flat series; one repetition of STEPPED timed at 0 in the third run:
        # the loader reads it as failed, the history stores a failed point, and
        # the change search leaves it out (a median of 0 would be a -100% step).
        docs = nightly(np.random.default_rng(4), runs=6, step_run=99, driver_run=99)
        zero = next(e for e in docs[2]["benchmarks"] if e["name"] == STEPPED)
        zero["real_time"] = 0.0
        build_history(self.hist, docs, self.dir)
        with history.History(self.hist) as h:
            pts = h.series(STEPPED, h.machines()[0]["machine"])
        self.assertEqual(pts[2]["disposition"], "failed")
        self.assertIn("not a measurement", pts[2]["reason"])
        before = self.stored()
        p = run_tool("--history", self.hist, "--out", os.path.join(self.dir, "out"))
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertTrue(p.stdout.startswith("0 confirmed regressions, 0 tentative regressions, 0 improvements"),
                        p.stdout)
        self.assertEqual(self.stored(), before)

    def test_a_file_for_a_history(self):
        path = os.path.join(self.dir, "run.json")
        with open(path, "w") as f:
            json.dump(doc({STEPPED: 1e-3}, np.random.default_rng(5)), f)
        p = run_tool("--history", path, "--out", os.path.join(self.dir, "out"))
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, "trends: %s is a file, not a history directory\n" % path)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))


if __name__ == "__main__":
    unittest.main()
