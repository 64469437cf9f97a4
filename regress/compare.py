"""parbench's comparator: is NEW slower than BASE, benchmark by benchmark?

Two modes (docs/tools/compare.md):

  compare --run BASE_BENCH NEW_BENCH -- [bench arguments]
      The two binaries run on this machine, one invocation each per round:
      at the same time on disjoint cores, swapped every round, for the CPU
      benchmarks whose threads fit in half the cores (--duet, duet rounds:
      regress/run/duet.py), one after the other (A B B A ...) for the rest;
      the Wilcoxon signed-rank test and the Hodges-Lehmann ratio of the
      pairs decide (the paired t-test before 12 rounds). Sequential by
      default: looks after 4, 6, 8, 12, 16 and 24 rounds, later rounds only
      for the undecided benchmarks, alpha and the SAME interval's tails split
      evenly over the looks, Benjamini-Hochberg across the benchmarks
      (sequential_rows). --instrument adds the instruction counts of the
      1-thread CPU benchmarks as a cross-check (regress/run/instructions.py).
      --rounds N: N rounds of everything, decided once with Holm. This is
      how a pull request is judged: drift between sessions (clocks, launch
      latency, other tenants) hits both sides of a pair alike.
  compare BASE.json NEW.json
      Two files, entries paired by run name, every repetition used: the
      Mann-Whitney U test and the Hodges-Lehmann shift with its interval.
      The run-to-run noise of each benchmark (--noise, --history or the
      prior: regress/stats/noise.py) bounds the offset of each side's process.
  compare --across-hardware BASE.json NEW.json
      Two files of different machines: each repetition's declared rate over
      its own run's ceiling of the rate's kind (regress/verdict/across.py)
      instead of its time, decided as two files are; the machine's keys of
      the fingerprint do not refuse.

Verdict per benchmark, on the time per iteration (or --metric):
  SLOWER / FASTER  significant after the multiple-comparison correction,
                   the estimate beyond the benchmark's threshold, and (two
                   files) the interval beyond the margin of process offsets
  SAME             the whole confidence interval lies inside +-floor, the
                   smallest change of interest (an equivalence test: GPU 2%,
                   CPU 5% or --floor)
  AMBIGUOUS        neither proven, with the reason
  UNRELIABLE       a GPU entry whose throttled flag or SM clock differs
  NOT_SAME_WORK    a counter describing the problem differs (sizes, flops
                   per call, iteration counts): never read as faster
  NEW / MISSING    only in NEW / only in BASE
  ERROR            an error entry (incorrect, out of memory, failed) in NEW
A SLOWER whose code fingerprint and library versions are the same on both
sides is marked same_code ("machine or noise") and never gates; the vendor
libraries' rows are control series for the others (_controls).

Threshold: max(floor, multiple x noise); paired, the noise of one run
measured over the rounds (multiple 1); two files, the spread of the
repetitions (multiple 3). Margin (two files): RUN_MULTIPLES[device] (GPU 8,
CPU 7) x the run-to-run noise x the machine's tail factor.

Exit status: 0 nothing regressed; 1 a SLOWER or ERROR verdict; 2 bad input
or a bad command line; 3 runs not comparable (the fingerprint, or nothing
measured on both sides); 4 --run
stopped by --max-seconds before its rounds were done (rerun the same command
to resume).
"""
import argparse
import os
import re
import sys

from regress import cli
from regress.load import fmt
from regress.run import duet, instructions, launch, qualify, rounds
from regress.stats import decide
from regress.stats import noise as noise_mod
from regress.stats.decide import ALPHA, DEFAULT_MULTIPLE
from regress.store import qualification
from regress.store import noise as history_noise
from regress.report.compare_table import render_console, render_markdown
from regress.verdict import analyse, instrument
from regress.verdict.document import build_document, read_noise
from regress.verdict.samples import InputError, NotComparable
from regress.verdict.sequential import FIRST_LOOK, SEQUENTIAL_CAP, sequential_looks
from regress.verdict.settings import Settings

TOOL = "compare"
EXIT_OK, EXIT_REGRESSION, EXIT_INPUT, EXIT_INCOMPARABLE, EXIT_INCOMPLETE = (
    cli.EXIT_OK, cli.EXIT_FAIL, cli.EXIT_INPUT, cli.EXIT_INCOMPARABLE, cli.EXIT_STOPPED)
