#!/usr/bin/env python3
"""Tests of plots/: derived figures with exact numbers, speedup against the family baseline and efficiency
against the variant's own 1-thread run, anchored heatmap scales, fractions of
ceiling (and the flag above 1), several sources as labelled series, the
output folder (stale charts removed, unusable folders refused), bad input
(one line, exit 2, the other charts still drawn), and no variant name in
plots/ nor in the Python of regress/ and ci/. Every chart drawn from real and
synthetic runs: tests/test_plots_charts.py."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from regress.load import derived
from regress.load import results
from plots import report_charts
from plots import report_draw
from plots import report_stats

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DATA = os.path.join(HERE, "data")
PLOT = ["-m", "plots.report"]


def entry(name, seconds, role="variant", device="cpu", rate=None, **counters):
    e = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
         "threads": 1, "iterations": 1, "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us"}
    e.update(counters)
    meta = {"disposition": "passed", "role": role, "device": device}
    if rate:
        meta["rate"] = {"counter": rate[0], "ceiling": rate[1]}
    e["parbench"] = meta
    return e


GEMM = "GEMM/%s/op:AB/type:f32/M:64/N:64/K:64%s/manual_time"
SORT = "Sort/%s/key:u32/payload:keys/order:asc/dist:uniform/n:%d/length:%d%s/manual_time"
KM = "KMeans/%s/cfg:x/dist:uniform/N:100/D:2/K:4%s/manual_time"
# MPI cells: efficiency against the 1 x 1 cell (8 s) per (ranks, threads).
MPI_EFF = {(1, 1): 1.0, (1, 2): 0.9, (2, 1): 0.8, (2, 2): 0.5}


# The counters the tools read by kind and unit (the context's parbench_counters).
DECLARED = {"GFLOPS": {"kind": "rate", "unit": "GFLOP/s"}, "GBps": {"kind": "rate", "unit": "GB/s"},
            "flops_per_call": {"kind": "model", "unit": "flop"}, "bytes_per_call": {"kind": "model", "unit": "B"},
            "seconds_per_call": {"kind": "time", "unit": "s"}}
# A GEMM call's work and least traffic in the synthetic run: 1 flop per byte.
GEMM_MODEL = {"flops_per_call": 8e9, "bytes_per_call": 8e9}


def synthetic():
    """Known times: speedups, efficiencies, MPI cells and fractions are exact."""
    g = ("GFLOPS", "gemm_f32")
    b = [entry(GEMM % ("Naive", ""), 8.0, role="baseline", rate=g, GFLOPS=1.0, seconds_per_call=8.0, **GEMM_MODEL)]
    for t, s in ((1, 4.0), (2, 2.0), (4, 1.0), (8, 0.8)):
        b.append(entry(GEMM % ("OMP", "/threads:%d" % t), s, rate=g, GFLOPS=8 / s, seconds_per_call=s, **GEMM_MODEL))
    # A library: 100x the baseline on one thread, so speedup and efficiency differ by far.
    for t, s, rate in ((1, 0.08, 20.0), (8, 0.02, 36.0)):
        b.append(entry(GEMM % ("OpenBLAS", "/threads:%d" % t), s, rate=g, GFLOPS=rate))
    b.append(entry(KM % ("Seq", ""), 6.0, role="baseline", seconds_per_iteration=0.6, GBps=1600 / 0.6 * 1e-9,
                   rate=("GBps", "bandwidth"), h2d_s=0, kernel_s=0, d2h_s=0, host_s=6.0))
    for (r, t), eff in MPI_EFF.items():
        b.append(entry(KM % ("MPI", "/ranks:%d/threads:%d" % (r, t)), 8.0 / (r * t * eff)))
    bw = ("GBps", "bandwidth")
    for n in (1024, 4096):
        b.append(entry(SORT % ("Std", n, n, ""), n * 1e-8, role="baseline", rate=bw, elements_per_second=1e8,
                       GBps=0.8))
        for t in (1, 2):
            b.append(entry(SORT % ("OMP.Radix", n, n, "/threads:%d" % t), n * 1e-9 / t, rate=bw,
                           elements_per_second=1e9 * t, GBps=8.0 * t))
    b.append(entry("Ceiling/HostTriad/n:100/threads:8/manual_time", 1.0, role="ceiling", rate=bw, GBps=100.0))
    b.append(entry("Ceiling/OpenBLAS.SGEMM/M:64/N:64/K:64/threads:8/manual_time", 1.0, role="ceiling", rate=g,
                   GFLOPS=40.0))
    return {"context": {"cpu_model": "TestCPU", "host_name": "h", "parbench_schema": 1,
                        "parbench_counters": DECLARED}, "benchmarks": b}


def scan_run():
    """A family no rate chart of its own draws: GBps against n, segmented or not."""
    bw = ("GBps", "bandwidth")
    b = []
    for n in (1000, 65537, 1 << 20):
        for seg in ("none", "7"):
            b.append(entry("Scan/Seq/type:u32/n:%d/segment:%s/manual_time" % (n, seg), n * 1e-9,
                           role="baseline", rate=bw, GBps=8.0))
            for t in (1, 2):
                b.append(entry("Scan/OMP/type:u32/n:%d/segment:%s/threads:%d/manual_time" % (n, seg, t),
                               n * 1e-9 / t, rate=bw, GBps=8.0 * t))
    return {"context": {"cpu_model": "TestCPU", "host_name": "h", "parbench_schema": 1,
                        "parbench_counters": DECLARED}, "benchmarks": b}


def stats_of(benchmarks, label="syn", context=None):
    return report_stats.collect([results.Run(label, context or {}, [results.Entry(b) for b in benchmarks],
                                             label=label)])


def run_plot(*args):
    return subprocess.run([sys.executable, *PLOT, *args], capture_output=True, text=True, timeout=300)


class Spy:
    """Records the calls of a matplotlib Axes method while a chart draws."""

    def __init__(self, method):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        self.cls, self.method, self.calls = plt.Axes, method, []

    def __enter__(self):
        self.real = getattr(self.cls, self.method)
        real, calls = self.real, self.calls

        def spy(ax, *a, **k):
            calls.append((a, k))
            return real(ax, *a, **k)

        setattr(self.cls, self.method, spy)
        return self.calls

    def __exit__(self, *exc):
        setattr(self.cls, self.method, self.real)


class Derived(unittest.TestCase):
    def test_exact_numbers(self):
        self.assertEqual(derived.speedup(8.0, 0.8), 10.0)
        self.assertEqual(derived.efficiency(4.0, 0.8, 8), 0.625)
        self.assertEqual(derived.efficiency(0.08, 0.02, 8), 0.5)
        self.assertEqual(derived.fraction(50.0, 40.0), 1.25)
        self.assertEqual(derived.classify_fraction(1.0), "ok")
        self.assertEqual(derived.classify_fraction(1.0 + derived.CEILING_NOISE), "at ceiling")
        self.assertEqual(derived.classify_fraction(1.25), "above ceiling")
        self.assertEqual(derived.cv([1.0, 2.0, 3.0]), 0.5)
        self.assertIsNone(derived.cv([5.0]))
        self.assertIsNone(derived.cv([0.0, 0.0]))  # undefined, never NaN
        self.assertEqual(derived.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(derived.weak_efficiency(8.0, 10.0), 0.8)
        self.assertEqual(derived.intensity(300.0, 1200.0), 0.25)
        self.assertEqual(derived.roof(1000.0, 100.0, 0.25), 25.0)  # memory-bound
        self.assertEqual(derived.roof(1000.0, 100.0, 64.0), 1000.0)  # compute-bound
        self.assertEqual(derived.roof(None, 100.0, 2.0), 200.0)
        self.assertEqual(derived.roof(50.0, None, 2.0), 50.0)
        # (1, 9) fastest; (2, 5) and (4, 1) trade time for energy; (3, 6) and
        # (2, 7) are beaten by (2, 5); (4, 2) by (4, 1).
        self.assertEqual(derived.pareto([(3, 6), (1, 9), (4, 2), (2, 7), (2, 5), (4, 1)]), [(1, 9), (2, 5), (4, 1)])
        self.assertEqual(derived.pareto([]), [])

    def test_refuses_meaningless_inputs(self):
        for bad in (0, -1.0, float("nan"), float("inf"), None, "1", True):
            with self.assertRaises(ValueError):
                derived.speedup(1.0, bad)
            with self.assertRaises(ValueError):
                derived.fraction(1.0, bad)
        with self.assertRaises(ValueError):
            derived.efficiency(1.0, 1.0, 0)
        for bad in (0, -1.0, float("nan"), None):
            with self.assertRaises(ValueError):
                derived.intensity(1.0, bad)
        with self.assertRaises(ValueError):
            derived.roof(None, None, 1.0)


class Charts(unittest.TestCase):
    def test_speedup_over_the_baseline_and_efficiency_over_its_own_single_thread(self):
        stats = stats_of(synthetic()["benchmarks"])
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as calls:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_speedup(stats, cv)
        lines = {}
        for (x, y, *_), k in calls:
            lines.setdefault(k.get("label"), []).append((list(x), list(y)))
        # Left panel: over Naive (8 s); right panel: over its own 1-thread run.
        self.assertEqual(lines["OMP"][0], ([1, 2, 4, 8], [2.0, 4.0, 8.0, 10.0]))
        self.assertEqual(lines["OMP"][1], ([1, 2, 4, 8], [1.0, 1.0, 1.0, 0.625]))
        self.assertEqual(lines["OpenBLAS"][0], ([1, 8], [100.0, 400.0]))
        self.assertEqual(lines["OpenBLAS"][1], ([1, 8], [1.0, 0.5]))  # not 400 / 8
        titles = [t for _, t, _ in cv.made]
        self.assertIn("GEMM speedup and parallel efficiency: op=AB type=f32 M=64 N=64 K=64", titles)

    def test_heatmap_scales_are_anchored(self):
        stats = stats_of(synthetic()["benchmarks"])
        with tempfile.TemporaryDirectory() as tmp, Spy("imshow") as calls:
            report_charts.chart_heatmap(stats, report_draw.Canvas(tmp, "m"))
        (speed, sk), (eff, ek) = calls
        # [ranks][threads]: speedup over Seq (6 s) = 6 / (8 / (r t e)); efficiency e.
        want_speed, want_eff = [[0.75, 1.35], [1.2, 1.5]], [[1.0, 0.9], [0.8, 0.5]]
        for got, want in ((speed[0], want_speed), (eff[0], want_eff)):
            for row, wrow in zip(got, want):
                for v, w in zip(row, wrow):
                    self.assertAlmostEqual(v, w, places=12)
        self.assertEqual((sk["vmin"], sk["vmax"]), (0.0, 4))  # 0 .. ideal ranks x threads
        self.assertEqual((ek["vmin"], ek["vmax"]), (0.0, 1.0))  # 0 .. 1, whatever the data

    def test_heatmap_without_a_baseline_draws_efficiency_only(self):
        b = [e for e in synthetic()["benchmarks"] if not e["name"].startswith("KMeans/Seq/")]
        with tempfile.TemporaryDirectory() as tmp, Spy("imshow") as calls:
            report_charts.chart_heatmap(stats_of(b), report_draw.Canvas(tmp, "m"))
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0][1]["vmax"], 1.0)

    def test_files_before_schema_1_say_what_is_missing(self):
        old = [dict(e) for e in synthetic()["benchmarks"]]
        for e in old:
            del e["parbench"]
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(report_stats.NoData, "ci/upgrade-json"):
                report_charts.chart_speedup(stats_of(old), report_draw.Canvas(tmp, "m"))


class Ceiling(unittest.TestCase):
    def test_fractions_use_the_same_sources_ceiling_of_the_same_kind_and_device(self):
        b = synthetic()["benchmarks"]
        sort = SORT % ("%s", 4096, 4096, "")
        bw = ("GBps", "bandwidth")
        b += [entry("Ceiling/CUDA.Copy/bytes:1024/manual_time", 1.0, role="ceiling", device="gpu", rate=bw,
                    GBps=1000.0),
              entry(sort % "CUB", 1e-6, device="gpu", rate=bw, elements_per_second=4e9, GBps=500.0)]
        stats = stats_of(b)
        got = {(s.run.variant, s.arg("threads"), s.arg("n")): f for s, f, _ in report_stats.fractions(stats)}
        self.assertEqual(got[("OMP", "8", None)], 10 / 40)  # GEMM against the CPU GEMM ceiling
        self.assertEqual(got[("Naive", None, None)], 1 / 40)
        self.assertEqual(got[("Seq", None, None)], 1600 / 0.6 * 1e-9 / 100)  # points read once an iteration
        self.assertEqual(got[("Std", None, "4096")], 0.008)  # CPU sort against HostTriad
        self.assertEqual(got[("CUB", None, "4096")], 0.5)  # GPU sort against CUDA.Copy
        # Another source's ceiling is never used.
        other = stats_of([e for e in b if not e["name"].startswith("Ceiling/")], label="other")
        self.assertEqual(report_stats.fractions(stats + other), report_stats.fractions(stats))

    def test_a_fraction_above_one_is_flagged_not_drawn(self):
        b = synthetic()["benchmarks"]
        # 60 GFLOP/s against a 40 GFLOP/s ceiling: the ceiling was measured badly.
        b.append(entry(GEMM % ("OpenBLAS", "/threads:2"), 8 / 60, rate=("GFLOPS", "gemm_f32"), GFLOPS=60.0))
        stats = stats_of(b)
        with tempfile.TemporaryDirectory() as tmp, Spy("barh") as calls:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_ceiling(stats, cv)
        warnings = [f.text for f in cv.findings if f.severity == "warning"]
        self.assertEqual(len(warnings), 1, cv.findings)
        self.assertIn("OpenBLAS/op:AB/type:f32/M:64/N:64/K:64/threads:2 at 1.50", warnings[0])
        self.assertIn("measurement problem", warnings[0])
        hatched = [k for a, k in calls if k.get("hatch")]
        self.assertEqual(len(hatched), 1)
        drawn = [a[1] for a, k in calls if not k.get("hatch")]
        self.assertNotIn(1.5, drawn)  # never a 1.5 bar
        self.assertTrue(all(w <= 1.0 + derived.CEILING_NOISE for w in drawn))


SOR = "SOR/%s/field:vortex/M:%d/N:%d/sweeps:20/omega:1.5/%s/manual_time"


def sor_run():
    """SOR at two grids with a device copy ceiling; CUDA.Rows at 1, 2 and 4
    GPUs with known times (efficiency 1.0, 0.8, 0.5 against its 1-GPU run)."""
    bw = ("GBps", "bandwidth")
    b = [entry("Ceiling/CUDA.Copy/bytes:1073741824/manual_time", 1.0, role="ceiling", device="gpu", rate=bw,
               GBps=4000.0)]
    for m, gbps in ((1000, 3000.0), (4000, 3300.0)):
        b.append(entry(SOR % ("CUDA.Split", m, m, "block:128"), 0.01, device="gpu", rate=bw, GBps=gbps))
    for g, t in ((1, 8.0), (2, 5.0), (4, 4.0)):
        b.append(entry(SOR % ("CUDA.Rows", 4000, 4000, "gpus:%d" % g), t, device="gpu", rate=bw, GBps=100.0 / t))
    return {"context": {"cpu_model": "TestCPU", "host_name": "h", "parbench_schema": 1, "gpu": "TestGPU"},
            "benchmarks": b}


MLP = "MLP/%s/type:f32/widths:784-128-10/act:sigmoid/batch:%d%s/manual_time"


def mlp_run():
    """MLP at two batch sizes: samples/s and GEMM shares known exactly."""
    g = ("GFLOPS", "gemm_f32")
    b = []
    for batch, t in ((64, 0.004), (256, 0.008)):
        b.append(entry(MLP % ("Naive", batch, ""), t * 10, role="baseline", rate=g, GFLOPS=1.0,
                       samples_per_second=batch / (t * 10), gemm_share=0.99, batch=batch))
        for th in (1, 2):
            b.append(entry(MLP % ("OpenBLAS", batch, "/threads:%d" % th), t / th, rate=g, GFLOPS=10.0 * th,
                           samples_per_second=batch * th / t, gemm_share=0.5 if batch == 64 else 0.75, batch=batch))
    return {"context": {"cpu_model": "TestCPU", "host_name": "h", "parbench_schema": 1}, "benchmarks": b}


class MlpCharts(unittest.TestCase):
    def stats(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mlp.json")
            with open(path, "w") as f:
                json.dump(mlp_run(), f)
            return report_stats.collect([results.load(path)])

    def test_samples_per_second_vs_batch_at_every_thread_count(self):
        # One repetition each: plain lines, no error bars that could read as data.
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as calls, Spy("errorbar") as bars:
            report_charts.chart_mlp_throughput(self.stats(), report_draw.Canvas(tmp, "m"))
        self.assertEqual(bars, [])
        points = {k["label"]: (list(a[0]), list(a[1])) for a, k in calls if "label" in k}
        # Every thread count its own line: the most threads alone can hide that
        # fewer were faster.
        self.assertEqual(sorted(points), ["Naive", "OpenBLAS (threads 1)", "OpenBLAS (threads 2)"])
        self.assertEqual(points["OpenBLAS (threads 1)"][0], [64, 256])
        self.assertEqual(points["OpenBLAS (threads 2)"][0], [64, 256])
        for got, want in zip(points["OpenBLAS (threads 2)"][1], [64 * 2 / 0.004, 256 * 2 / 0.008]):
            self.assertAlmostEqual(got, want)

    def test_gemm_share_bars(self):
        with tempfile.TemporaryDirectory() as tmp, Spy("barh") as calls:
            report_charts.chart_mlp_share(self.stats(), report_draw.Canvas(tmp, "m"))
        gemm = [list(a[1]) for a, k in calls if k.get("label") == "GEMM calls"]
        rest = [list(a[1]) for a, k in calls if k.get("label") == "element-wise and the rest"]
        self.assertEqual(gemm, [[0.99, 0.99, 0.5, 0.75]])  # Naive 64, 256; OpenBLAS (2 threads) 64, 256
        self.assertEqual([round(x, 12) for x in rest[0]], [0.01, 0.01, 0.5, 0.25])


def stats_of_file(doc):
    """The Stats of `doc` read back from a file, as plots/plot reads it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return report_stats.collect([results.load(path)])


