#!/usr/bin/env python3
"""ci/backfill on the fake Google Benchmark project of test_bisect: a range
built and run into a history, dated by its commits and marked, so ci/trends
finds the step of the past; --every, --commits, a commit that does not
build, --max-seconds and --resume, and the refusals (one line, exit 2,
nothing ingested)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from regress.store import history
from test_bisect import BUILD, FLAT, Project

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Backfill(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.p = Project(os.path.join(self.tmp, "repo"))
        self.hist = os.path.join(self.tmp, "hist")
        # Commits a day apart, so their dates order the history.
        self.env = dict(os.environ)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def series(self, speeds, broken=()):
        for i, s in enumerate(speeds):
            os.environ["GIT_COMMITTER_DATE"] = "2026-10-%02dT02:00:00+00:00" % (i + 1)
            self.p.commit(s, broken=i in broken)
        os.environ.pop("GIT_COMMITTER_DATE")

    def backfill(self, *args, state="state", hist=None):
        cmd = [os.path.join(ROOT, "ci", "backfill"), "--repo", self.p.root, "--build", BUILD, "--bench", "out/bench",
               "--cache", os.path.join(self.tmp, "cache"), "--state", os.path.join(self.tmp, state),
               "--history", hist or self.hist] + list(args)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=600)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def runs(self, hist=None):
        with history.open_history(hist or self.hist, log=lambda line: None) as h:
            return h.runs()

    def test_a_range_into_the_history_finds_its_step(self):
        speeds = [FLAT] * 6 + [dict(FLAT, A=1.3)] * 6
        self.series(speeds, broken=(3,))
        s = self.p.shas
        p = self.backfill("%s..%s" % (s[0], s[-1]))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("backfill: 12 commits: 11 ingested, 1 skipped (history: ", p.stdout)
        self.assertIn("backfill: 4/12 %s does not build, skipped" % s[3][:12], p.stderr)
        runs = self.runs()
        self.assertEqual(len(runs), 11)
        self.assertEqual([r["date"][:10] for r in runs],
                         ["2026-10-%02d" % d for d in range(1, 13) if d != 4])
        ctx = runs[0]["context"]
        self.assertEqual(ctx["parbench_backfill"], "%s..%s" % (s[0], s[-1]))
        self.assertEqual(ctx["parbench_backfilled_at"], "2026-11-27T00:00:00+00:00")  # what the bench wrote
        # ci/trends finds the step between commits 6 and 7.
        out = os.path.join(self.tmp, "trends")
        t = subprocess.run([os.path.join(ROOT, "ci", "trends"), "--history", self.hist, "--out", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        with open(os.path.join(out, "changes.json")) as f:
            changes = json.load(f)["changes"]
        self.assertEqual([(c["name"], c["direction"], c["revision_before"], c["revision_after"]) for c in changes],
                         [("Fake/A/manual_time", "slower", s[5][:12], s[6][:12])], t.stdout)
        # Done: a rerun adds nothing.
        p = self.backfill("--resume")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(self.runs()), 11)

    def test_every_commits_stop_and_resume(self):
        self.series([FLAT] * 7)
        s = self.p.shas
        p = self.backfill("%s..%s" % (s[0], s[-1]), "--every", "3", "--max-seconds", "0")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("go on with: ci/backfill --resume --state", p.stderr)
        p = self.backfill("--resume")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("3 commits: 3 ingested", p.stdout)   # 0, 3, 6
        self.assertEqual([r["context"]["parbench_git_revision"] for r in self.runs()],
                         [s[0][:12], s[3][:12], s[6][:12]])
        p = self.backfill("%s..%s" % (s[0], s[-1]), "--commits", "%s,%s" % (s[2], s[5]), state="other",
                          hist=os.path.join(self.tmp, "h2"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(self.runs(os.path.join(self.tmp, "h2"))), 2)

    def test_refusals(self):
        self.series([FLAT] * 3)
        s = self.p.shas

        def refused(p, text):
            self.assertEqual(p.returncode, 2, p.stderr)
            lines = [ln for ln in p.stderr.strip().splitlines() if not ln.startswith("backfill: ") or
                     text in ln]
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn(text, lines[0])

        refused(self.backfill("%s..%s" % (s[2], s[0])), "is not an ancestor of BAD")
        refused(self.backfill("%s..nosuch" % s[0]), "nosuch: unknown revision")
        refused(self.backfill(s[0]), "needs GOOD..BAD")
        refused(self.backfill("--resume", state="nothing"), "holds no backfill")
        refused(self.backfill("%s..%s" % (s[0], s[2]), "--commits", "deadbeef"), "unknown revision")
        p = self.backfill("%s..%s" % (s[0], s[2]), "--every", "0")
        self.assertEqual((p.returncode, p.stderr.strip()), (2, "backfill: --every must be at least 1"))
        # A history of another machine: refused, nothing ingested there.
        other = os.path.join(self.tmp, "other")
        run = os.path.join(self.tmp, "other-run.json")
        with open(run, "w") as f:
            json.dump({"context": {"date": "2026-11-01T00:00:00+00:00", "cpu_model": "Elsewhere", "num_cpus": 64},
                       "benchmarks": [{"name": "X/manual_time", "run_name": "X/manual_time", "run_type": "iteration",
                                       "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
                                       "real_time": 1.0, "cpu_time": 1.0, "time_unit": "us"}]}, f)
        with history.open_history(other, create=True, log=lambda line: None) as h:
            h.ingest(run)
        refused(self.backfill("%s..%s" % (s[0], s[2]), hist=other, state="s3"), "holds runs of other machines only")
        self.assertEqual(len(self.runs(other)), 1)

    def test_arguments_no_commit_takes(self):
        # A flag the range's bench does not know: three refusals (exit 2) in
        # a row stop the backfill, one line, and the other commits are not built.
        self.series([FLAT] * 5)
        s = self.p.shas
        p = self.backfill("%s..%s" % (s[0], s[-1]), "--", "--later-flag")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.strip().splitlines()[-1],
                         "backfill: bench refused its arguments (exit 2) at 3 commits in a row, the last saying: "
                         "bench: unknown flag --later-flag; they must suit the range's oldest commits too (start "
                         "again with another --state)")
        self.assertIn("backfill: 3/5 %s: bench failed (exit 2)" % s[2][:12], p.stderr)
        self.assertNotIn("4/5", p.stderr)
        self.assertFalse(os.path.exists(self.hist) and self.runs())


if __name__ == "__main__":
    unittest.main()