MIN_ROUNDS = 8


def _add_qualification_arguments(p):
    """--qualify and its state (regress/run/qualify.py)."""
    p.add_argument("--qualify", metavar="BENCH",
                   help="qualify the gate on this machine: BENCH against a copy of itself in paired rounds on the "
                        "gate's selection (arguments after --); any SLOWER or FASTER fails it (exit 1)")
    p.add_argument("--if-unseen", action="store_true",
                   help="--qualify: only on a machine whose fingerprint --qualify-state has not seen (a probe run "
                        "of one instance reads it); else exit 0 at once")
    p.add_argument("--qualify-state", metavar="FILE",
                   help="the gate's qualification per machine fingerprint: --qualify records its result here; "
                        "--run qualifies a machine FILE has not seen first (BASE against itself), and on an "
                        "unqualified machine reports its verdicts without failing on a time")


EPILOG = """modes:
  two files   entries paired by run name, every repetition used (Mann-Whitney U,
              Hodges-Lehmann shift); use 10 or more repetitions per side
  --across-hardware
              two files of different machines: each entry's rate as a
              fraction of its own run's ceiling of the rate's kind (both
              runs need the Ceiling family), decided as two files are;
              entries without a fraction are listed, not compared
  --run       the two binaries on this machine: at the same time on disjoint
              cores (--duet) for the CPU benchmarks that fit in half of
              them, interleaved (A B B A ...) for the rest (Wilcoxon
              signed-rank over the rounds, Hodges-Lehmann ratio; the paired
              t-test before 12 rounds); sequential: looks at 4, 6, 8, 12, 16
              and 24 rounds, later rounds only for the undecided
              benchmarks; rounds are kept in --workdir, so an
              interrupted or --max-seconds run resumes, and --analyse DIR
              compares them again without running anything

verdicts: SLOWER/FASTER need the change significant after the correction
over all benchmarks compared and beyond the benchmark's threshold, and with
two files the interval beyond 8 (GPU) or 7 (CPU) x the run-to-run noise
(--noise, --history or the prior); SAME needs the interval inside +-floor
(GPU 2%, CPU 5%, or --floor). Threshold, paired: max(floor, 1 x the noise of
one run, measured over the rounds); two files: max(floor, 3 x the spread of
the repetitions). Default floors of the threshold: GPU 1% paired, 2% two
files; CPU 1% paired, 10% two files.

exit status: 0 nothing regressed (on an unqualified machine, --qualify-state:
no ERROR); 1 a SLOWER or ERROR verdict, or --qualify failed; 2 unreadable
input or bad usage (--across-hardware: a run without ceilings); 3 runs not
comparable (a hard fingerprint key differs, or nothing is measured on both
sides); 4 --run stopped by --max-seconds before all rounds ran (rerun to
resume)"""