class SorAndGpuCharts(unittest.TestCase):
    def stats(self, doc):
        return stats_of_file(doc)

    def test_bandwidth_vs_grid_with_the_copy_ceiling(self):
        stats = self.stats(sor_run())
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines, Spy("axhline") as hlines, \
                Spy("set_ylim") as ylims, Spy("set_ylabel") as ylabels:
            report_charts.chart_sor_bandwidth(stats, report_draw.Canvas(tmp, "m"))
        points = {k["label"]: (list(a[0]), list(a[1])) for a, k in lines if "label" in k}
        # Megabytes of one field, so the axis reads 8 and 128, not 5e-05-like ticks.
        self.assertEqual(points["CUDA.Split (block 128)"], ([1000 * 1000 * 8 / 1e6, 4000 * 4000 * 8 / 1e6],
                                                            [3000.0, 3300.0]))
        # Units that match the device: every variant here is a GPU one.
        self.assertIn("GB/s per GPU (24 B per interior point per sweep)", [a[0] for a, _ in ylabels])
        self.assertEqual([a[0] for a, _ in hlines], [4000.0])
        self.assertIn("CUDA.Copy (gpu)", hlines[0][1]["label"])
        # From 0, and the ceiling below the top of the frame, not on it.
        self.assertEqual(ylims[-1][1]["bottom"], 0)
        self.assertGreater(ylims[-1][1]["top"], 1.05 * 4000.0)

    def test_gpu_scaling_uses_the_derived_efficiency(self):
        stats = self.stats(sor_run())
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as plots:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_gpus(stats, cv)
            # Named by what it shows: the family and the problem.
            self.assertTrue(os.path.exists(os.path.join(
                tmp, "gpus_sor_field-vortex-m-4000-n-4000-sweeps-20-omega-1.5.png")), os.listdir(tmp))
        # The time line (one repetition: a plain line), then the efficiency.
        lines = [list(a[1]) for a, k in plots if k.get("label") == "CUDA.Rows"]
        self.assertEqual(lines, [[8.0, 5.0, 4.0], [1.0, 0.8, 0.5]])
        ideal = [list(a[1]) for a, k in plots if a and len(a) > 2 and a[2] == report_draw.IDEAL]
        self.assertEqual(ideal, [[8.0, 4.0, 2.0]])

    def test_rank_counts_read_against_the_variants_one_gpu_run(self):
        # One run a rank count (ranks:P/gpus:G), merged: the series of 2 and
        # 4 ranks have no 1-GPU point of their own and are read against the
        # 1-rank, 1-GPU time (8 s), each from its first GPU count.
        bw = ("GBps", "bandwidth")
        doc = sor_run()
        doc["benchmarks"] += [entry(SOR % ("MPI.NCCL", 4000, 4000, "ranks:%d/gpus:%d" % (p, g)), t, device="gpu",
                                    rate=bw, GBps=1.0)
                              for p, g, t in ((1, 1, 8.0), (1, 2, 4.0), (2, 2, 5.0), (2, 4, 2.5), (4, 4, 4.0))]
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as plots:
            report_charts.chart_gpus(self.stats(doc), report_draw.Canvas(tmp, "m"))
        drawn = {}
        for a, k in plots:
            if k.get("label", "").startswith("MPI.NCCL"):
                drawn.setdefault(k["label"], []).append(list(a[1]))
        self.assertEqual(drawn["MPI.NCCL (ranks 1)"], [[8.0, 4.0], [1.0, 1.0]])
        self.assertEqual(drawn["MPI.NCCL (ranks 2)"], [[5.0, 2.5], [0.8, 0.8]])
        self.assertEqual(drawn["MPI.NCCL (ranks 4)"], [[4.0], [0.5]])
        ideal = [list(a[1]) for a, k in plots if a and len(a) > 2 and a[2] == report_draw.IDEAL]
        self.assertIn([4.0, 2.0], ideal)  # 8 / g at 2 and 4 GPUs

    def test_weak_scaling_is_drawn_against_a_flat_ideal(self):
        bw = ("GBps", "bandwidth")
        doc = sor_run()
        doc["benchmarks"] += [entry(SOR % ("CUDA.Rows", 4000, 4000, "scaling:weak/gpus:%d" % g), t, device="gpu",
                                    rate=bw, GBps=1.0) for g, t in ((1, 8.0), (2, 8.0), (4, 10.0))]
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as plots:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_gpus(self.stats(doc), cv)
        titles = sorted(t for _, t, _ in cv.made)
        self.assertEqual(len(titles), 2)  # strong and weak apart: scaling:weak is part of the problem
        self.assertIn("SOR weak scaling over GPUs", titles[1])
        lines = [list(a[1]) for a, k in plots if k.get("label") == "CUDA.Rows"]
        self.assertIn([8.0, 8.0, 10.0], lines)
        self.assertIn([1.0, 1.0, 0.8], lines)  # t(1) / t
        ideal = [list(a[1]) for a, k in plots if a and len(a) > 2 and a[2] == report_draw.IDEAL]
        self.assertIn([8.0, 8.0, 8.0], ideal)

    def test_one_gpu_count_is_no_scaling_chart(self):
        doc = sor_run()
        doc["benchmarks"] = [e for e in doc["benchmarks"] if "gpus:2" not in e["name"] and "gpus:4" not in e["name"]]
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(report_stats.NoData) as ctx:
                report_charts.chart_gpus(self.stats(doc), report_draw.Canvas(tmp, "m"))
        self.assertIn("1 GPU and more", str(ctx.exception))

    def test_a_multi_gpu_rate_is_a_fraction_of_the_ceilings_of_all_its_gpus(self):
        doc = sor_run()
        doc["benchmarks"].append(entry(SOR % ("CUDA.Rows", 1000, 1000, "gpus:2"), 1.0, device="gpu",
                                       rate=("GBps", "bandwidth"), GBps=6000.0))
        rows = {(s.run.variant, s.arg("M", int), s.arg("gpus", int)): f
                for s, f, _ in report_stats.fractions(self.stats(doc))}
        self.assertEqual(rows[("CUDA.Rows", 1000, 2)], 0.75)  # 6000 of 2 x 4000 GB/s
        self.assertEqual(rows[("CUDA.Split", 1000, None)], 0.75)  # 3000 of 4000 GB/s

    def test_gpus_is_a_knob_not_part_of_the_problem(self):
        rows = [s for s in self.stats(sor_run()) if s.run.variant == "CUDA.Rows"]
        self.assertEqual(len({s.problem() for s in rows}), 1)
        self.assertEqual(sorted(report_stats.label(s) for s in rows),
                         ["CUDA.Rows (gpus 1)", "CUDA.Rows (gpus 2)", "CUDA.Rows (gpus 4)"])


