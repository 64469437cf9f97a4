#!/usr/bin/env python3
"""Tests of plots/: the loader on JSON from Google Benchmark 1.7.1 and 1.8.3,
every chart, the report's numbers, speedup against the right reference, and
bad input (one line, exit 2, the other charts still drawn)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "plots"))
import pbjson  # noqa: E402
import report  # noqa: E402

DATA = os.path.join(HERE, "data")
PLOT = os.path.join(ROOT, "plots", "report.py")


def entry(name, seconds, **counters):
    e = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
         "threads": 1, "iterations": 1, "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us"}
    e.update(counters)
    return e


def synthetic():
    """Known times: speedups, efficiencies, MPI cells and weak scaling are exact."""
    b = [entry("GEMM/Naive/op:AB/type:f32/M:64/N:64/K:64/manual_time", 8.0, GFLOPS=1.0)]
    for t, s in ((1, 4.0), (2, 2.0), (4, 1.0), (8, 0.8)):
        b.append(entry("GEMM/OMP/op:AB/type:f32/M:64/N:64/K:64/threads:%d/manual_time" % t, s, GFLOPS=8 / s))
    b.append(entry("KMeans/Seq/cfg:x/dist:uniform/N:100/D:2/K:4/manual_time", 6.0, seconds_per_iteration=0.6,
                   h2d_s=0, kernel_s=0, d2h_s=0, host_s=6.0))
    for r in (1, 2):
        for t in (1, 2):
            b.append(entry("KMeans/MPI/cfg:x/dist:uniform/N:100/D:2/K:4/ranks:%d/threads:%d/manual_time" % (r, t),
                           6.0 / (r * t * 0.75)))
    for t in (1, 2, 4):
        b.append(entry("KMeans/OMP.Reduce/cfg:weak/dist:uniform/N:%d/D:2/K:4/threads:%d/manual_time" % (100 * t, t),
                       1.0 + 0.1 * t))
    for n in (1024, 4096):
        b.append(entry("Sort/Std/key:u32/payload:keys/order:asc/dist:uniform/n:%d/length:%d/manual_time" % (n, n),
                       n * 1e-8, elements_per_second=1e8, GBps=0.8))
        for t in (1, 2):
            b.append(entry("Sort/OMP.Radix/key:u32/payload:keys/order:asc/dist:uniform/n:%d/length:%d/threads:%d/manual_time"
                           % (n, n, t), n * 1e-9 / t, elements_per_second=1e9 * t, GBps=8.0 * t))
    b.append(entry("Ceiling/HostTriad/n:100/threads:8/manual_time", 1.0, GBps=100.0))
    b.append(entry("Ceiling/OpenBLAS.SGEMM/M:64/N:64/K:64/threads:8/manual_time", 1.0, GFLOPS=40.0))
    return {"context": {"cpu_model": "TestCPU", "host_name": "h"}, "benchmarks": b}


def run_plot(*args):
    return subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True, timeout=300)


class Loader(unittest.TestCase):
    def test_google_benchmark_171(self):
        run = pbjson.load(os.path.join(DATA, "gb171.json"))
        self.assertEqual(len(run.errors()), 0)
        skipped = run.skipped()
        self.assertTrue(skipped and all(e.message.startswith("unsupported: ") for e in skipped))
        self.assertTrue(any(e.aggregate == "median" for e in run.entries))
        self.assertTrue(all(not e.aggregate for e in run.passed()))
        names = {e.run.variant for e in run.passed()}
        self.assertTrue({"Naive", "OMP", "OpenBLAS", "Seq", "OMP.Reduce"} <= names, names)

    def test_google_benchmark_183(self):
        run = pbjson.load(os.path.join(DATA, "gb183.json"))
        skipped = run.skipped()
        self.assertEqual(len(skipped), 4)  # CUDA.Shared and AllGPU at K*D = 31600
        self.assertTrue(all(e.raw.get("skipped") for e in skipped))
        medians = [e for e in run.entries if e.aggregate == "median"]
        self.assertTrue(medians)
        e = medians[0]
        self.assertEqual(e.run.time_kind, "manual_time")

    def test_run_name_grammar_matches_cpp(self):
        r = pbjson.parse_run_name("GEMM/CUDA.Tiled/op:AB/M:64/block:16/manual_time_median")
        self.assertEqual((r.family, r.variant, r.aggregate, r.time_kind), ("GEMM", "CUDA.Tiled", "median", "manual_time"))
        self.assertEqual(r.args, {"op": "AB", "M": "64", "block": "16"})
        with self.assertRaises(ValueError):
            pbjson.parse_run_name("GEMM/OMP/threads")


class Charts(unittest.TestCase):
    def test_every_chart_from_real_and_synthetic_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            syn = os.path.join(tmp, "syn.json")
            json.dump(synthetic(), open(syn, "w"))
            out = os.path.join(tmp, "out")
            p = run_plot(os.path.join(DATA, "gb171.json"), os.path.join(DATA, "gb183.json"), syn, "--out", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            files = os.listdir(out)
            for chart in report.CHARTS:
                pngs = [f for f in files if f.startswith(chart) and f.endswith(".png")]
                self.assertTrue(pngs, "no %s chart; stderr: %s" % (chart, p.stderr))
                for f in pngs:
                    self.assertGreater(os.path.getsize(os.path.join(out, f)), 5000)
                    self.assertTrue(os.path.exists(os.path.join(out, f[:-4] + ".svg")))
            self.assertIn("index.html", files)
            self.assertIn("report.md", files)

    def test_speedup_and_efficiency_against_the_reference(self):
        stats = report.collect([pbjson.Run("syn", {}, [pbjson.Entry(b) for b in synthetic()["benchmarks"]])])
        ref = [s for s in stats if s.run.variant == "Naive"][0]
        omp = {s.arg("threads", int): s for s in stats if s.run.variant == "OMP"}
        self.assertAlmostEqual(ref.seconds / omp[4].seconds, 8.0)
        self.assertAlmostEqual(ref.seconds / omp[8].seconds / 8, 1.25)
        # The chart draws exactly these numbers: check the data it plots.
        with tempfile.TemporaryDirectory() as tmp:
            cv = report.Canvas(tmp, "m")
            import matplotlib.pyplot as plt

            captured = []
            real_plot = plt.Axes.plot

            def spy(ax, x, y, *a, **k):
                captured.append((list(x), list(y), k.get("label")))
                return real_plot(ax, x, y, *a, **k)

            plt.Axes.plot = spy
            try:
                report.chart_speedup(stats, cv)
            finally:
                plt.Axes.plot = real_plot
            speed = [c for c in captured if c[2] == "OMP"]
            self.assertEqual(speed[0][0], [1, 2, 4, 8])
            self.assertEqual(speed[0][1], [2.0, 4.0, 8.0, 10.0])  # speedup vs Naive (8 s)
            self.assertEqual(speed[1][1], [2.0, 2.0, 2.0, 1.25])  # efficiency = speedup / threads

    def test_heatmap_against_seq_or_the_one_by_one_cell(self):
        import matplotlib.pyplot as plt

        def draw(benchmarks):
            stats = report.collect([pbjson.Run("syn", {}, [pbjson.Entry(b) for b in benchmarks])])
            shown, real_imshow = [], plt.Axes.imshow
            plt.Axes.imshow = lambda ax, m, *a, **k: shown.append(m) or real_imshow(ax, m, *a, **k)
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    cv = report.Canvas(tmp, "m")
                    report.chart_heatmap(stats, cv)
            finally:
                plt.Axes.imshow = real_imshow
            return shown, " | ".join(title for _, title in cv.made)

        b = synthetic()["benchmarks"]
        shown, captions = draw(b)  # MPI cells at 0.75 efficiency against Seq (6 s)
        self.assertEqual(shown[0], [[1.0 * 0.75, 2.0 * 0.75], [2.0 * 0.75, 4.0 * 0.75]])  # speedup [ranks][threads]
        self.assertEqual(shown[1], [[0.75, 0.75], [0.75, 0.75]])
        self.assertIn("speedup against Seq", captions)
        no_seq = [e for e in b if not e["name"].startswith("KMeans/Seq/")]
        shown, captions = draw(no_seq)  # no Seq: against the 1 x 1 cell, so efficiency 1
        self.assertEqual(shown[1], [[1.0, 1.0], [1.0, 1.0]])
        self.assertIn("MPI at 1 rank x 1 thread (no Seq in these files)", captions)

    def test_report_numbers_match_the_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run_plot(os.path.join(DATA, "gb183.json"), "--out", tmp, "--chart", "gflops")
            self.assertEqual(p.returncode, 0, p.stderr)
            md = open(os.path.join(tmp, "report.md")).read()
            run = pbjson.load(os.path.join(DATA, "gb183.json"))
            name = "GEMM/cuBLAS/op:AB/type:f32/M:512/N:512/K:512"
            reps = [e for e in run.passed() if e.run.base() == name]
            self.assertEqual(len(reps), 3)
            want_s = statistics.median(e.seconds() for e in reps)
            want_g = statistics.median(e.counter("GFLOPS") for e in reps)
            row = [l for l in md.splitlines() if l.startswith("| " + name + " |")]
            self.assertEqual(len(row), 1, md[:2000])
            cells = [c.strip() for c in row[0].strip("|").split("|")]
            self.assertEqual(cells[1], "passed")
            self.assertAlmostEqual(float(cells[2]), want_s, delta=want_s * 1e-3)
            self.assertEqual(cells[3], "3")
            self.assertAlmostEqual(float(cells[4]), want_g, delta=want_g * 1e-3)
            self.assertIn("NVIDIA H200", md)  # machine context at the top
            skipped = [l for l in md.splitlines() if "CUDA.Shared" in l and "N:100000" in l]
            self.assertEqual(len(skipped), 1)
            self.assertIn("| skipped |", skipped[0])
            self.assertIn("unsupported: K*D = 31600", skipped[0])


class Ceiling(unittest.TestCase):
    def test_fractions_use_the_same_runs_ceiling(self):
        b = synthetic()["benchmarks"]
        # GPU sorts go against CUDA.Copy: by the on_gpu counter, or by name in
        # files written before it (Thrust here).
        sort = "Sort/%s/key:u32/payload:keys/order:asc/dist:uniform/n:4096/length:4096/manual_time"
        b += [entry("Ceiling/CUDA.Copy/bytes:1024/manual_time", 1.0, GBps=1000.0, on_gpu=1),
              entry(sort % "CUB.Offset64", 1e-6, elements_per_second=4e9, GBps=500.0, on_gpu=1),
              entry(sort % "Thrust", 1e-6, elements_per_second=2e9, GBps=250.0)]
        stats = report.collect([pbjson.Run("syn", {}, [pbjson.Entry(e) for e in b])])
        self.assertEqual(report.ceilings(stats), {("syn", "HostTriad"): 100.0, ("syn", "OpenBLAS.SGEMM"): 40.0,
                                                  ("syn", "CUDA.Copy"): 1000.0})
        import matplotlib.pyplot as plt

        captured = []
        real = plt.Axes.barh

        def spy(ax, y, w, *a, **k):
            captured.append(list(w))
            return real(ax, y, w, *a, **k)

        plt.Axes.barh = spy
        try:
            with tempfile.TemporaryDirectory() as tmp:
                report.chart_ceiling(stats, report.Canvas(tmp, "m"))
        finally:
            plt.Axes.barh = real
        # GEMM AB f32 64^3: Naive 1 GFLOP/s, OMP 2..10 GFLOP/s against 40.
        self.assertEqual(sorted(captured[0]), sorted([1 / 40, 2 / 40, 4 / 40, 8 / 40, 10 / 40]))
        # K-means Seq: 100 points * 2 coords * 8 bytes / 0.6 s against 100 GB/s.
        self.assertAlmostEqual(captured[1][0], 1600 / 0.6 * 1e-9 / 100)
        # Sorts, largest total first: on the CPU against HostTriad's 100 GB/s
        # (Std 0.8 GB/s, radix 8 and 16 GB/s), on the GPU against CUDA.Copy's
        # 1000 GB/s (CUB.Offset64 500, Thrust 250).
        self.assertEqual(len(captured), 4)
        self.assertEqual(sorted(captured[2]), [0.008, 0.08, 0.16, 0.25, 0.5])


class CheckRun(unittest.TestCase):
    def run_check(self, doc, *args):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            return subprocess.run([sys.executable, os.path.join(ROOT, "plots", "check_run.py"), path, *args],
                                  capture_output=True, text=True, timeout=60)

    def test_skips_and_context_values(self):
        doc = {"context": {"mpi_ranks": "4"}, "benchmarks": [
            entry("KMeans/MPI/cfg:x/dist:uniform/N:100/D:2/K:4/ranks:4/threads:1/manual_time", 1.0),
            dict(entry("KMeans/Seq/cfg:x/dist:uniform/N:9/D:2/K:4/manual_time", 0.0), skipped=True,
                 skip_message="unsupported: size excluded by profile 'default'")]}
        self.assertEqual(self.run_check(doc, "--require", "KMeans/MPI", "--context", "mpi_ranks=4").returncode, 0)
        p = self.run_check(doc, "--no-skips")
        self.assertEqual(p.returncode, 1)
        self.assertIn("SKIPPED KMeans/Seq/", p.stdout)
        p = self.run_check(doc, "--context", "mpi_ranks=8")
        self.assertEqual(p.returncode, 1)
        self.assertIn("MISMATCH context mpi_ranks=4, expected 8", p.stdout)
        self.assertEqual(self.run_check(doc, "--require", "KMeans/Seq").returncode, 1)  # skipped is not passed


class CloseTruncated(unittest.TestCase):
    def test_cut_file_keeps_complete_entries(self):
        tool = os.path.join(ROOT, "plots", "close_truncated.py")
        text = open(os.path.join(DATA, "gb183.json")).read()
        whole = json.loads(text)["benchmarks"]
        with tempfile.TemporaryDirectory() as tmp:
            cut, out = os.path.join(tmp, "cut.json"), os.path.join(tmp, "out.json")
            # Cut inside the fourth entry from the end, as a killed job leaves it.
            at = len(text)
            for _ in range(4):
                at = text.rfind('"name"', 0, at)
            open(cut, "w").write(text[: at + 10])
            p = subprocess.run([sys.executable, tool, cut, out], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            got = json.load(open(out))
            kept = got["benchmarks"]
            self.assertLess(len(kept), len(whole) - 3)
            self.assertEqual(kept, whole[: len(kept)])  # a prefix, unchanged
            self.assertIn("cut off mid-run", got["context"]["truncated_repair"])
            open(cut, "w").write("not json at all")
            p = subprocess.run([sys.executable, tool, cut, out], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertNotIn("Traceback", p.stderr)


class BadInput(unittest.TestCase):
    def check_one_line(self, p):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_missing_truncated_and_foreign_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            trunc = os.path.join(tmp, "trunc.json")
            open(trunc, "w").write(open(os.path.join(DATA, "gb171.json")).read()[:5000])
            foreign = os.path.join(tmp, "foreign.json")
            json.dump({"hello": [1, 2]}, open(foreign, "w"))
            out = os.path.join(tmp, "out")
            p = run_plot(os.path.join(tmp, "missing.json"), trunc, foreign, os.path.join(DATA, "gb171.json"), "--out", out)
            self.check_one_line(p)
            lines = [l for l in p.stderr.splitlines() if l.startswith("plot: ") and "not drawn" not in l]
            self.assertEqual(len(lines), 3, p.stderr)
            self.assertRegex(lines[0], "missing.json: no such file")
            self.assertRegex(lines[1], "trunc.json: not valid JSON")
            self.assertRegex(lines[2], "foreign.json: not Google Benchmark JSON")
            self.assertTrue([f for f in os.listdir(out) if f.startswith("speedup")])  # the readable file still charted

    def test_requested_chart_without_data(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run_plot(os.path.join(DATA, "gb171.json"), "--out", tmp, "--chart", "heatmap", "--chart", "speedup")
            self.check_one_line(p)
            self.assertRegex(p.stderr, r"chart heatmap not drawn: no runs with both ranks and threads")
            self.assertTrue([f for f in os.listdir(tmp) if f.startswith("speedup")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
