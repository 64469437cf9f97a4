"""The comparator's paired rounds (compare --run): two bench binaries run
interleaved on this machine, A B, B A, A B ..., each run's JSON kept in a
work folder with a manifest, so an interrupted or --max-seconds run resumes
where it stopped. analyse_paired reads the rounds back and hands them to
regress/verdict/analyse.py; run_sequential runs rounds until the looks of a
sequential comparison decide; regress/run/launch.py starts each bench
process.
"""
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Optional

from regress import cli
from regress.load import results
from regress.run import duet, launch
from regress.stats import ranks
from regress.verdict import analyse
from regress.verdict.document import describe_run
from regress.verdict.checks import check_fingerprint
from regress.verdict.samples import InputError, NotComparable, collect, load_run
from regress.verdict.sequential import SEQUENTIAL_CAP, sequential_looks

SIDES = ("base", "new")


class RoundsError(Exception):
    """Unusable binaries, arguments or work folder: one line for the user."""


def path(workdir, r, side):
    """The JSON of round r (0-based) of one side."""
    return os.path.join(workdir, "round-%02d-%s.json" % (r + 1, side))


def round_order(r):
    """Which binary runs first in round r (0-based): A B, B A, A B, B A ..."""
    return ("base", "new") if r % 2 == 0 else ("new", "base")


def sha256(file):
    h = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def complete(file):
    """Whether a round's JSON is there and whole (not cut off mid-run)."""
    if not os.path.exists(file):
        return False
    try:
        run_ = results.load(file)
    except results.LoadError:
        return False
    return run_.cut is None


def done(workdir, rounds):
    """How many of the rounds have both sides complete."""
    return sum(1 for r in range(rounds) if all(complete(path(workdir, r, s)) for s in SIDES))


def leading_done(workdir):
    """How many rounds from the first on have both sides complete."""
    n = 0
    while all(complete(path(workdir, n, s)) for s in SIDES):
        n += 1
    return n


def read_manifest(workdir):
    file = os.path.join(workdir, "manifest.json")
    try:
        with open(file) as f:
            manifest = json.load(f)
    except OSError as e:
        raise RoundsError("%s holds no rounds of compare --run (%s)" % (workdir, e.strerror or e))
    except ValueError:
        raise RoundsError("%s is not a compare manifest (not JSON)" % file)
    if not (isinstance(manifest, dict) and isinstance(manifest.get("rounds"), int) and manifest["rounds"] > 0
            and all(isinstance(manifest.get(k), str) for k in ("base", "new", "base_sha256", "new_sha256"))):
        raise RoundsError("%s is not a compare manifest" % file)
    return manifest


def _list_tests(binary, bench_args):
    try:
        return launch.list_tests(binary, bench_args)
    except launch.Refused as e:
        raise RoundsError(str(e))


def _executables(base_bin, new_bin):
    resolved = []
    for b in (base_bin, new_bin):
        found = b if os.sep in b else (shutil.which(b) or b)
        if not (os.path.isfile(found) and os.access(found, os.X_OK)):
            raise RoundsError("%s is not an executable file" % b)
        resolved.append(os.path.abspath(found))
    return resolved


def _same_comparison(workdir, old, now, extra):
    for k in ("base_sha256", "new_sha256", "args", "env", "side_args") + tuple(sorted(extra or ())):
        if old.get(k) != now.get(k):
            raise RoundsError("%s holds rounds of another comparison (%s differs); use another --workdir"
                              % (workdir, k.replace("_sha256", " binary")))


def check_workdir(base_bin, new_bin, bench_args, workdir, env=None, extra=None, side_args=None):
    """RoundsError when workdir holds the rounds of another comparison (other
    binaries, arguments, environments or plan) than run() with these would
    make; nothing when it holds none."""
    if not os.path.exists(os.path.join(workdir, "manifest.json")):
        return
    base_bin, new_bin = _executables(base_bin, new_bin)
    now = {"base_sha256": sha256(base_bin), "new_sha256": sha256(new_bin), "args": bench_args}
    if env:
        now["env"] = env
    if side_args:
        now["side_args"] = side_args
    now.update(extra or {})
    _same_comparison(workdir, read_manifest(workdir), now, extra)


