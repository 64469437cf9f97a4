"""A history from the past (ci/backfill; regress/backfill.py is its command
line): a range of commits built and run into the history, oldest first, so
that ci/trends finds the change points of the past and ci/bisect narrows each
to its commit.

- The commits: GOOD and every first-parent commit after it up to BAD
  (--all-parents: every commit, in topological order), thinned by --every N
  (every Nth, BAD always kept) or named by --commits.
- Each is built once into ci/bisect's cache (regress/run/bisect.py Builder:
  one persistent worktree, so a step rebuilds only what changed; a commit
  that does not build is skipped, as bisect skips it), then its bench runs
  once with the bench arguments.
- The run is marked as backfilled and dated by its commit: its context's
  "date" becomes the commit's committer date, so the history orders it
  where its code belongs, and the time it was measured is kept as
  "parbench_backfilled_at", with "parbench_backfill" naming the range.
- It is ingested into the history, which must hold this machine already
  when it holds runs (a backfill into another machine's history is refused,
  with nothing ingested).

Everything it did is kept in --state: the range, and per commit whether it
built, ran and was ingested, so --resume and --max-seconds (exit 4) go on
where it stopped; a finished backfill does nothing more.
"""
import json
import os
import time

from regress.run import launch
from regress.run.bisect import Bad, Builder, commits_between, git, resolve
from regress.store import history
from regress.store.runs import machine_of

STATE_FORMAT = 1


def choose(commits, good, every=None, named=None):
    """The commits to backfill, oldest first: GOOD and the range, every Nth
    (the last always), or those named (which must lie in the range)."""
    line = [good] + list(commits)
    if named:
        missing = [n for n in named if n not in line]
        if missing:
            raise Bad("--commits: %s not in the range GOOD..BAD" % ", ".join(m[:12] for m in missing))
        keep = set(named)
        return [c for c in line if c in keep]
    if every and every > 1:
        picked = line[::every]
        if picked[-1] != line[-1]:
            picked.append(line[-1])
        return picked
    return line


def commit_date(repo, sha):
    return git(repo, "show", "-s", "--format=%cI", sha).stdout.strip()


def state_params(args, bench_args):
    """The backfill's parameters: from the command line, kept in
    STATE/state.json, or, with --resume, the ones kept there."""
    path = os.path.join(args.state, "state.json")
    if args.resume:
        try:
            with open(path) as f:
                old = json.load(f)
        except (OSError, ValueError):
            raise Bad("--resume: %s holds no backfill (no state.json)" % args.state)
        if not isinstance(old, dict) or old.get("format") != STATE_FORMAT or not isinstance(old.get("commits"), list):
            raise Bad("--resume: %s is not a backfill's state" % path)
        if args.history and args.history != old.get("history"):
            raise Bad("--resume: %s fills %s, not %s; resume without --history or use another --state"
                      % (args.state, old.get("history"), args.history))
        return old
    if not args.range or ".." not in args.range:
        raise Bad("needs GOOD..BAD (or --resume)")
    repo = os.path.abspath(args.repo)
    if git(repo, "rev-parse", "--git-dir", check=False).returncode != 0:
        raise Bad("--repo %s is not a git repository" % args.repo)
    good_rev, bad_rev = args.range.split("..", 1)
    good, bad = resolve(repo, good_rev), resolve(repo, bad_rev)
    commits = commits_between(repo, good, bad, not args.all_parents)
    named = [resolve(repo, c) for c in args.commits.split(",")] if args.commits else None
    picked = choose(commits[1:], good, args.every, named)
    params = {"format": STATE_FORMAT, "repo": repo, "good": good, "bad": bad, "range": args.range,
              "commits": picked, "bench_args": bench_args, "build": args.build, "bench": args.bench,
              "cache": os.path.abspath(args.cache), "history": args.history, "done": {}}
    if os.path.isfile(path):
        with open(path) as f:
            old = json.load(f)
        if old.get("done") and any(old.get(k) != params[k] for k in ("good", "bad", "commits", "bench_args")):
            raise Bad("%s holds another backfill (%s); use another --state or --resume" % (args.state, old["range"]))
        params["done"] = old.get("done", {})
    os.makedirs(args.state, exist_ok=True)
    save(args.state, params)
    return params


def save(state_dir, params):
    tmp = os.path.join(state_dir, "state.json.tmp")
    with open(tmp, "w") as f:
        json.dump(params, f, indent=1)
    os.replace(tmp, os.path.join(state_dir, "state.json"))


