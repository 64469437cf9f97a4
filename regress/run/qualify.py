"""The gate's qualification, run by the comparator (regress/store/qualification.py
says what it is and keeps it):

- compare --qualify BENCH -- ARGS: BENCH against a copy of itself in paired
  rounds on the gate's own selection; exit 1 when anything moved;
- compare --run BASE NEW --qualify-state FILE: after the comparison, a
  machine whose fingerprint FILE has not seen is qualified first (BASE
  against its copy, the same arguments); when the machine is unqualified,
  the verdicts stand but a SLOWER fails nothing (an ERROR still does), and
  the document says why."""
import filecmp
import glob
import os
import shutil

from regress.load import results
from regress.run import launch, rounds
from regress.store import qualification as q

SOURCE_QUALIFY = "compare --qualify"
SOURCE_GATE = "compare --run --qualify-state: BASE against itself"


class QualifyError(Exception):
    """Bad input: one line, exit 2."""


def twin(bench, workdir):
    """A copy of bench in workdir: the other side of an A/A, one binary under
    two names (rounds tell the sides by their paths)."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "bench-twin")
    try:
        if not os.path.exists(path) or not filecmp.cmp(path, bench, shallow=False):
            shutil.copy2(bench, path)
    except OSError as e:
        raise QualifyError("--qualify: cannot copy %s: %s" % (bench, e))
    return path


def a_a_request(bench, bench_args, workdir, env=None, side_args=None, max_seconds=None, duet="auto"):
    """The rounds of bench against its copy, in workdir; both sides get
    BASE's environment and arguments (--base-env, --base-arg)."""
    e, a = (env or {}).get("base"), (side_args or {}).get("base")
    return rounds.Request(bench, twin(bench, workdir), bench_args, workdir, {"base": e, "new": e} if e else {},
                          {"base": a, "new": a} if a else {}, max_seconds, duet)


def has_rounds(workdir):
    return bool(glob.glob(os.path.join(workdir, "round-*-base.json")))


def context_of(workdir):
    """The context of the first round's BASE run kept in workdir: the
    machine as the trusted side saw it (NEW is the pull request's bench,
    which must not choose the fingerprint it is judged under)."""
    paths = sorted(glob.glob(os.path.join(workdir, "round-*-base.json")))
    if not paths:
        raise QualifyError("%s holds no round to read the machine from" % workdir)
    try:
        return results.load(paths[0]).context
    except results.LoadError as e:
        raise QualifyError("%s: %s" % (paths[0], e))


def probe_context(bench, bench_args, workdir, env=None):
    """The context bench writes on this machine: the selection's first
    instance run once, briefly (a qualification that may not be needed
    reads the machine's fingerprint so)."""
    try:
        names = launch.list_tests(bench, bench_args)
    except launch.Refused as e:
        raise QualifyError(str(e))
    if not names:
        raise QualifyError("the bench arguments select no benchmark")
    os.makedirs(workdir, exist_ok=True)
    out = os.path.join(workdir, "probe.json")
    args = launch.strip_filter(bench_args) + [
        "--benchmark_filter=" + launch.exact_filter(names[:1]), "--benchmark_repetitions=1",
        "--benchmark_min_time=0.001s"]
    rc = launch.run(bench, args, out, out + ".log", timeout=600, env=env)[0]
    try:
        return results.load(out).context
    except (results.LoadError, OSError) as e:
        raise QualifyError("the probe run of %s (exit %d) left no run to read the machine from: %s (see %s.log)"
                           % (bench, rc, e, out))


def state(path):
    try:
        return q.State(path)
    except q.QualificationError as e:
        raise QualifyError(str(e))


def fingerprint_of(workdir):
    """(the context of workdir's rounds, the machine's fingerprint)."""
    ctx = context_of(workdir)
    return ctx, q.fingerprint(ctx)


def add(st, workdir, doc, source):
    """Adds the qualification that doc (an A/A verdict document of the rounds
    in workdir) shows to the state; the record."""
    try:
        return st.add(q.make_record(context_of(workdir), doc, source))
    except q.QualificationError as e:
        raise QualifyError(str(e))


def qualified_doc(doc, rec):
    """compare --qualify's document: the qualification's state in it, exit 1 when it failed."""
    failed = rec["state"] == q.UNQUALIFIED
    doc["qualification"] = {"state": rec["state"], "fingerprint": rec["fingerprint"], "line": q.describe(rec)}
    doc["exit"] = 1 if failed or doc["exit"] == 1 else doc["exit"]
    doc["summary_line"] = "%s; qualification %s: %d of %d benchmarks moved on identical code" % (
        doc["summary_line"].split("; exit")[0], "failed" if failed else "passed", len(rec["alarms"]),
        rec["compared"]) + "; exit %d" % doc["exit"]
    return doc


def gate_doc(doc, rec):
    """A gated comparison's document under the machine's qualification: an
    unqualified gate reports, and fails only on ERROR."""
    doc["gate"] = {"state": rec["state"], "fingerprint": rec["fingerprint"], "line": q.describe(rec)}
    if rec["state"] == q.UNQUALIFIED and doc["exit"] == 1 and not doc["summary"].get("ERROR"):
        doc["exit"] = 0
        doc["summary_line"] = doc["summary_line"].split("; exit")[0] + \
            "; exit 0 (the gate is unqualified on this machine: nothing fails on a time)"
    return doc
