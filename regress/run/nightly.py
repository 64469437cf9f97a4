"""The nightly job's procedure (ci/nightly, regress/nightly.py, is its command
line): night() runs the steps below in order, one method of Night each.

Steps (each logged with its time; a failed step is reported and the job goes
on where the later steps can, so one night gives every result it can):

 1. build    cmake Release (CUDA when nvcc is there) into build/nightly
 2. tests    ctest (GPU tests must not skip on a GPU host: PARBENCH_REQUIRE_GPU)
 3. suite    ci/run-suite: the suite's instances, one process per variant,
             a time limit each, repetitions (nightly: 9) -> OUT/suite.json;
             the nightly suite leaves out what select_exclusions names (the
             roles come from one smoke instance of each variant, run first)
 4. A/A      ci/compare --run with the same binary on both sides, on a small
             subset of the suite (aa_subset): any SLOWER/FASTER there is a
             false alarm; its counts go to the false-alarm ledger
             HISTORY/aa-ledger.jsonl (shown on the trends page)
 5. ingest   ci/history ingest OUT/suite.json
 6. changes  ci/trends: change points of every series of this machine, the
             trend charts and the page of what changed -> OUT/report/trends/;
             a regression measured at or before the accepted baseline's run
             was accepted with it and does not fail the night
 7. bisect   ci/bisect for each confirmed change whose commit range holds more
             than one commit (bisect_changes), within --bisect-seconds; the
             reports go to HISTORY/bisect/RANGE/, the trends page names the
             culprits; a stopped bisection resumes the next call
 8. baseline ci/compare BASELINE OUT/suite.json --noise OUT/aa.json, where
             BASELINE is HISTORY/baselines/MACHINE.json.gz, the run accepted on
             purpose (--accept-baseline); the first night's run becomes it
 9. energy   the A/A subset metered again over windows of --energy-seconds
             -> OUT/energy.json, its own series in HISTORY/energy and its
             trends (energy_night); an energy change never fails the night
10. report   plots/plot OUT/suite.json -> OUT/report/

Exit status: the comparator's: 0 nothing regressed; 1 a confirmed regression
(a confirmed change point, SLOWER against the baseline) or an error entry; 2 a
step could not run (build, bad input); 3 the baseline is not comparable (a
new machine or toolkit: accept a new baseline); 4 stopped by --max-seconds
(the same command with --resume goes on: a night may run in several calls).

A night killed outright, a second night at once, a full disk:
regress/run/nightly_guard.py (one night at a time, the night's commands
ended with it, the record of the call in flight).
"""
import gzip
import json
import os
import shutil
import time

from regress.store import history, qualification
from regress.load import results
from regress.stats import health, plan
from regress.run import launch
from regress.run import nightly_guard as guard
from regress.run.nightly_select import (aa_choice, repetitions_needed, select_exclusions, survey_roles,
                                        with_repetitions, variant_of)
from regress.run.nightly_steps import (TIMED_OUT, Step, bisect_changes, energy_night, gpu_present, log, not_same_lines,
                                       run, skipped, tool)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# What each suite runs (bench arguments).
# nightly: the default profile's instances with 9 repetitions each (what the
#   comparator needs to decide) and a 0.01 s minimum time per repetition,
#   sized to finish well inside 20 minutes on a GPU host (docs/tools/nightly.md
#   has the measured times). It leaves out what a night cannot afford or does
#   not gate on, read from bench's roles and run names, never from variant
#   names (select_exclusions): the serial references the others are checked
#   against (role baseline: some take seconds a run on the large problems)
#   but those a speedup chart divides by, instances with a ranks argument
#   (they need mpirun), and all but the middle of tuning sweeps (CPU threads:
#   all cores, --threads=cores; a wide block sweep: its middle size).
# smoke: seconds, for trying the job; it runs every instance.
# "args" choose the instances and go to the A/A rounds too; "timing" is the
# suite's alone.
SUITES = {
    "nightly": {"profile": [], "args": ["--threads=cores"],
                "timing": ["--benchmark_repetitions=9", "--benchmark_min_time=0.01"], "select": True},
    "smoke": {"profile": ["--profile=smoke"], "args": [], "timing": ["--benchmark_repetitions=3"], "select": False},
}
# The A/A rounds are sequential (compare --run): most of its instances are
# SAME after 8 rounds; the cap bounds the night for the others.
AA_MAX_ROUNDS = 12
AA_ARGS = ["--benchmark_min_time=0.02"]