def part_path(workdir, r, side, part):
    """The JSON of one part ("duet" or "interleaved") of round r of a side,
    in a comparison with duet rounds; path() is the two parts merged."""
    return os.path.join(workdir, "round-%02d-%s.%s.json" % (r + 1, side, part))


def _listings(bins, bench_args, side_args, log):
    """(names of both sides, names common to both, {side: its names});
    NotComparable when they have none in common, a line when they differ."""
    base = _list_tests(bins["base"], bench_args + side_args.get("base", []))
    new = _list_tests(bins["new"], bench_args + side_args.get("new", []))
    if not base and not new:
        raise RoundsError("the bench arguments select no benchmark")
    common = set(base) & set(new)
    if not common:
        raise NotComparable("nothing to compare: BASE selects %d benchmarks, NEW %d, none of them in both "
                            "(different registries, or arguments that select differently)" % (len(base), len(new)))
    if set(base) != set(new):
        only_b, only_n = sorted(set(base) - common), sorted(set(new) - common)
        log("compare: BASE and NEW select different benchmarks: %d only in BASE%s, %d only in NEW%s; they are "
            "MISSING or NEW, the %d in both are compared" % (
                len(only_b), " (%s ...)" % only_b[0] if only_b else "", len(only_n),
                " (%s ...)" % only_n[0] if only_n else "", len(common)))
    return sorted(set(base) | set(new)), common, {"base": set(base), "new": set(new)}


def _check_status(rc, out, binary, r):
    """RoundsError, with the last line bench wrote, when a run failed."""
    if rc not in (0, 1) or not os.path.exists(out + ".part"):
        with open(out[:-5] + ".log") as f:
            tail = f.read().strip().splitlines()[-1:] or ["(no output)"]
        what = "exited with status %d" % rc if rc not in (0, 1) else "wrote no JSON (--benchmark_out ignored?)"
        raise RoundsError("%s %s in round %d: %s" % (binary, what, r + 1, tail[0]))
    os.replace(out + ".part", out)


def check_first_round(workdir):
    """NotComparable once the first round shows the sides cannot be compared
    (nothing measured on both, a hard fingerprint key that differs): said
    after one round, not after all of them."""
    runs = [load_run(path(workdir, 0, s), "%s round 1" % s.upper()) for s in SIDES]
    a, b = (collect(run) for run in runs)
    analyse.check_in_common(a, b, runs[0], runs[1])
    check_fingerprint(runs[0], runs[1], [a[k] for k in a if k in b], lambda line: None)


class _Clock:
    """--max-seconds: whether another invocation may start."""

    def __init__(self, max_seconds, workdir, rounds, log):
        self.started, self.max_seconds = time.monotonic(), max_seconds
        self.workdir, self.rounds, self.log = workdir, rounds, log

    def out_of_time(self):
        if self.max_seconds is None or time.monotonic() - self.started <= self.max_seconds:
            return False
        self.log("compare: stopped after %.0f s (--max-seconds): %d of %d rounds done in %s; run the same command "
                 "again to go on" % (time.monotonic() - self.started, done(self.workdir, self.rounds), self.rounds,
                                     self.workdir))
        return True


def _filter(args, names):
    return launch.strip_filter(args) + ["--benchmark_filter=" + launch.exact_filter(names)]


