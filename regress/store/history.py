"""parbench's history store: every run ingested is kept, per machine.

A history is a directory:

  DIR/archive/<sha256>.json.gz   each run's Google Benchmark JSON exactly as
                                 written (the sha256 is of those uncompressed
                                 bytes), gzip-compressed: the source of truth.
                                 The gzip header's comment field records the
                                 ingest number and the path given at ingest,
                                 so the index can be rebuilt from the archive
                                 alone with the same run ids.
  DIR/index.sqlite               an SQLite index (Python's sqlite3): runs
                                 (context: git revision, date, GPU/CPU,
                                 machine and segment) and their entries (one
                                 row per benchmark: repetitions, median,
                                 min, max, spread, every repetition's time,
                                 the median of each counter). A run's
                                 identity is its content
                                 (results.content_sha256: context and
                                 entries as canonical JSON), a UNIQUE column.

or a PostgreSQL database (a URL postgresql://...), with the same tables and
each run's archive member in them.

A history is read per machine: `machine` identifies the hardware (CPU model
and count, GPU and SM count); `segment` the software the times depend on
(driver, CUDA toolkit, compilers, the linear-algebra library, build type, ...). A driver or
toolkit change starts a new segment of the same machine's series, marked in
`series`. Two runs of one machine and segment differ in no key that makes
compare refuse them (compare.HARD).

The index is derived: when it is missing, corrupt or of another version,
every command says so in one line and rebuilds it from the archive. A corrupt
archive member is skipped (one line) and never deleted; so is a member whose
content another member already holds (a copy ingested before the index knew
contents). Ingesting refuses what every tool refuses (results.load_strict:
unreadable, cut off mid-run, a malformed entry, e.g. a NaN time, or no
repetitions: one line, the loader's words), and then changes nothing.
Re-ingesting a run is a no-op: the same content, whatever its bytes (another
indent, key order, number spelling, compression), is "already in the history
(run N)". A repetition timed at 0 is no measurement: the loader reads it as
failed, and its point is stored as such, with the reason.

The modules: regress/store/archive.py (the archive's members, file helpers),
runs.py (a run's machine, segment and entry rows; the errors), sqlite.py
(History: a directory), postgres.py (PgHistory), export.py (one run for
Bencher or github-action-benchmark). This one opens a history and names
what its users read, so that they import one module:

    h = history.open_history("history")       # or a postgresql:// URL
    run_id, added = h.ingest("run.json")
    h.machines(); h.runs(machine); h.names(machine); h.series(name, machine)

ci/history (regress/history.py) is its command line."""
import difflib

from regress.store import db as dbm
from regress.store.archive import ARCHIVE, ARCHIVE_FORMAT, gzip_comment, gzip_with_comment, read_bytes, \
    write_atomic
from regress.store.postgres import PG_MIGRATIONS, PgHistory
from regress.store.runs import MACHINE_KEYS, SEGMENT_KEYS, HistoryError, Refused, context_text, entry_rows, gpu_name, \
    identity, load_run, machine_of, read_run, robust_spread, segment_changes, segment_of, utc_date
from regress.store.sqlite import INDEX, INDEX_VERSION, SCHEMA, History, MemberError

__all__ = ["ARCHIVE", "ARCHIVE_FORMAT", "DEFAULT_DIR", "INDEX", "INDEX_VERSION", "MACHINE_KEYS", "PG_MIGRATIONS",
           "SCHEMA", "SEGMENT_KEYS", "History", "HistoryError", "MemberError", "PgHistory", "Refused", "context_text",
           "describe_machine", "entry_rows", "gpu_name", "gzip_comment", "gzip_with_comment", "identity",
           "load_run", "machine_of", "open_history", "read_bytes", "read_run", "robust_spread", "segment_changes",
           "segment_of", "series_machine", "utc_date", "write_atomic"]

DEFAULT_DIR = "history"


def open_history(spec, create=False, log=None, check=True):
    """The history `spec` names: a PostgreSQL URL or a directory."""
    if dbm.is_url(spec):
        return PgHistory(spec, create=create, log=log, check=check)
    return History(spec, create=create, log=log, check=check)


def describe_machine(m):
    """A machine of History.machines() in words: its id, GPU and CPU."""
    return "%s (%s%s)" % (m["machine"], m["gpu"] + "; " if m["gpu"] else "", m["cpu"] or "no CPU named")


def series_machine(h, name, wanted=None):
    """The machine whose series of benchmark `name` is meant: `wanted` (an id
    or its start) when given, else the only machine that ran it;
    HistoryError, in one line, when there is none or a choice to make."""
    if not h.machines():
        raise HistoryError("%s holds no runs (ci/history ingest FILE adds one)" % h.dir)
    if wanted:
        machine = h.resolve_machine(wanted)
        if name not in h.names(machine):
            others = h.machines_of(name)
            if others:
                raise HistoryError("no benchmark %s on machine %s; it is on %s" % (name, machine, ", ".join(others)))
            raise HistoryError(_unknown_name(h, name, machine))
        return machine
    ms = h.machines_of(name)
    if not ms:
        raise HistoryError(_unknown_name(h, name, None))
    if len(ms) > 1:
        info = {m["machine"]: m for m in h.machines()}
        raise HistoryError("%s has runs on %d machines: choose one with --machine (%s)"
                           % (name, len(ms), "; ".join(describe_machine(info[m]) for m in ms)))
    return ms[0]


def _unknown_name(h, name, machine):
    names = h.names(machine)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    where = " on machine %s" % machine if machine else ""
    return "no benchmark %s in the history%s%s" % (name, where, "; did you mean %s?" % close[0] if close else "")