def make_parser():
    p = cli.ArgumentParser(
        TOOL, "ci/compare",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare two parbench runs benchmark by benchmark: SLOWER, FASTER, SAME, AMBIGUOUS, "
                    "UNRELIABLE, NOT_SAME_WORK, NEW, MISSING or ERROR.",
        usage="compare BASE.json NEW.json [options]\n"
              "       compare --across-hardware BASE.json NEW.json [options]\n"
              "       compare --run BASE_BENCH NEW_BENCH [--rounds N] [--workdir DIR] [options] -- [bench arguments]\n"
              "       compare --qualify BENCH [--qualify-state FILE] [options] -- [bench arguments]",
        epilog=EPILOG)
    p.add_argument("files", nargs="*", metavar="FILE", help="BASE.json NEW.json")
    p.add_argument("--run", nargs=2, metavar=("BASE_BENCH", "NEW_BENCH"),
                   help="run the two bench binaries interleaved (arguments for them after --)")
    _add_qualification_arguments(p)
    for side in ("base", "new"):
        p.add_argument("--%s-env" % side, action="append", default=[], metavar="VAR=VALUE",
                       help="--run: set VAR for the %s binary's invocations (repeatable); e.g. one bench on two "
                       "GPUs: --base-env CUDA_VISIBLE_DEVICES=0 --new-env CUDA_VISIBLE_DEVICES=1" % side.upper())
        p.add_argument("--%s-arg" % side, action="append", default=[], metavar="ARG",
                       help="--run: a bench argument for the %s binary's invocations only (repeatable); e.g. what "
                       "a flag does to the times: --new-arg=--no-energy" % side.upper())
    p.add_argument("--duet", choices=duet.MODES, default="auto",
                   help="--run: BASE and NEW at the same time on disjoint core sets, swapped every round, for the "
                        "CPU benchmarks whose threads fit in half the cores (auto, the default: where they fit; on: "
                        "an error where none can; off: interleaved rounds only)")
    p.add_argument("--instrument", choices=instructions.MODES, default="none",
                   help="--run: also count the instructions of each CPU benchmark's timed calls (valgrind's "
                        "callgrind here), each side twice, as a cross-check of the time: a SLOWER whose "
                        "instructions did not move is AMBIGUOUS (environment suspect), a SAME or AMBIGUOUS whose "
                        "instructions moved says so first; instructions: an error where it cannot run, auto: a "
                        "note (default %(default)s)")
    p.add_argument("--rounds", type=int, help="a fixed number of paired rounds, every benchmark in each, decided "
                   "once (Holm); default: sequential, rounds until each benchmark is decided")
    p.add_argument("--delta", type=decide.parse_change, metavar="PCT",
                   help="sequential --run: the change to find (e.g. 2%%); the first look comes at the rounds the "
                   "plan says it needs (ci/history plan) from --noise's A/A, not before (without --noise: the "
                   "usual looks); from 6 rounds on, a benchmark whose measured noise needs more rounds than the cap "
                   "to find it stops (AMBIGUOUS, with the reason)")
    p.add_argument("--max-rounds", type=int, help="sequential: the cap on rounds (default %d; looks at 4, 6, 8, 12, "
                   "16, then x1.5)" % SEQUENTIAL_CAP)
    p.add_argument("--sequential", action="store_true", help="with --analyse DIR of a fixed run: replay the "
                   "sequential procedure over its rounds (what it would have decided, and after how many rounds)")
    p.add_argument("--workdir", default="compare-rounds", help="where --run keeps its rounds (default %(default)s)")
    p.add_argument("--analyse", metavar="DIR", help="compare the rounds an earlier --run kept in DIR, running nothing")
    p.add_argument("--scale-new", type=float, metavar="F",
                   help="multiply NEW's times by F (rates by 1/F) before comparing: measures what a change "
                        "of that size would be called, e.g. on A/A data")
    p.add_argument("--max-seconds", type=float, help="--run: start no invocation after this many seconds; "
                   "exit 4, rerun to resume")
    p.add_argument("--results-may-differ", action="store_true",
                   help="a fractional result counter (inertia) that differs does not make NOT_SAME_WORK: a change "
                        "that sums floats in another order moves it; the row notes it (iteration counts and the "
                        "problem must still match)")
    p.add_argument("--across-hardware", action="store_true",
                   help="two files of different machines: compare each entry's rate as a fraction of its own run's "
                        "ceiling of the rate's kind (copy bandwidth, the library GEMM; both runs need the Ceiling "
                        "family), never its time; the machine's fingerprint does not refuse, entries without a "
                        "fraction on a side are listed as not comparable")
    p.add_argument("--metric", help="a time, rate or energy counter to compare instead of the time per "
                   "iteration (rates mirror the time: the same verdict; joules_per_call: SLOWER is more energy)")
    p.add_argument("--floor", action="append", type=decide.parse_floor, default=[], metavar="[FAMILY/]DEVICE=PCT",
                   help="minimum effect, e.g. gpu=2, cpu=10, Sort/gpu=3 (repeatable)")
    p.add_argument("--multiple", type=float, help="threshold >= this x the measured noise (default %g paired, "
                   "%g two files)" % (DEFAULT_MULTIPLE["paired"], DEFAULT_MULTIPLE["files"]))
    p.add_argument("--noise", metavar="VERDICT.json",
                   help="run-to-run noise per benchmark from an earlier compare --json of a paired A/A run: "
                        "two files then allow a margin of 8x (GPU) or 7x (CPU) it for process offsets")
    p.add_argument("--history", metavar="DIR",
                   help="two files: the run-to-run noise of each benchmark from this machine's series in the "
                        "history store DIR (ci/history; a directory or a postgresql:// URL); benchmarks it cannot "
                        "cover use the prior")
    p.add_argument("--alpha", type=float, default=ALPHA, help="error rate of SLOWER/FASTER: family-wise (two files, "
                   "--rounds), false discovery rate and family-wise under no change (sequential) (default %(default)s)")
    p.add_argument("--filter", help="compare only benchmarks whose name matches this regular expression")
    p.add_argument("--json", metavar="FILE", help="write the verdicts as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown report (for a pull-request comment)")
    p.add_argument("--plot", metavar="FILE", help="draw the changes with their intervals and thresholds "
                   "(PNG or SVG, by the name; needs matplotlib)")
    p.add_argument("--only-changes", action="store_true", help="console: leave out SAME rows")
    return p


