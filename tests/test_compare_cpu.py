#!/usr/bin/env python3
"""Tests of the comparator's CPU verdicts (issue 65): SAME as an equivalence
test, nothing in common as an error, duet rounds, the instruction-count
instrument.

The statistics and the command in general: tests/test_compare.py, whose
helpers (entry, series, doc) build the inputs here.
"""
import gzip
import json
import math
import os
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from test_compare import CommandBase, doc, series, slurp  # noqa: E402

from regress.run import duet, instructions  # noqa: E402
from regress.stats import decide  # noqa: E402
from regress.verdict import instrument  # noqa: E402
from regress.verdict.rows import Row  # noqa: E402

# A stand-in for a CPU bench: --list-devices, two benchmarks (V0 scaled by
# SCALE), and in each run a line in the order log with what the comparator
# set for it (duet side, cores, OpenMP places). FAKE_CONTEXT: a context key
# to set (a hard fingerprint key that differs).
CPU_BENCH = "#!%s\n" % sys.executable + r'''import json, os, random, re, sys
SCALE = 1.0
args = sys.argv[1:]
NAMES = ["GEMM/V0/M:64/threads:1/manual_time", "GEMM/V1/M:64/threads:1/manual_time"]
flt = ([a.split("=", 1)[1] for a in args if a.startswith("--benchmark_filter=")] or ["."])[0]
if "--benchmark_list_tests" in args or "--list-devices" in args:
    for n in NAMES:
        if re.search(flt, n):
            print(("cpu " if "--list-devices" in args else "") + n)
    sys.exit(0)
out = [a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out=")][0]
log = [a.split("=", 1)[1] for a in args if a.startswith("--order-log=")][0]
with open(log, "a") as f:
    f.write(json.dumps({"who": os.path.basename(sys.argv[0]).split("_")[0],
                        "duet": os.environ.get("PARBENCH_DUET", ""), "places": os.environ.get("OMP_PLACES", ""),
                        "cores": sorted(os.sched_getaffinity(0)), "names": [n for n in NAMES if re.search(flt, n)]})
            + "\n")
ctx = {"parbench_schema": 1, "parbench_counters": {}, "cpu_model": os.environ.get("FAKE_CPU", "C"),
       "num_cpus": 2, "parbench_build_type": "Release"}
def e(name, t):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
            "threads": 1, "iterations": 1, "real_time": t, "cpu_time": t, "time_unit": "us",
            "parbench": {"disposition": "passed", "role": "variant", "device": "cpu"}}
r = random.Random(os.path.basename(out))
rows = [e(NAMES[0], 100 * SCALE * (1 + 0.003 * r.gauss(0, 1))), e(NAMES[1], 50 * (1 + 0.003 * r.gauss(0, 1)))]
json.dump({"context": ctx, "benchmarks": [x for x in rows if re.search(flt, x["name"])]}, open(out, "w"))
'''


def lines(path):
    return [json.loads(x) for x in slurp(path).splitlines()]


class Equivalence(unittest.TestCase):
    """SAME needs the interval inside +-floor, whatever the threshold."""

    def verdict(self, lo, hi, noise, floor, est=0.0, p=0.5):
        r = {"est": np.array([est]), "lo": np.log1p(np.array([lo])), "hi": np.log1p(np.array([hi])),
             "p_two": np.array([p]), "noise": np.array([noise]), "min_p": np.array([1e-6]),
             "run_noise": np.array([np.nan])}
        return decide.verdicts(r, floor, 1.0)

    def test_an_interval_inside_the_threshold_but_not_the_floor_is_not_same(self):
        # The review's case: +30% [+19.6%, +41.3%] under a 42.8% threshold.
        r = self.verdict(0.196, 0.413, 0.428, 0.10, est=np.log1p(0.30), p=0.001)
        self.assertEqual(r["verdict"][0], "AMBIGUOUS")
        self.assertAlmostEqual(r["threshold"][0], 0.428)
        self.assertEqual(r["floor"][0], 0.10)
        self.assertEqual(self.verdict(-0.03, 0.03, 0.05, 0.02)["verdict"][0], "AMBIGUOUS")
        self.assertEqual(self.verdict(-0.03, 0.03, 0.05, 0.05)["verdict"][0], "SAME")
        self.assertEqual(self.verdict(-0.019, 0.019, 0.001, 0.02)["verdict"][0], "SAME")


