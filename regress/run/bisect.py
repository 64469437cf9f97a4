"""Bisection, the search: the first commit that moved the named benchmarks
(ci/bisect, regress/bisect.py, is its command line).

1. Every revision it needs is built once into a cache keyed by commit
   (--cache; reused across steps and runs): a persistent git worktree is
   checked out at the commit and the build command (--build, parbench's own
   by default) runs there, so a step rebuilds only what the commits between
   changed; the bench binary (--bench) is copied into the cache. A commit
   that does not build is skipped, as `git bisect skip` does, and so is one
   whose bench crashes.
2. The ends are compared first (ci/compare --run, paired sequential rounds):
   the benchmarks SLOWER or FASTER between GOOD and BAD are the ones to
   bisect; none: "no culprit", exit 0.
3. Each step takes the commit in the middle of a range (the nearest that
   builds) and compares it with both ends of that range, benchmark by
   benchmark: unlike the upper end (SLOWER or FASTER) and not unlike the
   lower, the change is later; the reverse, earlier; unlike both, the range
   holds more than one change and both halves are searched (the report says
   "not monotonic" there); unlike neither, the step cannot tell (undecided:
   the comparator's rounds ran to their cap). Benchmarks that part ways are bisected apart, so several
   changes in one range are each found.
4. First-parent history by default (a merge is one step: the merge commit);
   --all-parents searches every commit in topological order.

Everything it learns is kept in --state (default bisect-state/): the range,
the builds, every comparison's verdicts (each comparison's rounds in its
own folder), so --resume and --max-seconds (exit 4) continue where it
stopped, and a rerun of a finished bisection only writes the report again.

Confidence: each step's classification of a benchmark can be wrong when
the middle's true position is past the half-way point of the range's change
(measured through the middle: its two legs); with the paired noise the
rounds measured, that chance is Phi(-distance / se), distance how far the
middle's estimate sits on its side of half-way, se the standard error of
its estimate against the end it is like (from its interval). A middle whose
estimates put it past half-way is undecided, whatever the verdicts say.
The probability that a culprit is wrong is bounded by the sum of those
chances over the steps that led to it (and is printed).
"""
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

from regress.run import launch, rounds
from regress.run.bisect_state import STATE_FORMAT, Bad, read_builds, read_json, read_names, read_rows, resumed

EXIT_OK, EXIT_INPUT, EXIT_INCOMPLETE = 0, 2, 4
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# parbench's own build: Release, compile commands for ci/ptx-diff, the GPU
# architectures of ci/gpu.sh where CUDA is there.
DEFAULT_BUILD = ("cmake -S . -B build/bisect -G Ninja -DCMAKE_BUILD_TYPE=Release "
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-90} > /dev/null "
                 "&& cmake --build build/bisect --target bench")
DEFAULT_BENCH = "build/bisect/bench"
CHANGED = ("SLOWER", "FASTER")


class Stopped(Exception):
    """--max-seconds reached: exit 4."""


# ------------------------------------------------------------------- git