def _run_round(ctx, r, names, clock):
    """Runs what round r lacks: its interleaved part, one side after the
    other, then its duet part, both sides at once; the parts merged. A round
    whose merged files are complete is left as it is (a later look's
    selection is a subset of it). False when --max-seconds stopped it."""
    workdir, bins, log = ctx["workdir"], ctx["bins"], ctx["log"]
    if all(complete(path(workdir, r, s)) for s in SIDES):
        return True
    duet_names, serial_names = ctx["plan"].split(names)
    whole = ctx["whole"] and not duet_names
    parts = {s: [] for s in SIDES}
    if serial_names:
        for side in round_order(r):
            # A benchmark one side lacks is MISSING or NEW: that side's
            # filter names only its own, and runs nothing when none is left.
            own = [n for n in serial_names if n in ctx["listed"][side]]
            if not own:
                continue
            out = path(workdir, r, side) if not duet_names else part_path(workdir, r, side, "interleaved")
            parts[side].append(out)
            if complete(out):
                continue
            if clock.out_of_time():
                return False
            t0 = time.monotonic()
            log("compare: round %d/%d: %s (%s, %d benchmarks) ..." % (r + 1, ctx["rounds"], side.upper(),
                                                                      bins[side], len(own)))
            args = ctx["args"] if whole else _filter(ctx["args"], own)
            rc = launch.run(bins[side], args + ctx["side_args"].get(side, []), out + ".part", out[:-5] + ".log",
                            env=ctx["env"].get(side))[0]
            _check_status(rc, out, bins[side], r)
            log("compare: round %d/%d: %s done in %.1f s"
                % (r + 1, ctx["rounds"], side.upper(), time.monotonic() - t0))
    if duet_names:
        outs = {s: part_path(workdir, r, s, "duet") for s in SIDES}
        for s in SIDES:
            parts[s].append(outs[s])
        if not all(complete(outs[s]) for s in SIDES):
            if clock.out_of_time():
                return False
            t0 = time.monotonic()
            log("compare: round %d/%d: BASE and NEW at once (duet, %d benchmarks) ..." % (
                r + 1, ctx["rounds"], len(duet_names)))
            status = duet.run_round(ctx["plan"], r, bins, _filter(ctx["args"], duet_names), ctx["side_args"],
                                    ctx["env"], {s: outs[s] + ".part" for s in SIDES},
                                    {s: outs[s][:-5] + ".log" for s in SIDES},
                                    os.path.join(workdir, "duet-%02d.sync" % (r + 1)))
            for s in SIDES:
                _check_status(status[s], outs[s], bins[s], r)
            log("compare: round %d/%d: duet done in %.1f s" % (r + 1, ctx["rounds"], time.monotonic() - t0))
        for s in SIDES:
            duet.merge(parts[s], path(workdir, r, s))
    return True