# ------------------------------------------------------------ input checks

# The command line's checks before anything is read, in order: (whether the
# arguments are wrong, the one line that says so).
CHECKS = (
    (lambda a, extra: sum(map(bool, (a.run, a.files, a.analyse, a.qualify))) > 1,
     "give two files, --run, --qualify or --analyse, not several"),
    (lambda a, extra: a.scale_new is not None and not a.scale_new > 0, "--scale-new must be a positive factor"),
    (lambda a, extra: not a.run and not a.analyse and not a.qualify and len(a.files) != 2,
     "needs BASE.json NEW.json, or --run BASE_BENCH NEW_BENCH (see --help)"),
    (lambda a, extra: extra and not (a.run or a.qualify), "arguments after -- are for --run or --qualify"),
    (lambda a, extra: a.if_unseen and not (a.qualify and a.qualify_state),
     "--if-unseen is for --qualify with --qualify-state"),
    (lambda a, extra: a.qualify_state and not (a.run or a.qualify),
     "--qualify-state is for --run or --qualify (the gate's paired rounds)"),
    (lambda a, extra: a.across_hardware and (a.run or a.analyse or a.qualify),
     "--across-hardware compares two files of different machines; --run and --analyse pair rounds on this one"),
)
CHECKS_AFTER_SIDES = (
    (lambda a: a.rounds is not None and a.rounds < MIN_ROUNDS, "--rounds must be at least %d" % MIN_ROUNDS),
    (lambda a: a.max_rounds is not None and (a.max_rounds < FIRST_LOOK or a.rounds is not None),
     "--max-rounds must be at least %d, and is for a sequential --run (without --rounds)" % FIRST_LOOK),
    (lambda a: a.sequential and not a.analyse, "--sequential replays the rounds of --analyse DIR"),
    (lambda a: a.delta is not None and not (((a.run or a.qualify) and a.rounds is None) or a.analyse),
     "--delta plans the looks of a sequential --run (without --rounds), or replays them with --analyse"),
    (lambda a: not 0 < a.alpha < 1, "--alpha must be between 0 and 1"),
    (lambda a: a.across_hardware and (a.history or a.noise),
     "--across-hardware: --history and --noise are one machine's run-to-run noise; across two machines the prior "
     "sets the margins"),
    (lambda a: a.across_hardware and a.metric, "--across-hardware compares the fraction of ceiling, not --metric"),
    (lambda a: a.instrument != "none" and not (a.run or a.analyse),
     "--instrument counts what --run runs (or reads what it kept, with --analyse DIR)"),
    (lambda a: a.instrument == "instructions" and a.run and instructions.unavailable() is not None,
     "--instrument=instructions: %s" % instructions.unavailable()),
)


def _sides(args):
    """({side: {VAR: value}}, {side: [arguments]}) of --base-env, --new-arg ...;
    InputError for one without --run or not VAR=VALUE."""
    env, side_args = {}, {}
    for side in ("base", "new"):
        if getattr(args, side + "_arg"):
            if not (args.run or args.qualify):
                raise InputError("--%s-arg is for --run" % side)
            side_args[side] = list(getattr(args, side + "_arg"))
        given = getattr(args, side + "_env")
        if given and not (args.run or args.qualify):
            raise InputError("--%s-env is for --run" % side)
        for item in given:
            var, eq, value = item.partition("=")
            if not eq or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", var):
                raise InputError("--%s-env %s: want VAR=VALUE" % (side, item))
            env.setdefault(side, {})[var] = value
    return env, side_args