def baseline_path(hist, machine):
    return os.path.join(hist, "baselines", machine + ".json.gz")


def accept_baseline(path, hist, reason):
    """Makes the run at `path` its machine's baseline, HIST/baselines/MACHINE.json.gz,
    and logs why in HIST/baselines/log.jsonl. Returns the exit status."""
    try:
        run_ = results.load_strict(path)
    except results.LoadError as e:
        log(str(e))
        return 2
    machine = history.machine_of(run_.context)
    dest = baseline_path(hist, machine)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\x1f\x8b":
        data = gzip.compress(data, mtime=0)
    with open(dest + ".part", "wb") as f:
        f.write(data)
    os.replace(dest + ".part", dest)
    with open(os.path.join(hist, "baselines", "log.jsonl"), "a") as f:
        f.write(json.dumps({"machine": machine, "revision": run_.context.get("parbench_git_revision"),
                            "date": run_.context.get("date"), "source": path, "reason": reason},
                           sort_keys=True) + "\n")
    log("accepted %s as the baseline of machine %s (%s)" % (path, machine, reason))
    return 0


# The steps after the build and the tests, in order: a night stopped in one
# of them skips the rest.
LATER = ["suite", "A/A", "ingest", "changes", "bisect", "baseline", "energy", "report"]


def night(args, summary, codes, inflight=None):
    """One call of the night: its steps in order, each recorded in `summary`
    (and in `inflight`, the record of the call in flight), their exit codes
    gathered in `codes`. Returns the exit status."""
    n = Night(args, summary, codes, inflight)
    for step in (n.build, n.tests, n.suite, n.aa, n.ingest, n.changes, n.bisect, n.baseline, n.energy, n.report):
        code = step()
        if code is not None:
            return code
    return n.finish(n.gate())


def aa_signs_and_noise(doc):
    """The A/A's changes up and down (the trends page's sign test) and each
    benchmark's paired noise as its interval implies it (ci/history plan)."""
    rows = doc["benchmarks"]
    seq = doc.get("sequential") or {}
    level = seq.get("level_per_look") or (doc.get("settings") or {}).get("level") or 0.9
    noise = {r["name"]: plan.effective_noise(r, level, bool(seq)) for r in rows}
    return {"up": sum(1 for r in rows if (r.get("change") or 0) > 0),
            "down": sum(1 for r in rows if (r.get("change") or 0) < 0),
            "noise": {k: v for k, v in sorted(noise.items()) if v}}