def run(base_bin, new_bin, bench_args, workdir, rounds, max_seconds, log, select=None, extra=None, env=None,
        side_args=None, duet_mode="off", on_listed=None):
    """Runs the rounds not yet complete in workdir, up to `rounds` (at least
    the manifest's, when it holds more). select: the run names these
    rounds run (a sequential comparison's undecided benchmarks; None: all
    that bench_args select). extra: keys the manifest keeps (the sequential
    plan). env: {"base" or "new": {VAR: value}} set for that side's runs;
    side_args: {"base" or "new": [arguments]} added to that side's (a flag
    whose effect on the times is measured, such as --no-energy). duet_mode:
    --duet (regress/run/duet.py); the plan goes into the manifest.
    on_listed: called with the number of benchmarks both sides list, before
    the first round runs.
    Returns True when every round is complete, False when max_seconds
    stopped it first (rerun to resume)."""
    base_bin, new_bin = _executables(base_bin, new_bin)
    for a in bench_args:
        if a.startswith("--benchmark_out") or a.startswith("--benchmark_list_tests"):
            raise RoundsError("bench argument %s: compare --run writes and reads the JSON itself" % a)
    os.makedirs(workdir, exist_ok=True)
    manifest_path = os.path.join(workdir, "manifest.json")
    side_args = side_args or {}
    bins = {"base": base_bin, "new": new_bin}
    names, common, listed = _listings(bins, bench_args, side_args, log)
    if on_listed is not None:
        on_listed(len(names))
    try:
        plan = duet.plan(duet_mode, bins, bench_args, side_args, common, log)
    except duet.DuetError as e:
        raise RoundsError(str(e))
    extra = dict(extra or {})
    extra["duet"] = plan.manifest()  # a resumed run must plan the same, duet or not
    manifest = {"base": os.path.abspath(base_bin), "new": os.path.abspath(new_bin),
                "base_sha256": sha256(base_bin), "new_sha256": sha256(new_bin),
                "args": bench_args, "rounds": rounds, "benchmarks": len(names)}
    manifest.update(extra)
    if env:
        manifest["env"] = env
    if side_args:
        manifest["side_args"] = side_args
    if os.path.exists(manifest_path):
        old = read_manifest(workdir)
        _same_comparison(workdir, old, manifest, extra)
        manifest["rounds"] = rounds = max(rounds, old.get("rounds", 0)) if rounds else old["rounds"]
    with open(manifest_path, "w") as f:
        cli.dump(manifest, f)
    clock = _Clock(max_seconds, workdir, rounds, log)
    ctx = {"plan": plan, "workdir": workdir, "bins": bins, "log": log, "rounds": rounds, "args": bench_args,
           "side_args": side_args, "env": env or {}, "whole": select is None, "listed": listed}
    checked = False
    for r in range(rounds):
        if not _run_round(ctx, r, names if select is None else sorted(select), clock):
            return False
        if not checked:
            check_first_round(workdir)
            checked = True
    return True


def rounds_file(state_dir, a_sha, b_sha):
    """Where a bisection keeps the comparator's verdicts of A against B, once their rounds are done."""
    return os.path.join(state_dir, "rounds", "%s-%s.json" % (a_sha[:12], b_sha[:12]))


# ------------------------------------------------------------ the analysis

def _load_rounds(workdir, n):
    runs = {"base": [], "new": []}
    for r in range(n):
        for side in SIDES:
            runs[side].append(load_run(path(workdir, r, side), "%s round %d" % (side.upper(), r + 1)))
    return runs


def _rounds_to_read(workdir, manifest, looks):
    """How many rounds the analysis reads: a sequential comparison those done
    from the first on, a fixed one all of them (InputError until then)."""
    if looks:
        n = leading_done(workdir)
        if n < looks[0]:
            raise InputError("%s: %d of %d rounds done (the first look); run the same compare --run again to go on"
                             % (workdir, n, looks[0]))
        return n
    n = manifest["rounds"]
    finished = done(workdir, n)
    if finished < n:
        raise InputError("%s: %d of %d rounds done; run the same compare --run again to finish them"
                         % (workdir, finished, n))
    return n


def _describe_sides(runs, manifest, n):
    """What the document says of each side: its binary, environment and own arguments."""
    desc = []
    for side in SIDES:
        d = describe_run(runs[side][0], manifest[side])
        d["label"] = os.path.basename(manifest[side])
        d["sha256"] = manifest[side + "_sha256"]
        d["rounds"] = n
        env = (manifest.get("env") or {}).get(side)
        if env:  # one binary on two GPUs, say: the environment tells the sides apart
            d["env"] = env
            d["label"] += " [%s]" % " ".join("%s=%s" % kv for kv in sorted(env.items()))
        own = (manifest.get("side_args") or {}).get(side)
        if own:  # one binary with and without a flag
            d["args"] = own
            d["label"] += " [%s]" % " ".join(own)
        desc.append(d)
    if desc[0]["label"] == desc[1]["label"]:
        desc[0]["label"], desc[1]["label"] = manifest["base"], manifest["new"]
    return desc