def check_arguments(args, bench_args):
    """The --run request (None without --run) and the compiled --filter;
    InputError, one line, for arguments that do not go together."""
    for wrong, line in CHECKS:
        if wrong(args, bench_args):
            raise InputError(line)
    env, side_args = _sides(args)
    for wrong, line in CHECKS_AFTER_SIDES:
        if wrong(args):
            raise InputError(line)
    try:
        flt = re.compile(args.filter) if args.filter else None
    except re.error as e:
        raise InputError("--filter is not a regular expression: %s" % e)
    request = rounds.Request(args.run[0], args.run[1], bench_args, args.workdir, env, side_args,
                             args.max_seconds, args.duet) if args.run else None
    if args.qualify_state:
        qualify.state(args.qualify_state)   # unreadable: refused before any round runs
    if args.qualify:
        if not os.path.isfile(args.qualify):
            raise InputError("--qualify %s: no such file" % args.qualify)
        request = qualify.a_a_request(args.qualify, bench_args, args.workdir, env, side_args, args.max_seconds,
                                      args.duet)
    return request, flt


def make_settings(args, flt):
    """The Settings of the command line, --noise read."""
    mode = "paired" if args.run or args.analyse or args.qualify else "files"
    noise = read_noise(args.noise) if args.noise else None
    if args.history and mode != "files":
        raise InputError("--history is for two files; paired rounds measure their own noise")
    return Settings.make(mode, alpha=args.alpha, floors=dict(args.floor), multiple=args.multiple,
                         metric=args.metric, noise=noise, history=args.history,
                         results_may_differ=args.results_may_differ, filter=flt, scale_new=args.scale_new,
                         across=args.across_hardware).replace(delta=args.delta)


def plot_problem(args):
    """Why --plot cannot draw, or None."""
    if not args.plot:
        return None
    if not args.plot.lower().endswith((".png", ".svg", ".pdf")):
        return "--plot %s: the name must end in .png, .svg or .pdf" % args.plot
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "--plot needs matplotlib (apt-get install python3-matplotlib)"
    return None


# ----------------------------------------------------------------- wiring

def compare_files(base_path, new_path, settings, warn):
    """Two files: read, the run-to-run noise of --history, the verdicts."""
    files = analyse.read_files(base_path, new_path, settings, warn)
    if settings.history:
        try:
            history_noise.load_history(settings.noise_model, settings.history, files.new_run.context,
                                       files.measured(), warn, floors=settings.floors)
        except noise_mod.NoiseError as e:
            raise InputError(str(e))
    return analyse.decide_files(files, settings, warn)


def analyse_again(workdir, sequential, settings, warn):
    """--analyse DIR: the rounds an earlier --run kept, decided again
    (with --sequential, replayed look by look)."""
    if not os.path.isfile(os.path.join(workdir, "manifest.json")):
        raise InputError("%s holds no rounds of compare --run (no manifest.json)" % workdir)
    replay = None
    m = rounds.read_manifest(workdir)
    if sequential:
        if m.get("looks"):
            raise InputError("--sequential: %s already holds a sequential comparison" % workdir)
        replay = sequential_looks(m["rounds"])
    elif settings.delta is not None and not m.get("looks"):
        raise InputError("--delta: %s holds fixed rounds, decided once; add --sequential to replay them look by look"
                         % workdir)
    elif m.get("looks") and m.get("delta") is not None and m.get("delta") != settings.delta:
        # Its rounds stopped where that --delta stopped them: another would
        # replay benchmarks past the rounds they have. (A run without one
        # holds every round a --delta replay needs: its stops come sooner.)
        raise InputError("%s holds a sequential comparison run with --delta %g%%: analyse it with the same"
                         % (workdir, 100 * m["delta"]))
    res = rounds.analyse_paired(workdir, settings, warn, replay)
    if res.pending is not None:
        raise InputError("%s: stopped before the look at %d rounds; run the same compare --run again "
                         "to go on" % (workdir, res.pending[0]))
    return res


