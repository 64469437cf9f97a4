"""ci/scale-out: its GPU counts, its plan, a step done once and kept, a
failed step that does not stop the others, a step cut off at --max-seconds,
and bad input as one line with exit 2. A stand-in bench records its command
lines and writes a real run's JSON."""
import argparse
import contextlib
import io
import os
import shutil
import stat
import sys
import tempfile
import unittest

from regress import scale_out

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "gb183.json")

# The interpreter running the test: `env python3` may find a slow shim first.
FAKE_BENCH = "#!%s\n" % sys.executable + r'''import os, shutil, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(" ".join(args) + "\n")
if any(a.startswith("--benchmark_filter=^KMeans") for a in args) and os.environ.get("FAKE_FAIL"):
    sys.exit(1)
if os.environ.get("FAKE_SLEEP"):
    time.sleep(float(os.environ["FAKE_SLEEP"]))
out = [a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out=")][0]
shutil.copy(os.environ["FAKE_JSON"], out)
'''


class ScaleOut(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.bench = os.path.join(self.tmp, "bench")
        with open(self.bench, "w") as f:
            f.write(FAKE_BENCH)
        os.chmod(self.bench, os.stat(self.bench).st_mode | stat.S_IXUSR)
        self.log = os.path.join(self.tmp, "calls.log")
        self.out = os.path.join(self.tmp, "out")
        os.environ.update(FAKE_LOG=self.log, FAKE_JSON=DATA)
        for v in ("FAKE_FAIL", "FAKE_SLEEP"):
            os.environ.pop(v, None)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_tool(self, *args):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = scale_out.main(["--bench", self.bench, "--out", self.out] + list(args))
        return rc, err.getvalue()

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def test_gpu_counts_double_up_to_the_host(self):
        self.assertEqual(scale_out.gpu_counts(1), [1])
        self.assertEqual(scale_out.gpu_counts(4), [1, 2, 4])
        self.assertEqual(scale_out.gpu_counts(6), [1, 2, 4, 6])
        self.assertEqual(scale_out.gpu_counts(8), [1, 2, 4, 8])

    def test_steps_run_once_and_are_kept(self):
        rc, err = self.run_tool("--gpus", "8", "--only", "ceilings,sor-strong,sor-weak")
        self.assertEqual(rc, 0, err)
        for step in ("ceilings", "sor-strong", "sor-weak"):
            self.assertTrue(os.path.exists(os.path.join(self.out, step + ".json")), step)
        strong = [c for c in self.calls() if "--scaling=strong" in c]
        self.assertEqual(len(strong), 1)
        self.assertIn("--sor-grids=16386x16386,24002x24002", strong[0])
        self.assertIn("--sor-gpus=1,2,4,8", strong[0])
        # Again: every step is done, so bench does not run.
        rc, err = self.run_tool("--gpus", "8", "--only", "ceilings,sor-strong,sor-weak")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(self.calls()), 3)

    def test_a_failed_step_leaves_no_file_and_the_others_run(self):
        os.environ["FAKE_FAIL"] = "1"
        rc, err = self.run_tool("--gpus", "2", "--only", "ceilings,kmeans,sor-weak")
        self.assertEqual(rc, 1)
        self.assertIn("kmeans failed", err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "kmeans.json")))
        self.assertTrue(os.path.exists(os.path.join(self.out, "sor-weak.json")))
        # The next call runs only what is not done.
        del os.environ["FAKE_FAIL"]
        rc, err = self.run_tool("--gpus", "2", "--only", "ceilings,kmeans,sor-weak")
        self.assertEqual(rc, 0, err)
        self.assertEqual([c.split()[0] for c in self.calls()][-1], r"--benchmark_filter=^KMeans/CUDA\.(NCCL|OneRead)/")
        self.assertEqual(len(self.calls()), 4)

    def test_a_failed_tool_step_is_not_kept(self):
        # The charts of runs without a GPU axis: plots/plot draws none and
        # exits 2, so the step fails and the next call tries it again.
        rc, err = self.run_tool("--gpus", "2", "--only", "sor-strong,sor-weak,kmeans,charts")
        self.assertEqual(rc, 1)
        self.assertIn("charts failed (exit 2)", err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "charts", ".done")))
        self.assertTrue(os.path.exists(os.path.join(self.out, "kmeans.json")))

    def test_charts_draw_what_has_run_and_stay_to_do_until_all_has(self):
        rc, err = self.run_tool("--gpus", "2", "--only", "charts")
        self.assertEqual(rc, 0, err)
        self.assertIn("no charted step has run yet", err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "charts", ".done")))
        rc, err = self.run_tool("--gpus", "2", "--only", "sor-strong")
        self.assertEqual(rc, 0, err)
        a = argparse.Namespace(out=self.out, dry_run=False)
        cmd = scale_out.tool_cmd("charts", a, 2, None, ["sor-strong", "sor-weak", "kmeans"])
        self.assertEqual([c for c in cmd if c.endswith(".json")], [os.path.join(self.out, "sor-strong.json")])
        a.dry_run = True
        cmd = scale_out.tool_cmd("charts", a, 2, None, ["sor-strong", "sor-weak", "kmeans"])
        self.assertEqual(len([c for c in cmd if c.endswith(".json")]), 3)

    def test_max_seconds_stops_a_step_and_the_rerun_redoes_it(self):
        os.environ["FAKE_SLEEP"] = "30"
        rc, err = self.run_tool("--gpus", "1", "--only", "ceilings", "--max-seconds", "1")
        self.assertEqual(rc, 4)
        self.assertIn("stopped in ceilings", err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "ceilings.json")))
        del os.environ["FAKE_SLEEP"]
        rc, err = self.run_tool("--gpus", "1", "--only", "ceilings", "--max-seconds", "60")
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.exists(os.path.join(self.out, "ceilings.json")))

    def test_a_plan_names_the_bench_steps(self):
        plan = os.path.join(self.tmp, "plan.json")
        with open(plan, "w") as f:
            f.write('{"steps": [{"name": "only-one", "args": ["--x={gpus}"], "chart": true}]}')
        rc, err = self.run_tool("--plan", plan, "--gpus", "3", "--only", "only-one")
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.calls()[0].split()[0], "--x=1,2,3")
        with open(plan, "w") as f:
            f.write('{"steps": [{"name": "suite-1", "args": []}]}')
        rc, err = self.run_tool("--plan", plan, "--gpus", "2")
        self.assertEqual(rc, 2)
        self.assertIn("one of the driver's own", err)

    def test_bad_input_is_one_line_and_exit_2(self):
        for args, says in ((["--only", "sor,kmeans", "--gpus", "2"], "unknown step sor"),
                           (["--max-seconds", "0", "--gpus", "2"], "not positive"),
                           (["--gpus", "0"], "--gpus: 0"),
                           (["--lane-cores", "0", "--gpus", "2"], "below 1"),
                           (["--plan", os.path.join(self.tmp, "none.json"), "--gpus", "2"], "is not a plan")):
            rc, err = self.run_tool(*args)
            self.assertEqual(rc, 2, args)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(says, err)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = scale_out.main(["--bench", os.path.join(self.tmp, "none"), "--gpus", "2"])
        self.assertEqual(rc, 2)
        self.assertIn("is not an executable", err.getvalue())


if __name__ == "__main__":
    unittest.main()