class Margin(unittest.TestCase):
    def test_the_cpu_multiple_is_what_the_committed_aa_pairs_justify(self):
        docs = []
        for path in decide.CPU_AA_PAIRS:
            with gzip.open(os.path.join(ROOT, path), "rt") as f:
                docs.append(json.load(f))
        self.assertGreaterEqual(sum(len(d["benchmarks"]) for d in docs), 32)
        self.assertEqual(decide.justified_multiple(docs), decide.RUN_MULTIPLES["cpu"])
        self.assertEqual(decide.run_multiple_for("gpu"), 8.0)
        self.assertEqual(decide.run_multiple_for(None), decide.RUN_MULTIPLES["cpu"])

    def test_justified_multiple_exact(self):
        # 0.04 / (0.01 x 1) = 4 and 0.05 / (0.01 x 2) = 2.5: 4 x 1.25 = 5.
        rows = [{"device": "cpu", "change": math.expm1(0.04), "run_noise": 0.01},
                {"device": "cpu", "change": math.expm1(-0.02), "run_noise": 0.01},
                {"device": "gpu", "change": math.expm1(0.5), "run_noise": 0.01},
                {"device": "cpu", "change": None, "run_noise": 0.01}]
        docs = [{"settings": {"run_noise_tail": 1.0}, "benchmarks": rows},
                {"settings": {"run_noise_tail": 2.0}, "benchmarks": [
                    {"device": "cpu", "change": math.expm1(0.05), "run_noise": 0.01}]}]
        self.assertEqual(decide.justified_multiple(docs), 5.0)


class Files(CommandBase):
    def test_a_noisy_pair_says_what_it_cannot_rule_out(self):
        # Repetitions spread 8%: the threshold (3 x spread) is far above the
        # 10% CPU floor's reach; no change at all is AMBIGUOUS, not SAME.
        a = self.write("a.json", doc(series("GEMM/V0/M:64/threads:1/manual_time", 1e-3, 10, spread=0.08, seed=1,
                                            device="cpu")))
        b = self.write("b.json", doc(series("GEMM/V0/M:64/threads:1/manual_time", 1e-3, 10, spread=0.08, seed=2,
                                            device="cpu")))
        p = self.run_tool(a, b, "--json", "v.json", "--markdown", "v.md")
        self.assertEqual(p.returncode, 0, p.stderr)
        row = self.verdicts(os.path.join(self.dir, "v.json"))["GEMM/V0/M:64/threads:1/manual_time"]
        self.assertEqual(row["verdict"], "AMBIGUOUS")
        self.assertGreater(row["threshold"], row["floor"])
        self.assertIn("cannot tell a change under %.2f%% on this machine" % (100 * row["threshold"]), row["reason"])
        self.assertIn("--history DIR", row["reason"])
        self.assertIn("SAME needs the 90% interval inside +-floor", slurp(os.path.join(self.dir, "v.md")))

    def test_nothing_in_common_is_exit_3(self):
        a = self.write("a.json", doc(series("GEMM/V0/M:64/threads:16/manual_time", 1e-3, 5, device="cpu"),
                                     num_cpus=16))
        b = self.write("b.json", doc(series("GEMM/V0/M:64/threads:2/manual_time", 1e-3, 5, device="cpu"),
                                     num_cpus=2))
        p = self.run_tool(a, b)
        self.assertEqual(p.returncode, 3, p.stdout)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("nothing to compare", p.stderr)
        self.assertIn("different machines", p.stderr)
        c = self.write("c.json", doc(series("GEMM/V1/M:64/threads:16/manual_time", 1e-3, 5, device="cpu"),
                                     num_cpus=16))
        p = self.run_tool(a, c)
        self.assertEqual(p.returncode, 3)
        self.assertIn("a different selection", p.stderr)
        self.assertEqual(p.stdout, "")


