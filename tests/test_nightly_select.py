#!/usr/bin/env python3
"""What the nightly job runs, chosen from the JSON and the run names, never
from variant names (regress/run/nightly_select.py): the suite's exclusions
(baselines by role but those a speedup chart divides by, instances with a
ranks argument, all but the middle size of a wide block sweep) and the A/A
subset (the most stable fast passed variants of the machine's device)."""
import json
import os
import re
import tempfile
import unittest

from regress.load import results
from regress.run import nightly_select, nightly_steps

NAMES = [
    "Fam/Base/n:8/manual_time",
    "Fam/Fast/n:8/manual_time",
    "Fam/Mpi/n:8/ranks:1/threads:1/manual_time",
    "Fam/Gpu/n:8/block:64/manual_time",
    "Fam/Gpu/n:8/block:256/manual_time",
    "Fam/Gpu/n:8/block:1024/manual_time",
    "Fam/Two/n:8/block:16/manual_time",
    "Fam/Two/n:8/block:32/manual_time",
    "Fam/Narrow/n:8/block:128/manual_time",
    "Fam/Narrow/n:8/block:256/manual_time",
    "Fam/Narrow/n:8/block:512/manual_time",
    "Fam/Shape/n:8/block:32x4/manual_time",
    "Fam/Shape/n:8/block:32x8/manual_time",
    "Fam/Shape/n:8/block:64x4/manual_time",
]


def entry(name, seconds, rep, role="variant", device="cpu", disposition="passed"):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 3, "repetition_index": rep,
            "threads": 1, "iterations": 10, "real_time": seconds, "cpu_time": seconds, "time_unit": "s",
            "parbench": {"disposition": disposition, "role": role, "device": device}}


class Gate(unittest.TestCase):
    """The nightly's gate: enough repetitions to decide, the verdicts it
    prints, and how each step is recorded."""

    def test_repetitions_a_comparison_needs(self):
        # The exact Mann-Whitney test's smallest p, 2 / C(2n, n), must pass
        # alpha / instances: C(8, 4) = 70 >= 40 for one instance; C(18, 9) =
        # 48620 >= 29280 for the nightly suite's 732; C(20, 10) for 2000.
        self.assertEqual([nightly_select.repetitions_needed(m) for m in (1, 732, 2000)], [4, 9, 10])
        timing, had = nightly_select.with_repetitions(["--benchmark_repetitions=3", "--benchmark_min_time=0.01"], 9)
        self.assertEqual((timing, had), (["--benchmark_repetitions=9", "--benchmark_min_time=0.01"], 3))
        self.assertEqual(nightly_select.with_repetitions(["--benchmark_repetitions=12"], 9)[0],
                         ["--benchmark_repetitions=12"])
        self.assertEqual(nightly_select.with_repetitions([], 5), (["--benchmark_repetitions=5"], None))

    def test_the_verdicts_that_are_not_same(self):
        doc = {"benchmarks": [{"name": "A", "verdict": "SLOWER", "change": 0.123},
                              {"name": "B", "verdict": "SAME", "change": 0.001},
                              {"name": "C", "verdict": "AMBIGUOUS", "change": None, "reason": "too few"}]}
        lines = nightly_steps.not_same_lines(doc)
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[0].startswith("SLOWER") and "+12.30%  A" in lines[0], lines[0])
        self.assertIn("C  (too few)", lines[1])
        many = {"benchmarks": [{"name": "X%d" % i, "verdict": "FASTER", "change": -0.1} for i in range(45)]}
        self.assertEqual(nightly_steps.not_same_lines(many)[-1], "... and 5 more")

    def test_a_step_records_how_it_ended(self):
        summary = []
        with nightly_steps.Step("suite", summary):
            pass
        with nightly_steps.Step("report", summary) as st:
            st.status = "stopped"
        try:
            with nightly_steps.Step("A/A", summary):
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        nightly_steps.skipped("bisect", summary, "--skip-bisect")
        self.assertEqual([(s["step"], s["status"]) for s in summary],
                         [("suite", "done"), ("report", "stopped"), ("A/A", "stopped"),
                          ("bisect", "skipped: --skip-bisect")])


