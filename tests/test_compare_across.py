#!/usr/bin/env python3
"""Tests of compare --across-hardware (regress/verdict/across.py, the
ceiling matching of regress/load/ceilings.py): two runs of different
machines read as each entry's fraction of its own run's ceiling, never by
time.

1. The ceiling an entry is read against, and the fraction samples, against
   exact numbers on a hand-made pair of runs (machine A: copy ceiling 100
   GB/s; machine B: 200 GB/s).
2. The verdicts and the document: SAME where both reach the same share of
   their ceiling whatever their times, FASTER where NEW reaches more, the
   benchmarks without a fraction listed with their reason, an error in NEW
   still ERROR, every row and the title marked across hardware.
3. The refusals: plain compare of the two machines (exit 3), runs without
   ceilings (exit 2), --run, --analyse, --history, --noise and --metric with
   --across-hardware (exit 2), a seed that differs (exit 3), nothing
   comparable (exit 3): one line each.
4. The committed reference verdict (an H100 and an H200 suite) is what the
   command writes today, byte for byte.
"""
import contextlib
import gzip
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

from regress import compare
from regress.load import ceilings, results
from regress.verdict.samples import collect

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

KINDS = {"GBps": {"kind": "rate", "unit": "GB/s", "better": "higher"},
         "GFLOPS": {"kind": "rate", "unit": "GFLOP/s", "better": "higher"},
         "n": {"kind": "problem"}, "throttled": {"kind": "clock"},
         "sm_clock_max_mhz": {"kind": "clock", "unit": "MHz"}}
CONTEXT = {"date": "2026-11-23T00:00:00+00:00", "host_name": "h", "parbench_schema": 1, "parbench_counters": KINDS,
           "parbench_git_revision": "abc", "cpu_model": "Xeon", "num_cpus": 16, "gpu_sm_count": 132,
           "parbench_build_type": "Release", "parbench_fixtures_version": "1", "parbench_seed": "7",
           "parbench_cxx_compiler": "GNU 13", "parbench_cuda_compiler": "NVIDIA 13.0"}
MACHINE_A = dict(CONTEXT, gpu="NVIDIA H100 80GB HBM3", num_cpus=64, sm_clock="1980")
MACHINE_B = dict(CONTEXT, gpu="NVIDIA H200", sm_clock="1785")
BW, F32 = ("GBps", "bandwidth"), ("GFLOPS", "gemm_f32")
REPS = 10
SPREAD = 0.001   # repetition i's rate: the rate x (1 + SPREAD x (i - 4.5)), symmetric about the rate
# A side's median fraction is that of its log values: the geometric mean of
# the two middle repetitions, the fraction x MID.
MID = math.sqrt((1 - SPREAD / 2) * (1 + SPREAD / 2))
SAME, GAINS, MULTI, ABOVE = ("Sort/CUDA.%s/n:1024%s/manual_time" % (v, g) for v, g in
                             (("Same", ""), ("Gains", ""), ("Multi", "/gpus:2"), ("Above", "")))
TILED, NO_RATE = "GEMM/CUDA.Tiled/M:64/manual_time", "Sort/CUDA.NoRate/n:1024/manual_time"
COPY, SGEMM = "Ceiling/CUDA.Copy/bytes:1024/manual_time", "Ceiling/cuBLAS.SGEMM/M:64/manual_time"


def entry(name, rate_value, seconds, rep, rate=BW, role="variant", clock=1980.0):
    e = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": REPS, "repetition_index": rep,
         "threads": 1, "iterations": 10, "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us",
         "n": 1024.0, "throttled": 0.0, "sm_clock_max_mhz": clock}
    pb = {"disposition": "passed", "role": role, "device": "gpu"}
    if rate:
        pb["rate"] = {"counter": rate[0], "ceiling": rate[1]}
        e[rate[0]] = rate_value
    e["parbench"] = pb
    return e


def series(name, rate_value, seconds, rate=BW, role="variant"):
    return [entry(name, rate_value * (1 + SPREAD * (i - 4.5)), seconds / (1 + SPREAD * (i - 4.5)), i, rate, role)
            for i in range(REPS)]