def mark(path, repo, sha, backfill):
    """The run at path, dated by its commit and marked as backfilled."""
    with open(path) as f:
        doc = json.load(f)
    ctx = doc.setdefault("context", {})
    ctx["parbench_backfilled_at"] = ctx.get("date")
    ctx["date"] = commit_date(repo, sha)
    ctx["parbench_backfill"] = backfill
    ctx.setdefault("parbench_git_revision", sha[:12])
    with open(path, "w") as f:
        json.dump(doc, f)
    return doc


# bench's usage errors (exit 2) at this many commits in a row, nothing
# ingested between: the arguments do not suit the range (a flag spelled for
# a later Google Benchmark or bench), and building the rest would spend the
# machine's time on runs that cannot start.
REFUSED_IN_A_ROW = 3


class Backfill:
    def __init__(self, params, state_dir, log, deadline=None):
        self.p, self.state, self.log, self.deadline = params, state_dir, log, deadline
        self.refused = 0
        self.builder = Builder(params["repo"], params["cache"], params["build"], params["bench"], log)
        os.makedirs(os.path.join(state_dir, "runs"), exist_ok=True)

    def out_of_time(self):
        return self.deadline is not None and time.monotonic() >= self.deadline

    def run(self):
        """Every commit not done yet; False when --max-seconds stopped it."""
        commits, done = self.p["commits"], self.p["done"]
        for i, sha in enumerate(commits, 1):
            if done.get(sha, {}).get("status") in ("ingested", "skipped"):
                continue
            if self.out_of_time():
                return False
            done[sha] = self.one(i, len(commits), sha)
            save(self.state, self.p)
            if done[sha].get("why") == "bench exit 2":
                self.refused += 1
            elif done[sha]["status"] == "ingested":
                self.refused = 0
            if self.refused >= REFUSED_IN_A_ROW:
                raise Bad("bench refused its arguments (exit 2) at %d commits in a row, the last saying: %s; they "
                          "must suit the range's oldest commits too (start again with another --state)"
                          % (self.refused, done[sha].get("said") or "nothing"))
        return True

    def one(self, i, n, sha):
        where = "backfill: %d/%d %s" % (i, n, sha[:12])
        t0 = time.monotonic()
        meta = self.builder.build(sha)
        if not meta["ok"]:
            self.log("%s does not build, skipped: %s" % (where, meta.get("why", "")))
            return {"status": "skipped", "why": "does not build: %s" % meta.get("why", "")}
        out = os.path.join(self.state, "runs", "%03d-%s.json" % (i, sha[:12]))
        rc, timed_out, _, seconds = launch.run(self.builder.binary(sha), self.p["bench_args"], out, out + ".log",
                                               timeout=3600)
        if not os.path.isfile(out) or timed_out or rc not in (0, 1):
            self.log("%s: bench failed (exit %s%s), skipped: see %s.log"
                     % (where, rc, ", timed out" if timed_out else "", out))
            return {"status": "skipped", "why": "bench exit %s" % rc, "said": last_line(out + ".log")}
        doc = mark(out, self.p["repo"], sha, self.p["range"])
        self.check_machine(doc, out)
        with history.open_history(self.p["history"], create=True, log=lambda line: None) as h:
            h.ingest(out)
        self.log("%s built and ran in %.0f s, ingested (dated %s)"
                 % (where, time.monotonic() - t0, doc["context"]["date"]))
        return {"status": "ingested", "file": out, "seconds": round(seconds, 1)}

    def check_machine(self, doc, out):
        """Bad when the history holds runs of other machines only."""
        with history.open_history(self.p["history"], create=True, log=lambda line: None) as h:
            machines = h.machines()
        mine = machine_of(doc["context"])
        if machines and not any(m["machine"] == mine for m in machines):
            raise Bad("%s holds runs of other machines only (%s), not of this one (%s): a backfill belongs in "
                      "this machine's history" % (self.p["history"], ", ".join(m["machine"] for m in machines), mine))


def last_line(path):
    """The last non-empty line of a run's log, or None."""
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return None
    return lines[-1][:300] if lines else None


def summary(params):
    counts = {}
    for v in params["done"].values():
        counts[v["status"]] = counts.get(v["status"], 0) + 1
    left = len(params["commits"]) - sum(counts.values())
    return "%d commits: %d ingested, %d skipped%s" % (len(params["commits"]), counts.get("ingested", 0),
                                                      counts.get("skipped", 0), ", %d left" % left if left else "")
