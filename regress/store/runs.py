"""What a run becomes in a history: the machine and segment it is filed
under (identities of context keys), its entry rows (one per benchmark, over
its repetitions), the file read and checked for ingest; and the store's
errors.

A history is read per machine: `machine` identifies the hardware (CPU model
and count, GPU and SM count); `segment` the software the times depend on
(driver, CUDA toolkit, compilers, the linear-algebra library, build type,
...). A driver or toolkit change starts a new segment of the same machine's
series. Two runs of one machine and segment differ in no key that makes
compare refuse them (compare.HARD)."""
import datetime
import hashlib
import json
import math
import statistics
import zlib

from regress.load import results
from regress.store.archive import read_bytes

# The context keys that identify a machine and a segment, from the
# comparator's fingerprint (results.FINGERPRINT_HARD / _SOFT): together they
# hold every hard key, so two runs of one machine and segment are always
# comparable by ci/compare.
#
# Machine: the hardware. A different CPU or GPU is a different series, never a
# step in one.
MACHINE_KEYS = ("cpu_model", "num_cpus", "gpu", "gpu_sm_count")
# Segment: the software and settings the times depend on, which change on the
# same hardware: every other hard key (compilers, build type, the linear-algebra library build,
# how the GPU is started, fixtures, seed, ...) and the soft keys that move
# times although the comparator only warns about them: the driver and CUDA
# versions (a driver update moves launch-bound kernels) and Google Benchmark's.
_SEGMENT_SOFT = ("gpu_driver", "cuda_runtime", "cuda_driver_api", "library_version")
SEGMENT_KEYS = _SEGMENT_SOFT + tuple(k for keys in results.FINGERPRINT_HARD.values() for k in keys
                                     if k not in MACHINE_KEYS)


class HistoryError(Exception):
    """Bad input or usage: one line, exit 2."""


class Refused(HistoryError):
    """A file ingest will not store (nothing changed)."""


# ------------------------------------------------------------- identities

def context_text(v):
    """A context value as text: "" for none, a string as it is, anything else as sorted JSON."""
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True)


def gpu_name(value):
    """The GPU a context names, or None: bench writes "none (why)" on a
    machine without a usable GPU, which is no name for the machine (its CPU
    names it then)."""
    return None if not value or str(value).startswith("none") else value


def identity(context, keys):
    """First 12 hex digits of the sha256 of `keys`' values in `context` (a missing key is "")."""
    text = "\n".join("%s=%s" % (k, context_text(context.get(k))) for k in keys)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def machine_of(context):
    return identity(context, MACHINE_KEYS)


def segment_of(context):
    return identity(context, SEGMENT_KEYS)


def segment_changes(old_ctx, new_ctx):
    """[(key, old, new)] of the segment keys that differ between two contexts."""
    return [(k, old_ctx.get(k), new_ctx.get(k)) for k in SEGMENT_KEYS
            if context_text(old_ctx.get(k)) != context_text(new_ctx.get(k))]


def utc_date(s):
    """The context date as text whose order is time order: converted to UTC
    when it carries an offset; other text as it is; None when absent."""
    if not isinstance(s, str) or not s.strip():
        return None
    try:
        d = datetime.datetime.fromisoformat(s.strip())
    except ValueError:
        return s
    if d.tzinfo is None:
        return s
    return d.astimezone(datetime.timezone.utc).isoformat()


def _text(v):
    if v is None or v == "":
        return None
    return v if isinstance(v, str) else json.dumps(v)


# ----------------------------------------------------------------- entries

def _median_counters(entries):
    vals = {}
    for e in entries:
        for k, v in e.counters().items():
            vals.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in sorted(vals.items())}


def robust_spread(times):
    """1.4826 x the median absolute deviation of the log times (stats.robust_sd); None below 3 times."""
    if len(times) < 3 or not all(t > 0 for t in times):
        return None
    logs = [math.log(t) for t in times]
    m = statistics.median(logs)
    return 1.4826 * statistics.median(abs(x - m) for x in logs)


def entry_rows(run):
    """One row (dict of ENTRY_COLUMNS but run_id) per run name, from its
    repetitions (aggregates ignored). An error in any repetition makes the
    row that error, with no times; a repetition timed at 0 is one (the loader
    reads it as failed: no measurement)."""
    groups = {}
    for e in run.entries:
        if not e.aggregate:
            groups.setdefault(e.run_name, []).append(e)
    rows = []
    for name, es in groups.items():
        errors = [e for e in es if e.is_error]
        passed = [e for e in es if e.disposition == "passed"]
        row = {"name": name, "family": es[0].run.family, "repetitions": len(es),
               "device": next((e.device for e in es if e.device), None),
               "median": None, "low": None, "high": None, "mad": None, "times": None, "reason": None}
        if errors:
            row.update(disposition=errors[0].disposition, reason=errors[0].reason or errors[0].message,
                       counters=_median_counters(errors))
        elif passed:
            times = [e.seconds() for e in passed]
            row.update(disposition="passed", median=statistics.median(times), low=min(times), high=max(times),
                       mad=robust_spread(times), times=times, counters=_median_counters(passed))
        else:
            u = es[0]
            row.update(disposition=u.disposition, reason=u.reason or u.message, counters=_median_counters(es))
        rows.append(row)
    return rows


def read_run(path):
    """(run, its file's uncompressed bytes, their sha256, the run's content
    sha256) of a file to ingest; Refused when the contract refuses it."""
    run = load_run(path)
    # A run's series are filed under the machine its context names: entries
    # that ran on another GPU model (ci/run-suite records each entry's) would
    # join that machine's series under another model's times.
    models = {e.gpu for e in run.entries if e.gpu is not None}
    other = sorted(m for m in models if m != run.context.get("gpu"))
    if other:
        raise Refused("%s: entries ran on %s, not the context's GPU (%s): a history files a run under one machine"
                      % (path, ", ".join(other), run.context.get("gpu")))
    try:
        data = read_bytes(path)
    except (OSError, EOFError, zlib.error) as e:
        raise Refused("%s: cannot read: %s" % (path, getattr(e, "strerror", None) or e))
    return run, data, hashlib.sha256(data).hexdigest(), run.content_sha256()


def load_run(path):
    """The Run of `path` for ingest: Refused, with the loader's one line (the
    words every tool uses), for what the contract refuses."""
    try:
        return results.load_strict(path)
    except results.LoadError as e:
        raise Refused(str(e))
