#!/usr/bin/env python3
"""ci/bisect on a fake Google Benchmark project (regress/bisect.py).

The project is a temporary git repository whose "build" writes a bench
script with the speeds of its commit baked in (speed.json), and fails where
the commit holds a file named `broken`. Its bench prints Google Benchmark
JSON, plain (no parbench keys): the bisection must work on any Google
Benchmark project. Each comparison runs 8 paired rounds (--max-rounds 8).

BadInput (label unit) checks every refusal; the bisections themselves are
the slow half (Bisections, label slow)."""
import argparse
import hashlib
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The interpreter running the test: `env python3` may find a slow shim first.
BENCH = "#!%s\n" % sys.executable + r'''import json, os, random, re, sys
SPEEDS = @SPEEDS@
NOISE = {"Noisy": 0.04}
args = sys.argv[1:]
if "--later-flag" in args:
    print("bench: unknown flag --later-flag", file=sys.stderr)
    sys.exit(2)
if @CRASH@ and "--benchmark_list_tests" not in args:
    sys.exit("bench: Segmentation fault")
names = ["Fake/%s/manual_time" % k for k in sorted(SPEEDS)]
flt = ([a.split("=", 1)[1] for a in args if a.startswith("--benchmark_filter=")] or ["."])[0]
names = [n for n in names if re.search(flt, n)]
if "--benchmark_list_tests" in args:
    print("\n".join(names))
    sys.exit(0)
out = [a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out=")][0]
rng = random.Random(os.path.basename(out))  # a round's file gets the same noise on every run of the test
rows = []
for n in names:
    k = n.split("/")[1]
    t = 100.0 * SPEEDS[k] * (1 + NOISE.get(k, 0.003) * rng.gauss(0, 1))
    rows.append({"name": n, "run_name": n, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                 "threads": 1, "iterations": 1, "real_time": t, "cpu_time": t, "time_unit": "us"})
json.dump({"context": {"date": "2026-11-27T00:00:00+00:00", "host_name": "h", "num_cpus": 2,
                       "library_build_type": "release"}, "benchmarks": rows}, open(out, "w"))
'''
BUILD = ("test ! -e broken && mkdir -p out && "
         + shlex.quote(sys.executable) + " -c \"import os, sys; t = open('bench.py').read(); "
         "t = t.replace('@CRASH@', str(os.path.exists('crash'))); "
         "sys.stdout.write(t.replace('@SPEEDS@', open('speed.json').read()))\" > out/bench && chmod +x out/bench")


