#!/usr/bin/env python3
"""A night survives every fault: the nightly job (ci/nightly) on two of
the instances tests/test_nightly.py runs, killed outright (SIGKILL) in
each of its steps, its disk filled while the suite writes, its PostgreSQL
server restarted mid-ingest, and started twice at once on one history.
After each fault, `--resume` ends the night as a clean one would: every entry the
killed call finished is in the night's suite, nothing is in a store twice
(the runs, the energy runs, the A/A ledger, the baselines' log), the
history's alert keeps its triaged state, and the fault was said in one
clear line. Then one whole night on PostgreSQL, end to end.

The kills come from outside, as the out-of-memory killer's or a runner's
would: the test reads the night's log and, once the step has started its
command (the test sees it among the night's children), sends SIGKILL.
Commands a test cannot afford stand in for the real ones in the steps that
run them: a cmake that copies the bench (the build), a ctest that passes
(the tests), and a git that takes a second (the bisection, whose range is
one the repository does not hold, so that it checks and passes it over).

    test_nightly_faults.py BUILD_DIR"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from regress.run.suite_parts import load_parts
from regress.store import alerts
from regress.store import history

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
try:  # helpers beside this file when run as a script
    import pg_server
    import test_nightly as tn
except ImportError:
    from tests import pg_server
    from tests import test_nightly as tn

BUILD = None
# Two of tests/test_nightly.py's instances, one group each (the suite is
# killed between them), one of them the A/A subset: its rounds are most of
# a night's time.
FILTER = "^GEMM/(OpenBLAS|Naive)/op:AB/type:f32/M:64/N:64/K:64/(threads:1/)?manual_time$"
STEPS = ["suite", "A/A", "ingest", "changes", "bisect", "baseline", "energy", "report"]
SEEDED = 10   # runs of the history before the night: a step in one benchmark, its alert acknowledged
WHY_NO_PG = pg_server.available()
COUNTS = {"injected": 0, "survived": 0}

CMAKE = """#!/bin/sh
# cmake for the test: configuring makes the folder, building copies the bench; a second each.
sleep 1
if [ "$1" = --build ]; then
  cp "{bench}" "$2/bench.part" && mv "$2/bench.part" "$2/bench"
  exit
