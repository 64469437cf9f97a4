"""A bisection's state folder read back (regress/run/bisect.py writes it):
STATE/state.json, the bisection's parameters; builds.json, which commits
built; benchmarks.json, what the bench arguments select at BAD;
rounds/A-B.json, the comparator's verdicts of each comparison.

A file damaged since it was written (cut off, edited, another tool's JSON
in its place) never stops a resumed bisection with a traceback: the
parameters and the verdicts, which it cannot make again without being told
what to bisect and without measuring, are one line (Bad, exit 2) naming the
file; the builds and the benchmark list, which it makes again, are no record."""
import json
import os
import re

from regress.load.document import lone_surrogate

STATE_FORMAT = 1
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")   # a commit id, SHA-1 or SHA-256


class Bad(Exception):
    """Bad input: one line, exit 2."""


def _read(path):
    """The JSON document at path; OSError, or ValueError (not UTF-8 or not JSON, nested too deeply, a
    string that is not Unicode: what the report and the logs would fail to write)."""
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except RecursionError:
            raise ValueError("nested too deeply")
    bad = lone_surrogate(doc)
    if bad is not None:
        raise ValueError("the string %s holds a lone surrogate" % ascii(bad[:40]))
    return doc


def read_json(path):
    """The JSON document at path, or None when it cannot be read."""
    try:
        return _read(path)
    except (OSError, ValueError):
        return None


def _text(v):
    return isinstance(v, str) and "\x00" not in v


def state_problem(p):
    """What makes parameters kept in a state.json unusable (one line), or None."""
    if not isinstance(p, dict):
        return "not a JSON object"
    if p.get("format") != STATE_FORMAT:
        return "format %.20r, not %d" % (p.get("format"), STATE_FORMAT)
    commits = p.get("commits")
    checks = (
        (all(_text(p.get(k)) and p[k] for k in ("repo", "build", "bench", "cache")),
         "'repo', 'build', 'bench' and 'cache' are not all strings"),
        (isinstance(commits, list) and len(commits) >= 2 and all(_text(c) and _SHA.match(c) for c in commits),
         "'commits' is not a list of two or more commit ids"),
        (isinstance(commits, list) and commits and (p.get("good"), p.get("bad")) == (commits[0], commits[-1]),
         "'good' and 'bad' are not the ends of 'commits'"),
        (isinstance(p.get("bench_args"), list) and all(_text(a) for a in p["bench_args"]),
         "'bench_args' is not a list of strings"),
        (isinstance(p.get("first_parent"), bool), "'first_parent' is not true or false"),
        (p.get("max_rounds") is None or (type(p["max_rounds"]) is int and p["max_rounds"] > 0),
         "'max_rounds' is not a number of rounds"))
    return next((why for ok, why in checks if not ok), None)


def resumed(state, given):
    """The parameters kept in STATE/state.json, for --resume; Bad when there
    are none this version can go on with, or when they are another range's
    than the commits given(repo) names (GOOD and BAD on the command line). The
    state is the folder --state names, wherever it was first written (a state
    carried to another machine)."""
    path = os.path.join(state, "state.json")
    try:
        old = _read(path)
    except OSError:
        raise Bad("--resume: %s holds no bisection (no state.json)" % state)
    except ValueError as e:
        raise Bad("--resume: %s cannot be read (%s)" % (path, str(e).splitlines()[0][:80]))
    if isinstance(old, dict) and all(_text(old.get(k)) for k in ("repo", "good", "bad")):
        shas = given(old["repo"])
        if shas != [old["good"], old["bad"]][:len(shas)]:
            raise Bad("--resume: %s holds the bisection of %s..%s, not of this range; use another --state"
                      % (state, old["good"][:12], old["bad"][:12]))
    why = state_problem(old)
    if why:
        raise Bad("--resume: %s holds no bisection this version can go on with: %s" % (path, why))
    old["state"] = os.path.abspath(state)
    return old


def _number(v, low, high):
    """Whether v is a JSON number (not a boolean) with low < v < high (NaN never is; an integer of any size may be)."""
    return type(v) in (int, float) and low < v < high


def _build_ok(meta):
    return isinstance(meta, dict) and isinstance(meta.get("ok"), bool) and \
        (meta.get("seconds") is None or _number(meta["seconds"], -1, 1e9))


def read_builds(path):
    """{commit: {"ok": bool, "seconds": s, ...}} of builds.json; a record it
    cannot read is no record (the commit is built again)."""
    kept = read_json(path)
    return {sha: meta for sha, meta in kept.items() if _build_ok(meta)} if isinstance(kept, dict) else {}


def read_names(path):
    """The benchmark names of benchmarks.json, or None (listed again)."""
    names = read_json(path)
    return names if isinstance(names, list) and all(_text(n) for n in names) else None


def _change(v):
    """Whether v is a relative change the search can take the logarithm of (or None: not estimated)."""
    return v is None or _number(v, -1, 1e300)


def _row_problem(r):
    if not isinstance(r, dict) or not _text(r.get("name")) or not _text(r.get("verdict")):
        return "a row without a name and a verdict"
    ci = r.get("ci")
    ci_ok = ci is None or (isinstance(ci, list) and len(ci) == 2 and all(_change(x) for x in ci))
    if not _change(r.get("change")) or not ci_ok:
        return "%s: its change or interval is not a number above -100%%" % r["name"]
    if "p" in r and not _number(r["p"], -1e300, 1e300):
        return "%s: its p is not a number" % r["name"]
    return None


def read_rows(path):
    """{name: row} of a comparison's verdicts (compare --json), each row with
    the interval level it was decided at; Bad when the file is not that."""
    try:
        doc = _read(path)
        level = (doc.get("sequential") or {}).get("level_per_look") or doc["settings"]["level"]
        rows = doc["benchmarks"]
        why = next(filter(None, map(_row_problem, rows)), None) if isinstance(rows, list) else "no list of rows"
        if not why and not _number(level, 0, 1):
            why = "its interval level is not a probability"
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        why = str(e).splitlines()[0][:80] if isinstance(e, (OSError, ValueError)) else "not compare --json's verdicts"
    if why:
        raise Bad("%s: not the comparator's verdicts (%s); remove it to compare again" % (path, why))
    for r in rows:
        r["level"] = level
    return {r["name"]: r for r in rows}