@unittest.skipUnless(len(os.sched_getaffinity(0)) >= 2, "duet rounds need two cores")
class Duet(CommandBase):
    def bench(self, name, scale=1.0, cpu=None):
        text = CPU_BENCH.replace("SCALE = 1.0", "SCALE = %r" % scale)
        if cpu:
            text = text.replace('os.environ.get("FAKE_CPU", "C")', repr(cpu))
        path = self.write(name, text)
        os.chmod(path, 0o755)
        return path

    def test_duet_rounds_run_at_once_on_swapped_cores(self):
        base, new = self.bench("base_bench.py"), self.bench("new_bench.py", 1.2)
        order = os.path.join(self.dir, "order.log")
        p = self.run_tool("--run", base, new, "--rounds", "8", "--workdir", "w", "--json", "v.json", "--",
                          "--order-log=" + order)
        self.assertEqual(p.returncode, 1, p.stderr)
        runs = lines(order)
        self.assertEqual(len(runs), 16)  # both benchmarks fit in one core: duet parts only
        for r in range(8):
            pair = {x["who"]: x for x in runs[2 * r:2 * r + 2]}
            self.assertEqual(set(pair), {"base", "new"})
            self.assertEqual(pair["base"]["duet"].rsplit(":", 1)[1], "0")
            self.assertEqual(pair["new"]["duet"].rsplit(":", 1)[1], "1")
            cores = sorted(os.sched_getaffinity(0))
            want = ([cores[0]], [cores[1]]) if r % 2 == 0 else ([cores[1]], [cores[0]])
            self.assertEqual((pair["base"]["cores"], pair["new"]["cores"]), want, r)
            self.assertEqual(pair["base"]["places"], "{%d}" % want[0][0])
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/threads:1/manual_time"]["verdict"], "SLOWER")
        self.assertEqual(v["GEMM/V0/M:64/threads:1/manual_time"]["round_mode"], "duet")
        manifest = json.loads(slurp(os.path.join(self.dir, "w", "manifest.json")))
        self.assertEqual(len(manifest["duet"]["names"]), 2)
        self.assertIn(" duet ", p.stdout)

    def test_later_rounds_keep_the_interleaved_part_of_earlier_ones(self):
        # V1 needs both cores (bench lists it only with two): interleaved.
        # V0, 3% slower at 3% noise, runs in duet and needs rounds past the
        # first look; those rounds run it alone, and must not shrink rounds 1-4.
        text = CPU_BENCH.replace("SCALE = 1.0", "SCALE = 1.03").replace(
            "100 * SCALE * (1 + 0.003 * r.gauss(0, 1))", "100 * SCALE * (1 + 0.03 * r.gauss(0, 1))").replace(
            '"GEMM/V1/M:64/threads:1/manual_time"]', '"GEMM/V1/M:64/threads:2/manual_time"]').replace(
            "    for n in NAMES:\n        if re.search(flt, n):",
            "    for n in NAMES:\n        if re.search(flt, n) and (\"threads:1\" in n or "
            "\"--list-devices\" not in args or len(os.sched_getaffinity(0)) > 1):")
        base = self.write("base_bench.py", text.replace("SCALE = 1.03", "SCALE = 1.0"))
        new = self.write("new_bench.py", text)
        os.chmod(base, 0o755)
        os.chmod(new, 0o755)
        order = os.path.join(self.dir, "order.log")
        p = self.run_tool("--run", base, new, "--workdir", "w", "--json", "v.json", "--markdown", "v.md", "--",
                          "--order-log=" + order)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        # A sequential comparison's Markdown names its own rule, not Holm's.
        self.assertIn("at a look, Benjamini-Hochberg over 2 benchmarks (6 looks); SAME needs the 98.3% interval",
                      slurp(os.path.join(self.dir, "v.md")))
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V1/M:64/threads:2/manual_time"]["round_mode"], "interleaved")
        self.assertEqual(v["GEMM/V1/M:64/threads:2/manual_time"]["verdict"], "SAME")
        self.assertEqual(v["GEMM/V0/M:64/threads:1/manual_time"]["round_mode"], "duet")
        self.assertGreater(v["GEMM/V0/M:64/threads:1/manual_time"]["rounds"], 4)
        first = json.loads(slurp(os.path.join(self.dir, "w", "round-01-base.json")))
        self.assertEqual(sorted(e["name"] for e in first["benchmarks"]),
                         ["GEMM/V0/M:64/threads:1/manual_time", "GEMM/V1/M:64/threads:2/manual_time"])

    def test_off_runs_interleaved(self):
        base = self.bench("base_bench.py")
        order = os.path.join(self.dir, "order.log")
        p = self.run_tool("--run", base, base, "--rounds", "8", "--duet=off", "--workdir", "w", "--json", "v.json",
                          "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(all(x["duet"] == "" for x in lines(order)))
        v = self.verdicts(os.path.join(self.dir, "v.json"))
        self.assertEqual(v["GEMM/V0/M:64/threads:1/manual_time"]["round_mode"], "interleaved")

    def test_on_without_two_cores_is_one_line_exit_2(self):
        base = self.bench("base_bench.py")
        p = subprocess.run(["taskset", "-c", str(min(os.sched_getaffinity(0))), sys.executable, "-m",
                            "regress.compare", "--run", base, base, "--duet=on", "--workdir", "w", "--",
                            "--order-log=x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, cwd=self.dir)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.strip().splitlines(),
                         ["compare: --duet=on: bench may use 1 core here; a duet needs two disjoint core sets"])

    def test_incomparable_sides_stop_after_the_first_round(self):
        base, other = self.bench("base_bench.py"), self.bench("new_bench.py", cpu="Other CPU")
        order = os.path.join(self.dir, "order.log")
        p = self.run_tool("--run", base, other, "--workdir", "w", "--", "--order-log=" + order)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(lines(order)), 2)  # one round, not eight
        self.assertIn("cpu_model is 'C' in BASE and 'Other CPU' in NEW", p.stderr)

    def test_plan_and_merge(self):
        p = duet.Plan("auto", ((0,), (1,)), frozenset({"a", "b"}))
        self.assertEqual(p.split(["a", "c", "b"]), (["a", "b"], ["c"]))
        self.assertEqual(p.sets_of(0), {"base": (0,), "new": (1,)})
        self.assertEqual(p.sets_of(1), {"base": (1,), "new": (0,)})
        self.assertEqual(duet.places((2, 3)), {"OMP_PLACES": "{2},{3}", "OMP_PROC_BIND": "close"})
        x = self.write("x.json", {"context": {"k": 1}, "benchmarks": [{"name": "c"}]})
        y = self.write("y.json", {"context": {"k": 2}, "benchmarks": [{"name": "a"}]})
        out = os.path.join(self.dir, "m.json")
        duet.merge([x, y], out)
        self.assertEqual(json.loads(slurp(out)), {"context": {"k": 1}, "benchmarks": [{"name": "c"}, {"name": "a"}]})


DUMP = """version: 1
creator: callgrind-3.19.0
desc: I1 cache:
desc: Timerange: Basic block 0 - 10
desc: Trigger: Client Request: parbench %d %s
events: Ir
summary: %d
totals: %d
"""


class Instructions(CommandBase):
    def dumps(self, prefix, calls):
        os.makedirs(os.path.join(self.dir, "d"), exist_ok=True)
        for i, (name, iters, total) in enumerate(calls):
            self.write(os.path.join("d", "%s.%d" % (prefix, i + 1)), DUMP % (iters, name, total, total))
        self.write(os.path.join("d", prefix), "version: 1\nevents: Ir\nsummary: 5\n")  # the dump at exit

    def test_counts_per_iteration_over_every_call(self):
        self.dumps("cg", [("GEMM/A", 1, 1000), ("GEMM/A", 9, 9000), ("GEMM/B", 4, 400)])
        self.assertEqual(instructions.read_dumps(os.path.join(self.dir, "d"), "cg"),
                         {"GEMM/A": 1000.0, "GEMM/B": 100.0})

    def test_changes_beyond_their_noise(self):
        counts = {"base": [{"a": 1000.0, "b": 1000.0, "c": 1000.0}, {"a": 1000.0, "b": 1000.0, "c": 1000.0}],
                  "new": [{"a": 1010.0, "b": 1001.0, "c": 1010.0}, {"a": 1010.0, "b": 1001.0, "c": 1040.0}]}
        c = instructions.changes(counts)
        self.assertAlmostEqual(c["a"]["change"], 0.01)
        self.assertTrue(c["a"]["moved"])
        self.assertEqual(c["a"]["threshold"], instructions.INSTRUCTION_FLOOR)
        self.assertFalse(c["b"]["moved"])  # 0.1%: under the floor
        self.assertAlmostEqual(c["c"]["noise"], 1040 / 1010 - 1)
        self.assertFalse(c["c"]["moved"])  # 2.5% against a noise of 3%

    def test_rules(self):
        slower, same = Row("s", "GEMM", "cpu"), Row("q", "GEMM", "cpu")
        slower.verdict, slower.change, slower.n_base = "SLOWER", 0.08, 8
        same.verdict, same.change, same.n_base = "SAME", 0.001, 8
        moved = instrument.apply([slower, same], {
            "s": {"change": 0.0, "threshold": 0.003, "moved": False},
            "q": {"change": 0.012, "threshold": 0.003, "moved": True}})
        self.assertEqual(moved, 1)
        self.assertEqual(slower.verdict, "AMBIGUOUS")
        self.assertTrue(slower.reason.startswith("environment suspect: time +8.00% but instructions +0.00%"))
        self.assertEqual(same.verdict, "SAME")
        self.assertEqual(same.reason, "instructions +1.20%")

    def test_asked_for_without_valgrind_is_exit_2(self):
        base = self.write("base_bench.py", CPU_BENCH)
        os.chmod(base, 0o755)
        env = dict(os.environ, PATH="/nonexistent")
        p = subprocess.run([sys.executable, "-m", "regress.compare", "--run", base, base, "--instrument=instructions",
                            "--", "--order-log=x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, cwd=self.dir, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.strip().splitlines(), [
            "compare: --instrument=instructions: no valgrind on PATH (apt-get install valgrind); this build counts "
            "instructions under valgrind only"])
        p = self.run_tool(self.write("a.json", "{}"), self.write("b.json", "{}"), "--instrument=auto")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--instrument counts what --run runs", p.stderr)


if __name__ == "__main__":
    unittest.main()
