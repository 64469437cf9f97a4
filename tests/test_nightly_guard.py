#!/usr/bin/env python3
"""What keeps a night whole when its calls die or overlap, part by part, in
seconds (the whole nights under the same faults: tests/test_nightly_faults.py,
whose findings each have their test here):

- one night at a time on a history: a second call refuses in one line; the
  lock of a killed call is waited for while its commands end;
- a killed night's commands end with it (they were left running);
- a killed call is said in one line and kept in the night's calls;
- a disk that refuses the night's records is one line, not an internal error;
- a resumed night writes its A/A counts once, meters its energy once;
- a suite whose output a full disk cut off charges no instance for it;
- a failed ingest is recorded as failed, not done."""
import argparse
import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

from regress.run import nightly, nightly_guard as guard, nightly_steps, suite as suite_mod, suite_parts

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
try:  # helpers beside this file when run as a script
    import test_compare as tc
except ImportError:
    from tests import test_compare as tc


def call_args(tmp, **kw):
    ns = dict(out=os.path.join(tmp, "out"), history=os.path.join(tmp, "hist"), suite_only=False, resume=True,
              suite="smoke", store=None)
    ns.update(kw)
    return argparse.Namespace(**ns)


def load(path):
    with open(path) as f:
        return json.load(f)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(k) for k in f.read().split()]
    except OSError:
        return []


def gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