def machine_a():
    """Copy ceiling 100 GB/s (the best of two), an SGEMM ceiling; entries at 50 GB/s."""
    return (series(COPY, 100.0, 1e-3, role="ceiling") + series("Ceiling/CUDA.Copy/bytes:512/manual_time", 90.0, 1e-3,
                                                               role="ceiling")
            + series(SGEMM, 1000.0, 1e-3, F32, "ceiling")
            + series(SAME, 50.0, 1e-3) + series(GAINS, 50.0, 1e-3) + series(MULTI, 100.0, 1e-3)
            + series(ABOVE, 110.0, 1e-3) + series(TILED, 500.0, 1e-3, F32) + series(NO_RATE, 0.0, 1e-3, None))


def machine_b(gains=150.0):
    """Copy ceiling 200 GB/s, no SGEMM ceiling. SAME: 100 GB/s in half the
    time (the same share); GAINS: `gains` GB/s in the same time."""
    return (series(COPY, 200.0, 1e-3, role="ceiling")
            + series(SAME, 100.0, 0.5e-3) + series(GAINS, gains, 1e-3) + series(MULTI, 200.0, 1e-3)
            + series(ABOVE, 220.0, 1e-3) + series(TILED, 500.0, 1e-3, F32) + series(NO_RATE, 0.0, 1e-3, None))


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def write(self, name, entries, context):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump({"context": context, "benchmarks": entries}, f)
        return path

    def pair(self, base_ctx=None, new_ctx=None, **kw):
        return (self.write("a.json", machine_a(), base_ctx or MACHINE_A),
                self.write("b.json", machine_b(**kw), new_ctx or MACHINE_B))

    def tool(self, *args):
        """(exit status, stdout, stderr) of compare's main, in this process
        (the table goes to the real stdout: command() reads it)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = compare.main(list(args))
            except SystemExit as e:
                code = e.code
        self.assertNotIn("Traceback", err.getvalue())
        return code, out.getvalue(), err.getvalue()

    def command(self, *args):
        """The CompletedProcess of ci/compare's module."""
        p = subprocess.run([sys.executable, "-m", "regress.compare"] + list(args), cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def refused(self, code, args, words):
        got, _, err = self.tool(*args)
        self.assertEqual(got, code, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(words, err)
        return err


class Fractions(Base):
    def test_ceiling_of_an_entry(self):
        run = results.load(self.write("a.json", machine_a(), MACHINE_A))
        ceil = ceilings.run_ceilings(run)
        # The median of each ceiling's repetitions, the best of its kind
        # (100 over the smaller copy's 90), per kind and device.
        self.assertEqual(sorted((k[1:], round(v, 9)) for k, (v, _) in ceil.items()),
                         [(("bandwidth", "gpu"), 100.0), (("gemm_f32", "gpu"), 1000.0)])
        multi = next(e for e in run.entries if e.run_name == MULTI)
        self.assertAlmostEqual(ceilings.ceiling_for(multi, ceil)[0], 200.0)   # 2 GPUs: 2 x the one-GPU ceiling
        # Another run's ceiling is never used: the source is part of the key.
        other = results.Run("x.json", MACHINE_A, [results.Entry(e) for e in series(SAME, 50.0, 1e-3)])
        self.assertIsNone(ceilings.ceiling_for(other.entries[0], ceil))

    def test_fraction_samples_are_exact(self):
        a = collect(results.load(self.write("a.json", machine_a(), MACHINE_A)),
                    ceil=ceilings.run_ceilings(results.load(os.path.join(self.dir, "a.json"))))
        run_b = results.load(self.write("b.json", machine_b(), MACHINE_B))
        b = collect(run_b, ceil=ceilings.run_ceilings(run_b))
        for i in range(REPS):
            r = 1 + SPREAD * (i - 4.5)
            # 50 GB/s of a 100 GB/s ceiling, 100 of 200, 150 of 200, 100 on 2 GPUs of 2 x 100.
            self.assertAlmostEqual(a[SAME].values[i], -math.log(50.0 * r / 100.0), places=12)
            self.assertAlmostEqual(b[SAME].values[i], -math.log(100.0 * r / 200.0), places=12)
            self.assertAlmostEqual(b[GAINS].values[i], -math.log(150.0 * r / 200.0), places=12)
            self.assertAlmostEqual(a[MULTI].values[i], -math.log(100.0 * r / 200.0), places=12)
        self.assertEqual((a[SAME].ceiling, b[SAME].ceiling), (("bandwidth", 100.0), ("bandwidth", 200.0)))
        # No fraction: the ceilings themselves, no declared rate, no ceiling of the kind in that run.
        self.assertEqual(a[COPY].not_across, "a ceiling: what the others are read against")
        self.assertEqual(a[NO_RATE].not_across, "no rate read against a ceiling (parbench.rate)")
        self.assertEqual((len(a[TILED].values), b[TILED].values), (REPS, []))
        self.assertEqual(b[TILED].not_across, "its run measured no gemm_f32 ceiling on the gpu")


class Command(Base):
    def test_verdicts_on_fractions_never_times(self):
        a, b = self.pair()
        out = os.path.join(self.dir, "v.json")
        md = os.path.join(self.dir, "v.md")
        p = self.command("--across-hardware", a, b, "--json", out, "--markdown", md)
        self.assertEqual(p.returncode, 0, p.stderr)
        stdout, err = p.stdout, p.stderr
        with open(out) as f:
            doc = json.load(f)
        rows = {r["name"]: r for r in doc["benchmarks"]}
        # Half of the ceiling on both machines, in half the time on B: SAME.
        self.assertEqual(rows[SAME]["verdict"], "SAME")
        self.assertAlmostEqual(rows[SAME]["base"], 0.5 * MID, places=12)
        self.assertAlmostEqual(rows[SAME]["new"], 0.5 * MID, places=12)
        self.assertAlmostEqual(rows[SAME]["change"], 0.0, places=12)
        self.assertEqual(rows[SAME]["across_hardware"],
                         {"ceiling": "bandwidth", "base_ceiling": 100.0, "new_ceiling": 200.0})
        # The same time, 0.75 of B's ceiling against 0.5 of A's: FASTER by
        # 0.5 / 0.75 - 1 of the inverse fraction.
        self.assertEqual(rows[GAINS]["verdict"], "FASTER")
        self.assertAlmostEqual(rows[GAINS]["new"], 0.75 * MID, places=12)
        self.assertAlmostEqual(rows[GAINS]["change"], 0.5 / 0.75 - 1, places=12)
        self.assertEqual(rows[MULTI]["verdict"], "SAME")   # 2 GPUs: against 2 x each one-GPU ceiling
        # 1.1 of A's ceiling: a fraction that is no result, whatever the statistics say.
        self.assertEqual(rows[ABOVE]["verdict"], "UNRELIABLE")
        self.assertIn("BASE reaches 1.100 of its bandwidth ceiling", rows[ABOVE]["reason"])
        # Every row, the metric, the settings and the title say across hardware.
        self.assertTrue(all("across_hardware" in r for r in doc["benchmarks"]))
        self.assertEqual(doc["metric"]["name"], "fraction_of_ceiling")
        self.assertTrue(doc["settings"]["across_hardware"])
        self.assertEqual((doc["mode"], doc["across_hardware"]["base_machine"], doc["across_hardware"]["new_machine"]),
                         ("files", "Xeon, 64 cores, NVIDIA H100 80GB HBM3", "Xeon, 16 cores, NVIDIA H200"))
        self.assertIn("(two files, across hardware)", doc["title"])
        # Listed by name, each with its reason.
        self.assertEqual([r["name"] for r in doc["across_hardware"]["not_comparable"]],
                         sorted([COPY, "Ceiling/CUDA.Copy/bytes:512/manual_time", SGEMM, TILED, NO_RATE]))
        left = {r["name"]: r["reason"] for r in doc["across_hardware"]["not_comparable"]}
        itself = "a ceiling: what the others are read against"
        self.assertEqual(left, {COPY: itself, "Ceiling/CUDA.Copy/bytes:512/manual_time": itself, SGEMM: itself,
                                TILED: "NEW: its run measured no gemm_f32 ceiling on the gpu",
                                NO_RATE: "no rate read against a ceiling (parbench.rate)"})
        self.assertEqual(set(rows), {SAME, GAINS, MULTI, ABOVE})
        # One warning with the count; the console and the Markdown name both machines.
        self.assertEqual(err.strip(), "compare: warning: 5 benchmarks not comparable across hardware, left out (the "
                         "JSON lists each): 3 a ceiling: what the others are read against; 1 NEW: its run measured no "
                         "gemm_f32 ceiling on the gpu; 1 no rate read against a ceiling (parbench.rate)")
        lines = stdout.splitlines()
        self.assertTrue(lines[1].startswith("across hardware: "), stdout)
        self.assertIn("BASE ran on Xeon, 64 cores, NVIDIA H100 80GB HBM3; NEW on Xeon, 16 cores, NVIDIA H200.",
                      lines[1])
        self.assertIn("base frac", stdout)
        with open(md) as f:
            text = f.read()
        self.assertIn("across hardware: each entry's rate", text)
        self.assertIn("| base (fraction) | new (fraction) |", text)
        self.assertIn("<details><summary>5 not comparable across hardware</summary>", text)

    def test_scale_new_moves_the_fractions(self):
        # NEW's times x 1.5 (its rates / 1.5): GAINS reaches 0.5 of B's ceiling as A does.
        a, b = self.pair()
        out = os.path.join(self.dir, "v.json")
        code, _, err = self.tool("--across-hardware", a, b, "--scale-new", "1.5", "--json", out)
        self.assertEqual(code, 1, err)
        with open(out) as f:
            rows = {r["name"]: r for r in json.load(f)["benchmarks"]}
        self.assertEqual(rows[GAINS]["verdict"], "SAME")
        self.assertAlmostEqual(rows[GAINS]["new"], 0.5 * MID, places=12)
        # SAME's 0.5 of B's ceiling becomes 1/3: the inverse fraction + 50%, beyond the margin.
        self.assertEqual(rows[SAME]["verdict"], "SLOWER")
        self.assertAlmostEqual(rows[SAME]["change"], 0.5, places=12)

    def test_an_error_in_new_stays_an_error(self):
        broken = [dict(e, error_occurred=True, error_message="incorrect: 3 elements differ",
                       parbench=dict(e["parbench"], disposition="incorrect", reason="3 elements differ"))
                  if e["name"] == GAINS else e for e in machine_b()]
        out = os.path.join(self.dir, "v.json")
        code, _, err = self.tool("--across-hardware", self.write("a.json", machine_a(), MACHINE_A),
                                 self.write("b.json", broken, MACHINE_B), "--json", out)
        self.assertEqual(code, 1, err)
        with open(out) as f:
            row = next(r for r in json.load(f)["benchmarks"] if r["name"] == GAINS)
        self.assertEqual((row["verdict"], row["reason"]), ("ERROR", "incorrect: 3 elements differ"))
        self.assertEqual(row["across_hardware"], {"ceiling": "bandwidth", "base_ceiling": 100.0, "new_ceiling": None})

    def test_plain_compare_still_refuses_two_machines(self):
        a, b = self.pair()
        self.refused(3, (a, b), "runs not comparable: gpu is 'NVIDIA H100 80GB HBM3' in BASE and 'NVIDIA H200' "
                                "in NEW")

    def test_across_hardware_refusals(self):
        a, b = self.pair()
        bare_a = self.write("bare-a.json", [e for e in machine_a() if e["parbench"]["role"] != "ceiling"], MACHINE_A)
        bare_b = self.write("bare-b.json", [e for e in machine_b() if e["parbench"]["role"] != "ceiling"], MACHINE_B)
        err = self.refused(2, ("--across-hardware", a, bare_b), "NEW %s has none (no passed Ceiling entry)" % bare_b)
        self.assertTrue(err.startswith("compare: --across-hardware reads each entry against its own run's ceilings"))
        self.refused(2, ("--across-hardware", bare_a, bare_b), "BASE %s and NEW %s have none" % (bare_a, bare_b))
        self.refused(2, ("--across-hardware", "--run", "x", "y"), "--run and --analyse pair rounds on this one")
        self.refused(2, ("--across-hardware", "--analyse", self.dir), "--run and --analyse pair rounds on this one")
        self.refused(2, ("--across-hardware", a, b, "--history", self.dir), "--history and --noise are one machine's")
        self.refused(2, ("--across-hardware", a, b, "--noise", a), "--history and --noise are one machine's")
        self.refused(2, ("--across-hardware", a, b, "--metric", "GBps"), "compares the fraction of ceiling")
        # The machine and its toolchain may differ; the work and how it is measured may not.
        self.refused(3, ("--across-hardware", a, self.write("s.json", machine_b(), dict(MACHINE_B, parbench_seed="8"))),
                     "parbench_seed is '7' in BASE and '8' in NEW")
        cc = self.write("cc.json", machine_b(), dict(MACHINE_B, parbench_cuda_compiler="NVIDIA 12.8"))
        code, _, err = self.tool("--across-hardware", a, cc)
        self.assertEqual(code, 0, err)
        self.assertIn("warning: parbench_cuda_compiler differs (BASE 'NVIDIA 13.0', NEW 'NVIDIA 12.8'); compared "
                      "anyway", err)
        # Nothing but benchmarks without a fraction on both sides: not comparable, one line.
        only = self.write("only.json", series(COPY, 200.0, 1e-3, role="ceiling") + series(TILED, 5.0, 1e-3, F32),
                          MACHINE_B)
        self.refused(3, ("--across-hardware", self.write("t.json", series(COPY, 100.0, 1e-3, role="ceiling")
                                                         + series(TILED, 5.0, 1e-3, F32), MACHINE_A), only),
                     "nothing to compare across hardware: no benchmark has a fraction of a ceiling on both sides "
                     "(2 without one on a side: 1 BASE: its run measured no gemm_f32 ceiling on the gpu; 1 a "
                     "ceiling: what the others are read against)")


class Reference(unittest.TestCase):
    BASE = "results/reference/nvidia-h100-x4/suite-lanes.json.gz"
    NEW = "results/reference/nvidia-h200-x4/suite-beside.json.gz"
    VERDICT = "results/reference/nvidia-h200-x4/compare-across-hardware.json.gz"

    def test_the_reference_verdict_is_what_the_command_writes(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "v.json")
            p = Base.command(self, "--across-hardware", self.BASE, self.NEW, "--json", out)
            self.assertEqual(p.returncode, 1, p.stderr)   # changed-code SLOWER rows (KMeans, Sort)
            with open(out, "rb") as f:
                fresh = f.read()
        with gzip.open(os.path.join(ROOT, self.VERDICT), "rb") as f:
            self.assertEqual(fresh, f.read(), "the reference verdict differs from what the command writes now: "
                             "rerun the README's command")
        doc = json.loads(fresh)
        # Same code on both sides (the H100's and the H200's sm_90 builds):
        # the GEMMs against the library GEMM of their own machine are never
        # SLOWER; the bandwidth-rated entries, which do not gain the H200's
        # copy ceiling, are never SAME.
        same = [r for r in doc["benchmarks"] if r.get("code") == "same"]
        gemm = [r["verdict"] for r in same if r["across_hardware"]["ceiling"].startswith("gemm_")]
        bw = [r["verdict"] for r in same if r["across_hardware"]["ceiling"] == "bandwidth"]
        self.assertNotIn("SLOWER", gemm)
        self.assertNotIn("SAME", bw)
        self.assertGreater(gemm.count("SAME"), len(gemm) / 2)


if __name__ == "__main__":
    unittest.main()