class Exclusions(unittest.TestCase):
    def test_roles_ranks_and_block_sweeps(self):
        pattern = nightly_select.select_exclusions(NAMES, {"Fam/Base": "baseline", "Fam/Fast": "variant"})
        kept = [n for n in NAMES if not re.search(pattern, n)]
        self.assertEqual(kept, ["Fam/Fast/n:8/manual_time", "Fam/Gpu/n:8/block:256/manual_time"] + NAMES[6:])

    def test_the_baselines_a_speedup_chart_divides_by_are_kept(self):
        # A threaded variant's speedup is over its family's baseline at the
        # same problem, one thread: the night keeps that baseline instance and
        # leaves out the baseline's others (no threaded variant, or threads).
        names = ["Fam/Seq/n:8/manual_time", "Fam/Seq/n:64/manual_time", "Fam/Seq/n:8/threads:2/manual_time",
                 "Fam/Omp/n:8/threads:2/manual_time", "Fam/Gpu/n:64/manual_time",
                 "Fam/Mpi/n:64/ranks:2/threads:2/manual_time", "Other/Seq/n:8/manual_time"]
        roles = {"Fam/Seq": "baseline", "Fam/Omp": "variant", "Fam/Gpu": "variant", "Fam/Mpi": "variant",
                 "Other/Seq": "baseline"}
        pattern = nightly_select.select_exclusions(names, roles)
        kept = [n for n in names if not re.search(pattern, n)]
        self.assertEqual(kept, ["Fam/Seq/n:8/manual_time", "Fam/Omp/n:8/threads:2/manual_time",
                                "Fam/Gpu/n:64/manual_time"])

    def test_nothing_to_leave_out(self):
        self.assertIsNone(nightly_select.select_exclusions(["Fam/Fast/n:8/manual_time"], {"Fam/Fast": "variant"}))

    def test_a_variant_without_a_role_is_kept(self):
        pattern = nightly_select.select_exclusions(NAMES[:2], {})
        self.assertIsNone(pattern)


class AASubset(unittest.TestCase):
    def test_most_stable_fast_passed_variants_of_the_device(self):
        spread = {"Fam/A/n:1": 0.001, "Fam/A/n:2": 0.02, "Fam/B/n:1": 0.005, "Fam/C/n:1": 0.0001}
        benchmarks = []
        for name, s in spread.items():
            benchmarks += [entry(name, 1e-4 * (1 + s * d), i) for i, d in enumerate((-1, 0, 1))]
        benchmarks += [entry("Fam/Slow/n:1", 5.0 + 0.0001 * i, i) for i in range(3)]           # too slow a run
        benchmarks += [entry("Fam/Ref/n:1", 1e-4, i, role="baseline") for i in range(3)]       # not a variant
        benchmarks += [entry("Fam/Dev/n:1", 1e-4, i, device="gpu") for i in range(3)]          # other device
        benchmarks += [entry("Fam/Bad/n:1", 1e-4, i, disposition="incorrect") for i in range(3)]
        doc = {"context": {"parbench_schema": 1, "parbench_counters": {}}, "benchmarks": benchmarks}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "suite.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            run = results.load(path)
        # One per variant first (the most stable of each), then the rest.
        self.assertEqual(nightly_select.aa_subset(run, "cpu", size=3), ["Fam/A/n:1", "Fam/B/n:1", "Fam/C/n:1"])
        self.assertEqual(nightly_select.aa_subset(run, "cpu", size=4),
                         ["Fam/A/n:1", "Fam/A/n:2", "Fam/B/n:1", "Fam/C/n:1"])
        self.assertEqual(nightly_select.aa_subset(run, "gpu"), ["Fam/Dev/n:1"])
        # A GPU host takes its GPU's instances; a CPU host its CPU's.
        self.assertEqual(nightly_select.aa_choice(run, gpu=True), ["Fam/Dev/n:1"])
        self.assertEqual(nightly_select.aa_choice(run, gpu=False), nightly_select.aa_subset(run, "cpu"))

    def test_a_gpu_host_with_a_cpu_only_suite_checks_the_cpu_instances(self):
        doc = {"context": {"parbench_schema": 1, "parbench_counters": {}},
               "benchmarks": [entry("Fam/A/n:1", 1e-4 * (1 + 0.01 * i), i) for i in range(3)]}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "suite.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            run = results.load(path)
        self.assertEqual(nightly_select.aa_subset(run, "gpu"), [])
        self.assertEqual(nightly_select.aa_choice(run, gpu=True), ["Fam/A/n:1"])


if __name__ == "__main__":
    unittest.main()
