#!/usr/bin/env python3
"""Tests of the comparator (regress/compare.py, regress/verdict/, regress/stats/ranks.py, ci/compare).

1. Its statistics against exact numbers (the null distributions, Holm).
2. The command: verdicts of every kind, rates mirroring times, work that is
   not the same, unreliable clocks, fingerprints, bad input (one line, the
   documented exit code), byte-identical output, Google Benchmark's own
   compare.py reading our files.

Its accuracy on synthetic suites and its speed: tests/test_compare_accuracy.py.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from regress.run import rounds
from regress.stats import decide
from regress.stats import ranks as stats
from regress.verdict import document, judge, sequential
from regress.verdict.settings import Settings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TOOL = ["-m", "regress.compare"]
GB_COMPARE = "/usr/share/benchmark/compare.py"


# ------------------------------------------------------------ statistics

class Statistics(unittest.TestCase):
    def test_mann_whitney_null_distribution(self):
        # U for sizes 2 and 2: the 6 orderings give U = 0, 1, 2, 2, 3, 4.
        self.assertEqual(list(stats.null_counts("mw", 2, 2)), [1, 1, 2, 1, 1])
        c = stats.null_counts("mw", 5, 7)
        self.assertEqual(c.sum(), math.comb(12, 5))
        self.assertEqual(len(c), 36)
        self.assertTrue(np.array_equal(c, c[::-1]))

    def test_signed_rank_null_distribution(self):
        # W+ for 3 pairs: subsets of {1,2,3} by sum: 0,1,2,3,3,4,5,6.
        self.assertEqual(list(stats.null_counts("wsr", 3)), [1, 1, 1, 2, 1, 1, 1])
        self.assertEqual(stats.null_counts("wsr", 16).sum(), 2 ** 16)

    def test_exact_p_values_and_interval(self):
        # All 3 NEW values above all 3 BASE values: U = 9, P(U >= 9) = 1/20.
        r = stats.shift_test(stats.unpaired_effects([[0.0, 0.1, 0.2]], [[1.0, 1.1, 1.2]]), "mw", 3, 3)
        self.assertAlmostEqual(r["p_up"][0], 1 / 20)
        self.assertAlmostEqual(r["p_two"][0], 2 / 20)
        self.assertAlmostEqual(r["est"][0], 1.0)
        # 8 rounds all positive: one-sided p = 2^-8.
        r = stats.shift_test(stats.walsh_averages([np.linspace(0.01, 0.08, 8)]), "wsr", 8)
        self.assertAlmostEqual(r["p_up"][0], 1 / 256)
        self.assertAlmostEqual(r["est"][0], 0.045)
        self.assertLess(r["lo"][0], 0.045)
        self.assertGreater(r["hi"][0], 0.045)
        # 3 + 3 repetitions cannot give a 90% interval: it is unbounded.
        self.assertEqual(stats.ci_rank("mw", 3, 3, 0.90), 0)

    def test_holm(self):
        adj = stats.holm([0.01, 0.04, 0.03, float("nan")])
        self.assertTrue(np.allclose(adj[:3], [0.03, 0.06, 0.06]))
        self.assertTrue(math.isnan(adj[3]))
        # Benjamini-Hochberg: sorted .01 .03 .04 .5 -> 4p/i = .04 .06 .0533 .5, then the running minimum from the top.
        adj = stats.bh([0.01, 0.04, 0.03, 0.5, float("nan")])
        self.assertTrue(np.allclose(adj[:4], [0.04, 0.16 / 3, 0.16 / 3, 0.5]))
        self.assertTrue(math.isnan(adj[4]))
        self.assertTrue(np.isnan(stats.bh([float("nan")])).all())

    def test_sequential_looks_and_round_order(self):
        self.assertEqual(sequential.sequential_looks(24), [4, 6, 8, 12, 16, 24])
        self.assertEqual(sequential.sequential_looks(8), [4, 6, 8])
        self.assertEqual(sequential.sequential_looks(12), [4, 6, 8, 12])
        self.assertEqual(sequential.sequential_looks(48), [4, 6, 8, 12, 16, 24, 36, 48])
        looks = [4, 6, 8, 12, 16, 24]
        sk = sequential.look_settings(Settings.make("paired"), looks, 92, 8)
        self.assertEqual((sk.alpha, sk.correction, sk.family, sk.paired_test), (0.05 / 6, "bh", 92, "t"))
        self.assertAlmostEqual(sk.level, 1 - 0.1 / 6)
        self.assertEqual(sequential.look_settings(Settings.make("paired"), looks, 92, 12).paired_test, "wsr")
        # The signed-rank test's smallest p at 8 rounds (2/256) is just under
        # 0.05 / 6, so Benjamini-Hochberg passes it only when nearly every
        # benchmark of the family reaches it: the looks before 12 rounds use
        # the t-test. Holm at 0.05 / 6 over 92 needs 15 rounds.
        self.assertEqual(stats.min_two_sided_p("wsr", 8), 2 / 256)
        self.assertEqual(stats.sizes_for(0.05 / 6 / 92, "wsr"), 15)
        self.assertEqual(stats.sizes_for(0.05 / 92, "wsr"), 12)
        self.assertEqual(rounds.round_order(0), ("base", "new"))
        self.assertEqual(rounds.round_order(1), ("new", "base"))

    def test_paired_t_against_exact_numbers(self):
        # Rounds of log ratios 0.01, 0.02, 0.03, 0.04: mean 0.025, sd
        # 0.0129099, se 0.0064550, t 3.8730 on 3 degrees of freedom.
        r = stats.t_shift(np.array([[0.01, 0.02, 0.03, 0.04], [0.0, 0.0, 0.0, 0.0]]), level=0.90)
        self.assertAlmostEqual(r["est"][0], 0.025)
        self.assertAlmostEqual(r["p_two"][0], 0.030466, places=5)
        self.assertAlmostEqual(r["lo"][0], 0.025 - 2.353363 * 0.0064550, places=6)
        self.assertEqual((r["est"][1], r["p_two"][1]), (0.0, 1.0))

    def test_earlier_rejections_count_as_rejected(self):
        # One row left for a later look, p 0.02, of a family of 10: with the
        # other 9 counted as p = 1 it is rank 1 of 10 (BH 0.02 x 10 / 1 =
        # 0.2); with k of them rejected earlier it is rank k + 1 (0.2 / (k + 1)).
        def row(rejected):
            r = {"est": np.array([math.log(1.05)]), "lo": np.array([math.log(1.03)]),
                 "hi": np.array([math.log(1.07)]), "p_two": np.array([0.02]), "noise": np.array([0.005]),
                 "min_p": np.array([0.0])}
            out = decide.verdicts(r, 0.01, 1.0, 0.05, correction="bh", family=10, rejected=rejected)
            return out["verdict"][0], float(out["p_adj"][0])
        for rejected, verdict, p_adj in ((0, "AMBIGUOUS", 0.2), (1, "AMBIGUOUS", 0.1), (3, "SLOWER", 0.05),
                                         (9, "SLOWER", 0.02), (20, "SLOWER", 0.02)):
            v, p = row(rejected)
            self.assertEqual(v, verdict, rejected)
            self.assertAlmostEqual(p, p_adj, msg=rejected)

    def test_threshold_is_floor_or_noise_multiple(self):
        t = decide.thresholds([0.001, 0.01, float("nan")], 0.02, 4.0)
        self.assertTrue(np.allclose(t, [0.02, 0.04, 0.02]))


# -------------------------------------------------------------- accuracy

FLOPS = 2.0 * 64 ** 3
KINDS = {"GFLOPS": {"kind": "rate", "unit": "GFLOP/s", "better": "higher"},
         "seconds_per_call": {"kind": "time", "unit": "s", "better": "lower"},
         "flops_per_call": {"kind": "model", "unit": "flop"},
         "M": {"kind": "problem"}, "lloyd_iterations": {"kind": "result"}, "gemm_share": {"kind": "share"},
         "throttled": {"kind": "clock"}, "sm_clock_max_mhz": {"kind": "clock", "unit": "MHz"},
         "on_gpu": {"kind": "flag"}, "joules_per_call": {"kind": "energy", "unit": "J", "better": "lower"},
         "watts": {"kind": "power", "unit": "W"}}
CONTEXT = {"date": "2026-11-23T00:00:00+00:00", "host_name": "h", "parbench_schema": 1,
           "parbench_counters": KINDS, "parbench_git_revision": "abc", "cpu_model": "Xeon",
           "num_cpus": 16, "gpu": "NVIDIA H200", "gpu_driver": "580", "parbench_build_type": "Release",
           "parbench_fixtures_version": "1", "parbench_seed": "7", "parbench_cxx_compiler": "GNU 13",
           "parbench_cuda_compiler": "NVIDIA 13.0", "openblas_config": "OpenBLAS 0.3.26"}


def entry(name, seconds, rep, reps, device="gpu", disposition="passed", library=None, code=None, libver=None,
          **extra):
    e = {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
         "run_type": "iteration", "repetitions": reps, "repetition_index": rep, "threads": 1,
         "iterations": 10, "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us"}
    pb = {"disposition": disposition, "role": "variant", "device": device,
          "rate": {"counter": "GFLOPS", "ceiling": "gemm_f32"}}
    if disposition != "passed":
        e.update(error_occurred=True, error_message="incorrect: 3 elements differ")
        pb["reason"] = "3 elements differ"
    else:
        e.update(GFLOPS=FLOPS / seconds / 1e9, seconds_per_call=seconds, flops_per_call=FLOPS, M=64.0,
                 on_gpu=1.0 if device == "gpu" else 0.0)
        if device == "gpu":
            e.update(throttled=0.0, sm_clock_max_mhz=1980.0)
    if library:
        pb["library"] = library
    if code:
        pb["code"] = code
    if libver:
        pb["library_version"] = libver
    e["parbench"] = pb
    e.update(extra)
    return e


def snapshot(folder):
    """{path: bytes} of every file under folder: what a read-only command must leave as it was."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                out[os.path.join(root, f)] = fh.read()
    return out


