#!/usr/bin/env python3
"""Tests of the crash-safe suite runner (ci/run-suite) with the real bench and
its test-only fault switch (PARBENCH_TEST_FAULT, impl/core/fault.hpp): an
instance that crashes, one that hangs, one that takes all GPU memory; each
costs only itself, and the merged JSON holds every instance once.

    test_run_suite.py BENCH"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from regress.load import results

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

RUNNER = ["-m", "regress.run_suite"]
BENCH = None
CPU = "^GEMM/(OMP|Naive)/op:AB/type:f32/"
GPU = "^GEMM/(cuBLAS|CUDA[.]Naive)/op:AB/type:f32/"


def run(args, fault=None, cwd=None):
    env = dict(os.environ)
    env.pop("PARBENCH_TEST_FAULT", None)
    if fault:
        env["PARBENCH_TEST_FAULT"] = fault
    return subprocess.run([sys.executable, *RUNNER] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=cwd)


def listed(filt):
    p = subprocess.run([BENCH, "--benchmark_list_tests", "--profile=smoke", "--benchmark_filter=" + filt],
                       stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return [l for l in p.stdout.splitlines() if l]


class RunSuite(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def suite(self, filt, fault=None, timeout=60, split="variant", extra=()):
        out = os.path.join(self.tmp, "suite.json")
        p = run(["--bench", BENCH, "--out", out, "--split", split, "--timeout", str(timeout), "--",
                 "--profile=smoke", "--benchmark_filter=" + filt, "--no-progress", "--benchmark_repetitions=2"]
                + list(extra), fault)
        self.assertNotIn("Traceback", p.stderr)
        return p, (results.load(out) if os.path.exists(out) else None)

    def check_complete(self, r, filt):
        names = [e.raw.get("run_name") for e in r.entries if not e.aggregate]
        expect = listed(filt)
        self.assertEqual(sorted(set(names)), sorted(expect))
        self.assertEqual(r.warnings, [])
        return {n: [e for e in r.entries if e.raw.get("run_name") == n and not e.aggregate] for n in expect}

    def test_clean_run(self):
        p, r = self.suite(CPU)
        self.assertEqual(p.returncode, 0, p.stderr)
        by = self.check_complete(r, CPU)
        self.assertTrue(all(len(v) == 2 and v[0].disposition == "passed" for v in by.values()))
        self.assertIn("group 2 of 2", p.stderr)
        self.assertEqual(r.context["parbench_suite"]["groups"], 2)

    def test_names_with_dashes_and_dots_select_exactly_themselves(self):
        # MLP widths (784-32-10) and SOR omegas (1.5): each instance's exact
        # filter must be a regular expression Google Benchmark accepts.
        filt = "^(MLP/OMP|SOR/Seq)/"
        p, r = self.suite(filt)
        self.assertEqual(p.returncode, 0, p.stderr)
        by = self.check_complete(r, filt)
        self.assertTrue(any("-" in n for n in by) and any("." in n.split("/manual")[0] for n in by), list(by))
        self.assertTrue(all(len(v) == 2 and v[0].disposition == "passed" for v in by.values()))

    def test_a_crash_costs_one_instance(self):
        victim = listed(CPU)[1]
        p, r = self.suite(CPU, fault="crash:^" + victim.replace(".", "[.]") + "$")
        self.assertEqual(p.returncode, 1, p.stderr)
        by = self.check_complete(r, CPU)
        self.assertEqual(by[victim][0].disposition, "failed")
        self.assertIn("SIGABRT while running this instance", by[victim][0].reason)
        others = [v for n, v in by.items() if n != victim]
        self.assertTrue(all(e.disposition == "passed" for v in others for e in v))

    def test_a_hang_is_killed_at_the_time_limit(self):
        victim = listed(CPU)[0]
        # The limit must leave a loaded CI machine time for the healthy processes.
        p, r = self.suite(CPU, fault="hang:^" + victim.replace(".", "[.]") + "$", timeout=20)
        self.assertEqual(p.returncode, 1, p.stderr)
        by = self.check_complete(r, CPU)
        self.assertIn("timed out after 20 s", by[victim][0].reason)
        self.assertEqual(sum(v[0].disposition == "passed" for v in by.values()), len(by) - 1)

    def test_gpu_memory_exhausted_in_one_group(self):
        try:
            first = listed(GPU)[0]
        except subprocess.CalledProcessError:
            self.skipTest("bench built without CUDA")
        p, r = self.suite(GPU, fault="gpu-oom:^" + first.replace(".", "[.]") + "$")
        if all(e.disposition == "unsupported" for e in r.entries):
            self.skipTest("no usable GPU")
        by = self.check_complete(r, GPU)
        group = first.split("/")[1]
        hit = [v[0].disposition for n, v in by.items() if n.split("/")[1] == group]
        self.assertIn("out_of_memory", hit)
        others = [v[0].disposition for n, v in by.items() if n.split("/")[1] != group]
        self.assertTrue(others and all(d == "passed" for d in others), others)

    def test_gpu_lanes(self):
        # Two GPU lanes: the one-GPU groups run on lanes 0 and 1 at once, the
        # CPU groups and the peer copies (two GPUs each) after them, alone;
        # every instance once, every part logged with its lane (none for the
        # parts run alone).
        both = "^(GEMM/(OMP|Naive|cuBLAS|CUDA[.]Naive)/op:AB/type:f32/|Ceiling/CUDA[.]P2P/)"
        out = os.path.join(self.tmp, "suite.json")
        p = run(["--bench", BENCH, "--out", out, "--split", "variant", "--gpus", "2", "--",
                 "--profile=smoke", "--benchmark_filter=" + both, "--no-progress"])
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        r = results.load(out)
        self.check_complete(r, both)
        suite = r.context["parbench_suite"]
        self.assertEqual(suite["gpus"], 2)
        lanes = [q for q in suite["parts"] if q["group"].endswith("(GPU lanes)")]
        alone = [q for q in suite["parts"] if not q["group"].endswith("(GPU lanes)")]
        self.assertEqual(sorted(q["group"] for q in lanes), ["GEMM/CUDA.Naive (GPU lanes)", "GEMM/cuBLAS (GPU lanes)"])
        self.assertEqual(sorted(q["gpu"] for q in lanes), [0, 1])
        self.assertEqual(sorted(q["group"] for q in alone), ["Ceiling/CUDA.P2P", "GEMM/Naive", "GEMM/OMP"])
        self.assertTrue(all("gpu" not in q for q in alone))
        # Each figure rounded to the millisecond.
        self.assertGreaterEqual(min(q["start_s"] for q in alone) + 0.002,
                                max(q["start_s"] + q["seconds"] for q in lanes))
        self.assertIn("on GPU 1", p.stderr)
        # Stopped at once and resumed, the lanes' suite is whole again.
        out2 = os.path.join(self.tmp, "again.json")
        lanes_args = ["--bench", BENCH, "--out", out2, "--split", "variant", "--gpus", "2"]
        bench_args = ["--", "--profile=smoke", "--benchmark_filter=" + both, "--no-progress"]
        p = run(lanes_args + ["--max-seconds", "0"] + bench_args)
        self.assertEqual(p.returncode, 4, p.stderr)
        p = run(lanes_args[:-2] + ["--gpus", "1", "--resume"] + bench_args)  # another suite: refused
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("another suite's state", p.stderr)
        p = run(lanes_args + ["--resume"] + bench_args)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.check_complete(results.load(out2), both)
        # The finished suite's workdir merged again, elsewhere: the same
        # entries, and how many of how many it held.
        moved = os.path.join(self.tmp, "moved")
        shutil.copytree(out2 + ".parts", moved)
        shutil.rmtree(out2 + ".parts")  # the state's paths now name nothing: the parts are found in the copy
        out3 = os.path.join(self.tmp, "merged.json")
        p = run(["--out", out3, "--workdir", moved, "--merge-stopped"])
        self.assertEqual(p.returncode, 0, p.stderr)
        merged = results.load(out3)
        self.assertEqual([e.name for e in merged.entries], [e.name for e in results.load(out2).entries])
        stopped = merged.context["parbench_suite"]["stopped"]
        self.assertEqual(stopped["instances_done"], stopped["instances"])
        p = run(["--out", out3, "--workdir", os.path.join(self.tmp, "nowhere"), "--merge-stopped"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("holds no suite's state", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        for e in r.entries:
            meta = e.raw.get("parbench", {})
            if e.disposition == "passed" and meta.get("device") == "gpu":
                self.assertIn(meta.get("gpu_index"), (0, 1))
                self.assertTrue(meta.get("gpu"))
            elif meta.get("device") != "gpu":
                self.assertNotIn("gpu_index", meta)

    def test_cpu_instances_beside_the_lanes(self):
        # --lane-cores 1: the lane gets one core, the CPU groups run at the
        # same time on the rest (their thread axes end there), the multi-GPU
        # group after the lane, on its core.
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            self.skipTest("one core: nothing is left beside a lane")
        both = "^(GEMM/(OMP|Naive|cuBLAS)/op:AB/type:f32/|Ceiling/CUDA[.]P2P/)"
        out = os.path.join(self.tmp, "beside.json")
        args = ["--bench", BENCH, "--out", out, "--split", "variant", "--gpus", "1", "--lane-cores", "1"]
        bench_args = ["--", "--profile=smoke", "--benchmark_filter=" + both, "--no-progress"]
        p = run(args + bench_args)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertIn("beside the lanes", p.stderr)
        r = results.load(out)
        suite = r.context["parbench_suite"]
        self.assertEqual(suite["lane_cores"], 1)
        rest = ",".join(map(str, cores[1:]))
        self.assertEqual(subprocess.run(["taskset", "-c", suite["cpu_cores"], "true"]).returncode, 0)
        on_rest = subprocess.run(["taskset", "-c", rest, BENCH, "--benchmark_list_tests", "--profile=smoke",
                                  "--benchmark_filter=^GEMM/(OMP|Naive)/op:AB/type:f32/"],
                                 stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
        cpu_names = [n for n in dict.fromkeys(e.raw.get("run_name") for e in r.entries if not e.aggregate)
                     if "/OMP/" in n or "/Naive/" in n]
        self.assertEqual(cpu_names, on_rest)
        self.assertTrue(all(int(t[8:]) <= len(cores) - 1 for n in cpu_names for t in n.split("/")
                            if t.startswith("threads:")))
        parts = suite["parts"]
        beside = [q for q in parts if q.get("track") == "cpu"]
        lane = [q for q in parts if "gpu" in q]
        after = [q for q in parts if "gpu" not in q and "track" not in q]
        self.assertEqual(sorted(q["group"] for q in beside), ["GEMM/Naive", "GEMM/OMP"])
        self.assertEqual([q["group"] for q in lane], ["GEMM/cuBLAS (GPU lanes)"])
        self.assertEqual([q["group"] for q in after], ["Ceiling/CUDA.P2P"])
        # The CPU track started before the lane ended; the multi-GPU group
        # after it (each figure rounded to the millisecond).
        self.assertLess(min(q["start_s"] for q in beside), lane[0]["start_s"] + lane[0]["seconds"])
        self.assertGreaterEqual(after[0]["start_s"] + 0.002, lane[0]["start_s"] + lane[0]["seconds"])
        # More lane cores than the host has: one line, exit 2.
        p = run(args[:-1] + [str(len(cores) + 5), "--resume"] + bench_args)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("leave none", p.stderr)
        # --only: the instances of one side.
        for side, want in (("cpu", ["/OMP/", "/Naive/"]), ("gpu", ["/cuBLAS/", "/CUDA.P2P/"])):
            o = os.path.join(self.tmp, side + ".json")
            p = run(["--bench", BENCH, "--out", o, "--only", side] + bench_args)
            self.assertIn(p.returncode, (0, 1), p.stderr)
            names = {e.raw.get("run_name") for e in results.load(o).entries if not e.aggregate}
            self.assertTrue(names and all(any(w in n for w in want) for n in names), (side, names))
        p = run(["--bench", BENCH, "--out", out + "x", "--only", "cpu", "--", "--profile=smoke",
                 "--benchmark_filter=^GEMM/cuBLAS/"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("select no instance on the CPU", p.stderr)

    def test_a_terminated_runner_with_lanes_leaves_no_bench_running(self):
        # A CPU instance hangs beside the lane (another thread's process);
        # SIGTERM ends it with the runner.
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one core: nothing is left beside a lane")
        self.terminate_while_hung(["--gpus", "1", "--lane-cores", "1"])

    def test_a_failure_beside_the_lanes_ends_every_track(self):
        # A stand-in bench: its CPU instance refuses its arguments after a
        # second, while its two-GPU instance (run after the lanes, here at
        # once: there are none) hangs. The runner ends the hung process and
        # reports the refusal, one line and exit 2, not the stop it caused.
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one core: nothing is left beside a lane")
        fake = os.path.join(self.tmp, "fake_bench.py")
        with open(fake, "w") as f:
            f.write(FAKE_BENCH)
        os.chmod(fake, 0o755)
        t0 = time.monotonic()
        p = run(["--bench", fake, "--out", os.path.join(self.tmp, "x.json"), "--split", "variant", "--gpus", "1",
                 "--lane-cores", "1", "--timeout", "600"])
        self.assertLess(time.monotonic() - t0, 60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("internal error", p.stderr)
        self.assertIn("refused its arguments: fake: no such flag", p.stderr)

    def terminate_while_hung(self, runner_args):
        """Starts the runner (with runner_args) on a suite whose first
        instance hangs, sends it SIGTERM once bench runs: it exits 128 +
        SIGTERM with one line, and no bench of its is left running."""
        victim = listed(CPU)[0]
        out = os.path.join(self.tmp, "suite.json")
        env = dict(os.environ, PARBENCH_TEST_FAULT="hang:^" + victim.replace(".", "[.]") + "$")
        p = subprocess.Popen([sys.executable, *RUNNER, "--bench", BENCH, "--out", out, "--timeout", "600"]
                             + runner_args + ["--", "--profile=smoke", "--benchmark_filter=" + CPU, "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
        mine = lambda: subprocess.run(["pgrep", "-f", "--", "--benchmark_out=" + out], stdout=subprocess.PIPE,  # noqa
                                      universal_newlines=True).stdout.split()
        for _ in range(1200):
            if mine():
                break
            time.sleep(0.1)
        self.assertTrue(mine(), "the bench process never started")
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("stopped by SIGTERM", err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(mine(), [])

    def test_stop_and_resume(self):
        out = os.path.join(self.tmp, "suite.json")
        args = ["--bench", BENCH, "--out", out, "--split", "variant"]
        bench_args = ["--", "--profile=smoke", "--benchmark_filter=" + CPU, "--no-progress"]
        p = run(args + ["--max-seconds", "0"] + bench_args)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("--resume", p.stderr)
        self.assertFalse(os.path.exists(out))
        p = run(args + ["--resume"] + bench_args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_complete(results.load(out), CPU)
        # Resuming a finished suite runs nothing and writes the same JSON.
        before = open(out).read()
        p = run(args + ["--resume"] + bench_args)
        self.assertIn("6 of 6 instances done earlier" if len(listed(CPU)) == 6 else "done earlier", p.stderr)
        self.assertEqual(open(out).read(), before)
        # Another suite's state is refused.
        p = run(args + ["--resume", "--", "--profile=smoke", "--benchmark_filter=^GEMM/Naive/", "--no-progress"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("another suite's state", p.stderr)

    def test_max_seconds_is_a_hard_limit(self):
        # A process still running when --max-seconds runs out is killed; the
        # instance it was in is not charged with a failure and runs on --resume.
        victim = listed(CPU)[2]
        out = os.path.join(self.tmp, "suite.json")
        args = ["--bench", BENCH, "--out", out, "--split", "family", "--timeout", "600"]
        bench_args = ["--", "--profile=smoke", "--benchmark_filter=" + CPU, "--no-progress"]
        t0 = time.monotonic()
        p = run(args + ["--max-seconds", "4"] + bench_args, fault="hang:^" + victim.replace(".", "[.]") + "$")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertLess(time.monotonic() - t0, 60)
        self.assertNotIn("while running this instance", p.stderr)
        p = run(args + ["--resume"] + bench_args)
        self.assertEqual(p.returncode, 0, p.stderr)
        by = self.check_complete(results.load(out), CPU)
        self.assertTrue(all(v[0].disposition == "passed" for v in by.values()))
        parts = results.load(out).context["parbench_suite"]["parts"]
        self.assertEqual([x["end"] for x in parts], ["stopped (--max-seconds)", "ok"])

    def test_a_terminated_runner_leaves_no_bench_running(self):
        self.terminate_while_hung([])

    def test_exclude_leaves_out_what_it_matches(self):
        out = os.path.join(self.tmp, "ex.json")
        p = run(["--bench", BENCH, "--out", out, "--exclude", "^GEMM/Naive/", "--", "--profile=smoke",
                 "--benchmark_filter=" + CPU, "--no-progress"])
        self.assertEqual(p.returncode, 0, p.stderr)
        names = {e.raw.get("run_name") for e in results.load(out).entries if not e.aggregate}
        self.assertEqual(sorted(names), sorted(n for n in listed(CPU) if not n.startswith("GEMM/Naive/")))
        p = run(["--bench", BENCH, "--out", out + "2", "--exclude", "(unclosed", "--", "--profile=smoke"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("--exclude is not a regular expression", p.stderr)

    def test_bad_usage(self):
        out = os.path.join(self.tmp, "x.json")
        for args, text in ((["--bench", BENCH, "--out", out, "--", "--benchmark_out=y.json"], "writes the JSON"),
                           (["--bench", BENCH, "--out", out, "--", "--no-such-flag"], "refused its arguments"),
                           (["--bench", "/nonexistent", "--out", out], "not an executable"),
                           (["--bench", BENCH, "--out", out, "--gpus", "0"], "--gpus must be at least 1"),
                           (["--bench", BENCH, "--out", out, "--lane-cores", "0"], "--lane-cores must be at least 1"),
                           (["--bench", BENCH, "--out", out, "--lane-cores", "999"], "leave none"),
                           (["--bench", BENCH, "--out", out, "--", "--benchmark_filter=NOTHING"], "refused")):
            p = run(args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)
            self.assertFalse(os.path.exists(out))


# A stand-in for bench with one CPU instance that refuses its arguments
# after a second and one two-GPU instance that hangs.
# The interpreter running the test: `env python3` may find a slow shim first.
FAKE_BENCH = "#!%s\n" % sys.executable + r'''import sys, time
args = sys.argv[1:]
names = {"Fam/Cpu/n:1": "cpu", "Fam/Multi/gpus:2": "gpus:2"}
if "--benchmark_list_tests" in args:
    print("\n".join(names)); sys.exit(0)
if "--list-devices" in args:
    print("\n".join("%s %s" % (w, n) for n, w in names.items())); sys.exit(0)
if any("Cpu" in a for a in args if a.startswith("--benchmark_filter=")):
    time.sleep(1)
    print("fake: no such flag", file=sys.stderr); sys.exit(2)
time.sleep(600)
'''


if __name__ == "__main__":
    BENCH = os.path.abspath(sys.argv.pop(1))
    unittest.main()