def planned_start(args, request):
    """--delta: the rounds the plan (regress/stats/plan.py) says the change
    needs, the fewest over the selected benchmarks that can see it at all,
    from the paired noise of --noise's A/A (its intervals); None without
    --delta, or without --noise: the prior is a run-to-run noise, several
    times a paired round's on the GPU, and would put the first look at 12
    rounds where most benchmarks decide at 4."""
    if args.delta is None:
        return None
    if not args.noise:
        cli.log("compare: --delta %s: no measured paired noise (--noise A/A.json) to plan the first look by: the "
                "usual looks" % fmt.pct(args.delta, signed=False, digits=2, missing=""))
        return None
    from regress.stats import plan
    from regress.store import plan as store_plan
    paired = store_plan.paired_from_doc(args.noise)
    looks = sequential_looks(args.max_rounds or SEQUENTIAL_CAP)
    needs = []
    try:
        where = launch.list_devices(request.base_bin, request.bench_args)
    except launch.Refused as e:
        raise InputError("--delta: %s" % e)
    for name, device in sorted(where.items()):
        if name not in paired:
            continue
        device = "gpu" if device.startswith("gpu") else "cpu"
        family = name.split("/")[0]
        floor = decide.floor_for(dict(args.floor), "paired", family, device)
        n = plan.rounds_for(args.delta, paired[name], floor, args.alpha / len(looks))
        if n:
            needs.append(n)
    start = min(needs) if needs else None
    kept = [n for n in looks if n >= start] or looks[-1:] if start else looks
    cli.log("compare: --delta %s: %s" % (
        fmt.pct(args.delta, signed=False, digits=2, missing=""),
        "the selection needs %d rounds at the fewest%s: looks at %s" % (
            start, " (more than the cap, --max-rounds)" if start > looks[-1] else "", ", ".join(map(str, kept)))
        if start
        else "no benchmark --noise measured can see it in %d rounds; the usual looks" % looks[-1]))
    return start


def run_comparison(args, request, settings, warn):
    """The Comparison the arguments ask for; None when --max-seconds stopped
    a --run before its rounds were done."""
    if args.analyse:
        return analyse_again(args.analyse, args.sequential, settings, warn)
    if request and args.rounds:
        return rounds.run_fixed(request, args.rounds, settings, warn, cli.log)
    if request:
        return rounds.run_sequential(request, args.max_rounds, settings, warn, cli.log, planned_start(args, request))
    return compare_files(args.files[0], args.files[1], settings, warn)


def _cpu_rows(comparison):
    return sorted(r.name for r in comparison.rows if r.device == "cpu" and r.n_base is not None)


def add_instructions(args, request, comparison, settings, warn):
    """--instrument: the instruction counts of the CPU benchmarks, counted
    (--run) or read from the work folder (--analyse), applied to the rows.
    A failure under valgrind is a warning: the time's verdicts stand."""
    if args.instrument == "none" or comparison is None:
        return
    names = _cpu_rows(comparison)
    if names and not args.analyse:
        try:
            single = instructions.one_thread(request.base_bin, request.bench_args)
        except instructions.InstrumentError as e:
            comparison.warnings.append("--instrument: %s; time-only verdicts" % e)
            return
        names = [n for n in names if n in single]
    if not names:
        comparison.warnings.append("--instrument: no 1-thread CPU benchmark was compared; nothing counted")
        return
    if args.analyse:
        counts = instructions.stored(args.analyse)
        if counts is None:
            comparison.warnings.append("--instrument: %s holds no instruction counts" % args.analyse)
            return
    else:
        why = instructions.unavailable()
        old = [s.upper() for s, b in (("base", request.base_bin), ("new", request.new_bin))
               if not instructions.supports(b)]
        if not why and old:
            why = "%s cannot count under callgrind (a bench from before --instrument)" % " and ".join(old)
        if why:
            comparison.warnings.append("--instrument: %s; time-only verdicts" % why)
            return
        try:
            counts = instructions.measure({"base": request.base_bin, "new": request.new_bin}, request.bench_args,
                                          request.side_args, request.env, names, request.workdir, cli.log)
        except instructions.InstrumentError as e:
            warn("warning: --instrument: %s" % e)
            comparison.warnings.append("--instrument: %s; time-only verdicts" % e)
            return
    moved = instrument.apply(comparison.rows, instructions.changes(counts))
    settings.noise_model.describe.append("instructions counted for %d 1-thread CPU benchmarks under callgrind (each "
                                         "side twice); %d moved beyond their noise" % (len(names), moved))