def slurp(path):
    with open(path) as f:
        return f.read()


def series(name, center, reps, spread=0.002, seed=0, **kw):
    rng = np.random.default_rng(seed)
    return [entry(name, center * math.exp(spread * rng.standard_normal()), i, reps, **kw) for i in range(reps)]


def doc(entries, **ctx):
    c = dict(CONTEXT)
    c.update(ctx)
    return {"context": c, "benchmarks": entries}


def suite(scale=1.0, reps=10, seed=0):
    """Five GPU benchmarks and a CPU OpenBLAS one; NEW = BASE x scale for the first."""
    out = []
    for i, t in enumerate((1e-3, 2e-3, 5e-4, 3e-3, 1e-2)):
        out += series("GEMM/V%d/M:64/manual_time" % i, t * (scale if i == 0 else 1.0), reps, seed=seed * 10 + i)
    out += series("GEMM/OpenBLAS/M:64/threads:2/manual_time", 4e-3, reps, seed=seed * 10 + 9, device="cpu",
                  library="openblas")
    return out


class CommandBase(unittest.TestCase):
    """A scratch folder and the command run in it."""
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def write(self, name, content):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content, indent=1))
        return path

    def run_tool(self, *args):
        p = subprocess.run([sys.executable] + TOOL + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, cwd=self.dir)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def noise_file(self, value=0.002):
        """The run-to-run noise of every benchmark of suite(), as compare --json writes it."""
        names = sorted({e["name"] for e in suite()} | {"GEMM/V9/M:64/manual_time"})
        return self.write("noise.json", {"parbench_compare": 1, "mode": "paired",
                                         "benchmarks": [{"name": n, "noise": value} for n in names]})

    def verdicts(self, path):
        return {r["name"]: r for r in json.loads(slurp(path))["benchmarks"]}