class Locks(unittest.TestCase):
    def tearDown(self):
        while guard.HELD:
            os.close(guard.HELD.pop())

    def test_a_second_night_refuses_in_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            hist = os.path.join(tmp, "hist")
            guard.hold(hist, print, "tonight")
            p = subprocess.run([sys.executable, "-m", "regress.nightly", "--history", hist, "--out",
                                os.path.join(tmp, "other"), "--skip-build", "--skip-tests"],
                               stderr=subprocess.PIPE, universal_newlines=True)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stderr.strip(), "nightly: %s is in use by another night (pid %d since %s, --out "
                             "tonight): one night at a time on a history and an output folder; run this one when "
                             "it has ended" % (hist, os.getpid(), load(os.path.join(hist, guard.LOCK))["started"]))
            self.assertFalse(os.path.exists(os.path.join(tmp, "other", "nightly-calls.jsonl")))

    def test_the_lock_of_a_killed_call_is_waited_for(self):
        """Its holder is dead, its commands still hold it: a call waits for
        them to end, and says why it gives up when they do not."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, guard.LOCK)
            dead = subprocess.Popen(["true"])
            dead.wait()
            with open(path, "w") as f:
                json.dump({"pid": dead.pid, "started": "then", "out": "o"}, f)
            holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                                       "fd = os.open(sys.argv[1], os.O_RDWR)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
                                       "print('held', flush=True)\ntime.sleep(float(sys.argv[2]))", path, "1"],
                                      stdout=subprocess.PIPE, universal_newlines=True)
            self.assertEqual(holder.stdout.readline(), "held\n")
            with self.assertRaises(guard.Busy) as e:
                guard.hold(tmp, print, "o", wait=0.2)
            self.assertIn("still held by the commands of a killed call (pid %d)" % dead.pid, str(e.exception))
            t0 = time.monotonic()
            guard.hold(tmp, print, "o", wait=30)
            self.assertLess(time.monotonic() - t0, 10)
            holder.wait()
            holder.stdout.close()
            self.assertEqual(load(path)["pid"], os.getpid())


class KilledNight(unittest.TestCase):
    def test_a_killed_nights_commands_end_with_it(self):
        """They were left running: the suite runner, the A/A rounds and the
        trends of a killed call ran on beside the call that resumed it."""
        p = subprocess.Popen([sys.executable, "-c", "from regress.run.nightly_steps import run\nrun(['sleep', '30'])"],
                             env=dict(os.environ, PYTHONPATH=ROOT))
        t0 = time.monotonic()
        while not children(p.pid):
            self.assertLess(time.monotonic() - t0, 20)
            time.sleep(0.01)
        kid = children(p.pid)[0]
        p.send_signal(signal.SIGKILL)
        p.wait()
        t0 = time.monotonic()
        while not gone(kid):
            self.assertLess(time.monotonic() - t0, 5, "the command outlived its night")
            time.sleep(0.01)

    def test_a_killed_call_is_said_once_and_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            args = call_args(tmp)
            os.makedirs(args.out)
            with open(os.path.join(args.out, guard.CALL), "w") as f:
                json.dump({"pid": 4242, "started": "2026-12-01T00:00:00Z", "step": "ingest",
                           "steps": [{"step": "suite", "seconds": 3.0, "status": "done"}]}, f)
            lines = []
            inflight = guard.start_call(args, time.time(), lines.append)
            self.assertEqual(lines, ["the call of 2026-12-01T00:00:00Z (pid 4242) was killed in its ingest step and "
                                     "left no record; this call goes on with the night"])
            guard.record_call(args, [], time.time(), 0, inflight, lines.append)
            for l in guard.HELD:
                os.close(l)
            del guard.HELD[:]
            calls = guard.read_jsonl(os.path.join(args.out, "nightly-calls.jsonl"))
            self.assertEqual([(c["exit"], c.get("killed")) for c in calls], [(None, True), (0, None)])
            self.assertEqual(calls[0]["steps"][-1], {"step": "ingest", "seconds": 0.0, "status": "killed"})
            self.assertFalse(os.path.exists(os.path.join(args.out, guard.CALL)))
            lines.clear()
            guard.record_call(args, [], time.time(), 0, guard.start_call(args, time.time(), lines.append),
                              lines.append)
            self.assertFalse([l for l in lines if "killed" in l])
            while guard.HELD:
                os.close(guard.HELD.pop())

    def test_a_disk_that_refuses_the_record_is_one_line(self):
        """A full disk made the night end in "internal error (please report)"."""
        with tempfile.TemporaryDirectory() as tmp:
            args = call_args(tmp)
            os.makedirs(os.path.join(args.out, "nightly-calls.jsonl"))   # any write of it fails
            lines = []
            inflight = guard.InFlight(args.out, "now", lines.append)
            inflight.update([], "suite")
            guard.record_call(args, [], time.time(), 2, inflight, lines.append)
            self.assertEqual(len(lines), 1)
            self.assertRegex(lines[0], r"^cannot record this call in .*out \(Is a directory\)$")
            self.assertFalse(os.path.exists(os.path.join(args.out, guard.CALL)))   # no killed call to adopt


class ResumedSteps(unittest.TestCase):
    def night(self, tmp, **kw):
        n = nightly.Night.__new__(nightly.Night)
        n.args, n.summary, n.codes, n.inflight = call_args(tmp, **kw), [], [], None
        n.suite_json, n.aa_json = os.path.join(tmp, "suite.json"), os.path.join(tmp, "aa.json")
        n.context, n.machine = {"date": "2026-12-01T00:00:00+00:00", "parbench_git_revision": "abc"}, "m1"
        return n

    def test_the_aa_counts_go_to_the_ledger_once_a_night(self):
        with tempfile.TemporaryDirectory() as tmp:
            n = self.night(tmp)
            with open(n.aa_json, "w") as f:
                json.dump({"benchmarks": [], "summary": {"SAME": 2}, "summary_line": "2 SAME"}, f)
            with mock.patch.object(nightly, "log"):
                n.aa_ledger()
                n.aa_ledger()   # the step again, in a resumed call
                n.context = dict(n.context, date="2026-12-02T00:00:00+00:00")
                n.aa_ledger()   # the next night
            ledger = guard.read_jsonl(os.path.join(n.args.history, "aa-ledger.jsonl"))
            self.assertEqual([e["date"][:10] for e in ledger], ["2026-12-01", "2026-12-02"])

    def test_a_resumed_night_meters_its_energy_once(self):
        """An earlier call's whole energy run is the night's; one cut off is metered again."""
        with tempfile.TemporaryDirectory() as tmp:
            names = ["GEMM/A/manual_time", "GEMM/B/manual_time"]
            with open(os.path.join(tmp, "energy.json"), "w") as f:
                json.dump(tc.doc(tc.series(names[0], 1e-3, 3, device="cpu") +
                                 tc.series(names[1], 2e-3, 3, device="cpu")), f)
            ran = []

            def run(cmd, *a, **kw):
                ran.append(cmd[0])
                return 1
            with mock.patch.object(nightly_steps, "run", run), mock.patch.object(nightly_steps, "log"):
                nightly_steps.energy_night("BENCH", [], names, tmp, tmp, tmp, None, reuse=True)
                self.assertNotIn("BENCH", ran)
                nightly_steps.energy_night("BENCH", [], names + ["GEMM/C/manual_time"], tmp, tmp, tmp, None,
                                           reuse=True)
                self.assertEqual(ran[-1], "BENCH")
                nightly_steps.energy_night("BENCH", [], names, tmp, tmp, tmp, None, reuse=False)
                self.assertEqual(ran.count("BENCH"), 2)

    def test_a_failed_ingest_is_no_done_step(self):
        with tempfile.TemporaryDirectory() as tmp:
            n = self.night(tmp)
            with mock.patch.object(nightly, "run", return_value=2), mock.patch.object(nightly_steps, "log"):
                n.ingest()
            self.assertEqual(n.summary[-1]["status"], "failed (exit 2)")
            self.assertEqual(n.codes, [2])


class FullDisk(unittest.TestCase):
    def suite(self, tmp):
        s = suite_mod.Suite.__new__(suite_mod.Suite)
        s.lock, s.context, s.kinds, s.got, s.parts_log = suite_mod.threading.Lock(), None, {}, {}, []
        s.workdir, s.state_path, s.timeout, s.log = tmp, os.path.join(tmp, "state.json"), 60.0, lambda line: None
        s.state = {"parts": []}
        return s

    def test_output_lost_to_a_full_disk_is_no_instances_failure(self):
        """bench ends with exit 0 when it cannot write its output: the
        instance it was in was recorded as failed for the night."""
        rec = {"group": "G", "part": 1, "instances": 2, "start_s": 0, "seconds": 1, "exit": 0, "timed_out": False,
               "path": "p"}
        with tempfile.TemporaryDirectory() as tmp:
            s = self.suite(tmp)
            full = OSError(errno.ENOSPC, "No space left on device", tmp)
            with mock.patch.object(suite_mod, "out_of_space", return_value=full):
                with self.assertRaises(OSError) as e:
                    s.keep_part(dict(rec), ["G/a", "G/b"], {}, [], None, False)
            self.assertEqual(e.exception.errno, errno.ENOSPC)
            self.assertEqual((s.got, s.state["parts"]), ({}, []))   # nothing charged, nothing recorded
            # With space, the same end is the instance's: its failed entry.
            with mock.patch.object(suite_mod, "out_of_space", return_value=None):
                self.assertEqual(s.keep_part(dict(rec), ["G/a", "G/b"], {}, [], None, False), ["G/b"])
            self.assertTrue(s.got["G/a"][0]["error_occurred"])

    def test_out_of_space(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(suite_parts.out_of_space(tmp))
            st = os.statvfs(tmp)
            nearly_full = os.statvfs_result((st.f_bsize, 4096, 100, 10, 10) + tuple(st)[5:])
            with mock.patch.object(suite_parts.os, "statvfs", return_value=nearly_full):
                e = suite_parts.out_of_space(tmp)
            self.assertEqual((e.errno, e.strerror, e.filename), (errno.ENOSPC, "No space left on device", tmp))


if __name__ == "__main__":
    unittest.main()