def git(repo, *args, check=True):
    p = subprocess.run(["git", "-C", repo] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if check and p.returncode != 0:
        raise Bad("git %s: %s" % (" ".join(args), (p.stderr.strip().splitlines() or ["failed"])[-1]))
    return p


def resolve(repo, rev):
    p = git(repo, "rev-parse", "--verify", "--quiet", rev + "^{commit}", check=False)
    if p.returncode != 0:
        raise Bad("%s: unknown revision in %s" % (rev, repo))
    return p.stdout.strip()


def commits_between(repo, good, bad, first_parent=True):
    """[good, c1, ..., bad]: the commits after GOOD up to BAD, oldest first."""
    if git(repo, "merge-base", "--is-ancestor", good, bad, check=False).returncode != 0:
        raise Bad("GOOD %s is not an ancestor of BAD %s" % (good[:12], bad[:12]))
    args = ["rev-list", "--reverse"] + (["--first-parent"] if first_parent else ["--topo-order"])
    out = git(repo, *(args + ["%s..%s" % (good, bad)])).stdout.split()
    return [good] + out


def describe_commit(repo, sha):
    p = git(repo, "show", "-s", "--format=%H%x00%s%x00%an%x00%aI", sha)
    full, subject, author, date = p.stdout.rstrip("\n").split("\x00")
    return {"commit": full, "subject": subject, "author": author, "date": date}


# ----------------------------------------------------------------- builds

class Builder:
    """Builds commits into cache/<sha>/ with one persistent worktree."""

    def __init__(self, repo, cache, command, bench, log, timeout=3600):
        import hashlib
        self.repo, self.command, self.bench = repo, command, bench
        self.log, self.timeout = log, timeout
        self.work = os.path.join(cache, "worktree")
        # Builds are kept per build command and bench path: another command
        # is another build of the same commit.
        recipe = hashlib.sha256(("%s\0%s" % (command, bench)).encode()).hexdigest()[:12]
        self.cache = os.path.join(cache, "builds-" + recipe)

    def meta_path(self, sha):
        return os.path.join(self.cache, sha, "build.json")

    def binary(self, sha):
        return os.path.join(self.cache, sha, "bench")

    def known(self, sha):
        """The cached build record of a commit; None (build it again) for
        one that is missing or damaged."""
        try:
            with open(self.meta_path(sha)) as f:
                meta = json.load(f)
        except (OSError, ValueError, RecursionError):
            return None
        return meta if isinstance(meta, dict) and isinstance(meta.get("ok"), bool) else None

    def _worktree(self, sha):
        if not os.path.isdir(os.path.join(self.work, ".git")) and not os.path.isfile(os.path.join(self.work, ".git")):
            if os.path.exists(self.work):
                shutil.rmtree(self.work)
            git(self.repo, "worktree", "add", "--detach", "--force", self.work, sha)
        else:
            git(self.work, "checkout", "--detach", "--force", sha)
            git(self.work, "clean", "-fdq", "-e", "build*")

    def build(self, sha):
        """{"ok": bool, "seconds": s, "why": ...}; cached per commit."""
        meta = self.known(sha)
        if meta is not None and (not meta["ok"] or os.path.isfile(self.binary(sha))):
            return meta
        os.makedirs(os.path.join(self.cache, sha), exist_ok=True)
        self._worktree(sha)
        t0 = time.monotonic()
        env = dict(os.environ, PARBENCH_GIT_REVISION=sha[:12])
        log_path = os.path.join(self.cache, sha, "build.log")
        with open(log_path, "w") as f:
            try:
                rc = subprocess.run(self.command, shell=True, cwd=self.work, stdout=f, stderr=subprocess.STDOUT,
                                    env=env, timeout=self.timeout).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        built = os.path.join(self.work, self.bench)
        meta = {"ok": rc == 0 and os.path.isfile(built), "seconds": round(time.monotonic() - t0, 1)}
        if meta["ok"]:
            shutil.copy2(built, self.binary(sha))
        else:
            with open(log_path) as f:
                tail = [ln.strip() for ln in f.read().strip().splitlines()[-3:]]
            meta["why"] = ("exit %s" % rc if rc else "no %s after the build" % self.bench) + (
                ": " + " | ".join(tail) if tail else "")
        with open(self.meta_path(sha), "w") as f:
            json.dump(meta, f)
        return meta


# ------------------------------------------------------------ comparisons

def compare_pair(state_dir, a_sha, b_sha, binaries, bench_args, names, deadline, max_rounds=None):
    """Paired sequential rounds of A against B on `names`: {name: row} of
    the comparator's verdict JSON, or None when --max-seconds stopped it.
    Raises Crashed when a bench process fails."""
    out = rounds.rounds_file(state_dir, a_sha, b_sha)
    work = out[:-len(".json")]
    if os.path.isfile(out):
        return read_rows(out)
    args = launch.strip_filter(bench_args) + ["--benchmark_filter=" + launch.exact_filter(sorted(names))]
    cmd = [sys.executable, "-m", "regress.compare", "--run", binaries[a_sha], binaries[b_sha],
           "--workdir", work, "--json", out + ".part"]
    if max_rounds:
        cmd += ["--max-rounds", str(max_rounds)]
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        cmd += ["--max-seconds", "%.0f" % max(1, left)]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run(cmd + ["--"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env)
    if p.returncode == 4:
        return None
    if p.returncode not in (0, 1) or not os.path.isfile(out + ".part"):
        raise Crashed((p.stderr.strip().splitlines() or ["compare exited %d" % p.returncode])[-1])
    os.replace(out + ".part", out)
    return read_rows(out)


def _write_json(path, doc):
    with open(path + ".part", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".part", path)


class Crashed(Exception):
    """A bench of one side failed its rounds: that commit is skipped."""


def classify(lo_row, hi_row):
    """Where a benchmark's change is, from the middle commit against the
    range's lower end (lo_row) and upper end (hi_row): "later" when the
    middle differs from the upper end (SLOWER or FASTER) and not from the
    lower one (SAME, or AMBIGUOUS for a noisy benchmark), and its estimates
    put it nearer the lower end; "earlier" the reverse; "both" when it
    differs from both (more than one change); "undecided" otherwise."""
    lo_v = lo_row["verdict"] if lo_row else "MISSING"
    hi_v = hi_row["verdict"] if hi_row else "MISSING"
    if lo_v in CHANGED and hi_v in CHANGED:
        return "both"
    if hi_v in CHANGED:
        return "later" if _nearer(lo_row, hi_row) else "undecided"
    if lo_v in CHANGED:
        return "earlier" if _nearer(hi_row, lo_row) else "undecided"
    return "undecided"


def _position(same_row, diff_row):
    """(distance, total) in log time: the range's change measured through
    the middle (total = the two legs) and how far the middle sits from the
    half-way point on the side of the end it is like (> 0: on that side).
    None without both estimates."""
    if not same_row or not diff_row or same_row.get("change") is None or diff_row.get("change") is None:
        return None
    s, d = math.log1p(same_row["change"]), math.log1p(diff_row["change"])
    total = s + d
    return abs(total) / 2.0 - math.copysign(1.0, total) * s, total


def _nearer(same_row, diff_row):
    pos = _position(same_row, diff_row)
    return pos is None or pos[0] > 0


def wrong_chance(same_row, diff_row):
    """The chance, under the noise the rounds measured, that a step put the
    change on the wrong side: the middle is like one end (same_row, its
    comparison with that end) and unlike the other (diff_row). It is
    misplaced when its true position is past the half-way point of the
    range's change: Phi(-distance / se), distance from _position, se from
    same_row's interval at its level's normal quantile. None without
    intervals."""
    pos = _position(same_row, diff_row)
    ci = (same_row or {}).get("ci") or [None, None]
    if pos is None or None in ci:
        return None
    lo, hi = math.log1p(ci[0]), math.log1p(ci[1])
    z = _norm_quantile(0.5 + same_row.get("level", 0.975) / 2.0)
    se = max((hi - lo) / (2.0 * z), 1e-12)
    return statistics.NormalDist().cdf(-pos[0] / se)


def _norm_quantile(p):
    return statistics.NormalDist().inv_cdf(p)


# --------------------------------------------------------------- the search

def about_steps(n):
    """Steps a plain bisection of n commits after GOOD takes: ceil(log2 n)."""
    return max(1, int(math.ceil(math.log2(max(n, 2)))))


class Search:
    """One bisection: its parameters, builds and comparisons; run() is
    deterministic given the cached builds and verdicts, so a resumed
    bisection replays what it knows and goes on."""

    def __init__(self, params, log, deadline=None):
        self.p, self.log, self.deadline = params, log, deadline
        self.repo = params["repo"]
        self.commits = params["commits"]
        self.builder = Builder(self.repo, params["cache"], params["build"], params["bench"], log)
        self.binaries = {}
        self.skipped = {}      # sha -> why (does not build, or its bench crashed)
        self.steps = []
        self.culprits = []
        self.undecided = []
        self.not_monotonic = []
        self.started = time.monotonic()

    # -- builds and comparisons
    # A commit is built when a comparison needs its binary, not before: a
    # resumed bisection (on another machine, with an empty cache) replays the
    # comparisons its state holds and builds only what is still to measure.
    def builds(self):
        return read_builds(os.path.join(self.p["state"], "builds.json"))

    def _record(self, sha, meta):
        builds = self.builds()
        builds[sha] = meta
        _write_json(os.path.join(self.p["state"], "builds.json"), builds)

    def _compared(self, sha):
        kept = os.path.join(self.p["state"], "rounds")
        return os.path.isdir(kept) and any(f.endswith(".json") and sha[:12] in f for f in os.listdir(kept))

    def ensure(self, sha, end=False):
        """Whether the commit builds: known from this bisection's state (a
        commit it compared built), else by building it."""
        if sha in self.binaries:
            return True
        if sha in self.skipped:
            return False
        known = self.builds().get(sha)
        if (known and known["ok"]) or self._compared(sha):
            return True
        if known:
            self.skipped[sha] = "does not build (%s)" % known.get("why", "failed")
            return False
        return self._build(sha, end)

    def _build(self, sha, end=False):
        if self.builder.known(sha) is None:
            self._check_time()
            self.log("bisect: building %s %s" % (sha[:12], describe_commit(self.repo, sha)["subject"][:60]))
        meta = self.builder.build(sha)
        if sha not in self.builds():  # the first build's record stays
            self._record(sha, meta)
        if meta["ok"]:
            self.binaries[sha] = self.builder.binary(sha)
            return True
        self.skipped[sha] = "does not build (%s)" % meta.get("why", "failed")
        if not end:  # an end that does not build ends the bisection, saying so once
            self.log("bisect: %s skipped: %s" % (sha[:12], self.skipped[sha]))
        return False

    def need(self, sha):
        """The binary of a commit that builds, built where the cache lacks it."""
        if sha not in self.binaries and not self._build(sha):
            raise Crashed("%s did not build again" % sha[:12])
        return self.binaries[sha]

    def _check_time(self):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Stopped()

    def compare(self, a, b, names):
        if not os.path.isfile(rounds.rounds_file(self.p["state"], a, b)):
            self.need(a)
            self.need(b)
        rows = compare_pair(self.p["state"], a, b, self.binaries, self.p["bench_args"], names, self.deadline,
                            self.p.get("max_rounds"))
        if rows is None:
            raise Stopped()
        return rows

    def list_tests(self, bad):
        """The benchmarks the bench arguments select at BAD (kept in the state)."""
        path = os.path.join(self.p["state"], "benchmarks.json")
        names = read_names(path)
        if names is not None:
            return names
        names = launch.list_tests(self.need(bad), self.p["bench_args"])
        if names:
            _write_json(path, names)
        return names

    # -- the steps
    def pick(self, lo, hi):
        """The commit nearest the middle of (lo, hi) that builds; None when none does."""
        mid = (lo + hi) // 2
        for i in sorted(range(lo + 1, hi), key=lambda i: (abs(i - mid), i)):
            if self.ensure(self.commits[i]):
                return i
        return None

    def run(self):
        good, bad = self.commits[0], self.commits[-1]
        for end, sha in (("GOOD", good), ("BAD", bad)):
            if not self.ensure(sha, end=True):
                raise Bad("%s %s %s; fix the build command (--build) or pick another end" %
                          (end, sha[:12], self.skipped[sha]))
        names = self.list_tests(bad)
        if not names:
            raise Bad("the bench arguments select no benchmark of BAD %s" % bad[:12])
        self.log("bisect: %d commits after GOOD, about %d steps; comparing the ends on %d benchmarks"
                 % (len(self.commits) - 1, about_steps(len(self.commits) - 1), len(names)))
        try:
            ends = self.compare(good, bad, names)
        except Crashed as e:
            raise Bad("the ends' bench failed: %s" % e)
        self.ends = ends
        moved = sorted(n for n, r in ends.items() if r["verdict"] in CHANGED and not r.get("same_code"))
        queue = [(0, len(self.commits) - 1, moved, [])] if moved else []
        step = 0
        while queue:
            lo, hi, names, path = queue.pop(0)
            if hi - lo == 1:
                self._culprit(lo, hi, names, path, [self.commits[hi]])
                continue
            mid = self.pick(lo, hi)
            if mid is None:
                self._culprit(lo, hi, names, path, self.commits[lo + 1:hi + 1])
                continue
            step += 1
            self.log("bisect: step %d of about %d: %s..%s (%d commits, %d benchmarks), %s, %.0f s"
                     % (step, about_steps(len(self.commits) - 1), self.commits[lo][:8], self.commits[hi][:8],
                        hi - lo, len(names), self.commits[mid][:8], time.monotonic() - self.started))
            try:
                vs_lo = self.compare(self.commits[lo], self.commits[mid], names)
                vs_hi = self.compare(self.commits[mid], self.commits[hi], names)
            except Crashed as e:
                self.skipped[self.commits[mid]] = "its bench failed (%s)" % e
                self.binaries.pop(self.commits[mid], None)
                queue.insert(0, (lo, hi, names, path))
                step -= 1
                continue
            groups = {"earlier": [], "later": [], "both": [], "undecided": []}
            record = {"step": step, "lo": lo, "hi": hi, "mid": mid, "commit": self.commits[mid], "benchmarks": {}}
            for n in names:
                c = classify(vs_lo.get(n), vs_hi.get(n))
                groups[c].append(n)
                same, diff = (vs_lo.get(n), vs_hi.get(n)) if c == "later" else (vs_hi.get(n), vs_lo.get(n))
                chance = wrong_chance(same, diff) if c in ("earlier", "later") else None
                record["benchmarks"][n] = {"class": c, "chance_wrong": chance,
                                           "vs_lower": _brief(vs_lo.get(n)), "vs_upper": _brief(vs_hi.get(n))}
            self.steps.append(record)
            for c in ("earlier", "both"):
                if groups[c]:
                    queue.append((lo, mid, groups[c], path + [(step, c)]))
            for c in ("later", "both"):
                if groups[c]:
                    queue.append((mid, hi, groups[c], path + [(step, c)]))
            if groups["both"]:
                self.not_monotonic.append({"step": step, "commit": self.commits[mid], "benchmarks": groups["both"],
                                           "range": [self.commits[lo], self.commits[hi]]})
            if groups["undecided"]:
                self.undecided.append({"step": step, "range": [self.commits[lo], self.commits[hi]],
                                       "commit": self.commits[mid], "benchmarks": groups["undecided"]})
        return self

    def _culprit(self, lo, hi, names, path, candidates):
        """A range of one commit (or of commits that do not build): verify it
        directly, parent against culprit, and keep the chances of the steps."""
        chances = []
        for step, _ in path:
            rec = self.steps[step - 1]["benchmarks"]
            chances += [rec[n]["chance_wrong"] for n in names if rec.get(n) and rec[n]["chance_wrong"] is not None]
        parent, culprit = self.commits[lo], self.commits[hi]
        verify = {}
        if self.ensure(parent) and self.ensure(culprit):
            try:
                verify = self.compare(parent, culprit, names)
            except Crashed as e:
                verify = {"error": str(e)}
        self.culprits.append({
            "commit": culprit, "parent": parent, "candidates": candidates, "benchmarks": names,
            "steps": [s for s, _ in path],
            # A union bound over the steps that placed it: each step's chance,
            # for the worst of its benchmarks.
            "chance_wrong": min(1.0, sum(_worst_per_step(self.steps, path, names))) if path else 0.0,
            "verify": {n: _brief(r) for n, r in verify.items() if isinstance(r, dict)},
        })


def _worst_per_step(steps, path, names):
    for step, _ in path:
        vals = [steps[step - 1]["benchmarks"][n]["chance_wrong"] for n in names
                if steps[step - 1]["benchmarks"].get(n, {}).get("chance_wrong") is not None]
        if vals:
            yield max(vals)


def _brief(row):
    if not row:
        return None
    return {k: row.get(k) for k in ("verdict", "change", "ci", "p", "rounds", "n_base", "reason", "threshold")
            if row.get(k) is not None}


def add_build_arguments(p):
    """--repo, --build, --bench and --cache, as ci/bisect and ci/backfill
    take them: both build commits into this one cache."""
    p.add_argument("--repo", default=".", help="the git repository (default: the current directory)")
    p.add_argument("--build", default=DEFAULT_BUILD, help="the build command, run in a worktree at each commit "
                   "(default: parbench's Release build into build/bisect)")
    p.add_argument("--bench", default=DEFAULT_BENCH, help="the bench binary the build leaves, relative to the "
                   "worktree (default %(default)s)")
    p.add_argument("--cache", help="builds, by commit, reused across runs and by ci/bisect and ci/backfill alike "
                   "(default: a folder of the repository under $XDG_CACHE_HOME/parbench/bisect, ~/.cache when "
                   "unset: outside the repository)")


def default_cache(repo):
    """The build cache of the repository at `repo` when --cache is not given:
    outside it (a worktree inside the user's repository would show up as
    untracked files there), one folder a repository, named after its folder
    and a hash of its path."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(os.path.abspath(repo).encode()).hexdigest()[:12]
    return os.path.join(base, "parbench", "bisect", "%s-%s" % (os.path.basename(os.path.abspath(repo)), digest))


def state_params(args, bench_args):
    """The bisection's parameters from the command line (`args`: good, bad, repo,
    build, bench, cache, state, all_parents, max_rounds, resume), kept in
    STATE/state.json; with --resume, the ones kept there. Bad for a range,
    state or cache that cannot serve."""
    state_file = os.path.join(args.state, "state.json")
    if args.cache is not None and os.path.exists(args.cache) and not os.path.isdir(args.cache):
        raise Bad("--cache %s is a file, not a folder" % args.cache)
    if os.path.exists(args.state) and not os.path.isdir(args.state):
        raise Bad("--state %s is a file, not a folder" % args.state)
    if args.resume:
        return resumed(args.state, lambda repo: [resolve(repo, r) for r in (args.good, args.bad) if r])
    if not (args.good and args.bad):
        raise Bad("needs GOOD BAD (or --resume)")
    repo = os.path.abspath(args.repo)
    if git(repo, "rev-parse", "--git-dir", check=False).returncode != 0:
        raise Bad("--repo %s is not a git repository" % args.repo)
    if args.cache is None:
        args.cache = default_cache(repo)
    good, bad = resolve(repo, args.good), resolve(repo, args.bad)
    commits = commits_between(repo, good, bad, not args.all_parents)
    if len(commits) < 2:
        raise Bad("GOOD and BAD are the same commit: nothing to bisect")
    params = {"format": STATE_FORMAT, "repo": repo, "good": good, "bad": bad, "first_parent": not args.all_parents,
              "commits": commits, "bench_args": bench_args, "build": args.build, "bench": args.bench,
              "cache": os.path.abspath(args.cache), "state": os.path.abspath(args.state),
              "max_rounds": args.max_rounds}
    if os.path.isfile(state_file):
        old = read_json(state_file)  # one that cannot be read is another bisection's
        keys = ("good", "bad", "first_parent", "bench_args", "build", "bench", "max_rounds")
        differs = [k for k in keys if not isinstance(old, dict) or old.get(k) != params[k]]
        # A state that learnt nothing yet (refused before its first
        # comparison, say for a filter that matched nothing) is replaced.
        if differs and os.path.isdir(os.path.join(args.state, "rounds")):
            raise Bad("%s holds another bisection (another %s); use another --state or remove it"
                      % (args.state, ", ".join(differs)))
    else:
        differs = True
    os.makedirs(args.state, exist_ok=True)
    os.makedirs(args.cache, exist_ok=True)
    if differs:  # what a replaced state knew of builds and benchmarks goes with it
        for name in ("builds.json", "benchmarks.json"):
            if os.path.isfile(os.path.join(args.state, name)):
                os.remove(os.path.join(args.state, name))
    with open(state_file, "w") as f:
        json.dump(params, f, indent=1)
    return params