class Command(CommandBase):
    def test_slower_same_and_exit_1(self):
        a = self.write("a.json", doc(suite(1.0, seed=1)))
        b = self.write("b.json", doc(suite(1.10, seed=2)))
        p = self.run_tool(a, b, "--json", "v.json", "--markdown", "v.md", "--noise", self.noise_file())
        self.assertEqual(p.returncode, 1, p.stderr)
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["verdict"], "SLOWER")
        self.assertAlmostEqual(v["GEMM/V0/M:64/manual_time"]["change"], 0.10, delta=0.01)
        self.assertAlmostEqual(v["GEMM/V0/M:64/manual_time"]["rate"]["change"], 1 / 1.1 - 1, delta=0.01)
        for i in range(1, 5):
            self.assertEqual(v["GEMM/V%d/M:64/manual_time" % i]["verdict"], "SAME")
            self.assertEqual(v["GEMM/V%d/M:64/manual_time" % i]["threshold"], 0.02)
        self.assertEqual(v["GEMM/OpenBLAS/M:64/threads:2/manual_time"]["threshold"], 0.10)
        # The console table: sorted by effect, SLOWER first, every threshold printed.
        lines = p.stdout.splitlines()
        self.assertTrue(lines[4].startswith("SLOWER"), p.stdout)
        self.assertIn("10.00%", p.stdout)
        self.assertIn("1 SLOWER, 5 SAME; exit 1", p.stdout)
        md = slurp(os.path.join(self.dir, "v.md"))
        self.assertIn("| SLOWER | `GEMM/V0/M:64/manual_time` |", md)
        self.assertIn("<details><summary>5 SAME</summary>", md)
        # Without --noise the prior for GPU GEMM (1.1% a run) allows 8.8% for
        # two processes' offsets: 10% is beyond it, SLOWER, exit 1, and the
        # table says where the noise came from.
        p = self.run_tool(a, b, "--json", "w.json")
        self.assertEqual(p.returncode, 1, p.stderr)
        r = self.verdicts(os.path.join(self.dir, "w.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual(r["verdict"], "SLOWER")
        self.assertEqual(r["run_noise_source"], "prior")
        self.assertAlmostEqual(r["run_noise"], 0.011)
        self.assertAlmostEqual(r["margin"], math.expm1(8 * 0.011))
        self.assertIn("1.10% prior", p.stdout)
        self.assertIn("note: run-to-run noise from the prior", p.stdout)
        # 5%: significant, beyond the 2% threshold, inside the 8.8% that
        # offsets can give: AMBIGUOUS with the reason and the rerun command.
        c = self.write("c.json", doc(suite(1.05, seed=2)))
        p = self.run_tool(a, c, "--json", "x.json")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.verdicts(os.path.join(self.dir, "x.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual(r["verdict"], "AMBIGUOUS")
        self.assertIn("differ by up to 9.20% here (8 x run-to-run noise 1.10%, from the prior", r["reason"])
        self.assertIn("decide with --history DIR (this machine's nightly series) or compare --run", r["reason"])

    def test_plot(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib missing")
        from plots import compare_plot
        a = self.write("a.json", doc(suite(1.0, seed=1)))
        b = self.write("b.json", doc(suite(1.10, seed=2)))
        p = self.run_tool(a, b, "--noise", self.noise_file(), "--plot", "c.png", "--json", "v.json")
        self.assertEqual(p.returncode, 1, p.stderr)
        with open(os.path.join(self.dir, "c.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        # Too many rows: every non-SAME one kept, then the largest SAME changes.
        rows = [{"name": "B%d" % i, "verdict": "SAME", "change": i / 1000.0} for i in range(100)]
        rows.insert(50, {"name": "S", "verdict": "SLOWER", "change": 0.2})
        picked = compare_plot.pick_rows(rows, limit=10)
        self.assertEqual(len(picked), 10)
        self.assertIn("S", [r["name"] for r in picked])
        self.assertEqual(min(r["change"] for r in picked if r["verdict"] == "SAME"), 0.091)
        # More changes than rows: every verdict keeps its largest changes.
        rows = [{"name": "S%d" % i, "verdict": "SLOWER", "change": 0.05 + i / 1000.0} for i in range(20)]
        rows += [{"name": "A%d" % i, "verdict": "AMBIGUOUS", "change": i / 1000.0} for i in range(3)]
        picked = compare_plot.pick_rows(rows, limit=10)
        self.assertEqual(len(picked), 10)
        self.assertEqual(sum(r["verdict"] == "AMBIGUOUS" for r in picked), 3)
        self.assertIn("S19", [r["name"] for r in picked])

    def test_faster_exits_0(self):
        a = self.write("a.json", doc(suite(1.0, seed=1)))
        b = self.write("b.json", doc(suite(0.8, seed=2)))
        p = self.run_tool(a, b, "--json", "v.json", "--noise", self.noise_file())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]["verdict"],
                         "FASTER")

    def test_rates_mirror_times(self):
        a = self.write("a.json", doc(suite(1.0, seed=3)))
        b = self.write("b.json", doc(suite(1.06, seed=4)))
        n = self.noise_file()
        self.run_tool(a, b, "--json", "t.json", "--noise", n)
        self.run_tool(a, b, "--json", "r.json", "--metric", "GFLOPS", "--noise", n)
        t, r = self.verdicts(os.path.join(self.dir, "t.json")), self.verdicts(os.path.join(self.dir, "r.json"))
        self.assertEqual({k: x["verdict"] for k, x in t.items()}, {k: x["verdict"] for k, x in r.items()})
        for k in t:
            self.assertAlmostEqual(t[k]["change"], r[k]["change"], places=9)
        self.assertEqual(t["GEMM/V0/M:64/manual_time"]["verdict"], "SLOWER")
        # Benchmarks without the counter are left out, saying how many; never an error.
        base, new = suite(seed=3), suite(1.06, seed=4)
        for e in base + new:
            if e["name"].startswith("GEMM/V4/"):
                del e["GFLOPS"]
        c, d = self.write("c.json", doc(base)), self.write("d.json", doc(new))
        p = self.run_tool(c, d, "--json", "m.json", "--metric", "GFLOPS")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 benchmarks have no GFLOPS counter; left out", p.stderr)
        self.assertNotIn("GEMM/V4/M:64/manual_time", self.verdicts(os.path.join(self.dir, "m.json")))
        p = self.run_tool(a, b, "--metric", "M")
        self.assertEqual(p.returncode, 2)
        self.assertIn("has no better direction", p.stderr)

    def test_energy_is_a_metric(self):
        """The same times at 10% more joules a call: SAME on time, SLOWER (worse)
        on energy; power has no better direction and is refused."""
        def metered(entries, extra):
            for e in entries:
                if "seconds_per_call" in e:
                    more = extra if e["name"].startswith("GEMM/V0/") else 1.0
                    e.update(joules_per_call=e["seconds_per_call"] * 300.0 * more, watts=300.0 * more)
            return doc(entries)
        a = self.write("a.json", metered(suite(1.0, seed=3), 1.0))
        b = self.write("b.json", metered(suite(1.0, seed=3), 1.10))
        n = self.noise_file()
        self.run_tool(a, b, "--json", "t.json", "--noise", n)
        self.run_tool(a, b, "--json", "e.json", "--metric", "joules_per_call", "--noise", n)
        t, e = self.verdicts(os.path.join(self.dir, "t.json")), self.verdicts(os.path.join(self.dir, "e.json"))
        self.assertEqual(t["GEMM/V0/M:64/manual_time"]["verdict"], "SAME")
        self.assertEqual(e["GEMM/V0/M:64/manual_time"]["verdict"], "SLOWER")
        self.assertAlmostEqual(e["GEMM/V0/M:64/manual_time"]["change"], 0.10, places=6)
        self.assertEqual(e["GEMM/V1/M:64/manual_time"]["verdict"], "SAME")
        p = self.run_tool(a, b, "--metric", "watts")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--metric watts is a power counter, which has no better direction", p.stderr)

    def test_missing_new_error(self):
        base = suite(seed=5)
        new = [e for e in suite(seed=6) if not e["name"].startswith("GEMM/V1/")]
        new += series("GEMM/V9/M:64/manual_time", 1e-3, 10)
        for e in new:
            if e["name"].startswith("GEMM/V2/"):
                e.clear()
                e.update(entry("GEMM/V2/M:64/manual_time", 0, 0, 1, disposition="incorrect"))
        new = [e for i, e in enumerate(new) if not (e["name"].startswith("GEMM/V2/") and e["repetition_index"] > 0)]
        a, b = self.write("a.json", doc(base)), self.write("b.json", doc(new))
        p = self.run_tool(a, b, "--json", "v.json")
        self.assertEqual(p.returncode, 1)
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["verdict"], "MISSING")
        self.assertEqual(v["GEMM/V9/M:64/manual_time"]["verdict"], "NEW")
        self.assertEqual(v["GEMM/V2/M:64/manual_time"]["verdict"], "ERROR")
        self.assertIn("incorrect", v["GEMM/V2/M:64/manual_time"]["reason"])

    def test_not_the_same_work_is_never_faster(self):
        base = suite(seed=7)
        new = suite(0.5, seed=8)
        for e in new:
            if e["name"].startswith("GEMM/V0/"):
                e["flops_per_call"] = FLOPS / 2
        a, b = self.write("a.json", doc(base)), self.write("b.json", doc(new))
        p = self.run_tool(a, b, "--json", "v.json")
        r = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual(r["verdict"], "NOT_SAME_WORK")
        self.assertIn("flops_per_call", r["reason"])
        self.assertEqual(p.returncode, 0)

    def test_entries_pair_by_gpu_model(self):
        # A suite spread over a host's GPUs names each entry's model: an
        # entry that ran on another model is not the same work, the rest
        # compare as before.
        base, new = suite(seed=7), suite(seed=8)
        for e in base + new:
            e["parbench"]["gpu"] = "NVIDIA H100 80GB HBM3"
        for e in new:
            if e["name"].startswith("GEMM/V1/"):
                e["parbench"]["gpu"] = "NVIDIA H200"
        a, b = self.write("a.json", doc(base)), self.write("b.json", doc(new))
        self.run_tool(a, b, "--json", "v.json")
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["verdict"], "NOT_SAME_WORK")
        self.assertIn("ran on NVIDIA H100 80GB HBM3 in BASE, NVIDIA H200 in NEW",
                      v["GEMM/V1/M:64/manual_time"]["reason"])
        self.assertEqual(v["GEMM/V2/M:64/manual_time"]["verdict"], "SAME")

    def test_result_counters(self):
        base, new = suite(seed=9), suite(seed=10)
        for e in base:
            e["lloyd_iterations"] = 20.0
        for e in new:
            e["lloyd_iterations"] = 21.0 if e["name"].startswith("GEMM/V3/") else 20.0
        a, b = self.write("a.json", doc(base)), self.write("b.json", doc(new))
        self.run_tool(a, b, "--json", "v.json")
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V3/M:64/manual_time"]["verdict"], "NOT_SAME_WORK")
        self.assertEqual(v["GEMM/V4/M:64/manual_time"]["verdict"], "SAME")

    def test_results_may_differ(self):
        # A change that sums floats in another order moves the inertia: by
        # default not the same work; with --results-may-differ the time is
        # compared and the row says how the result moved. An iteration count
        # that differs stays NOT_SAME_WORK either way.
        base, new = suite(seed=11), suite(seed=12)
        for e in base + new:
            e["lloyd_iterations"] = 10.0
            e["inertia"] = 35754548.158
        for e in new:
            e["inertia"] = 35754505.6664
            if e["name"].startswith("GEMM/V3/"):
                e["lloyd_iterations"] = 11.0
        kinds = dict(KINDS, inertia={"kind": "result"})
        a = self.write("a.json", dict(doc(base), context=dict(CONTEXT, parbench_counters=kinds)))
        b = self.write("b.json", dict(doc(new), context=dict(CONTEXT, parbench_counters=kinds)))
        self.run_tool(a, b, "--json", "v.json")
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V4/M:64/manual_time"]["verdict"], "NOT_SAME_WORK")
        self.assertIn("inertia", v["GEMM/V4/M:64/manual_time"]["reason"])
        self.run_tool(a, b, "--json", "w.json", "--results-may-differ")
        w = self.verdicts(os.path.join(self.dir, "w.json"))
        self.assertEqual(w["GEMM/V4/M:64/manual_time"]["verdict"], "SAME")
        self.assertIn("results differ: inertia 35754548.158 in BASE, 35754505.6664 in NEW",
                      w["GEMM/V4/M:64/manual_time"]["reason"])
        self.assertEqual(w["GEMM/V3/M:64/manual_time"]["verdict"], "NOT_SAME_WORK")
        self.assertIn("lloyd_iterations", w["GEMM/V3/M:64/manual_time"]["reason"])
        with open(os.path.join(self.dir, "w.json")) as f:
            self.assertTrue(json.load(f)["settings"]["results_may_differ"])
        with open(os.path.join(self.dir, "v.json")) as f:
            self.assertFalse(json.load(f)["settings"]["results_may_differ"])

    def test_a_measured_share_may_differ(self):
        # gemm_share is measured (the GEMM calls' fraction of an MLP step), not
        # the work: runs whose shares differ still compare.
        base, new = suite(seed=9), suite(seed=10)
        for e in base:
            e["gemm_share"] = 0.62
        for e in new:
            e["gemm_share"] = 0.67
        a, b = self.write("a.json", doc(base)), self.write("b.json", doc(new))
        self.run_tool(a, b, "--json", "v.json")
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V3/M:64/manual_time"]["verdict"], "SAME")

    def test_throttled_or_clock_is_unreliable(self):
        base, new = suite(seed=11), suite(1.2, seed=12)
        for e in new:
            if e["name"].startswith("GEMM/V0/"):
                e["throttled"] = 1.0
            if e["name"].startswith("GEMM/V1/"):
                e["sm_clock_max_mhz"] = 1755.0
        a, b = self.write("a.json", doc(base)), self.write("b.json", doc(new))
        p = self.run_tool(a, b, "--json", "v.json")
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["verdict"], "UNRELIABLE")
        self.assertIn("throttled on the NEW side", v["GEMM/V0/M:64/manual_time"]["reason"])
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["verdict"], "UNRELIABLE")
        self.assertIn("1755", v["GEMM/V1/M:64/manual_time"]["reason"])
        self.assertEqual(p.returncode, 0)

    def test_too_few_repetitions_do_not_gate(self):
        a = self.write("a.json", doc(suite(1.0, reps=10, seed=13)))
        b = self.write("b.json", doc(suite(1.5, reps=1, seed=14)))
        p = self.run_tool(a, b, "--json", "v.json")
        self.assertEqual(p.returncode, 0)
        self.assertIn("NEW has 1 repetition per benchmark", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        r = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual(r["verdict"], "AMBIGUOUS")
        self.assertIn("too few repetitions", r["reason"])

    def test_fingerprint(self):
        a = self.write("a.json", doc(suite(seed=15)))
        b = self.write("b.json", doc(suite(seed=16), gpu="NVIDIA H100 80GB HBM3"))
        p = self.run_tool(a, b)
        self.assertEqual(p.returncode, 3)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        self.assertIn("gpu is 'NVIDIA H200' in BASE and 'NVIDIA H100 80GB HBM3' in NEW", p.stderr)
        # Scoped: a GPU key does not matter when only CPU entries are compared.
        p = self.run_tool(a, b, "--filter", "OpenBLAS")
        self.assertEqual(p.returncode, 0, p.stderr)
        # A BLAS key matters to the BLAS entry only.
        b = self.write("c.json", doc(suite(seed=16), openblas_config="OpenBLAS 0.3.21"))
        self.assertEqual(self.run_tool(a, b).returncode, 3)
        self.assertEqual(self.run_tool(a, b, "--filter", "V[0-9]").returncode, 0)
        # Soft: a driver change warns and compares.
        b = self.write("d.json", doc(suite(seed=16), gpu_driver="590"))
        p = self.run_tool(a, b)
        self.assertEqual(p.returncode, 0)
        self.assertIn("gpu_driver differs", p.stderr)

    def test_bad_input(self):
        good = self.write("good.json", doc(suite(seed=17)))
        text = json.dumps(doc(suite(seed=18)), indent=1)
        aggr = doc([dict(e, run_type="aggregate", aggregate_name="median", name=e["name"] + "_median")
                    for e in suite(seed=19) if e["repetition_index"] == 0])
        cases = {"missing": os.path.join(self.dir, "nope.json"),
                 "empty": self.write("empty.json", ""),
                 "truncated": self.write("cut.json", text[: len(text) * 2 // 3]),
                 "not benchmark JSON": self.write("other.json", {"hello": [1, 2]}),
                 "not JSON": self.write("text.json", "name,time\nx,1\n"),
                 "only aggregates": self.write("aggr.json", aggr)}
        for what, path in cases.items():
            for args in ((good, path), (path, good)):
                p = self.run_tool(*args)
                self.assertEqual(p.returncode, 2, (what, p.stderr))
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, (what, p.stderr))
                self.assertTrue(p.stderr.startswith("compare: BASE" if args[0] == path else "compare: NEW"),
                                p.stderr)
        self.assertIn("cut off mid-run", self.run_tool(good, cases["truncated"]).stderr)
        self.assertEqual(self.run_tool(good).returncode, 2)
        self.assertEqual(self.run_tool(good, good, "--floor", "gpu=x").returncode, 2)

    def test_review_cases(self):
        """Odd inputs found in review: each is one line and its exit code, or handled."""
        base = suite(seed=30)
        a = self.write("a.json", doc(base))
        # A problem counter that is null on one side or in one repetition: no crash.
        new = suite(seed=31)
        for e in new:
            if e["name"].startswith("GEMM/V1/"):
                e["M"] = None
        p = self.run_tool(a, self.write("n.json", doc(new)), "--json", "v.json")
        self.assertEqual(p.returncode, 0, p.stderr)
        # A result counter varying in its last bits between repetitions is the same work.
        b1, b2 = suite(seed=32), suite(seed=33)
        for i, e in enumerate(b1):
            e["lloyd_iterations"] = 12.0
            e["inertia"] = 740667.168143 * (1 + 1e-12 * (i % 3))
        for e in b2:
            e["lloyd_iterations"], e["inertia"] = 12.0, 740667.168143
        kinds = dict(KINDS, inertia={"kind": "result"})
        p = self.run_tool(self.write("r1.json", dict(doc(b1), context=dict(CONTEXT, parbench_counters=kinds))),
                          self.write("r2.json", dict(doc(b2), context=dict(CONTEXT, parbench_counters=kinds))))
        self.assertNotIn("NOT_SAME_WORK", p.stdout)
        # A zero time in NEW is an error, not a dropped benchmark.
        zero = suite(seed=34)
        zero[0]["real_time"] = 0.0
        p = self.run_tool(a, self.write("z.json", doc(zero)), "--json", "z.json.out")
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a measurement", p.stdout)
        # An error entry in NEW shows even when --metric leaves its benchmark out.
        err = suite(seed=35)
        for e in err:
            if e["name"].startswith("GEMM/V3/"):
                e.update(error_occurred=True, error_message="incorrect: 1 element differs")
                e["parbench"].update(disposition="incorrect", reason="1 element differs")
                del e["GFLOPS"]
        p = self.run_tool(a, self.write("e.json", doc(err)), "--metric", "GFLOPS")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("ERROR", p.stdout)
        # One line and exit 2 each.
        two = doc(suite(seed=36))
        for args, text in (
                (("--filter", "nomatch"), "matches no benchmark"),
                (("--plot", "p.txt"), "must end in .png"),
                (("--noise", self.write("ns.json", {"parbench_compare": 1, "mode": "paired",
                                                    "benchmarks": [{"name": 3, "noise": "x"}]})),
                 "none of these benchmarks"),
                (("--metric", "cpu_time"), "manual time")):
            p = self.run_tool(a, self.write("t.json", two), *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)
        self.run_tool(a, a, "--json", "files-verdict.json")
        p = self.run_tool(a, self.write("t.json", two), "--noise", "files-verdict.json")
        self.assertEqual(p.returncode, 2)
        self.assertIn("two-file comparison measures no run-to-run noise", p.stderr)
        os.makedirs(os.path.join(self.dir, "bad"))
        self.write("bad/manifest.json", "{bad")
        p = self.run_tool("--analyse", "bad")
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a compare manifest", p.stderr)
        # FASTER rows: the largest gain first.
        order = document.ordered([{"name": "x", "verdict": "FASTER", "change": -0.05},
                                  {"name": "y", "verdict": "FASTER", "change": -0.4}])
        self.assertEqual([r["name"] for r in order], ["y", "x"])

    def test_paired_run_odd_binaries(self):
        fake = self.write("fake_bench.py", FAKE_BENCH)
        os.chmod(fake, 0o755)
        silent = self.write("silent_bench.py", FAKE_BENCH.replace("json.dump(", "0 and json.dump("))
        os.chmod(silent, 0o755)
        args = ["--", "--order-log=" + os.path.join(self.dir, "o.log")]
        p = self.run_tool("--run", "fake_bench.py", "silent_bench.py", "--workdir", "w", *args)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("wrote no JSON", p.stderr.splitlines()[-1])
        # Unfinished rounds: --analyse says how many are done.
        p = self.run_tool("--run", "fake_bench.py", "fake_bench.py", "--workdir", "w2", "--max-seconds", "0", *args)
        self.assertEqual(p.returncode, 4)
        p = self.run_tool("--analyse", "w2")
        self.assertEqual(p.returncode, 2)
        self.assertIn("0 of 4 rounds done", p.stderr)

    def test_rerun_is_byte_identical(self):
        a = self.write("a.json", doc(suite(1.0, seed=20)))
        b = self.write("b.json", doc(suite(1.05, seed=21)))
        outs = []
        for i in range(2):
            p = self.run_tool(a, b, "--json", "v%d.json" % i, "--markdown", "v%d.md" % i)
            outs.append((p.stdout, slurp(os.path.join(self.dir, "v%d.json" % i)),
                         slurp(os.path.join(self.dir, "v%d.md" % i))))
        self.assertEqual(outs[0], outs[1])

    def test_noise_file_raises_the_threshold(self):
        a = self.write("a.json", doc(suite(1.0, seed=22)))
        b = self.write("b.json", doc(suite(1.10, seed=23)))
        noise = {"parbench_compare": 1, "mode": "paired",
                 "benchmarks": [{"name": "GEMM/V0/M:64/manual_time", "noise": 0.04}]}
        n = self.write("noise.json", noise)
        p = self.run_tool(a, b, "--json", "v.json", "--noise", n)
        r = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
        # The threshold is the effect of interest; the run-to-run noise sets
        # the margin for offsets: 10% inside 8 x 4% is AMBIGUOUS, never SAME.
        self.assertAlmostEqual(r["threshold"], 0.02)
        self.assertAlmostEqual(r["margin"], math.expm1(8 * 0.04))
        self.assertEqual(r["verdict"], "AMBIGUOUS")
        self.assertEqual(r["run_noise_source"], "A/A")
        # The other five benchmarks: the file says nothing of them, and the note says so.
        self.assertIn("note: --noise covers 1 of 6 benchmarks; the other 5 use the prior", p.stdout)
        self.assertEqual(self.run_tool(a, b, "--noise", a).returncode, 2)
        # The reference results keep verdict files gzip-compressed: the same threshold from one.
        import gzip
        with open(n, "rb") as f, gzip.open(n + ".gz", "wb") as z:
            z.write(f.read())
        self.run_tool(a, b, "--json", "vz.json", "--noise", n + ".gz")
        rz = self.verdicts(os.path.join(self.dir, "vz.json"))["GEMM/V0/M:64/manual_time"]
        self.assertAlmostEqual(rz["margin"], math.expm1(8 * 0.04))

    def test_floor_per_family(self):
        a = self.write("a.json", doc(suite(1.0, seed=24)))
        b = self.write("b.json", doc(suite(1.10, seed=25)))
        self.run_tool(a, b, "--json", "v.json", "--floor", "GEMM/gpu=15", "--noise", self.noise_file())
        r = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual(r["threshold"], 0.15)
        self.assertEqual(r["verdict"], "SAME")

    def test_paired_run_of_one_binary_in_two_environments(self):
        # One bench, its sides told apart by their environment (two GPUs of
        # one host: CUDA_VISIBLE_DEVICES): here the NEW side's runs are 20%
        # slower; the sides' labels name their variables; a resume with
        # other variables is another comparison, refused.
        fake = self.write("fake_bench.py", FAKE_BENCH)
        os.chmod(fake, 0o755)
        order = os.path.join(self.dir, "order.log")
        args = ["--run", fake, fake, "--workdir", "rounds", "--base-env", "FAKE_SCALE=1.0",
                "--new-env", "FAKE_SCALE=1.2", "--json", "v.json"]
        p = self.run_tool(*args, "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 1, p.stderr)
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["verdict"], "SLOWER")
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["verdict"], "SAME")
        self.assertIn("BASE fake_bench.py [FAKE_SCALE=1.0] vs NEW fake_bench.py [FAKE_SCALE=1.2]", p.stdout)
        p = self.run_tool("--run", fake, fake, "--workdir", "rounds", "--new-env", "FAKE_SCALE=1.3", "--",
                          "--order-log=" + order)
        self.assertEqual(p.returncode, 2)
        self.assertIn("env differs", p.stderr)
        p = self.run_tool("--run", fake, fake, "--new-env", "NOEQUALS", "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 2)
        self.assertIn("want VAR=VALUE", p.stderr)

    def test_fixed_rounds_too_few_for_the_correction_are_said_first(self):
        # 8 fixed rounds give an exact signed-rank p of at least 2 / 2^8;
        # Holm at alpha 0.001 over 2 benchmarks needs p < 0.0005: nothing can
        # be decided, said before the first round, with the rounds that can
        # (12: 2 / 2^12 = 0.00049; 11 give 0.00098).
        fake = self.write("fake_bench.py", FAKE_BENCH)
        os.chmod(fake, 0o755)
        order = os.path.join(self.dir, "order.log")
        p = self.run_tool("--run", fake, fake, "--workdir", "w", "--rounds", "8", "--alpha", "0.001",
                          "--new-env", "FAKE_SCALE=1.2", "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 0, p.stderr)
        warning = ("compare: warning: 8 rounds cannot call any of 2 benchmarks SLOWER or FASTER (Holm over 2 "
                   "needs p < 0.0005, below what 8 paired rounds can give): use --rounds 12 or more")
        self.assertIn(warning, p.stderr)
        self.assertLess(p.stderr.index(warning), p.stderr.index("round 1/8"))
        self.assertIn("too few rounds to decide", p.stdout)
        # At the default alpha (0.025 a benchmark) 8 rounds can: no warning.
        p = self.run_tool("--run", fake, fake, "--workdir", "w2", "--rounds", "8", "--new-env", "FAKE_SCALE=1.2",
                          "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("cannot call any", p.stderr)

    def test_paired_run_of_one_binary_with_and_without_a_flag(self):
        # --new-arg: the NEW side's runs get a flag of their own (here one
        # that makes V0 20% slower); the label names it; a resume with
        # another flag is another comparison.
        fake = self.write("fake_bench.py", FAKE_BENCH)
        os.chmod(fake, 0o755)
        order = os.path.join(self.dir, "order.log")
        p = self.run_tool("--run", fake, fake, "--workdir", "rounds", "--new-arg=--fake-scale=1.2", "--json",
                          "v.json", "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 1, p.stderr)
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["verdict"], "SLOWER")
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["verdict"], "SAME")
        self.assertIn("NEW fake_bench.py [--fake-scale=1.2]", p.stdout)
        p = self.run_tool("--run", fake, fake, "--workdir", "rounds", "--new-arg=--fake-scale=1.0", "--",
                          "--order-log=" + order)
        self.assertEqual(p.returncode, 2)
        self.assertIn("side_args differs", p.stderr)
        p = self.run_tool(self.write("a.json", "{}"), self.write("b.json", "{}"), "--base-arg=--x")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--base-arg is for --run", p.stderr)

    def test_paired_run(self):
        """--run with a fake bench: rounds in A B B A order, resumable, verdicts."""
        fake = self.write("fake_bench.py", FAKE_BENCH)
        os.chmod(fake, 0o755)
        slow = self.write("slow_bench.py", FAKE_BENCH.replace("SCALE = 1.0", "SCALE = 1.015"))
        os.chmod(slow, 0o755)
        order = os.path.join(self.dir, "order.log")
        env_args = ["--", "--order-log=" + order]
        p = self.run_tool("--run", fake, slow, "--workdir", "rounds", "--max-seconds", "0", *env_args)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("0 of 4 rounds done", p.stderr)
        p = self.run_tool("--run", fake, slow, "--workdir", "rounds", "--json", "v.json", *env_args)
        self.assertEqual(p.returncode, 1, p.stderr)
        sides = slurp(order).split()
        self.assertEqual(sides[:8], ["fake", "slow", "slow", "fake", "fake", "slow", "slow", "fake"])
        # Sequential: after 4 rounds the A/A benchmark is SAME (its 98.3% t
        # interval inside the 2% GPU floor); the 1.5% one is not yet
        # significant under Benjamini-Hochberg at 0.05/6 over 2 benchmarks:
        # 2 more rounds, of it alone, make it SLOWER.
        self.assertEqual(len(sides), 12)
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["verdict"], "SLOWER")
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["verdict"], "SAME")
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["n_base"], 6)
        self.assertEqual(v["GEMM/V0/M:64/manual_time"]["rounds"], 6)
        self.assertEqual(v["GEMM/V1/M:64/manual_time"]["rounds"], 4)
        later = json.loads(slurp(os.path.join(self.dir, "rounds", "round-05-new.json")))
        self.assertEqual([e["name"] for e in later["benchmarks"]], ["GEMM/V0/M:64/manual_time"])
        self.assertIn("verdicts after 4 rounds: 1, 6 rounds: 1", p.stdout)
        # Resuming with all rounds present runs nothing more, and says the
        # same verdicts.
        p = self.run_tool("--run", fake, slow, "--workdir", "rounds", *env_args)
        self.assertEqual(slurp(order).split(), sides)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("verdicts after 4 rounds: 1, 6 rounds: 1", p.stdout)
        # A round cut off mid-file: --analyse says how far the rounds go, one
        # line, exit 2, and leaves the file as it is; --run runs it again.
        cut = os.path.join(self.dir, "rounds", "round-03-new.json")
        text = slurp(cut)
        self.write(os.path.join("rounds", "round-03-new.json"), text[:len(text) // 2])
        p = self.run_tool("--analyse", "rounds")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip().splitlines(), ["compare: rounds: 2 of 4 rounds done (the first look); "
                                                         "run the same compare --run again to go on"])
        self.assertEqual(slurp(cut), text[:len(text) // 2])
        p = self.run_tool("--run", fake, slow, "--workdir", "rounds", *env_args)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(slurp(order).split()), len(sides) + 1)
        # --noise for one of the two benchmarks: one note, though each look analyses the rounds.
        n = self.write("noise1.json", {"parbench_compare": 1, "mode": "paired",
                                       "benchmarks": [{"name": "GEMM/V1/M:64/manual_time", "noise": 0.001}]})
        p = self.run_tool("--run", fake, slow, "--workdir", "rounds3", "--noise", n, *env_args)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout.count("note: --noise covers 1 of 2 benchmarks"), 1, p.stdout)
        # A bench that refuses its arguments: one line, exit 2.
        p = self.run_tool("--run", fake, slow, "--workdir", "r2", "--", "--bad")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_delta_stops_what_cannot_find_it(self):
        """--delta 2%: a benchmark with 5% noise stops at the look at 6
        rounds (it cannot find 2% at any number of rounds), the quiet one is
        SAME at 4; without --delta the noisy one runs to the cap."""
        fake = self.write("fake_bench.py", FAKE_BENCH)
        os.chmod(fake, 0o755)
        args = ["--", "--order-log=" + os.path.join(self.dir, "o.log")]
        env = ["--base-env", "FAKE_NOISE_V1=0.05", "--new-env", "FAKE_NOISE_V1=0.05"]
        # An earlier A/A's noise (0.3% both): the plan starts the looks at 4.
        aa = self.write("aa.json", {"parbench_compare": 1, "mode": "paired", "benchmarks": [
            {"name": "GEMM/V%d/M:64/manual_time" % i, "noise": 0.003} for i in (0, 1)]})
        p = self.run_tool("--run", fake, fake, "--workdir", "d", "--delta", "2%", "--noise", aa, "--json", "d.json",
                          *env, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc_ = json.loads(slurp(os.path.join(self.dir, "d.json")))
        v = {r["name"]: r for r in doc_["benchmarks"]}
        noisy, quiet = v["GEMM/V1/M:64/manual_time"], v["GEMM/V0/M:64/manual_time"]
        self.assertEqual((quiet["verdict"], quiet["rounds"]), ("SAME", 4))
        self.assertEqual((noisy["verdict"], noisy["rounds"]), ("AMBIGUOUS", 6))
        self.assertIn("gives a change of 2.00% (--delta) less than an even chance by the cap's 24 rounds, and its "
                      "interval cannot fit inside +-2.00% there: stopped", noisy["reason"])
        self.assertNotIn("the cap (--max-rounds)", noisy["reason"])
        self.assertEqual((doc_["sequential"]["stopped"], doc_["sequential"]["delta"]), (1, 0.02))
        self.assertIn("--delta 2.00%: 1 stopped before the cap, unlikely to find it or to be SAME there", p.stdout)
        # Its rounds stop where --delta stopped them: analysed without it, or
        # resumed with another, they are refused.
        p = self.run_tool("--analyse", "d")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("d holds a sequential comparison run with --delta 2%: analyse it with the same", p.stderr)
        p = self.run_tool("--run", fake, fake, "--workdir", "d", "--delta", "5%", "--noise", aa, *env, *args)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("(delta differs)", p.stderr)
        p = self.run_tool("--run", fake, fake, "--workdir", "n", "--max-rounds", "8", "--json", "n.json", *env, *args)
        noisy = {r["name"]: r for r in json.loads(slurp(os.path.join(self.dir, "n.json")))["benchmarks"]}[
            "GEMM/V1/M:64/manual_time"]
        self.assertEqual((noisy["verdict"], noisy["rounds"]), ("AMBIGUOUS", 8))
        self.assertIn("the cap (--max-rounds)", noisy["reason"])
        # Replayed with --delta, the same rounds stop it at 6.
        p = self.run_tool("--analyse", "n", "--delta", "2%")
        self.assertIn("--delta 2.00%: 1 stopped before the cap", p.stdout)
        # Fixed rounds are decided once: --delta needs --sequential there.
        self.run_tool("--run", fake, fake, "--workdir", "f", "--rounds", "8", *env, *args)
        p = self.run_tool("--analyse", "f", "--delta", "2%")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("add --sequential to replay them look by look", p.stderr)
        p = self.run_tool("--analyse", "f", "--sequential", "--delta", "2%")
        self.assertEqual(p.returncode, 0, p.stderr)

    @unittest.skipUnless(os.path.exists(GB_COMPARE), "Google Benchmark's compare.py (libbenchmark-tools) missing")
    def test_google_benchmark_compare_reads_our_files(self):
        try:
            import scipy  # noqa: F401  compare.py needs it
        except ImportError:
            self.skipTest("scipy missing")
        a = self.write("a.json", doc(suite(seed=26)))
        b = self.write("b.json", doc(suite(1.1, seed=27)))
        for path in (a, b, os.path.join(HERE, "data", "gb183.json")):
            json.loads(slurp(path))
        p = subprocess.run([sys.executable, GB_COMPARE, "benchmarks", a, b], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertIn("GEMM/V0/M:64/manual_time", p.stdout)
        self.assertIn("OVERALL_GEOMEAN", p.stdout)
        # And a file bench wrote (Google Benchmark 1.8.3 layout, schema 1).
        real = os.path.join(HERE, "data", "gb183.json")
        p = subprocess.run([sys.executable, GB_COMPARE, "benchmarks", real, real], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)


class NoiseModel(CommandBase):
    """regress/stats/noise.py: the prior, a series' noise, --history; code identity and controls."""

    def test_the_prior_is_the_reference_runs_90th_percentile(self):
        from regress.stats import noise
        root = os.path.dirname(HERE)
        for device, paths in noise.PRIOR_SOURCES.items():
            table = noise.prior_table([os.path.join(root, p) for p in paths])
            for key, v in table.items():
                self.assertEqual(noise.PRIORS[key], v, key)
            self.assertEqual(noise.PRIORS[(device, None)], max(table.values()))
        self.assertEqual(noise.prior("gpu", "KMeans"), 0.028)
        self.assertEqual(noise.prior(None, "GEMM"), 0.105)

    def test_series_noise_from_first_differences(self):
        from regress.stats import noise
        # log steps 0.01, -0.02, 0.03, -0.01, 0.02: median 0.01, absolute
        # deviations 0, .03, .02, .02, .01, their median 0.02.
        x = np.cumsum([0.0, 0.01, -0.02, 0.03, -0.01, 0.02])
        s, z = noise.series_noise([list(np.exp(x))])
        self.assertAlmostEqual(s, 1.4826 * 0.02 / math.sqrt(2), places=12)
        self.assertEqual(len(z), 5)
        self.assertEqual(noise.series_noise([[1.0] * 5]), (None, []))          # too few runs
        self.assertEqual(noise.series_noise([[1.0] * 6])[0], noise.NOISE_MIN)  # constant: a resolution
        # Differences within pieces only: two pieces of 3 runs hold 4, too few.
        self.assertEqual(noise.series_noise([[1.0] * 3, [2.0] * 3]), (None, []))
        # A 26% step and a disturbed night are one and two large differences:
        # the noise of the series stays its night-to-night noise.
        rng = np.random.default_rng(5)
        base = 1e-3 * np.exp(0.01 * rng.standard_normal(30))
        quiet = noise.series_noise([list(base)])[0]
        stepped = base * np.where(np.arange(30) >= 15, 1.26, 1.0)
        stepped[3] *= 1.8
        self.assertLess(abs(noise.series_noise([list(stepped)])[0] / quiet - 1), 0.25)
        self.assertAlmostEqual(quiet, 0.01, delta=0.004)
        self.assertEqual(noise.series_noise([[1.0, float("nan"), 0.0, -1, None, 1.0]]), (None, []))

    def history(self, runs, **ctx):
        from regress.store import history
        h = os.path.join(self.dir, "hist")
        with history.History(h, create=True, log=lambda line: None) as store:
            for i in range(runs):
                d = doc(suite(1.0, reps=3, seed=100 + i), date="2026-11-%02dT00:00:00+00:00" % (i + 1), **ctx)
                store.ingest(self.write("h%d.json" % i, d))
        return h

    def test_history_gives_each_benchmark_its_noise(self):
        h = self.history(8)
        before = snapshot(h)
        a = self.write("a.json", doc(suite(1.0, seed=1)))
        b = self.write("b.json", doc(suite(1.30, seed=2)))
        p = self.run_tool(a, b, "--history", h, "--json", "v.json")
        self.assertEqual(p.returncode, 1, p.stderr)
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        r = v["GEMM/V0/M:64/manual_time"]
        self.assertEqual((r["verdict"], r["run_noise_source"]), ("SLOWER", "history 8"))
        self.assertIn("note: --history %s: run-to-run noise of 6 of 6 benchmarks" % h, p.stdout)
        self.assertIn(" h8 ", p.stdout)
        self.assertEqual(snapshot(h), before)  # reading changes nothing stored

    def test_history_bad_input(self):
        a = self.write("a.json", doc(suite(1.0, seed=1)))
        b = self.write("b.json", doc(suite(1.30, seed=2)))
        # Another machine's history: one line, exit 2, nothing stored changes.
        h = self.history(7, gpu="NVIDIA H100", gpu_sm_count=132)
        before = snapshot(h)
        p = self.run_tool(a, b, "--history", h)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("no runs of this machine (NVIDIA H200 / Xeon); it holds: NVIDIA H100 / Xeon", p.stderr)
        self.assertEqual(snapshot(h), before)
        p = self.run_tool(a, b, "--history", os.path.join(self.dir, "nowhere"))
        self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1), p.stderr)
        p = self.run_tool("--analyse", self.dir, "--history", h)
        self.assertEqual(p.returncode, 2)
        # One run: every series is short; the prior stands in, and the note says so.
        import shutil
        shutil.rmtree(h)
        h = self.history(1)
        p = self.run_tool(a, b, "--history", h, "--json", "v.json")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("6 with fewer than 5 differences within segments use the prior", p.stdout)
        self.assertEqual(self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
                         ["run_noise_source"], "prior")

    def test_same_code_never_gates(self):
        a = self.write("a.json", doc(series("GEMM/V0/M:64/manual_time", 1e-3, 10, seed=1, code="c0ffee")))
        b = self.write("b.json", doc(series("GEMM/V0/M:64/manual_time", 1.3e-3, 10, seed=2, code="c0ffee")))
        p = self.run_tool(a, b, "--json", "v.json")
        self.assertEqual(p.returncode, 0, p.stdout)
        r = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual((r["verdict"], r["same_code"], r["code"]), ("SLOWER", True, "same"))
        self.assertTrue(r["reason"].startswith("same code: machine or noise"))
        self.assertIn("1 of them with the same code (machine or noise, not gating); exit 0", p.stdout)
        c = self.write("c.json", doc(series("GEMM/V0/M:64/manual_time", 1.3e-3, 10, seed=2, code="beef")))
        p = self.run_tool(a, c, "--json", "w.json")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(self.verdicts(os.path.join(self.dir, "w.json"))["GEMM/V0/M:64/manual_time"]["code"],
                         "changed")
        # The same code with another library version is not the same code.
        d = self.write("d.json", doc(series("GEMM/V0/M:64/manual_time", 1.3e-3, 10, seed=2, code="c0ffee",
                                            libver="12.9")))
        self.assertEqual(self.run_tool(a, d).returncode, 1)

    def test_controls_that_moved_as_much(self):
        def side(scale, seed):
            return (series("GEMM/V0/M:64/manual_time", 1e-3 * scale, 10, seed=seed, code="v0")
                    + series("GEMM/cuBLAS/M:64/manual_time", 2e-3 * scale, 10, seed=seed + 1, library="cublas",
                             libver="12.9", code="lib"))
        a = self.write("a.json", doc(side(1.0, 1)))
        b = self.write("b.json", doc(side(1.3, 3)))
        self.run_tool(a, b, "--json", "v.json")
        r = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/manual_time"]
        self.assertEqual(r["verdict"], "SLOWER")
        self.assertIn("same code: machine or noise", r["reason"])
        self.assertRegex(r["reason"], r"the controls moved as much \(cublas, median \+(29\.9|30\.0)\d% over 1\)")
        self.assertEqual(r["control"]["n"], 1)
        # The project's code changed and the control did not move: no note.
        b2 = (series("GEMM/V0/M:64/manual_time", 1.3e-3, 10, seed=4, code="v1")
              + series("GEMM/cuBLAS/M:64/manual_time", 2e-3, 10, seed=5, library="cublas", libver="12.9",
                       code="lib"))
        p = self.run_tool(a, self.write("b2.json", doc(b2)), "--json", "w.json")
        self.assertEqual(p.returncode, 1)
        r = self.verdicts(os.path.join(self.dir, "w.json"))["GEMM/V0/M:64/manual_time"]
        self.assertNotIn("controls", r.get("reason", ""))
        self.assertAlmostEqual(r["control"]["change"], 0.0, delta=0.01)

    def test_a_faster_bound_is_printed_on_the_faster_side(self):
        self.assertAlmostEqual(judge.bound(0.357, True), 1 / 1.357 - 1)
        self.assertEqual(judge.bound(0.357, False), 0.357)


# A stand-in for bench: writes Google Benchmark JSON for two benchmarks, V0
# scaled by SCALE, with a little noise; logs which binary ran.
# The interpreter running the test: `env python3` may find a slow shim first.
FAKE_BENCH = "#!%s\n" % sys.executable + r'''import json, os, random, sys
SCALE = 1.0
SCALE *= float(os.environ.get("FAKE_SCALE", "1"))
args = sys.argv[1:]
for a in args:
    if a.startswith("--fake-scale="):
        SCALE *= float(a.split("=", 1)[1])
if "--bad" in args:
    print("bench: unknown flag --bad", file=sys.stderr); sys.exit(2)
if "--benchmark_list_tests" in args:
    print("GEMM/V0/M:64/manual_time"); print("GEMM/V1/M:64/manual_time"); sys.exit(0)
if "--list-devices" in args:
    print("gpu GEMM/V0/M:64/manual_time"); print("gpu GEMM/V1/M:64/manual_time"); sys.exit(0)
out = [a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out=")][0]
log = [a.split("=", 1)[1] for a in args if a.startswith("--order-log=")][0]
with open(log, "a") as f:
    f.write(os.path.basename(sys.argv[0]).split("_")[0] + "\n")
ctx = {"parbench_schema": 1, "parbench_counters": {}, "gpu": "G", "parbench_build_type": "Release"}
def e(name, t):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
            "threads": 1, "iterations": 1, "real_time": t, "cpu_time": t, "time_unit": "us",
            "parbench": {"disposition": "passed", "role": "variant", "device": "gpu"}}
r = random.Random(os.path.basename(out))  # the same noise for a round's file on every run of the test
import re
flt = ([a.split("=", 1)[1] for a in args if a.startswith("--benchmark_filter=")] or ["."])[0]
rows = [e("GEMM/V0/M:64/manual_time", 100 * SCALE * (1 + 0.003 * r.gauss(0, 1))),
        e("GEMM/V1/M:64/manual_time", 50 * (1 + float(os.environ.get("FAKE_NOISE_V1", "0.003")) * r.gauss(0, 1)))]
json.dump({"context": ctx, "benchmarks": [x for x in rows if re.search(flt, x["name"])]}, open(out, "w"))
'''


if __name__ == "__main__":
    unittest.main()