def analyse_paired(workdir, settings, warn, sequential=None):
    """The Comparison of the rounds stored in workdir (compare --run writes
    them). A fixed comparison (compare --run --rounds N) decides once over
    all its rounds; a sequential one (the manifest's looks, or `sequential`:
    a list of looks to replay over a fixed run's rounds) decides look by
    look, and its pending says what is left."""
    manifest = read_manifest(workdir)
    looks = sequential or manifest.get("looks")
    n = _rounds_to_read(workdir, manifest, looks)
    runs = _load_rounds(workdir, n)
    duet_names = set((manifest.get("duet") or {}).get("names") or ())
    return analyse.compare_rounds(runs, _describe_sides(runs, manifest, n), settings, warn, looks, n, duet_names)


@dataclass(frozen=True)
class Request:
    """compare --run: the two binaries, their arguments and where the rounds go."""
    base_bin: str
    new_bin: str
    bench_args: list
    workdir: str
    env: dict = field(default_factory=dict)         # {"base" or "new": {VAR: value}}
    side_args: dict = field(default_factory=dict)   # {"base" or "new": [arguments]}
    max_seconds: Optional[float] = None
    duet: str = "off"                               # --duet: auto, on or off


def run_fixed(req, rounds, settings, warn, log):
    """compare --run --rounds N: the Comparison of N rounds of everything, or
    None when --max-seconds stopped it first."""
    def too_few(m):
        # Said before the rounds run: N fixed rounds whose exact test cannot
        # reach the correction's level decide nothing, however large the change.
        need = ranks.sizes_for(settings.alpha / m, "wsr") if m else None
        if need is not None and rounds < need:
            log("compare: warning: %d rounds cannot call any of %d benchmarks SLOWER or FASTER (%s over %d needs "
                "p < %.2g, below what %d paired rounds can give): use --rounds %d or more, or leave out --rounds "
                "for sequential rounds" % (rounds, m, settings.correction_name(), m, settings.alpha / m, rounds, need))

    if not run(req.base_bin, req.new_bin, req.bench_args, req.workdir, rounds, req.max_seconds, log,
               env=req.env, side_args=req.side_args, duet_mode=req.duet, on_listed=too_few):
        return None
    return analyse_paired(req.workdir, settings, warn)


def run_sequential(req, cap, settings, warn, log, start=None):
    """compare --run without --rounds: rounds until every benchmark is
    decided or the cap; each call resumes from the rounds in the work
    folder. `start`: no look before this many rounds (compare --delta: the
    rounds the plan says the change needs), so the looks' alpha is spent
    where a decision can come. The Comparison, or None when --max-seconds
    stopped it."""
    looks = sequential_looks(cap or SEQUENTIAL_CAP)
    if start:
        looks = [n for n in looks if n >= start] or looks[-1:]
    started = time.monotonic()
    pending, res = (looks[0], None), None
    if os.path.isfile(os.path.join(req.workdir, "manifest.json")) and leading_done(req.workdir) >= looks[0]:
        # Rounds already there are read only when they are this comparison's.
        check_workdir(req.base_bin, req.new_bin, req.bench_args, req.workdir, req.env,
                      {"looks": looks, "delta": settings.delta}, req.side_args)
        if read_manifest(req.workdir).get("looks") == looks:
            res = analyse_paired(req.workdir, settings, warn)
            pending = res.pending
    while pending is not None:
        target, names = pending
        left = None
        if req.max_seconds is not None:
            left = req.max_seconds - (time.monotonic() - started)
        if names is not None:
            log("compare: sequential: %d benchmarks undecided; rounds up to %d (looks %s)"
                % (len(names), target, ", ".join(map(str, looks))))
        if not run(req.base_bin, req.new_bin, req.bench_args, req.workdir, target, left, log, select=names,
                   extra={"looks": looks, "delta": settings.delta}, env=req.env, side_args=req.side_args,
                   duet_mode=req.duet):
            return None
        res = analyse_paired(req.workdir, settings, warn)
        pending = res.pending
    return res