class Night:
    """The steps of one call and what they learn for the later ones. Each
    step returns None to go on, or the night's exit status where it ends."""

    def __init__(self, args, summary, codes, inflight=None):
        self.args, self.summary, self.codes, self.inflight = args, summary, codes, inflight
        self.bench = os.path.join(args.build_dir, "bench")
        self.gpu = gpu_present()
        self.env = dict(os.environ)
        if self.gpu:
            self.env["PARBENCH_REQUIRE_GPU"] = "1"
        self.spec = SUITES[args.suite]
        self.started = None
        self.suite_json = os.path.join(args.out, "suite.json")
        self.aa_json = os.path.join(args.out, "aa.json")
        self.report_dir = os.path.join(args.out, "report")
        self.context, self.machine, self.base, self.aa_names = None, None, None, []
        self.accepted = []   # --accepted-through DATE for ci/trends, where a baseline was accepted

    def step(self, name):
        """A step, logged, timed and kept in the record of the call in flight."""
        return Step(name, self.summary, self.inflight.update if self.inflight else None)

    # ------------------------------------------------------------- the clock

    def left(self):
        """Seconds left under --max-seconds (None: no limit), counted from the end of the build."""
        if self.args.max_seconds is None:
            return None
        return max(0.0, self.args.max_seconds - (time.monotonic() - self.started))

    def finish(self, code, after=None, why=None):
        """The night's last line: each step, done, stopped or skipped (and why)."""
        if after is not None:
            for rest in LATER[LATER.index(after) + 1:]:
                skipped(rest, self.summary,
                        why or "the night was stopped in %s (--max-seconds); --resume runs it" % after)
        total = sum(s["seconds"] for s in self.summary)
        log("steps: %s; %.0f s: exit %d" % (", ".join(
            "%s %s%s" % (s["step"], s.get("status", "done"), "" if s.get("status", "").startswith("skipped")
                         else " %.0f s" % s["seconds"]) for s in self.summary), total, code))
        return code

    def out_of_time(self, step):
        """Every step respects --max-seconds: with none left, this step and
        the later ones are skipped, and the night goes on with --resume."""
        if self.left() is None or self.left() > 0:
            return False
        for name in LATER[LATER.index(step):]:
            skipped(name, self.summary, "no time left (--max-seconds); the same command with --resume runs it")
        log("stopped before %s (--max-seconds): run the same command with --resume to go on" % step)
        return True

    @staticmethod
    def stopped(step, name):
        step.status = "stopped"
        log("stopped in %s (--max-seconds): run the same command with --resume to go on" % name)

    def gate(self):
        """The night's exit status from its steps' codes, the gravest first."""
        codes = self.codes
        return 3 if 3 in codes else 2 if 2 in codes else 1 if 1 in codes else 0

    # ------------------------------------------------------------- the steps

    def build(self):
        """1. build: cmake Release (CUDA where nvcc is) into --build-dir."""
        args = self.args
        if not args.skip_build:
            with self.step("build"):
                cuda = "ON" if os.path.exists("/usr/local/cuda/bin/nvcc") or shutil.which("nvcc") else "OFF"
                rc = run(["cmake", "-S", ROOT, "-B", args.build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                          "-DPARBENCH_CUDA=" + cuda], os.path.join(args.out, "configure.log"))
                if rc == 0:
                    rc = run(["cmake", "--build", args.build_dir, "-j", str(os.cpu_count() or 2)],
                             os.path.join(args.out, "build.log"))
                if rc != 0:
                    log("the build failed: %s" % os.path.join(args.out, "build.log"))
                    return 2
        if not os.access(self.bench, os.X_OK):
            log("%s is missing: build first (or drop --skip-build)" % self.bench)
            return 2
        self.started = time.monotonic()
        return None

    def tests(self):
        """2. tests: ctest, once a night (--resume does not run them again)."""
        args = self.args
        tests_log = os.path.join(args.out, "tests.log")
        if args.skip_tests:
            return None
        if args.resume and os.path.exists(tests_log):
            with open(tests_log) as f:
                if "tests passed" in f.read():
                    log("tests: already run in this night (%s)" % tests_log)
                    return None
        with self.step("tests"):
            # Not the test that runs this job itself (tests/test_nightly.py).
            jobs = str(max(2, (os.cpu_count() or 2) // 2))
            rc = run(["ctest", "--test-dir", args.build_dir, "-j", jobs, "--output-on-failure", "-E", "^nightly$"],
                     tests_log, self.env)
            if rc != 0:
                log("tests failed: %s (the job goes on)" % tests_log)
                self.codes.append(1)
        return None

    def suite(self):
        """3. suite: ci/run-suite -> OUT/suite.json; then the machine and the A/A subset it ran."""
        with self.step("suite") as step:
            cmd = self.suite_command()
            if cmd is None:
                return 2
            rc = run(cmd)
            if rc == 4:
                self.stopped(step, "suite")
            elif rc == 2 or not os.path.exists(self.suite_json):
                step.status = "failed (exit %d)" % rc
                log("the suite did not run")
            else:
                self.codes.append(rc)
        if rc == 4:
            return self.finish(4, after="suite")
        if rc == 2 or not os.path.exists(self.suite_json):
            return self.finish(2, after="suite", why="the suite did not run")
        if self.args.suite_only:
            return self.finish(max(self.codes, default=0), after="suite", why="--suite-only")
        # The night's context, machine and A/A subset, read once (the suite is tens of MB).
        suite_run = results.load(self.suite_json)
        self.context = suite_run.context
        self.aa_names = aa_choice(suite_run, self.gpu)
        del suite_run
        self.machine = history.machine_of(self.context)
        self.base = baseline_path(self.args.history, self.machine)
        return None

    def suite_command(self):
        """The ci/run-suite command of the suite step: its instances, the
        repetitions a comparison of that many needs, the night's exclusions
        (select_exclusions). None when bench refuses its arguments."""
        args, spec = self.args, self.spec
        chosen = spec["profile"] + spec["args"] + (["--benchmark_filter=" + args.filter] if args.filter else [])
        cmd = tool("regress.run_suite") + ["--bench", self.bench, "--out", self.suite_json, "--timeout",
                                           str(args.timeout), "--split", "variant", "--gpus", str(args.gpus)] + \
            (["--lane-cores", str(args.lane_cores)] if args.lane_cores is not None else [])
        try:
            names = launch.list_tests(self.bench, chosen)
        except launch.Refused as e:
            log(str(e))
            return None
        # A suite whose repetitions cannot decide the baseline comparison
        # would gate on nothing: its repetitions are raised to what the
        # comparison of this many instances needs.
        timing, had = with_repetitions(spec["timing"], repetitions_needed(len(names)))
        if timing != spec["timing"]:
            log("%d repetitions cannot decide a two-file comparison of %d instances: %d instead"
                % (had or 1, len(names), repetitions_needed(len(names))))
        if spec["select"]:
            try:
                roles = survey_roles(self.bench, args.out, {variant_of(n) for n in names})
                if names and not roles:
                    log("the role survey read no roles (%s): the baselines run too"
                        % os.path.join(args.out, "roles.log"))
                exclude = select_exclusions(names, roles)
            except launch.Refused as e:
                log(str(e))
                return None
            if exclude:
                cmd += ["--exclude", exclude]
        if args.resume:
            cmd.append("--resume")
        if self.left() is not None:
            cmd += ["--max-seconds", str(self.left())]
        return cmd + ["--"] + chosen + timing + ["--no-progress"]

    def aa(self):
        """4. A/A: the comparator on the same binary twice; its counts to the false-alarm ledger."""
        with self.step("A/A") as step:
            rc = self.aa_rounds()
            if rc == 4:
                self.stopped(step, "A/A")
            elif os.path.exists(self.aa_json):
                self.aa_ledger()
            else:
                log("the A/A comparison did not run (exit %d): %s" % (rc, os.path.join(self.args.out, "aa.txt")))
                self.codes.append(2)
        if rc == 4:
            return self.finish(4, after="A/A")
        return None

    def aa_rounds(self):
        """ci/compare --run of bench against its copy on the A/A subset -> OUT/aa.json; its exit status."""
        args, spec = self.args, self.spec
        twin = os.path.join(args.out, "bench-twin")
        if not os.path.exists(twin):
            # Whole or not there: a call killed mid-copy leaves no half a twin.
            shutil.copy2(self.bench, twin + ".part")
            os.replace(twin + ".part", twin)
        limit = [] if self.left() is None else ["--max-seconds", str(self.left())]
        if not self.aa_names:
            with open(os.path.join(args.out, "aa.txt"), "w") as f:
                f.write("no passed instance on this device fast and repeated enough for the A/A rounds\n")
            return 2
        bench_args = (spec["profile"] + spec["args"] + AA_ARGS
                      + ["--benchmark_filter=" + launch.exact_filter(self.aa_names)])
        return run(tool("regress.compare") + ["--run", self.bench, twin, "--workdir",
                                              os.path.join(args.out, "aa-rounds"),
                                              "--max-rounds", str(AA_MAX_ROUNDS), "--json", self.aa_json] + limit
                   + ["--"] + bench_args,
                   os.path.join(args.out, "aa.txt"))

    def aa_ledger(self):
        """The A/A's counts appended to HISTORY/aa-ledger.jsonl, and its verdicts that are not SAME logged."""
        with open(self.aa_json) as f:
            doc = json.load(f)
        entry = {"date": self.context.get("date"), "revision": self.context.get("parbench_git_revision"),
                 "machine": self.machine,
                 "compared": len(doc["benchmarks"]), "counts": doc["summary"],
                 "false_alarms": doc["summary"].get("SLOWER", 0) + doc["summary"].get("FASTER", 0)}
        entry.update(aa_signs_and_noise(doc))
        os.makedirs(self.args.history, exist_ok=True)
        ledger = os.path.join(self.args.history, "aa-ledger.jsonl")
        # One line a night: a night resumed after its A/A (a call killed or
        # stopped later) runs the step again on the same rounds.
        first = not any(e.get("machine") == entry["machine"] and e.get("date") == entry["date"]
                        and e.get("revision") == entry["revision"] for e in guard.read_jsonl(ledger))
        if first:
            with open(ledger, "a") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
        log("A/A: %s" % doc["summary_line"])
        for line in not_same_lines(doc):
            log("A/A: " + line)
        if first:
            self.qualify(doc)

    def qualify(self, doc):
        """The night's A/A qualifies the machine too (ci/compare --qualify's state), once a night."""
        try:
            state = qualification.State(os.path.join(self.args.history, qualification.FILE))
            rec = state.add(qualification.make_record(self.context, doc, "nightly A/A"))
            log("qualification: " + qualification.describe(rec))
        except qualification.QualificationError as e:
            log("qualification not recorded: %s" % e)

    def ingest(self):
        """5. ingest: ci/history ingest OUT/suite.json."""
        args = self.args
        with self.step("ingest") as step:
            rc = run(tool("regress.history") + ["--history", args.store or args.history, "ingest", self.suite_json])
            if rc != 0:
                step.status = "failed (exit %d)" % rc
                self.codes.append(2)
        return None

    def changes(self):
        """6. changes: ci/trends over this machine's series -> OUT/report/trends/, OUT/changes.json."""
        args = self.args
        if self.out_of_time("changes"):
            return self.finish(4)
        with self.step("changes") as step:
            self.accepted = self.accepted_through()
            rc = run(tool("regress.trends") + ["--history", args.store or args.history, "--files", args.history,
                                               "--machine", self.machine,
                                               "--out", os.path.join(self.report_dir, "trends"),
                                               "--json", os.path.join(args.out, "changes.json")] + self.accepted,
                     timeout=self.left())
            if rc == TIMED_OUT:
                self.stopped(step, "changes")
            elif rc not in (0, 1):
                step.status = "failed (exit %d)" % rc
        if rc == TIMED_OUT:
            return self.finish(4, after="changes")
        self.codes.append(rc)
        self.say_health()
        return None

    def say_health(self):
        """The gate's health that ci/trends measured (OUT/changes.json), in the night's log."""
        try:
            with open(os.path.join(self.args.out, "changes.json")) as f:
                figures = json.load(f).get("health")
        except (OSError, ValueError):
            return
        for ok, line in health.health_lines(figures) if figures else ():
            log("health: %s%s" % ("" if ok else "WARNING: ", line))

    def accepted_through(self):
        """Regressions measured at or before the accepted baseline were
        accepted with it: listed, not failing the night (ci/trends
        --accepted-through the baseline's date)."""
        if not os.path.exists(self.base):
            return []
        try:
            date = results.load(self.base).context.get("date")
        except results.LoadError as e:
            log("the baseline cannot be read (%s): every confirmed regression fails" % e)
            date = None
        return ["--accepted-through", str(date)] if date else []

    def bisect(self):
        """7. bisect: each confirmed change's commit range (bisect_changes), within --bisect-seconds."""
        args = self.args
        if args.skip_bisect:
            skipped("bisect", self.summary, "--skip-bisect")
            return None
        if not os.path.exists(os.path.join(args.out, "changes.json")):
            skipped("bisect", self.summary, "no changes.json (the changes step failed)")
            return None
        if self.out_of_time("bisect"):
            return self.finish(4)
        with self.step("bisect"):
            budget = args.bisect_seconds if self.left() is None else min(args.bisect_seconds, self.left())
            done = bisect_changes(os.path.join(args.out, "changes.json"), args.history, ROOT,
                                  self.spec["profile"] + self.spec["args"], budget)
            with open(os.path.join(args.out, "bisect.json"), "w") as f:
                json.dump(done, f, indent=1, sort_keys=True)
            if any(d["exit"] == 0 for d in done):
                # The trends page names tonight's culprits with their changes.
                run(tool("regress.trends") + ["--history", args.store or args.history, "--files", args.history,
                                              "--machine", self.machine,
                                              "--out", os.path.join(self.report_dir, "trends")] + self.accepted,
                    os.path.join(args.out, "trends-after-bisect.log"), timeout=self.left())
        return None

    def baseline(self):
        """8. baseline: ci/compare with the machine's accepted baseline (the first night's run becomes it)."""
        if self.out_of_time("baseline"):
            return self.finish(4)
        rc = 0
        with self.step("baseline") as step:
            if not os.path.exists(self.base):
                accept_baseline(self.suite_json, self.args.history, "the first night on this machine")
                step.status = "done (tonight's run is the machine's first baseline)"
            else:
                rc = self.compare_with_baseline(step)
        if rc == TIMED_OUT:
            return self.finish(4, after="baseline")
        self.codes.append(rc)
        return None

    def compare_with_baseline(self, step):
        """ci/compare BASELINE OUT/suite.json with the A/A's and the history's
        noise; its verdicts that are not SAME logged. Its exit status."""
        args = self.args
        verdicts = os.path.join(args.out, "baseline.json")
        cmd = tool("regress.compare") + [self.base, self.suite_json, "--json", verdicts,
                                         "--markdown", os.path.join(args.out, "baseline.md"),
                                         "--plot", os.path.join(args.out, "baseline.png")]
        if os.path.exists(self.aa_json):
            cmd += ["--noise", self.aa_json]
        # This machine's own run-to-run noise for every benchmark that
        # the A/A instances do not cover (the prior where its series is short).
        cmd += ["--history", args.store or args.history]
        rc = run(cmd, os.path.join(args.out, "baseline.txt"), timeout=self.left())
        if rc == TIMED_OUT:
            self.stopped(step, "baseline")
        elif os.path.exists(verdicts):
            with open(verdicts) as f:
                doc = json.load(f)
            # The gate's verdicts, where a user reads them first: every one that is not SAME.
            log("baseline: %s" % doc["summary_line"])
            for line in not_same_lines(doc):
                log("baseline: " + line)
        else:
            log("the baseline comparison did not run (exit %d): %s" % (rc, os.path.join(args.out, "baseline.txt")))
        return rc

    def energy(self):
        """9. energy: the A/A subset metered into its own series (energy_night)."""
        if self.out_of_time("energy"):
            return self.finish(4)
        with self.step("energy") as step:
            step.status = energy_night(self.bench, self.spec["profile"] + self.spec["args"], self.aa_names,
                                       self.args.out, self.args.history, self.report_dir, self.left(),
                                       self.args.energy_seconds, reuse=self.args.resume)
        if step.status == "stopped":
            return self.finish(4, after="energy")
        return None

    def report(self):
        """10. report: plots/plot OUT/suite.json -> OUT/report/."""
        if self.out_of_time("report"):
            return self.finish(4)
        with self.step("report") as step:
            rc = run([os.path.join(ROOT, "plots", "plot"), self.suite_json, "--out", self.report_dir],
                     os.path.join(self.args.out, "report.log"), timeout=self.left())
            if rc == TIMED_OUT:
                self.stopped(step, "report")
            elif rc != 0:
                log("the report failed (exit %d)" % rc)
        if rc == TIMED_OUT:
            return self.finish(4, after="report")
        return None