def seen_already(args, request):
    """--qualify --if-unseen: the state's record of this machine when it is
    qualified; None (then it qualifies) when it has none, or when its last
    qualification failed: an unqualified gate clears only by passing one."""
    if not args.if_unseen:
        return None
    ctx = qualify.probe_context(request.base_bin, request.bench_args, request.workdir, (request.env or {}).get("base"))
    rec = qualify.state(args.qualify_state).latest(qualification.fingerprint(ctx))
    if rec and rec["state"] != qualification.QUALIFIED:
        cli.log("compare: this machine is unqualified (%s): qualifying it again" % qualification.describe(rec))
        rec = None
    if rec:
        cli.log("compare: this machine (fingerprint %s) is in %s already, nothing run: %s"
                % (rec["fingerprint"], args.qualify_state, qualification.describe(rec)))
    elif qualify.has_rounds(request.workdir) and \
            qualify.fingerprint_of(request.workdir)[1] != qualification.fingerprint(ctx):
        raise qualify.QualifyError("%s holds the rounds of another machine; give another --workdir"
                                   % request.workdir)
    return rec


def under_qualification(args, request, flt, doc, warn):
    """The document under the gate's qualification (regress/run/qualify.py):
    --qualify records what it showed; --run --qualify-state qualifies a
    machine the state has not seen first. None when --max-seconds stopped
    that qualification (rerun to resume)."""
    if not (args.qualify or args.qualify_state):
        return doc
    st = qualify.state(args.qualify_state) if args.qualify_state else None
    if args.qualify:
        ctx, _ = qualify.fingerprint_of(request.workdir)
        rec = qualification.make_record(ctx, doc, qualify.SOURCE_QUALIFY)
        return qualify.qualified_doc(doc, st.add(rec) if st else rec)
    ctx, fp = qualify.fingerprint_of(request.workdir)
    rec = st.latest(fp)
    if rec is None:
        cli.log("compare: this machine (fingerprint %s) has no qualification in %s: qualifying it first, BASE against "
                "a copy of itself" % (fp, args.qualify_state))
        q_request = qualify.a_a_request(request.base_bin, request.bench_args, request.workdir + "-qualify",
                                        request.env, request.side_args, args.max_seconds, request.duet)
        if qualify.has_rounds(q_request.workdir) and qualify.fingerprint_of(q_request.workdir)[1] != fp:
            raise qualify.QualifyError("%s holds the rounds of another machine; remove it" % q_request.workdir)
        q_settings = make_settings(args, flt)
        q_comparison = rounds.run_sequential(q_request, args.max_rounds, q_settings, warn, cli.log)
        if q_comparison is None:
            return None
        q_doc = build_document(q_comparison, q_settings)
        rec = st.add(qualification.make_record(ctx, q_doc, qualify.SOURCE_GATE))
        cli.log("compare: qualification: " + qualification.describe(rec))
    return qualify.gate_doc(doc, rec)


def write_outputs(doc, args, out=None):
    # sys.stdout as it is at the call (a caller's redirection), not at import.
    (out or sys.stdout).write(render_console(doc, args.only_changes))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(render_markdown(doc))
    if args.json:
        with open(args.json, "w") as f:
            cli.dump(doc, f)
    if args.plot:
        from plots import compare_plot
        compare_plot.plot(doc, doc["benchmarks"], args.plot)


def main(argv=None):
    argv, bench_args = cli.split_at_dashes(argv)
    args = make_parser().parse_args(argv)

    def warn(line):
        print("%s: %s" % (TOOL, line), file=sys.stderr)

    def fail(code, line):
        warn(line)
        return code

    try:
        request, flt = check_arguments(args, bench_args)
        settings = make_settings(args, flt)
        if seen_already(args, request):
            return EXIT_OK
        comparison = run_comparison(args, request, settings, warn)
    except (InputError, rounds.RoundsError, qualify.QualifyError) as e:
        return fail(EXIT_INPUT, str(e))
    except NotComparable as e:
        return fail(EXIT_INCOMPARABLE, str(e))
    if comparison is None:
        return EXIT_INCOMPLETE
    add_instructions(args, request, comparison, settings, warn)
    doc = build_document(comparison, settings)
    try:
        doc = under_qualification(args, request, flt, doc, warn)
    except (InputError, rounds.RoundsError, qualify.QualifyError, qualification.QualificationError) as e:
        return fail(EXIT_INPUT, str(e))
    except NotComparable as e:
        return fail(EXIT_INCOMPARABLE, str(e))
    if doc is None:
        return EXIT_INCOMPLETE
    problem = plot_problem(args)
    if problem:
        return fail(EXIT_INPUT, problem)
    try:
        write_outputs(doc, args)
    except OSError as e:
        return fail(EXIT_INPUT, "cannot write: %s" % e)
    return doc["exit"]


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