class Project:
    """A git repository of commits that set speeds; commit(i) is the i-th."""

    def __init__(self, root):
        self.root = root
        self.shas = []
        os.makedirs(root)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "t@example.org")
        self.git("config", "user.name", "T")
        with open(os.path.join(root, "bench.py"), "w") as f:
            f.write(BENCH)

    def git(self, *args):
        return subprocess.run(["git", "-C", self.root] + list(args), check=True, stdout=subprocess.PIPE,
                              universal_newlines=True).stdout.strip()

    def commit(self, speeds, broken=False, crash=False, message=None):
        with open(os.path.join(self.root, "speed.json"), "w") as f:
            json.dump(speeds, f, sort_keys=True)
        for name, on in (("broken", broken), ("crash", crash)):
            path = os.path.join(self.root, name)
            if on:
                open(path, "w").close()
            elif os.path.exists(path):
                os.unlink(path)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message or "commit %d" % len(self.shas))
        self.shas.append(self.git("rev-parse", "HEAD"))
        return self.shas[-1]

    def series(self, speeds, broken=(), crash=()):
        """One commit per element of speeds (dicts), oldest first."""
        for i, s in enumerate(speeds):
            self.commit(s, broken=i in broken, crash=i in crash)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.p = Project(os.path.join(self.tmp, "repo"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def bisect(self, *args, bench_args=(), state="state", build=BUILD):
        cmd = [os.path.join(ROOT, "ci", "bisect"), "--repo", self.p.root, "--build", build, "--bench", "out/bench",
               "--cache", os.path.join(self.tmp, "cache"), "--state", os.path.join(self.tmp, state),
               "--out", os.path.join(self.tmp, "report"), "--max-rounds", "8"] + list(args) + ["--"] + list(bench_args)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=900)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def report(self):
        with open(os.path.join(self.tmp, "report", "report.json")) as f:
            return json.load(f)


FLAT = {"A": 1.0, "B": 1.0}


class BadInput(Base):
    def test_refusals_are_one_line_exit_2(self):
        self.p.series([FLAT, FLAT, dict(FLAT, A=1.3), FLAT])
        s = self.p.shas

        def refused(p, text):
            # One line says why; the progress lines of builds that ran first
            # (a filter is known to match nothing once BAD is built) go before it.
            self.assertEqual(p.returncode, 2, p.stderr)
            lines = [ln for ln in p.stderr.strip().splitlines()
                     if not ln.startswith(("bisect: building", "bisect: builds are cached in"))]
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn(text, lines[0])

        refused(self.bisect(s[3], s[0]), "is not an ancestor of BAD")
        refused(self.bisect("nosuchrev", s[3]), "nosuchrev: unknown revision")
        refused(self.bisect(s[0], s[3], bench_args=["--benchmark_filter=^Nothing"]), "select no benchmark")
        refused(self.bisect(s[0], s[3], build="false"), "does not build")
        refused(self.bisect(s[0], s[0]), "the same commit")
        cache = os.path.join(self.tmp, "cachefile")
        open(cache, "w").close()
        p = subprocess.run([os.path.join(ROOT, "ci", "bisect"), "--repo", self.p.root, "--cache", cache, s[0], s[3]],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        refused(p, "is a file, not a folder")
        refused(self.bisect("--resume", state="nothing-here"), "holds no bisection")
        # A state from another range: refused, and left as it was.
        state = os.path.join(self.tmp, "state")
        os.makedirs(os.path.join(state, "rounds"))
        with open(os.path.join(state, "state.json"), "w") as f:
            json.dump({"good": s[1], "bad": s[3], "repo": self.p.root}, f)
        refused(self.bisect(s[0], s[3]), "holds another bisection (another good")
        refused(self.bisect(s[0], "--resume"), "not of this range")
        with open(os.path.join(state, "state.json")) as f:
            self.assertEqual(json.load(f)["good"], s[1])
        # Nothing in the repository's history changed.
        self.assertEqual(self.p.git("rev-list", "HEAD").split(), s[::-1])

    def test_the_default_cache_is_outside_the_repository(self):
        from regress.run import bisect
        self.p.series([FLAT, FLAT])
        cache_home = os.path.join(self.tmp, "xdg")
        args = argparse.Namespace(good=self.p.shas[0], bad=self.p.shas[1], repo=self.p.root, build=BUILD,
                                  bench="out/bench", cache=None, state=os.path.join(self.tmp, "state"),
                                  all_parents=False, max_rounds=None, resume=False)
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = cache_home
        try:
            params = bisect.state_params(args, [])
        finally:
            os.environ.pop("XDG_CACHE_HOME") if old is None else os.environ.update(XDG_CACHE_HOME=old)
        digest = hashlib.sha256(self.p.root.encode()).hexdigest()[:12]
        self.assertEqual(params["cache"], os.path.join(cache_home, "parbench", "bisect", "repo-" + digest))
        self.assertTrue(os.path.isdir(params["cache"]))
        self.assertEqual(self.p.git("status", "--porcelain", "--untracked-files=all").strip(), "")
        # The command names it first.
        p = self.bisect(self.p.shas[0], self.p.shas[1], "--cache", params["cache"],
                        bench_args=["--benchmark_filter=^No"])
        self.assertIn("bisect: builds are cached in %s" % params["cache"], p.stderr.splitlines()[0])

    def test_a_damaged_build_record_is_built_again(self):
        from regress.run import bisect
        b = bisect.Builder(self.tmp, os.path.join(self.tmp, "cache"), "true", "out/bench", lambda line: None)
        sha = "a" * 40
        os.makedirs(os.path.dirname(b.meta_path(sha)))
        for text in ('{"ok": "yes"}', "[1, 2]", "{cut", "[" * 100000):
            with open(b.meta_path(sha), "w") as f:
                f.write(text)
            self.assertIsNone(b.known(sha), text[:20])
        with open(b.meta_path(sha), "w") as f:
            f.write('{"ok": false, "why": "exit 2"}')
        self.assertEqual(b.known(sha), {"ok": False, "why": "exit 2"})

    def test_classify_and_chance(self):
        from regress.run import bisect
        same = {"verdict": "SAME", "change": 0.001, "ci": [-0.01, 0.012], "level": 0.975}
        slow = {"verdict": "SLOWER", "change": 0.3, "ci": [0.28, 0.32], "level": 0.975}
        self.assertEqual(bisect.classify(same, slow), "later")
        self.assertEqual(bisect.classify(slow, same), "earlier")
        self.assertEqual(bisect.classify(slow, slow), "both")
        self.assertEqual(bisect.classify(same, same), "undecided")
        # A noisy middle, not proven like the lower end but unlike the upper
        # and nearer the lower end: later.
        noisy = {"verdict": "AMBIGUOUS", "change": 0.03, "ci": [-0.05, 0.12], "level": 0.975}
        self.assertEqual(bisect.classify(noisy, slow), "later")
        self.assertEqual(bisect.classify({"verdict": "AMBIGUOUS"}, {"verdict": "AMBIGUOUS"}), "undecided")
        # Estimates that put the middle past half-way (+35% against the lower
        # end, +30% against the upper) decide nothing.
        far = dict(noisy, change=0.35)
        self.assertEqual(bisect.classify(far, slow), "undecided")
        # The distance from half-way in log time over se = (log 1.012 - log 0.99) / (2 z_0.9875).
        total = math.log(1.001) + math.log(1.3)
        dist = total / 2 - math.log(1.001)
        se = (math.log(1.012) - math.log(0.99)) / (2 * 2.241403)
        self.assertAlmostEqual(bisect.wrong_chance(same, slow),
                               0.5 * math.erfc(dist / se / math.sqrt(2)), delta=1e-15)
        self.assertLess(bisect.wrong_chance(same, slow), 1e-20)
        # A middle near half-way is a coin toss.
        self.assertAlmostEqual(bisect.wrong_chance(dict(noisy, change=0.30), slow), 0.5, delta=1e-9)
        self.assertIsNone(bisect.wrong_chance(dict(same, ci=[None, 0.1]), slow))
        self.assertAlmostEqual(bisect._norm_quantile(0.975), 1.959964, places=5)
        self.assertEqual(bisect.about_steps(64), 6)


class Evidence(unittest.TestCase):
    """regress/run/evidence.py's readers, on the text their tools print."""

    def test_resource_usage_and_profiles(self):
        from regress.run import evidence
        text = ("Fatbin elf code:\n================\narch = sm_90\n\nResource usage:\n Common:\n  GLOBAL:0\n"
                " Function _Z4tileILi16EEvPKfS1_Pfi:\n  REG:40 STACK:0 SHARED:8192 LOCAL:0 CONSTANT[0]:380\n"
                " Function _Z5naivePKfS0_Pfi:\n  REG:26 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:380\n")
        before = evidence.parse_resource_usage(text)
        self.assertEqual(before["_Z4tileILi16EEvPKfS1_Pfi"], {"REG": 40, "STACK": 0, "SHARED": 8192, "LOCAL": 0})
        after = dict(before, _Z4tileILi16EEvPKfS1_Pfi={"REG": 64, "STACK": 16, "SHARED": 8192, "LOCAL": 16})
        self.assertEqual([k for k, _, _ in evidence.usage_changes(before, after)], ["_Z4tileILi16EEvPKfS1_Pfi"])
        # Two builds name a kernel of an anonymous namespace with other hashes,
        # and a new parameter changes its mangled name: one kernel still.
        name = ("_ZN2pb6kmeans39_GLOBAL__N__6e69bcfe_7_dmma_cu_%s"
                "11dmma_assignILi1ELi1ELb1ELi4EEEvPKdS4_S4_S4_PiPdPyS6_S5_liii")
        ub = evidence.by_kernel({name % "07aad982": {"REG": 114, "SHARED": 2304}})
        ua = evidence.by_kernel({(name % "1d700dff") + "b": {"REG": 114, "SHARED": 2560}})
        self.assertEqual(evidence.usage_changes(ub, ua), [
            ("void pb::kmeans::(anonymous namespace)::dmma_assign<1, 1, true, 4>", {"REG": 114, "SHARED": 2304},
             {"REG": 114, "SHARED": 2560})])
        stall = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
        csv_text = ('==PROF== Connected to process\n'
                    '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum",'
                    '"sm__warps_active.avg.pct_of_peak_sustained_active","%s","%s","other"\n'
                    '"","","nsecond","byte","%%","inst","inst",""\n'
                    '"0","_Z4tilev","1,000","2048","40","2.5","0.5","x"\n'
                    '"1","_Z4tilev","3,000","2048","60","3.5","0.7","y"\n'
                    '"2","_Z4initv","500","0","10","0.1","0.2","z"\n') % (stall % "long_scoreboard", stall % "math")
        before = evidence.parse_ncu_csv(csv_text)
        # Sums add over a kernel's launches; a percentage or ratio is their mean.
        self.assertEqual(before["_Z4tilev"], {"launches": 2, "gpu__time_duration.sum": 4000.0,
                                              "dram__bytes.sum": 4096.0,
                                              "sm__warps_active.avg.pct_of_peak_sustained_active": 50.0,
                                              stall % "long_scoreboard": 3.0, stall % "math": 0.6})
        self.assertEqual(before["_Z4initv"]["launches"], 1)
        self.assertEqual(evidence.stalls(before["_Z4tilev"]), [("long_scoreboard", 3.0), ("math", 0.6)])
        self.assertIsNone(evidence.parse_ncu_csv("==PROF== nothing profiled\n"))
        # The slowest kernel whose code changed; else the one whose time moved most.
        after = {"_Z4tilev": dict(before["_Z4tilev"], **{"gpu__time_duration.sum": 5000.0}),
                 "_Z4initv": dict(before["_Z4initv"], **{"gpu__time_duration.sum": 450.0})}
        self.assertEqual(evidence.pick_kernel(before, after, {"_Z4initv"})[0], "_Z4initv")
        k, why = evidence.pick_kernel(before, after, set())
        self.assertEqual(k, "_Z4tilev")
        self.assertIn("moved most", why)
        self.assertEqual(evidence.pick_kernel(before, {"_Z3newv": {}}, set()), (None, None))
        doc, lines = evidence.ncu_section("G/A", before, after, {"_Z4tilev"})
        self.assertEqual(doc["kernel"], "_Z4tilev")
        self.assertEqual(doc["metrics"][0], {"metric": "gpu__time_duration.sum", "parent": 4000.0, "culprit": 5000.0})
        self.assertEqual([r["kernel"] for r in doc["kernels"]], ["_Z4tilev", "_Z4initv"])
        self.assertIn("| 2 / 2 | 4.0 us | 5.0 us | 1.250 |", "\n".join(lines))
        # Stall reasons by how far their warps-per-issue moved.
        after["_Z4tilev"][stall % "math"] = 1.6
        doc, _ = evidence.ncu_section("G/A", before, after, {"_Z4tilev"})
        self.assertEqual(doc["stall_changes"], [{"reason": "math", "parent": 0.6, "culprit": 1.6},
                                                {"reason": "long_scoreboard", "parent": 3.0, "culprit": 3.0}])
        moved = evidence.moved_most({"a": 100.0, "b": 10.0, "c": 5.0}, {"a": 101.0, "b": 20.0, "c": 2.5})
        self.assertEqual([m[0] for m in moved], ["b", "c", "a"])  # x2 and x0.5 tie in |log|, then a

    @unittest.skipUnless(shutil.which("g++") and shutil.which("objdump"), "needs g++ and objdump")
    def test_object_code_diff_ignores_placement(self):
        from regress.run import evidence
        src = ("int g[100];\n%s"
               "__attribute__((noinline)) int bar(int x) { return x * 3 + g[x & 7]; }\n"
               "__attribute__((noinline)) int foo(int n) { int s = 0; for (int i = 0; i < n; ++i) s += %s;"
               " return s; }\n"
               "int main(int c, char**) { return foo(c) + bar(c); }\n")
        with tempfile.TemporaryDirectory() as t:
            bins = []
            # After: a new function ahead of bar moves every address; foo's loop changes.
            for i, (extra, body) in enumerate((("", "g[i] * bar(i)"),
                                               ("__attribute__((noinline)) int baz(int x) { return x ^ g[3]; }\n",
                                                "g[i] * bar(i) + baz(i)"))):
                with open(os.path.join(t, "v%d.cpp" % i), "w") as f:
                    f.write(src % (extra, body))
                bins.append(os.path.join(t, "v%d" % i))
                subprocess.run(["g++", "-O2", "-o", bins[-1], os.path.join(t, "v%d.cpp" % i)], check=True)
            before, after = evidence.objdump_functions(bins[0]), evidence.objdump_functions(bins[1])
            self.assertEqual(before["_Z3bari"], after["_Z3bari"])
            self.assertTrue(before["_Z3bari"])
            doc, lines = evidence.object_diff(before, after)
            self.assertIn("foo(int)", [r["function"] for r in doc["changed"]])
            self.assertNotIn("bar(int)", [r["function"] for r in doc["changed"]])
            self.assertEqual([r["function"] for r in doc["new"]], ["baz(int)"])
            self.assertIn("new `baz(int)`", "\n".join(lines))

    def test_code_section(self):
        from regress.run import evidence
        prints = {"G/A": {"base": ("aa", None, "cpu"), "new": ("bb", None, "cpu")},
                  "G/B": {"base": ("cc", "13.0", "gpu"), "new": ("cc", "13.1", "gpu")},
                  "G/C": {"base": ("dd", None, "gpu"), "new": ("dd", None, "gpu")},
                  "G/E": {"base": (None, None, "cpu"), "new": ("ee", None, "cpu")}}
        rows, changed = evidence.code_section(prints, ["G/A", "G/B", "G/C", "G/D", "G/E"])
        says = {r[0]: r[3] for r in rows}
        self.assertEqual(changed, ["G/A"])
        self.assertEqual(says["G/A"], "its code changed")
        self.assertEqual(says["G/B"], "library 13.0 -> 13.1")
        self.assertIn("the same code and libraries", says["G/C"])
        self.assertIn("no code fingerprint", says["G/D"])
        self.assertIn("only the culprit records its code", says["G/E"])


class Bisections(Base):
    def test_one_step_with_an_unbuildable_commit(self):
        # Commit 5 is the first middle and does not build: commit 4 stands
        # in, later commit 5 is skipped again, and 6 is taken.
        speeds = [FLAT] * 7 + [dict(FLAT, A=1.3)] * 4
        self.p.series(speeds, broken={5})
        s = self.p.shas
        p = self.bisect(s[0], s[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.report()
        self.assertEqual([c["commit"] for c in doc["culprits"]], [s[7]])
        c = doc["culprits"][0]
        self.assertEqual(c["benchmarks"], ["Fake/A/manual_time"])
        self.assertEqual(c["verify"]["Fake/A/manual_time"]["verdict"], "SLOWER")
        self.assertLess(c["chance_wrong"], 0.01)
        self.assertIn(s[5], doc["skipped"])
        self.assertIn("does not build", doc["skipped"][s[5]])
        self.assertEqual(list(doc["ends"]), ["Fake/A/manual_time"])  # B did not move
        with open(os.path.join(self.tmp, "report", "report.md")) as f:
            md = f.read()
        self.assertIn("## Culprit `%s`: commit 7" % s[7][:12], md)
        self.assertIn("speed.json", md)  # the diffstat
        # Rerunning a finished bisection builds and runs nothing more.
        rounds = sorted(os.listdir(os.path.join(self.tmp, "state", "rounds")))
        p = self.bisect("--resume")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "state", "rounds"))), rounds)
        self.assertNotIn("building", p.stderr)
        # On another machine (an empty cache) the state alone replays the
        # search; only the evidence builds, the parent and the culprit.
        shutil.rmtree(os.path.join(self.tmp, "cache"))
        p = self.bisect("--resume", "--no-evidence")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("building", p.stderr)
        p = self.bisect("--resume")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(ln.split()[2] for ln in p.stderr.splitlines() if "building" in ln),
                         sorted([s[6][:12], s[7][:12]]))
        self.assertEqual([c["commit"] for c in self.report()["culprits"]], [s[7]])
        self.assertEqual(self.report()["builds"][s[5]]["ok"], False)

    def test_two_opposite_steps_are_each_found(self):
        # A: 1.0 until commit 3, 1.3 until commit 7, then 1.12: the ends differ
        # by 12% and the middle differs from both.
        speeds = [FLAT] * 3 + [dict(FLAT, A=1.3)] * 4 + [dict(FLAT, A=1.12)] * 3
        self.p.series(speeds)
        s = self.p.shas
        p = self.bisect(s[0], s[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.report()
        self.assertEqual(sorted(c["commit"] for c in doc["culprits"]), sorted([s[3], s[7]]))
        self.assertTrue(doc["not_monotonic"])
        self.assertIn("not monotonic at", doc["summary"])

    def test_a_noisy_benchmark_and_a_range_of_one(self):
        flat = {"A": 1.0, "Noisy": 1.0}
        self.p.series([flat] * 4 + [dict(flat, Noisy=1.4)] * 4)
        s = self.p.shas
        p = self.bisect(s[0], s[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["commit"] for c in self.report()["culprits"]], [s[4]])
        # A range of one commit: it is the culprit, verified, with no steps.
        p = self.bisect(s[3], s[4], state="one")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.report()
        self.assertEqual(([c["commit"] for c in doc["culprits"]], doc["steps"]), ([s[4]], []))
        # No change between the ends: no culprit.
        p = self.bisect(s[4], s[-1], state="none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no culprit", p.stdout)
        self.assertEqual(self.report()["culprits"], [])

    def test_a_crashing_commit_is_skipped(self):
        # Commit 2, the first middle, builds but its bench crashes: skipped.
        # Commit 1 stands in; then 3; the range (1, 3) has only 2 between, so
        # the culprit is one of 2 and 3.
        self.p.series([FLAT] * 3 + [dict(FLAT, A=1.3)] * 2, crash={2})
        s = self.p.shas
        p = self.bisect(s[0], s[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.report()
        self.assertEqual(doc["culprits"][0]["candidates"], [s[2], s[3]])
        self.assertIn("its bench failed", doc["skipped"][s[2]])
        self.assertIn("one of %s, %s" % (s[2][:12], s[3][:12]), doc["summary"])

    def test_a_merge_is_one_step_on_first_parents(self):
        self.p.series([FLAT, FLAT])
        self.p.git("checkout", "-q", "-b", "topic")
        self.p.commit(dict(FLAT, A=1.3), message="topic: the slow change")
        topic = self.p.shas[-1]
        self.p.git("checkout", "-q", "main")
        self.p.commit(FLAT, message="main goes on")
        self.p.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")
        merge = self.p.git("rev-parse", "HEAD")
        self.p.commit(dict(FLAT, A=1.3), message="after the merge")
        s = self.p.shas
        p = self.bisect(s[0], s[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["commit"] for c in self.report()["culprits"]], [merge])
        p = self.bisect(s[0], s[-1], "--all-parents", state="all")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["commit"] for c in self.report()["culprits"]], [topic])

    def test_the_nightly_bisects_its_confirmed_changes(self):
        from regress import trends
        from regress.run import nightly_steps
        self.p.series([FLAT] * 3 + [dict(FLAT, B=1.3)] * 3)
        s = self.p.shas
        hist = os.path.join(self.tmp, "hist")
        changes = os.path.join(self.tmp, "changes.json")
        change = {"name": "Fake/B/manual_time", "status": "confirmed", "accepted": False,
                  "revision_before": s[0], "revision_after": s[-1]}
        one = dict(change, name="Fake/A/manual_time", revision_before=s[4])  # a range of one commit
        dirty = dict(change, revision_before="abc123-dirty")                   # not commits
        with open(changes, "w") as f:
            json.dump({"changes": [change, one, dirty, dict(change, status="tentative", name="X")]}, f)
        lines = []
        done = nightly_steps.bisect_changes(changes, hist, self.p.root, ["--benchmark_min_time=0.01s"], 600,
                                            log=lines.append, build=BUILD, bench="out/bench")
        by_range = {tuple(d["range"]): d for d in done}
        self.assertEqual(len(done), 3)  # the tentative change is not bisected
        self.assertEqual(by_range[(s[0], s[-1])]["exit"], 0, lines)
        self.assertIn("one commit", by_range[(s[4], s[-1])]["why"])
        self.assertIn("not commits", by_range[("abc123-dirty", s[-1])]["why"])
        where = nightly_steps.bisect_dir(hist, s[0], s[-1])
        with open(os.path.join(where, "report.json")) as f:
            self.assertEqual([c["commit"] for c in json.load(f)["culprits"]], [s[3]])
        rows = [dict(change)]
        trends.attach_culprits(rows, hist)
        self.assertEqual(rows[0]["culprit"]["commit"], s[3])


if __name__ == "__main__":
    unittest.main(verbosity=2)