def energy_run():
    """GEMM at two sizes, three variants metered: at 64, V1 is fastest, V3
    cheapest, V2 beaten by V1 in both; GFLOP_per_J = GFLOPS x s / J."""
    declared = dict(DECLARED, joules_per_call={"kind": "energy", "unit": "J", "better": "lower"},
                    GFLOP_per_J={"kind": "rate", "unit": "GFLOP/J", "better": "higher"})
    g = ("GFLOPS", "gemm_f32")
    b = []
    for m, scale in ((64, 1.0), (128, 8.0)):
        for v, t, j in (("V1", 1.0, 300.0), ("V2", 2.0, 400.0), ("V3", 3.0, 150.0)):
            flops = 8e9 * scale
            b.append(entry("GEMM/%s/op:AB/type:f32/M:%d/N:%d/K:%d/manual_time" % (v, m, m, m), t * scale, rate=g,
                           device="gpu", GFLOPS=flops / (t * scale) / 1e9, joules_per_call=j * scale,
                           GFLOP_per_J=flops / 1e9 / (j * scale)))
    return {"context": {"cpu_model": "TestCPU", "host_name": "h", "parbench_schema": 1,
                        "parbench_counters": declared}, "benchmarks": b}


class EnergyCharts(unittest.TestCase):
    def stats(self, doc):
        return stats_of_file(doc)

    def test_time_against_energy_with_the_pareto_front(self):
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as plots:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_energy(self.stats(energy_run()), cv)
            self.assertEqual(len(cv.made), 2)  # one figure a problem, largest first
            self.assertIn("M=128", cv.made[0][1])
        front = [(list(a[0]), list(a[1])) for a, k in plots if k.get("label") == "Pareto front"]
        self.assertEqual(front[0], ([8.0, 24.0], [2400.0, 1200.0]))  # V1 then V3; V2 beaten by V1
        points = {k["label"]: (a[0][0], a[1][0]) for a, k in plots if k.get("label", "").startswith("V")}
        self.assertEqual(points["V2"], (2.0, 400.0))

    def test_work_per_joule_against_work_per_call(self):
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as plots:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_per_joule(self.stats(energy_run()), cv)
            self.assertEqual(len(cv.made), 1)
            self.assertIn("GFLOP per joule", cv.made[0][1])
        lines = {k["label"]: (list(a[0]), list(a[1])) for a, k in plots if "label" in k}
        # GFLOP a call 8 and 64; GFLOP per joule 8 / 150 at both sizes for V3.
        self.assertEqual(lines["V3"][0], [8.0, 64.0])
        self.assertAlmostEqual(lines["V3"][1][0], 8 / 150)
        self.assertAlmostEqual(lines["V3"][1][1], 8 / 150)

    def test_one_size_in_its_last_bits_is_one_size(self):
        # GB per joule x joules per call of three GPU counts on one problem
        # differ in their last bits: one size, so no per-joule chart (a chart
        # over a log axis of width 1e-15 drew nothing readable).
        doc = energy_run()
        doc["benchmarks"] = [e for e in doc["benchmarks"] if "M:64/" in e["name"]]
        for e, j in zip(doc["benchmarks"], (300.0, 300.0 * (1 + 2e-15), 300.0 * (1 - 4e-15))):
            e["GFLOP_per_J"] = 8.0 / 300.0
            e["joules_per_call"] = j
        self.assertEqual(len({e["GFLOP_per_J"] * e["joules_per_call"] for e in doc["benchmarks"]}), 3)
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(report_stats.NoData) as e:
                report_charts.chart_per_joule(self.stats(doc), report_draw.Canvas(tmp, "m"))
            self.assertIn("more than one size", str(e.exception))

    def test_no_energy_says_what_is_missing(self):
        for chart in (report_charts.chart_energy, report_charts.chart_per_joule):
            with tempfile.TemporaryDirectory() as tmp:
                with self.assertRaises(report_stats.NoData) as e:
                    chart(self.stats(synthetic()), report_draw.Canvas(tmp, "m"))
                self.assertIn("docs/", str(e.exception))


