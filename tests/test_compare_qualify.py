#!/usr/bin/env python3
"""The gate's qualification (compare --qualify, --qualify-state): one binary
on both sides, its record per machine fingerprint, and a gate that reports
without failing on an unqualified machine until a qualification passes."""
import json
import os
import shutil
import unittest

from regress.store import qualification as q
from test_compare import FAKE_BENCH, CommandBase

# The fake bench of test_compare, with two knobs: FAKE_CPU names the machine
# (its fingerprint), and FAKE_TWIN_SCALE slows the copy that compare
# --qualify makes (bench-twin): a machine where identical code reads apart.
QUALIFY_BENCH = FAKE_BENCH.replace(
    'SCALE *= float(os.environ.get("FAKE_SCALE", "1"))',
    'SCALE *= float(os.environ.get("FAKE_SCALE", "1"))\n'
    'if sys.argv[0].endswith("bench-twin"):\n'
    '    SCALE *= float(os.environ.get("FAKE_TWIN_SCALE", "1"))').replace(
    '"gpu": "G",', '"gpu": "G", "cpu_model": os.environ.get("FAKE_CPU", "C"),')
V0 = "GEMM/V0/M:64/manual_time"


class Qualify(CommandBase):
    def setUp(self):
        super().setUp()
        self.fake = self.write("fake_bench.py", QUALIFY_BENCH)
        os.chmod(self.fake, 0o755)
        self.slow = self.write("slow_bench.py", QUALIFY_BENCH.replace("SCALE = 1.0", "SCALE = 1.2"))
        os.chmod(self.slow, 0o755)
        self.order = os.path.join(self.dir, "order.log")
        self.state = os.path.join(self.dir, "state", "qualification.json")
        self.env = dict(os.environ)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def tool(self, *args, **env):
        os.environ.update(env)
        try:
            return self.run_tool(*args)
        finally:
            for k in env:
                os.environ.pop(k)
            os.environ.update(self.env)

    def records(self):
        with open(self.state) as f:
            return json.load(f)["records"]

    def test_a_quiet_machine_qualifies(self):
        p = self.tool("--qualify", self.fake, "--qualify-state", self.state, "--workdir", "qw", "--json", "q.json",
                      "--", "--order-log=" + self.order)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("qualification: qualified on ", p.stdout)
        self.assertIn("qualification passed: 0 of 2 benchmarks moved on identical code; exit 0", p.stdout)
        [rec] = self.records()
        self.assertEqual((rec["state"], rec["compared"], rec["alarms"], rec["source"]),
                         ("qualified", 2, [], "compare --qualify"))
        with open(os.path.join(self.dir, "q.json")) as f:
            self.assertEqual(json.load(f)["qualification"]["state"], "qualified")

    def test_an_unqualified_gate_reports_and_fails_nothing_until_it_requalifies(self):
        # On this machine the twin reads 30% slower: qualification fails, exit 1.
        p = self.tool("--qualify", self.fake, "--qualify-state", self.state, "--workdir", "qw", "--",
                      "--order-log=" + self.order, FAKE_TWIN_SCALE="1.3")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("qualification failed: 1 of 2 benchmarks moved on identical code; exit 1", p.stdout)
        [rec] = self.records()
        self.assertEqual([(a["name"], a["verdict"]) for a in rec["alarms"]], [(V0, "SLOWER")])
        # A real 20% regression on that machine: reported, not failing.
        p = self.tool("--run", self.fake, self.slow, "--qualify-state", self.state, "--workdir", "rw",
                      "--markdown", "pr.md", "--json", "v.json", "--", "--order-log=" + self.order)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 SLOWER", p.stdout)
        self.assertIn("exit 0 (the gate is unqualified on this machine: nothing fails on a time)", p.stdout)
        with open(os.path.join(self.dir, "pr.md")) as f:
            md = f.read()
        self.assertIn("> **The gate is unqualified on this machine**: gate: unqualified since ", md)
        self.assertIn("(compare --qualify: %s SLOWER)" % V0, md)
        with open(os.path.join(self.dir, "v.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["exit"], doc["gate"]["state"]), (0, "unqualified"))
        self.assertEqual(len(self.records()), 1)   # the fingerprint was known: no qualification ran
        # A passing qualification clears it: the same regression fails again.
        p = self.tool("--qualify", self.fake, "--qualify-state", self.state, "--workdir", "qw2", "--",
                      "--order-log=" + self.order)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.tool("--run", self.fake, self.slow, "--qualify-state", self.state, "--workdir", "rw", "--",
                      "--order-log=" + self.order)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("gate: qualified on ", p.stdout)

    def test_a_new_fingerprint_is_qualified_first(self):
        # An empty state: the gate qualifies BASE against its copy before judging.
        p = self.tool("--run", self.fake, self.slow, "--qualify-state", self.state, "--workdir", "rw", "--",
                      "--order-log=" + self.order)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("has no qualification in %s: qualifying it first" % self.state, p.stderr)
        self.assertTrue(os.path.isdir(os.path.join(self.dir, "rw-qualify")))
        [rec] = self.records()
        self.assertEqual((rec["state"], rec["source"]),
                         ("qualified", "compare --run --qualify-state: BASE against itself"))
        # The same machine again: nothing more to qualify. Another CPU: qualified anew.
        self.tool("--run", self.fake, self.slow, "--qualify-state", self.state, "--workdir", "rw", "--",
                  "--order-log=" + self.order)
        self.assertEqual(len(self.records()), 1)
        p = self.tool("--run", self.fake, self.slow, "--qualify-state", self.state, "--workdir", "rw2", "--",
                      "--order-log=" + self.order, FAKE_CPU="D")
        self.assertIn("qualifying it first", p.stderr)
        recs = self.records()
        self.assertEqual(len(recs), 2)
        self.assertNotEqual(recs[0]["fingerprint"], recs[1]["fingerprint"])
        self.assertEqual(recs[1]["fingerprint"], q.fingerprint({"cpu_model": "D", "gpu": "G",
                                                                "parbench_build_type": "Release"}))

    def test_if_unseen_qualifies_a_machine_once(self):
        args = ["--qualify", self.fake, "--qualify-state", self.state, "--if-unseen", "--workdir", "qw", "--",
                "--order-log=" + self.order]
        p = self.tool(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("qualification passed", p.stdout)
        p = self.tool(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("is in %s already, nothing run: qualified on " % self.state, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(self.records()), 1)
        # A failed qualification is no "seen": the next call qualifies again, and a pass clears it.
        p = self.tool(*args[:args.index("--workdir")], "--workdir", "qw-bad", "--", "--order-log=" + self.order,
                      FAKE_TWIN_SCALE="1.3")
        self.assertEqual(p.returncode, 0, p.stderr)   # the machine was qualified: nothing ran
        st = q.State(self.state)
        st.add(dict(st.records[-1], state="unqualified", alarms=[{"name": V0, "verdict": "SLOWER", "change": 0.3}]))
        p = self.tool(*args[:args.index("--workdir")], "--workdir", "qw-again", "--", "--order-log=" + self.order)
        self.assertIn("this machine is unqualified (unqualified since ", p.stderr)
        self.assertIn("qualification passed", p.stdout)
        self.assertEqual([r["state"] for r in self.records()], ["qualified", "unqualified", "qualified"])
        # Another machine is qualified, in a work folder of its own.
        p = self.tool(*args, FAKE_CPU="D")
        self.assertEqual(p.returncode, 2)
        self.assertIn("qw holds the rounds of another machine; give another --workdir", p.stderr)
        args[args.index("qw")] = "qw-d"
        p = self.tool(*args, FAKE_CPU="D")
        self.assertIn("qualification passed", p.stdout)
        self.assertEqual([r["fingerprint"] for r in self.records()],
                         [q.fingerprint({"cpu_model": c, "gpu": "G", "parbench_build_type": "Release"})
                          for c in "CCCD"])

    def test_bad_input_is_one_line(self):
        for args, text in ((["--qualify", "nonexistent"], "--qualify nonexistent: no such file"),
                           (["a.json", "b.json", "--qualify-state", "s.json"], "--qualify-state is for --run"),
                           (["--qualify", self.fake, "--run", self.fake, self.fake], "not several"),
                           (["--qualify", self.fake, "--if-unseen"], "--if-unseen is for --qualify with")):
            p = self.tool(*args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)
        bad = self.write("bad-state.json", {"format": 1, "records": [{"state": "maybe"}]})
        p = self.tool("--qualify", self.fake, "--qualify-state", bad, "--workdir", "qw", "--",
                      "--order-log=" + self.order)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip().splitlines()[-1],
                         "compare: qualification state %s: not one (compare --qualify-state writes one)" % bad)


if __name__ == "__main__":
    unittest.main()