fi
while [ $# -gt 0 ]; do [ "$1" = -B ] && mkdir -p "$2"; shift; done
"""
CTEST = """#!/bin/sh
# ctest for the test: a second, then every test passed; each run to its end counted.
sleep 1
echo "100% tests passed, 0 tests failed out of 3"
echo ran >> "{count}"
"""
GIT = """#!/bin/sh
# git for the test: a second late, so that the bisection step is seen running it.
sleep 1
exec {git} "$@"
"""


def load(path):
    with open(path) as f:
        return json.load(f)


def lines_of(path):
    try:
        with open(path) as f:
            return [l for l in f if l.strip()]
    except FileNotFoundError:
        return []


def children(pid):
    """{pid: command line} of a process's children."""
    out = {}
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return out
    for k in kids:
        try:
            with open("/proc/%d/cmdline" % k, "rb") as f:
                out[k] = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            pass
    return out


def processes_naming(text):
    """The processes whose command line names `text` (a night's folder)."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(d))
            except OSError:
                pass
    return found


def entry_key(e):
    return (e.get("name"), e.get("run_type"), e.get("repetition_index"), e.get("aggregate_name"),
            e.get("real_time"), e.get("cpu_time"), e.get("iterations"))


def finished_entries(out):
    """The suite's entries a call left finished in OUT: the merged suite, else
    the parts its state records."""
    path = os.path.join(out, "suite.json")
    if os.path.exists(path):
        return {entry_key(e) for e in load(path)["benchmarks"]}
    workdir = os.path.join(out, "suite.json.parts")
    if not os.path.exists(os.path.join(workdir, "state.json")):
        return set()
    got = {}
    load_parts(load(os.path.join(workdir, "state.json"))["parts"], got, {}, workdir)
    return {entry_key(e) for es in got.values() for e in es}


def runs_in(spec):
    if not (spec.startswith("postgresql://") or os.path.exists(os.path.join(spec, "archive"))):
        return []
    with history.open_history(spec, log=lambda line: None) as h:
        return [r["id"] for r in h.runs()]


def alert_states(spec):
    """Every alert of a history, its benchmarks and how many triage events it had."""
    with alerts.Alerts(spec, create=False) as a:
        rows = [tuple(r) for r in a.db.execute("SELECT id, machine, grouped_by, direction, state FROM alerts "
                                               "ORDER BY id")]
        bench = [tuple(r) for r in a.db.execute("SELECT alert_id, name, direction, ordinal, run_id FROM "
                                                "alert_benchmarks ORDER BY alert_id, name")]
        events = a.db.execute("SELECT count(*) FROM events")[0][0]
    return rows, bench, events


def seed_runs(reference, folder):
    """SEEDED runs of the machine that ran `reference` (a bench JSON): one
    benchmark the night does not run, twice as slow in the first half (a
    confirmed improvement, whose alert the test triages), dated before tonight."""
    doc = load(reference)
    reps = [e for e in doc["benchmarks"] if e.get("run_type") == "iteration"]
    name = "GEMM/Naive/op:AB/type:f32/M:32/N:32/K:32/manual_time"
    paths = []
    for i in range(SEEDED):
        ctx = dict(doc["context"], date="2026-01-%02dT00:00:00+00:00" % (i + 1),
                   parbench_git_revision="feed%036x" % i)
        scale = 2.0 if i < SEEDED // 2 else 1.0
        entries = [dict(e, name=name, run_name=name, real_time=e["real_time"] * scale * (1 + 0.001 * i),
                        cpu_time=e["cpu_time"] * scale) for e in reps]
        path = os.path.join(folder, "seed-%02d.json" % i)
        with open(path, "w") as f:
            json.dump({"context": ctx, "benchmarks": entries}, f)
        paths.append(path)
    return paths


def seed_history(spec, files, work):
    """The seeded runs ingested into spec, ci/trends run on them (it raises
    the alert) and the alert acknowledged by a person."""
    with history.open_history(spec, create=True, log=lambda line: None) as h:
        for p in files:
            h.ingest(p)
    p = subprocess.run([sys.executable, "-m", "regress.trends", "--history", spec, "--out", work],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stderr
    with alerts.Alerts(spec) as a:
        ids = [r[0] for r in a.db.execute("SELECT id FROM alerts")]
        assert len(ids) == 1, ids
        a.triage(ids[0], "acknowledged", who="test", why="seen")


class Faults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nightly-faults-")
        # A copy of the bench: a build of BUILD_DIR beside the test must not change it mid-night.
        cls.build = os.path.join(cls.tmp, "build")
        os.makedirs(cls.build)
        shutil.copy2(os.path.join(BUILD, "bench"), os.path.join(cls.build, "bench"))
        cls.bin = os.path.join(cls.tmp, "bin")
        os.makedirs(cls.bin)
        cls.ctest_count = os.path.join(cls.tmp, "ctest-runs")
        for name, text in (("cmake", CMAKE.format(bench=os.path.join(cls.build, "bench"))),
                           ("ctest", CTEST.format(count=cls.ctest_count))):
            with open(os.path.join(cls.bin, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(cls.bin, name), 0o755)
        cls.slow_git = os.path.join(cls.tmp, "slow-git")
        os.makedirs(cls.slow_git)
        with open(os.path.join(cls.slow_git, "git"), "w") as f:
            f.write(GIT.format(git=shutil.which("git")))
        os.chmod(os.path.join(cls.slow_git, "git"), 0o755)
        reference = os.path.join(cls.tmp, "reference.json")
        subprocess.run([os.path.join(cls.build, "bench"), "--profile=smoke",
                        "--benchmark_filter=^GEMM/Naive/op:AB/type:f32/M:64/", "--benchmark_repetitions=5",
                        "--benchmark_out=" + reference, "--benchmark_out_format=json", "--no-progress"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        cls.seed_files = seed_runs(reference, cls.tmp)
        cls.seed = os.path.join(cls.tmp, "seed")
        seed_history(cls.seed, cls.seed_files, os.path.join(cls.tmp, "seed-trends"))
        cls.seed_alerts = alert_states(cls.seed)
        cls.rapl = tn.FakeRapl(os.path.join(cls.tmp, "powercap"))
        cls.env = dict(cls.rapl.__enter__(), PATH=cls.bin + os.pathsep + os.environ.get("PATH", ""))
        cls.server = None if WHY_NO_PG else pg_server.Server()
        cls.t0 = time.monotonic()

    @classmethod
    def tearDownClass(cls):
        cls.rapl.__exit__(None, None, None)
        if cls.server:
            cls.server.close()
        print("\nnightly faults: %d injected, %d survived, in %.0f s"
              % (COUNTS["injected"], COUNTS["survived"], time.monotonic() - cls.t0), file=sys.stderr)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ------------------------------------------------------------ helpers

    def place(self, tag, store=None):
        """A fresh night: (history, out, the store's spec), the history a copy
        of the seeded one; with a store (a database seeded alike), the
        history only for the nightly's own files."""
        hist, out = os.path.join(self.tmp, tag, "history"), os.path.join(self.tmp, tag, "out")
        if store is None:
            shutil.copytree(self.seed, hist)
        return hist, out, store or hist

    def command(self, hist, out, store=None, build=None, tests=False, resume=False):
        cmd = [sys.executable, "-m", "regress.nightly", "--history", hist, "--out", out, "--suite", "smoke",
               "--filter", FILTER, "--build-dir", build or self.build, "--energy-seconds", "0.2"]
        cmd += [] if build else ["--skip-build"]
        cmd += [] if tests else ["--skip-tests"]
        cmd += ["--store", store] if store else []
        return cmd + (["--resume"] if resume else [])

    def kill_in(self, cmd, step, line, child=None, env=None, delay=0.0):
        """Runs the night and SIGKILLs it once `line` is in its log and it runs
        a command whose command line holds `child` (at once when None), after
        `delay` seconds more. Returns (its log, the record of the call it left)."""
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True,
                             env=env or self.env)
        log = []
        for text in p.stderr:
            log.append(text)
            if line in text:
                t0 = time.monotonic()
                while child and not any(child in c for c in children(p.pid).values()):
                    self.assertLess(time.monotonic() - t0, 60, "no %s in the %s step" % (child, step))
                    time.sleep(0.002)
                time.sleep(delay)
                p.kill()
                COUNTS["injected"] += 1
                break
        p.wait()
        self.assertEqual(p.returncode, -signal.SIGKILL, "".join(log)[-3000:])
        out = cmd[cmd.index("--out") + 1]
        record = load(os.path.join(out, "nightly-call.json"))
        self.assertEqual(record["step"], step, record)
        # The killed call's commands end with it (SIGTERM from the kernel):
        # none is left running in the night's folders.
        t0, night = time.monotonic(), os.path.dirname(out)
        while processes_naming(night):
            self.assertLess(time.monotonic() - t0, 30, "processes of the killed call: %s" % processes_naming(night))
            time.sleep(0.1)
        p.stderr.close()
        return "".join(log), record

    def resume(self, hist, out, store=None, **kw):
        p = subprocess.run(self.command(hist, out, store, resume=True, **kw), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, env=self.env)
        self.assertNotIn("Traceback", p.stderr)
        self.assertNotIn("internal error", p.stderr)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p.stderr

    def check_night(self, hist, out, store, kept=(), first=()):
        """The night ended as a clean one: its steps done, the finished entries
        kept, one run more in the store, one energy run, one A/A line, one
        baseline, the alert as it was triaged."""
        doc = load(os.path.join(out, "nightly.json"))
        self.assertEqual(doc["exit"], 0)
        self.assertEqual([s["step"] for s in doc["steps"]], list(first) + STEPS)
        self.assertTrue(all(s["status"].startswith("done") for s in doc["steps"]), doc["steps"])
        suite = load(os.path.join(out, "suite.json"))
        self.assertEqual(set(kept) - {entry_key(e) for e in suite["benchmarks"]}, set(), "finished entries lost")
        self.assertFalse([e["name"] for e in suite["benchmarks"] if e.get("error_occurred")])
        self.assertEqual(len(runs_in(store)), SEEDED + 1)
        self.assertEqual(len(runs_in(os.path.join(hist, "energy"))), 1)
        self.assertEqual(len(lines_of(os.path.join(hist, "aa-ledger.jsonl"))), 1)
        self.assertEqual(len(lines_of(os.path.join(hist, "baselines", "log.jsonl"))), 1)
        self.assertEqual(alert_states(store), self.seed_alerts if store == hist else self.pg_seed_alerts)
        self.assertFalse(os.path.exists(os.path.join(out, "nightly-call.json")))

    def one_line(self, text, words):
        """The one line of `text` that holds `words`."""
        found = [l for l in text.splitlines() if words in l]
        self.assertEqual(len(found), 1, text[-3000:])
        return found[0]

    def killed(self, tag, step, line, child=None, env=None, delay=0.0, build=False, tests=False):
        """One SIGKILL in `step`, then --resume; the checks of a clean night."""
        hist, out, store = self.place(tag)
        build_dir = os.path.join(self.tmp, tag, "build") if build else None
        _, record = self.kill_in(self.command(hist, out, build=build_dir, tests=tests), step, line, child, env,
                                 delay)
        kept = finished_entries(out)
        log = self.resume(hist, out, build=build_dir, tests=tests)
        said = self.one_line(log, "was killed")
        self.assertIn("pid %d) was killed in its %s step" % (record["pid"], step), said)
        self.check_night(hist, out, store, kept, ["build"] * build + ["tests"] * tests)
        calls = load(os.path.join(out, "nightly.json"))["calls"]
        self.assertEqual([c["exit"] for c in calls], [None, 0])
        self.assertEqual(calls[0]["steps"][-1], {"step": step, "seconds": 0.0, "status": "killed"})
        COUNTS["survived"] += 1
        return hist, out, kept

    # ------------------------------------------------------------ the faults

    def test_killed_in_the_build(self):
        self.killed("build", "build", "nightly: build ...", "cmake", build=True)

    def test_killed_in_the_tests(self):
        hist, out, _ = self.killed("tests", "tests", "nightly: tests ...", "ctest", tests=True)
        with open(os.path.join(out, "tests.log")) as f:
            self.assertIn("tests passed", f.read())
        self.assertEqual(len(lines_of(self.ctest_count)), 1)   # the killed run never ended; the resumed one did

    def test_killed_in_the_suite_mid_family(self):
        # The first of the two groups (GEMM/Naive) is done, the second running.
        _, _, kept = self.killed("suite", "suite", "run-suite: group 2 of 2")
        self.assertTrue(kept, "the first group's entries")

    def test_killed_in_the_aa_rounds(self):
        self.killed("aa", "A/A", "nightly: A/A ...", "regress.compare", delay=1.0)

    def test_killed_in_the_ingest(self):
        self.killed("ingest", "ingest", "nightly: ingest ...", "regress.history")

    def test_killed_in_the_trends(self):
        self.killed("trends", "changes", "nightly: changes ...", "regress.trends")

    def test_killed_in_the_bisection(self):
        env = dict(self.env, PATH=self.slow_git + os.pathsep + self.env["PATH"])
        self.killed("bisect", "bisect", "nightly: bisect ...", "git", env=env)

    def test_killed_while_energy_is_metered(self):
        self.killed("energy-bench", "energy", "nightly: energy ...", "--benchmark_min_time=0.2")

    def test_killed_after_energy_is_stored(self):
        # Its run is in the energy history, its trends running: a resumed
        # night stores no second energy run.
        self.killed("energy-trends", "energy", "nightly: energy ...", "joules_per_call")

    def test_killed_in_the_report(self):
        self.killed("report", "report", "nightly: report ...", "plot")

    def test_disk_full_while_the_suite_writes(self):
        """OUT on a small file system of its own, filled once the first
        group is done: the suite stops saying so in one line, and resumes
        with the first group's entries once there is space."""
        if os.geteuid() != 0:
            self.skipTest("a file system to fill needs root (mount -t tmpfs)")
        hist, out, store = self.place("disk")
        os.makedirs(out)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", out], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("mount -t tmpfs is not allowed here")
        try:
            p = subprocess.Popen(self.command(hist, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 universal_newlines=True, env=self.env)
            log = []
            for text in p.stderr:
                log.append(text)
                if "run-suite: group 2 of 2" in text:
                    with open(os.path.join(out, "filler"), "wb") as f:
                        try:
                            while True:
                                f.write(b"\0" * (1 << 16))
                                f.flush()
                        except OSError:
                            pass
                    COUNTS["injected"] += 1
            p.wait()
            p.stderr.close()
            log = "".join(log)
            self.assertEqual(p.returncode, 2, log[-3000:])
            self.assertNotIn("Traceback", log)
            self.assertNotIn("internal error", log)
            said = self.one_line(log, "run-suite: No space left on device")
            self.assertIn("free space and run the same command with --resume", said)
            self.assertIn("A/A skipped: the suite did not run", log)   # not "stopped ... (--max-seconds)"
            kept = finished_entries(out)
            self.assertTrue(kept, "the first group's entries")
            os.remove(os.path.join(out, "filler"))
            self.resume(hist, out)
            self.check_night(hist, out, store, kept)
            COUNTS["survived"] += 1
        finally:
            subprocess.run(["umount", out])

    def test_two_nights_at_once_on_one_history(self):
        """The second refuses in one line; the first ends as a clean night."""
        hist, out, store = self.place("twice")
        other = os.path.join(self.tmp, "twice", "other")
        procs = [subprocess.Popen(self.command(hist, o), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  universal_newlines=True, env=self.env) for o in (out, other)]
        COUNTS["injected"] += 1
        logs = [p.communicate()[1] for p in procs]
        codes = [p.returncode for p in procs]
        self.assertEqual(sorted(codes), [0, 2], logs)
        won, lost = (0, 1) if codes[0] == 0 else (1, 0)
        refusal = logs[lost].strip()
        self.assertEqual(len(refusal.splitlines()), 1, refusal)
        self.assertRegex(refusal, r"^nightly: .*history.* is in use by another night \(pid \d+ since .*\): one "
                                  r"night at a time")
        self.assertFalse(os.path.exists(os.path.join((out, other)[lost], "nightly-calls.jsonl")))
        self.check_night(hist, (out, other)[won], store)
        COUNTS["survived"] += 1

    # ------------------------------------------------------------ PostgreSQL

    def pg_store(self, name):
        if WHY_NO_PG:
            self.skipTest(WHY_NO_PG)
        url = self.server.database(name)
        seed_history(url, self.seed_files, os.path.join(self.tmp, name + "-trends"))
        self.pg_seed_alerts = alert_states(url)
        return url

    def test_a_whole_night_on_postgresql(self):
        url = self.pg_store("whole")
        hist, out, _ = self.place("pg-whole", url)
        p = subprocess.run(self.command(hist, out, url), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("suite.json: added as run %d" % (SEEDED + 1), p.stdout)
        self.check_night(hist, out, url)
        changes = load(os.path.join(out, "changes.json"))
        self.assertEqual([a["state"] for a in changes["alerts"]], ["acknowledged"])
        self.assertFalse(os.path.exists(os.path.join(hist, "index.sqlite")))   # the runs are in the database
        # A second night compares with the first, the accepted baseline,
        # with the noise of the database's series (compare --history URL).
        out2 = os.path.join(self.tmp, "pg-whole", "out2")
        p = subprocess.run(self.command(hist, out2, url), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=self.env)
        self.assertNotIn("did not run", p.stderr)
        self.assertIn("baseline: ", p.stderr)
        self.assertEqual(len(runs_in(url)), SEEDED + 2)

    def test_postgresql_restarted_mid_ingest(self):
        """The ingest waits inside its first transaction (the test holds the
        writers' lock) when the server restarts: it waits for the server,
        stores the run once, and the night ends clean; --resume then adds nothing."""
        import psycopg2
        from regress.store import db as dbm
        url = self.pg_store("restart")
        hist, out, _ = self.place("pg-restart", url)
        admin = psycopg2.connect(url)
        admin.autocommit = True
        admin.cursor().execute("SELECT pg_advisory_lock(%s)", (dbm.LOCK_KEY,))
        p = subprocess.Popen(self.command(hist, out, url), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             universal_newlines=True, env=self.env)
        log = []
        for text in p.stderr:
            log.append(text)
            if "nightly: ingest ..." in text:
                t0 = time.monotonic()
                while not self.waiting(admin):
                    self.assertLess(time.monotonic() - t0, 60, "the ingest never waited for the lock")
                    time.sleep(0.01)
                self.server.stop("fast")
                self.server.restart()
                COUNTS["injected"] += 1
        p.wait()
        p.stderr.close()
        admin.close()
        log = "".join(log)
        self.assertEqual(p.returncode, 0, log[-3000:])
        said = self.one_line(log, "the server went away")
        self.assertIn("waiting up to 30 s for it to come back", said)
        self.check_night(hist, out, url)
        self.resume(hist, out, url)
        self.check_night(hist, out, url)
        COUNTS["survived"] += 1

    @staticmethod
    def waiting(admin):
        cur = admin.cursor()
        cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return cur.fetchone()[0] > 0


if __name__ == "__main__":
    BUILD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