class Sources(unittest.TestCase):
    def test_two_files_are_two_labelled_series(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            doc = synthetic()
            json.dump(doc, open(a, "w"))
            for e in doc["benchmarks"]:
                e["real_time"] *= 2
                if "GFLOPS" in e:
                    e["GFLOPS"] /= 2
            json.dump(doc, open(b, "w"))
            runs = [results.load(a, "before"), results.load(b, "after")]
            stats = report_stats.collect(runs)
            with Spy("errorbar") as bars, Spy("plot") as plain:
                report_charts.chart_strong(stats, report_draw.Canvas(tmp, "m"))
            calls = [(a, k) for a, k in bars + plain if "label" in k]
            labels = [k["label"] for _, k in calls]
            self.assertIn("OMP [before]", labels)
            self.assertIn("OMP [after]", labels)
            points = {k["label"]: list(a[1]) for a, k in calls}
            for lbl, want in (("OMP [before]", [4.0, 2.0, 1.0, 0.8]), ("OMP [after]", [8.0, 4.0, 2.0, 1.6])):
                for got, w in zip(points[lbl], want):  # seconds from microseconds: not exact in binary
                    self.assertAlmostEqual(got, w, places=12)
            self.assertEqual(labels.count("OMP [before]"), 1)  # one line per variant and source, never joined
            self.assertEqual(labels.count("OMP [after]"), 1)
            out = os.path.join(tmp, "out")
            p = run_plot(a, b, "--label", "before", "--label", "after", "--out", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            md = open(os.path.join(out, "report.md")).read()
            self.assertIn("before", md)
            self.assertIn("after", md)
            p = run_plot(a, a, "--out", out)  # two inputs with one name
            self.assertEqual(p.returncode, 2)
            self.assertIn("--label once per input, or --merge", p.stderr)


class ChartRules(unittest.TestCase):
    """Rules every chart keeps, checked on the drawing calls."""

    def test_error_bars_only_where_there_are_repetitions(self):
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        with Spy("errorbar") as bars, Spy("plot") as plain:
            report_draw.errorbars(ax, [1, 2], [3, 4], [None, None], label="once", capsize=2)
            report_draw.errorbars(ax, [1, 2], [3, 4], [0.1, None], label="some", capsize=2)
        plt.close(fig)
        self.assertEqual([k["label"] for _, k in plain], ["once"])
        self.assertNotIn("capsize", plain[0][1])
        self.assertEqual([k["label"] for _, k in bars], ["some"])
        self.assertEqual(bars[0][1]["yerr"][0], 0.1)
        self.assertNotEqual(bars[0][1]["yerr"][1], bars[0][1]["yerr"][1])  # NaN: no bar at that point
        # The spread of one repetition is unknown, not zero.
        self.assertIsNone(report_stats._stdev([1.0]))

    def test_measured_lines_solid_ideal_dashed(self):
        cv = report_draw.Canvas(tempfile.gettempdir(), "m")
        cv.assign_styles(["OMP (threads 1)", "OMP (threads 2)", "Naive"], ["a", "b"])
        styles = [cv.style(k, src) for k in ("OMP (threads 1)", "OMP (threads 2)", "Naive") for src in ("a", "b")]
        # The first source's lines solid; another source's dotted, never dashed like an ideal line.
        self.assertEqual({st["ls"] for st in styles[::2]}, {report_draw.MEASURED})
        self.assertNotIn(report_draw.IDEAL, {st["ls"] for st in styles})
        self.assertEqual(len({(st["color"], st["marker"]) for st in styles}), 6)  # told apart by shade and marker
        self.assertEqual((report_draw.MEASURED, report_draw.IDEAL), ("-", "--"))

    def test_fractions_on_a_log_axis_are_dots_not_bars(self):
        b = synthetic()["benchmarks"]
        stats = stats_of(b)
        rows = report_stats.fractions(stats)
        tiny = [(s, 0.001 * (i + 1), c) for i, (s, _, c) in enumerate(rows)]  # below 0.05: a log axis
        with tempfile.TemporaryDirectory() as tmp, Spy("barh") as bars, Spy("errorbar") as dots:
            report_draw.draw_fractions(report_draw.Canvas(tmp, "m"), tiny, False, "f", "t", "GEMM")
        self.assertEqual(bars, [])
        self.assertEqual(len(dots), len(tiny))
        self.assertTrue(all(k.get("fmt") == "o" for _, k in dots))
        half = [(s, 0.5, c) for s, _, c in rows]
        with tempfile.TemporaryDirectory() as tmp, Spy("barh") as bars:
            report_draw.draw_fractions(report_draw.Canvas(tmp, "m"), half, False, "f", "t", "GEMM")
        self.assertEqual(len(bars), len(half))  # a linear axis: bars, from 0

    def test_roofline_points_sit_at_their_models_intensity_under_the_same_runs_roofs(self):
        doc = synthetic()
        stats = stats_of(doc["benchmarks"], context=doc["context"])
        points = {(s.run.variant, s.arg("threads")): (ai, rate) for s, ai, rate in report_stats.roofline_points(stats)}
        self.assertEqual(points[("Naive", None)], (1.0, 1.0))  # 8e9 flop / 8e9 B; 8e9 flop in 8 s
        self.assertEqual(points[("OMP", "8")], (1.0, 10.0))
        self.assertNotIn(("OpenBLAS", "1"), points)  # no models in its entry: not drawn
        peaks, bw = report_stats.roofs(stats)[("syn", "cpu")]
        self.assertEqual([p for p, _ in peaks], [40.0])
        self.assertEqual(bw[0], 100.0)
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_roofline(stats, cv)
            cv.finish()
        dots = {k["label"]: (list(a[0]), list(a[1])) for a, k in lines if k.get("ls") == "none"}
        self.assertEqual(dots["Naive"], ([1.0], [1.0]))
        self.assertEqual(sorted(dots["OMP (threads 8)"][1]), [10.0])
        roof = [(a[0], a[1]) for a, k in lines if k.get("ls") == report_draw.IDEAL]
        self.assertEqual(len(roof), 1)  # one compute ceiling, under the bandwidth slope
        for x, y in zip(*roof[0]):
            self.assertAlmostEqual(y, min(40.0, 100.0 * x))
        self.assertEqual([n for n, _, _ in cv.made], ["roofline_gemm_gemm-f32_cpu"])
        # Above the roof: a finding, not a result.
        name = GEMM % ("OMP", "/threads:16")
        fast = dict(doc["benchmarks"][1], seconds_per_call=0.01, name=name, run_name=name)
        with tempfile.TemporaryDirectory() as tmp:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_roofline(stats_of(doc["benchmarks"] + [fast], "syn", doc["context"]), cv)
            cv.finish()
        self.assertTrue(any(f.cause == "above-ceiling" and "above the roof" in f.text for f in cv.findings))
        # A bandwidth-rated entry naming the roof of its work is drawn under that roof alone.
        name = "SOR/OMP/field:vortex/M:100/N:100/sweeps:2/omega:1.5/threads:2/manual_time"
        sor = entry(name, 0.5, rate=("GBps", "bandwidth"), GBps=1.0, flops_per_call=3e9, bytes_per_call=1e9,
                    seconds_per_call=0.5)
        sor["parbench"]["rate"]["roof"] = "gemm_f64"
        dgemm = entry("Ceiling/OpenBLAS.DGEMM/M:64/N:64/K:64/threads:8/manual_time", 1.0, role="ceiling",
                      rate=("GFLOPS", "gemm_f64"), GFLOPS=20.0)
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_roofline(stats_of(doc["benchmarks"] + [sor, dgemm], "syn", doc["context"]), cv)
            cv.finish()
        self.assertIn("roofline_sor_gemm-f64_cpu", [n for n, _, _ in cv.made])
        roofs = [a[1] for a, k in lines if k.get("ls") == report_draw.IDEAL]
        self.assertEqual(sorted(max(r) for r in roofs), [20.0, 40.0])  # SOR: f64's 20; GEMM: f32's 40
        self.assertEqual(results.Entry(sor).roof, "gemm_f64")

    def test_roofline_needs_models_and_same_run_ceilings(self):
        doc = synthetic()
        no_ceiling = [b for b in doc["benchmarks"] if not b["name"].startswith("Ceiling/")]
        with self.assertRaisesRegex(report_stats.NoData, "no Ceiling entries"):
            report_charts.chart_roofline(stats_of(no_ceiling, context=doc["context"]), report_draw.Canvas("/", "m"))
        sorts = [b for b in doc["benchmarks"] if b["name"].startswith(("Sort/", "Ceiling/"))]
        with self.assertRaisesRegex(report_stats.NoData, "no entry declares a work model"):
            report_charts.chart_roofline(stats_of(sorts, context=doc["context"]), report_draw.Canvas("/", "m"))

    def test_rate_charts_draw_every_thread_count(self):
        b = []
        for m in (64, 128):
            for t in (1, 2, 4):
                name = "GEMM/OMP/op:AB/type:f32/M:%d/N:%d/K:%d/threads:%d/manual_time" % (m, m, m, t)
                b.append(entry(name, 1.0 / t, rate=("GFLOPS", "gemm_f32"), GFLOPS=float(t * m)))
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_gflops(stats_of(b), cv)
            cv.finish()
        drawn = {k["label"]: list(a[1]) for a, k in lines}
        self.assertEqual(drawn, {"OMP (threads %d)" % t: [64.0 * t, 128.0 * t] for t in (1, 2, 4)})

    def test_scaling_charts_draw_their_ideal_dashed(self):
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines, Spy("axhline") as hlines:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_strong(stats_of(synthetic()["benchmarks"]), cv)
            report_charts.chart_gpus(stats_of(sor_run()["benchmarks"]), cv)
            cv.finish()
        ideal = [a for a, k in lines if report_draw.IDEAL in a or k.get("ls") == report_draw.IDEAL]
        measured = [a for a, k in lines if k.get("ls") == report_draw.MEASURED]
        # Strong scaling of OMP from 4 s at 1 thread: ideal 4 / t; over GPUs from 8 s at 1 GPU: 8 / g.
        self.assertIn(([1, 2, 4, 8], [4.0, 2.0, 1.0, 0.5], report_draw.IDEAL), [tuple(a) for a in ideal])
        self.assertIn(([1, 2, 4], [8.0, 4.0, 2.0], report_draw.IDEAL), [tuple(a) for a in ideal])
        self.assertTrue(measured)
        self.assertTrue(any(a[0] == 1.0 and k.get("ls") == report_draw.IDEAL for a, k in hlines))  # efficiency 1

    def test_a_cpu_sor_run_reads_in_gb_s_not_per_gpu(self):
        b = [entry(SOR % ("OMP", m, m, "threads:2"), 0.01, rate=("GBps", "bandwidth"), GBps=gbps)
             for m, gbps in ((1000, 10.0), (4000, 12.0))]
        with tempfile.TemporaryDirectory() as tmp, Spy("set_ylabel") as ylabels:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_sor_bandwidth(stats_of(b), cv)
            cv.finish()
        self.assertEqual([a[0] for a, _ in ylabels], ["GB/s (24 B per interior point per sweep)"])

    def test_a_legend_beside_the_axes_widens_the_figure_not_narrows_the_axes(self):
        class Kept(report_draw.Canvas):
            def _render(self, fig, name):
                super()._render(fig, name)
                ax = fig.axes[0]
                renderer = fig.canvas.get_renderer()
                self.seen[name] = (fig.get_figwidth(), ax.get_position().width * fig.get_figwidth(),
                                   ax.get_legend().get_window_extent(renderer).x1, fig.bbox.width)

        def series(n, stem):
            return {"%s_%02d (threads %d)" % (stem, i, 2 ** (i % 4)):
                    [(2 ** k, (i + 1) * 2.0 ** k) for k in range(1, 6)] for i in range(n)}

        with tempfile.TemporaryDirectory() as tmp:
            cv = Kept(tmp, "m")
            cv.seen = {}
            report_draw.draw_lines(cv, series(3, "OMP"), "size", "s", "few", "t", "GEMM")
            report_draw.draw_lines(cv, series(30, "OMP.Blocked_with_a_long_name"), "size", "s", "many", "t", "GEMM")
            self.assertEqual(cv.finish(), [])
        (few_fig, few_ax, few_leg, few_px), (many_fig, many_ax, many_leg, many_px) = cv.seen["few"], cv.seen["many"]
        self.assertGreater(many_fig, few_fig + 2)  # two columns of long labels: inches wider
        self.assertGreater(many_ax, 0.9 * few_ax)  # the axes keep their width
        self.assertLessEqual(few_leg, few_px)  # each legend inside its picture
        self.assertLessEqual(many_leg, many_px)

    def test_every_legend_is_outside_the_axes(self):
        docs = [synthetic(), sor_run(), mlp_run()]
        stats = [s for d in docs for s in stats_of(d["benchmarks"], "syn", d["context"])]
        with tempfile.TemporaryDirectory() as tmp, Spy("legend") as calls:
            cv = report_draw.Canvas(tmp, "m")
            for name, chart in report_charts.CHARTS.items():
                try:
                    chart(stats, cv)
                except report_stats.NoData:
                    pass
            cv.finish()
        self.assertGreater(len(calls), 5)
        for _, k in calls:
            x, y = k["bbox_to_anchor"][:2]
            self.assertTrue(x > 1 or y >= 1, k)  # right of the axes, or above them
            self.assertIn(k["loc"], ("upper left", "lower left"))


def luminance(colour):
    r, g, b = colour[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


class Distinguishable(unittest.TestCase):
    """Lines a reader can tell apart: a variant's knob values are shades of
    its hue, labelled at the line's end; each source a line style and marker."""

    def gemm(self, threads, scale=1.0):
        b = []
        for m in (64, 128):
            for t in threads:
                name = "GEMM/OMP/op:AB/type:f32/M:%d/N:%d/K:%d/threads:%d/manual_time" % (m, m, m, t)
                b.append(entry(name, scale / t, rate=("GFLOPS", "gemm_f32"), GFLOPS=float(t * m) / scale))
        return b

    def test_thread_counts_are_shades_of_one_hue_labelled_at_the_end(self):
        import colorsys
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines, Spy("annotate") as notes:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_gflops(stats_of(self.gemm((1, 2, 4, 16))), cv)
            self.assertEqual(cv.finish(), [])
        colour = {k["label"]: k["color"] for _, k in lines}
        order = ["OMP (threads %d)" % t for t in (1, 2, 4, 16)]
        self.assertEqual(sorted(colour), sorted(order))
        self.assertEqual(len({colour[lbl] for lbl in order}), 4)  # four lines, four colours
        hues = [colorsys.rgb_to_hsv(*colour[lbl][:3])[0] for lbl in order]
        self.assertLess(max(hues) - min(hues), 0.02)  # one hue
        shade = [luminance(colour[lbl]) for lbl in order]
        self.assertEqual(shade, sorted(shade, reverse=True))  # light (1 thread) to dark (16)
        self.assertEqual({lbl: k["color"] for lbl, k in zip(order, [k for _, k in lines])}, colour)
        ends = {a[0]: (a[1], k["color"]) for a, k in notes}
        self.assertEqual(sorted(ends, key=int), ["1", "2", "4", "16"])
        for t in (1, 2, 4, 16):  # at the line's last point, in its colour
            (x, y), c = ends[str(t)]
            self.assertAlmostEqual(x, 128.0, places=9)  # (M*N*K)^(1/3)
            self.assertEqual((y, c), (128.0 * t, colour["OMP (threads %d)" % t]))

    def test_every_shade_of_every_hue_is_a_colour(self):
        import matplotlib.colors
        hues = [report_draw.plt().get_cmap("tab20")(i) for i in range(20)]
        for hue in hues:
            for n in (1, 2, 5, 16):
                shades = [report_draw.ramp(hue, i, n) for i in range(n)]
                for c in shades:  # within [0, 1]: rounding in HLS must not leave it
                    self.assertTrue(matplotlib.colors.is_color_like(c), c)
                self.assertEqual(len(set(shades)), n)

    def test_two_labels_are_two_line_styles_and_markers(self):
        runs = [results.Run(lbl, {}, [results.Entry(b) for b in self.gemm((1, 2), scale)], label=lbl)
                for lbl, scale in (("before", 1.0), ("after", 0.5))]
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines:
            cv = report_draw.Canvas(tmp, "m")
            cv.assign_styles(["OMP", "OMP (threads 1)", "OMP (threads 2)"], ["before", "after"])
            report_charts.chart_gflops(report_stats.collect(runs), cv)
            cv.finish()
        style = {k["label"]: (k["color"], k["ls"], k["marker"]) for _, k in lines}
        self.assertEqual(sorted(style), ["OMP (threads %d) [%s]" % (t, lbl) for t in (1, 2)
                                         for lbl in ("after", "before")])
        for t in (1, 2):
            before, after = style["OMP (threads %d) [before]" % t], style["OMP (threads %d) [after]" % t]
            self.assertEqual(before[0], after[0])  # one shade for one variant and thread count
            self.assertEqual(before[1], report_draw.MEASURED)
            self.assertNotEqual(before[1], after[1])  # the label is a line style ...
            self.assertNotEqual(before[2], after[2])  # ... and a marker
            self.assertNotEqual(after[1], report_draw.IDEAL)

    def test_the_checks_see_every_problem_not_only_those_drawn(self):
        b = []
        sizes = [64 * (i + 1) for i in range(report_draw.MAX_FIGS + 2)]
        for m in sizes:
            g = GEMM.replace("M:64/N:64/K:64", "M:%d/N:%d/K:%d" % (m, m, m))
            b.append(entry(g % ("Naive", ""), 8.0, role="baseline"))
            b.append(entry(g % ("OMP", "/threads:1"), 1.0))
            # The smallest problem is drawn last, beyond the limit: its 2 threads 800x slower.
            b.append(entry(g % ("OMP", "/threads:2"), 800.0 if m == sizes[0] else 0.5))
        with tempfile.TemporaryDirectory() as tmp:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_speedup(stats_of(b), cv)
            cv.finish()
        self.assertEqual(len(cv.made), report_draw.MAX_FIGS)
        self.assertEqual([d.items for d in cv.dropped],
                         [tuple(("GEMM", "op=AB type=f32 M=%d N=%d K=%d" % (m, m, m)) for m in sizes[1::-1])])
        low = [f.text for f in cv.findings if f.cause == "low-efficiency"]
        self.assertEqual(len(low), 1, cv.findings)
        self.assertIn("M=64 N=64 K=64: efficiency 0.000625 at 2 threads", low[0])

    def test_a_family_without_a_chart_of_its_own_gets_its_rate_against_size(self):
        doc = scan_run()
        with tempfile.TemporaryDirectory() as tmp, Spy("plot") as lines:
            cv = report_draw.Canvas(tmp, "m")
            report_charts.chart_rate(stats_of(doc["benchmarks"], "scan", doc["context"]), cv)
            self.assertEqual(cv.finish(), [])
        self.assertEqual(sorted(name for name, _, _ in cv.made),
                         ["rate_scan_gbps_n_type-u32_segment-7", "rate_scan_gbps_n_type-u32_segment-none"])
        self.assertEqual({section for _, _, section in cv.made}, {"Scan"})
        drawn = {k["label"]: list(a[1]) for a, k in lines if "label" in k}
        self.assertEqual(drawn["OMP (threads 2)"], [16.0, 16.0, 16.0])
        # A family another chart draws against size gets no generic chart.
        with tempfile.TemporaryDirectory() as tmp, self.assertRaises(report_stats.NoData):
            report_charts.chart_rate(stats_of([e for e in synthetic()["benchmarks"]
                                               if e["name"].startswith(("GEMM", "Sort"))]),
                                     report_draw.Canvas(tmp, "m"))


class Help(unittest.TestCase):
    def test_every_chart_kind_is_in_the_help(self):
        p = subprocess.run([os.path.join(ROOT, "plots", "plot"), "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        listed = re.findall(r"^  ([a-z_]+)\s", p.stdout.split("Charts (--chart NAME")[1].split("Derived figures")[0],
                            re.M)
        self.assertEqual(sorted(set(listed) - {"field"}), sorted(report_charts.CHARTS))


class OutputFolder(unittest.TestCase):
    def test_a_reused_folder_keeps_no_stale_chart(self):
        with tempfile.TemporaryDirectory() as tmp:
            syn = os.path.join(tmp, "syn.json")
            json.dump(synthetic(), open(syn, "w"))
            out = os.path.join(tmp, "out")
            self.assertEqual(run_plot(syn, "--out", out).returncode, 0)
            self.assertTrue(glob.glob(os.path.join(out, "speedup_*.png")))
            open(os.path.join(out, "notes.txt"), "w").write("mine")
            p = run_plot(syn, "--out", out, "--chart", "gflops")
            self.assertEqual(p.returncode, 0, p.stderr)
            left = sorted(f for f in os.listdir(out) if f.endswith(".png"))
            self.assertEqual(left, ["gflops_ab_f32.png"])
            self.assertTrue(os.path.exists(os.path.join(out, "notes.txt")))  # not the report's: kept

    def test_unusable_folder_is_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            syn = os.path.join(tmp, "syn.json")
            json.dump(synthetic(), open(syn, "w"))
            for out in (syn, os.path.join(syn, "sub"), "/proc/parbench-report"):
                p = run_plot(syn, "--out", out)
                self.assertEqual(p.returncode, 2, out)
                self.assertNotIn("Traceback", p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertRegex(p.stderr, r"^plot: --out ")


class BadInput(unittest.TestCase):
    def check(self, p, lines):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        got = [l for l in p.stderr.splitlines() if l.startswith("plot: ")]
        self.assertEqual(len(got), len(p.stderr.splitlines()), p.stderr)  # one line each, nothing else
        self.assertEqual(len(got), len(lines), p.stderr)
        for line, pattern in zip(got, lines):
            self.assertRegex(line, pattern)

    def test_missing_truncated_foreign_and_directory_inputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = open(os.path.join(DATA, "gb171.json")).read()
            cut = os.path.join(tmp, "cut.json")  # killed mid-run: recovered, with a warning
            open(cut, "w").write(text[: text.rfind('"name"')])
            foreign = os.path.join(tmp, "foreign.json")
            json.dump({"hello": [1, 2]}, open(foreign, "w"))
            out = os.path.join(tmp, "out")
            p = run_plot(os.path.join(tmp, "missing.json"), cut, foreign, tmp, os.path.join(DATA, "gb183.json"),
                         "--out", out)
            self.check(p, ["missing.json: no such file$",
                           r"cut.json: cut off mid-run after \d+ complete entries; ci/close-truncated .*cut.json "
                           "FIXED.json writes a closed copy$",
                           "foreign.json: not Google Benchmark JSON", "%s: is a directory$" % re.escape(tmp)])
            self.assertTrue(glob.glob(os.path.join(out, "gflops_*.png")))  # the readable files still charted
            # Every input refused: one line each, exit 2, and the earlier report left as it was.
            before = sorted(os.listdir(out))
            p = run_plot(cut, foreign, "--out", out)
            self.check(p, ["cut.json: cut off mid-run", "foreign.json: "])
            self.assertEqual(p.stdout, "")
            self.assertEqual(sorted(os.listdir(out)), before)

    def test_requested_chart_without_data(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run_plot(os.path.join(DATA, "gb171.json"), "--out", tmp, "--chart", "heatmap", "--chart", "gflops")
            self.check(p, [r"chart heatmap not drawn: no runs with both ranks and threads"])
            self.assertTrue(glob.glob(os.path.join(tmp, "gflops_*.png")))


# regress/upgrade.py migrates files written before the JSON said roles and
# devices: its table of the variants of that time is frozen history, the one
# place a tool may name them.
NAMES_EXEMPT = {os.path.join("regress", "upgrade.py")}


def python_files(folder):
    """Every file of folder/ (its subfolders too) that is Python: a .py file
    or a script with a python shebang."""
    for base, dirs, files in os.walk(os.path.join(ROOT, folder)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in sorted(files):
            path = os.path.join(base, f)
            if f.endswith(".py"):
                yield path
                continue
            with open(path, "rb") as fh:
                first = fh.readline()
            if first.startswith(b"#!") and b"python" in first:
                yield path


class NoVariantNames(unittest.TestCase):
    def test_tools_name_no_variant(self):
        """The tools read roles, devices and rates from the JSON: no variant
        (or ceiling) name of the registries may appear anywhere in plots/, nor
        in the Python of regress/ and ci/."""
        names = set()
        for f in glob.glob(os.path.join(ROOT, "impl", "*", "registry.cpp")):
            names |= set(re.findall(r'\{\s*"([A-Za-z0-9.]+)"', open(f).read()))
        ceiling = open(os.path.join(ROOT, "impl", "ceiling", "family.cpp")).read()
        names |= set(re.findall(r'(?:RunName\{\s*"Ceiling",\s*|gemm_name\()"([A-Za-z0-9.]+)"', ceiling))
        self.assertTrue({"Naive", "Seq", "Std", "cuBLAS", "HostTriad", "CUDA.Copy", "OpenBLAS.SGEMM"} <= names, names)
        paths = [p for p in sorted(glob.glob(os.path.join(ROOT, "plots", "*"))) if not os.path.isdir(p)]
        paths += list(python_files("regress")) + list(python_files("ci"))
        self.assertTrue(any(p.endswith(os.path.join("regress", "nightly.py")) for p in paths))
        found = []
        for path in paths:
            rel = os.path.relpath(path, ROOT)
            if rel in NAMES_EXEMPT:
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            for n in names:
                for m in re.finditer(r"(?<![A-Za-z0-9_.])%s(?![A-Za-z0-9_])" % re.escape(n), text):
                    found.append("%s:%d: %s" % (rel, text.count("\n", 0, m.start()) + 1, n))
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
