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

Commands (ci/history --help): ingest FILE..., list, machines, series NAME,
rebuild, export bmf|github-action-benchmark (one run, for Bencher or
github-action-benchmark). Exit status: 0 done; 2 bad input or usage, one line "history: ...".

Python use (the change-point detector, the report, the nightly job):

    h = History("history")
    run_id, added = h.ingest("run.json")
    h.machines(); h.runs(machine); h.names(machine); h.series(name, machine)

Standard library only (sqlite3, gzip, json)."""
import argparse
import datetime
import difflib
import gzip
import hashlib
import json
import math
import os
import sqlite3
import statistics
import struct
import sys
import zlib

from regress import cli
from regress.load import results
from regress.load import fmt

TOOL = "history"
EXIT_OK, EXIT_INPUT = 0, 2
INDEX_VERSION = 2          # PRAGMA user_version of index.sqlite (2: runs.content)
ARCHIVE_FORMAT = 1         # "parbench_history" in an archive member's gzip comment
ARCHIVE, INDEX = "archive", "index.sqlite"
DEFAULT_DIR = "history"

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

SCHEMA = """
PRAGMA user_version = %d;
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  sha256 TEXT UNIQUE NOT NULL,   -- of the file's uncompressed bytes
  content TEXT UNIQUE NOT NULL,  -- results.content_sha256: the run's identity
  archived TEXT NOT NULL,        -- archive member, relative to the history directory
  source TEXT,                   -- the path given at ingest
  date TEXT,                     -- context date, in UTC when it has an offset (text order = time order)
  revision TEXT,                 -- parbench_git_revision
  profile TEXT,                  -- parbench_profile
  machine TEXT,                  -- sha256 of MACHINE_KEYS' values, 12 hex digits
  segment TEXT,                  -- sha256 of SEGMENT_KEYS' values, 12 hex digits
  host TEXT,
  gpu TEXT,
  cpu TEXT,
  context TEXT,                  -- the context, JSON
  ingested INTEGER               -- order of ingest
);
CREATE TABLE entries(
  run_id INTEGER REFERENCES runs(id),
  name TEXT,                     -- run name (repetitions grouped; aggregates not stored)
  family TEXT,
  device TEXT,
  disposition TEXT,
  reason TEXT,
  repetitions INTEGER,
  median REAL,                   -- seconds per iteration, over repetitions
  low REAL,                      -- min
  high REAL,                     -- max
  mad REAL,                      -- 1.4826 x MAD of log times; NULL below 3 repetitions
  times TEXT,                    -- JSON list of every repetition's seconds
  counters TEXT,                 -- JSON object: median of each counter over repetitions
  PRIMARY KEY(run_id, name)
);
CREATE INDEX entries_name ON entries(name);
CREATE INDEX runs_machine ON runs(machine, date, ingested);
""" % INDEX_VERSION
RUN_COLUMNS = ("id", "sha256", "content", "archived", "source", "date", "revision", "profile", "machine",
               "segment", "host", "gpu", "cpu", "context", "ingested")
ENTRY_COLUMNS = ("run_id", "name", "family", "device", "disposition", "reason", "repetitions", "median",
                 "low", "high", "mad", "times", "counters")
ORDER = "r.date IS NULL, r.date, r.ingested"   # the order of a series: context date, then ingest


class HistoryError(Exception):
    """Bad input or usage: one line, exit 2."""


class Refused(HistoryError):
    """A file ingest will not store (nothing changed)."""


class MemberError(Exception):
    """An archive member that cannot be indexed."""


def _stderr(line):
    print("%s: %s" % (TOOL, line), file=sys.stderr, flush=True)


# ------------------------------------------------------------- identities

def _value(v):
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
    text = "\n".join("%s=%s" % (k, _value(context.get(k))) for k in keys)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def machine_of(context):
    return identity(context, MACHINE_KEYS)


def segment_of(context):
    return identity(context, SEGMENT_KEYS)


def segment_changes(old_ctx, new_ctx):
    """[(key, old, new)] of the segment keys that differ between two contexts."""
    return [(k, old_ctx.get(k), new_ctx.get(k)) for k in SEGMENT_KEYS
            if _value(old_ctx.get(k)) != _value(new_ctx.get(k))]


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


# ------------------------------------------------------------- the archive

def gzip_with_comment(data, comment):
    """gzip bytes of `data` (deflate level 9, mtime 0) with an ASCII comment in its header (RFC 1952 FCOMMENT)."""
    c = comment.encode("ascii")
    if b"\0" in c:
        raise ValueError("a gzip comment cannot hold NUL")
    header = b"\x1f\x8b\x08\x10" + struct.pack("<I", 0) + b"\x02\xff" + c + b"\0"
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return header + z.compress(data) + z.flush() + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF,
                                                               len(data) & 0xFFFFFFFF)


def gzip_comment(raw):
    """The comment of a gzip header, or None (no comment, or not gzip)."""
    try:
        if raw[:3] != b"\x1f\x8b\x08" or len(raw) < 10:
            return None
        flags, i = raw[3], 10
        if flags & 4:  # FEXTRA
            i += 2 + struct.unpack("<H", raw[i:i + 2])[0]
        if flags & 8:  # FNAME
            i = raw.index(b"\0", i) + 1
        if flags & 16:  # FCOMMENT
            return raw[i:raw.index(b"\0", i)].decode("latin-1")
    except (ValueError, struct.error, IndexError):
        return None
    return None


def read_bytes(path):
    """The bytes of a file, decompressed when it is gzip (what the loader reads)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def write_atomic(path, data):
    """Write `data` to a temporary name beside `path`, then rename it over `path`: never half a file."""
    tmp = os.path.join(os.path.dirname(path), ".tmp-%d-%s" % (os.getpid(), os.path.basename(path)))
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


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


# ------------------------------------------------------------------ history

def _is_corruption(e):
    if isinstance(e, sqlite3.OperationalError):
        msg = str(e).lower()
        return "no such table" in msg or "no such column" in msg or "malformed" in msg
    return isinstance(e, sqlite3.DatabaseError)


def _is_busy(e):
    return isinstance(e, sqlite3.OperationalError) and ("locked" in str(e).lower() or "busy" in str(e).lower())


class History:
    """A history directory (see the module's description).

    History(dir)            opens it (the index rebuilt when missing or corrupt);
                            create=True makes the directory when it is not there;
                            check=False opens nothing (call rebuild() first)
    ingest(path)            (run_id, added); raises Refused / HistoryError
    runs(machine=None)      [dict], in series order
    machines()              [dict]: machine, segments, runs, first, last, gpu, cpu, hosts
    names(machine)          [run name]
    series(name, machine)   [point dict], in series order
    rebuild()               recreate the index from the archive: (runs indexed, members skipped)
    resolve_machine(text)   the machine id that `text` is or begins

    log: a function taking one line (default: stderr, "history: " before it)."""

    def __init__(self, directory, create=False, log=None, check=True):
        self.dir = directory
        self.log = log or _stderr
        self.archive_dir = os.path.join(directory, ARCHIVE)
        self.index_path = os.path.join(directory, INDEX)
        self._con = None
        self._healed = False
        if not os.path.isdir(self.archive_dir):
            if not create:
                if os.path.isdir(directory) and not os.listdir(directory):
                    pass  # an empty directory: an empty history
                elif os.path.exists(directory):
                    raise HistoryError("%s is a file, not a history directory" % directory)
                elif not os.path.isdir(directory):
                    raise HistoryError("%s: no history there (ci/history --history %s ingest FILE starts one)"
                                       % (directory, directory))
                else:
                    raise HistoryError("%s is not a history (no %s/ in it)" % (directory, ARCHIVE))
            try:
                os.makedirs(self.archive_dir, exist_ok=True)
            except OSError as e:
                raise HistoryError("cannot create %s: %s" % (self.archive_dir, e.strerror or e))
        if check:
            self._open()

    # ---- the index: open, check, rebuild

    def close(self):
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def members(self):
        """File names of the archive members, sorted (temporary files left by a crash are not members)."""
        try:
            names = os.listdir(self.archive_dir)
        except OSError as e:
            raise HistoryError("cannot read %s: %s" % (self.archive_dir, e.strerror or e))
        return sorted(n for n in names if n.endswith(".json.gz") and not n.startswith("."))

    def _connect(self, path):
        con = sqlite3.connect(path, timeout=60, isolation_level=None)
        con.row_factory = sqlite3.Row
        return con

    def _problem(self):
        """Why the index cannot be used (None when it can); opens it when it can."""
        if not os.path.exists(self.index_path):
            return "is missing" if self.members() else "new"
        try:
            con = self._connect(self.index_path)
        except sqlite3.Error as e:
            return "cannot be opened (%s)" % e
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version != INDEX_VERSION:
                con.close()
                return "has version %d, not %d" % (version, INDEX_VERSION)
            for table, cols in (("runs", RUN_COLUMNS), ("entries", ENTRY_COLUMNS)):
                have = tuple(r[1] for r in con.execute("PRAGMA table_info(%s)" % table))
                if have != cols:
                    con.close()
                    return "lacks the table %s as this tool writes it" % table
            con.execute("SELECT count(*) FROM runs").fetchone()
        except sqlite3.Error as e:
            if _is_busy(e):
                con.close()
                raise HistoryError("%s is locked by another process; try again" % self.index_path)
            con.close()
            return "is corrupt (%s)" % e
        self._con = con
        return None

    def _open(self):
        problem = self._problem()
        if problem == "new":
            self.rebuild()
        elif problem:
            self._rebuild_because(problem)

    def _rebuild_because(self, problem):
        """Rebuild the index that `problem` makes unusable, saying so in one line (after any skipped member's)."""
        aside = os.path.exists(self.index_path)
        n, skipped = self.rebuild(set_aside=aside)
        self.log("index %s %s: rebuilt from the archive (%d runs%s%s)" % (
            self.index_path, problem, n, ", %d archive members skipped" % skipped if skipped else "",
            "; the old file kept as %s.bad" % INDEX if aside else ""))

    def _heal(self, e):
        if self._healed or not _is_corruption(e):
            if _is_busy(e):
                raise HistoryError("%s is locked by another process; try again" % self.index_path)
            raise e
        self._healed = True
        self.close()
        self._rebuild_because("is corrupt (%s)" % e)

    def _query(self, sql, args=()):
        try:
            return self._con.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            self._heal(e)
            return self._con.execute(sql, args).fetchall()

    def read_member(self, name):
        """(meta, run, sha) of the archive member `name`; MemberError with a one-line reason.
        A member ingested before the contract may hold malformed entries (load()
        dropped them then): it is indexed as it was, without them."""
        path = os.path.join(self.archive_dir, name)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise MemberError("cannot read: %s" % (e.strerror or e))
        if raw[:2] != b"\x1f\x8b":
            raise MemberError("not gzip")
        try:
            data = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise MemberError("not a whole gzip file: %s" % e)
        sha = hashlib.sha256(data).hexdigest()
        if name != sha + ".json.gz":
            raise MemberError("its content's sha256 is %s..., not its name" % sha[:12])
        try:
            run = results.load(path)
        except results.BadInput as e:
            raise MemberError(e.defect)
        refused = results.refusal(run, path, malformed=False)
        if refused:
            raise MemberError(refused[1].split(";")[0])
        meta = {}
        comment = gzip_comment(raw)
        if comment:
            try:
                meta = json.loads(comment)
            except ValueError:
                meta = {}
            if not isinstance(meta, dict) or meta.get("parbench_history") != ARCHIVE_FORMAT:
                meta = {}
        return meta, run, sha

    def rebuild(self, set_aside=False):
        """Recreate index.sqlite from the archive alone (in a temporary file,
        then renamed over it). Members that cannot be indexed are skipped with
        one line each, and left in place. Runs keep the ids (ingest numbers)
        their members record; members without one, or whose number another
        member has, come after, in name order. Returns (runs, skipped)."""
        self.close()
        tmp = self.index_path + ".rebuild-%d" % os.getpid()
        if os.path.exists(tmp):
            os.remove(tmp)
        loaded, skipped = [], 0
        for name in self.members():
            try:
                meta, run, sha = self.read_member(name)
            except MemberError as e:
                skipped += 1
                self.log("%s/%s: skipped (%s); left in place" % (self.archive_dir, name, e))
                continue
            n = meta.get("ingest")
            n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None
            loaded.append((n, name, meta, run, sha))
        loaded.sort(key=lambda t: (t[0] is None, t[0] or 0, t[1]))
        ids, taken, later = {}, set(), []
        for n, name, _, _, _ in loaded:
            if n is None or n in taken:
                later.append(name)
            else:
                ids[name] = n
                taken.add(n)
        top = max(ids.values(), default=0)
        for name in later:  # no number, or one another member has: after the others, in name order
            top += 1
            ids[name] = top
        loaded.sort(key=lambda t: ids[t[1]])
        # One run per content: a later member with the content of an earlier
        # one (a re-serialised copy ingested before the index knew contents)
        # is not indexed again, and is left in place.
        unique, first = [], {}
        for item in loaded:
            content = item[3].content_sha256()
            if content in first:
                skipped += 1
                self.log("%s/%s: skipped (the same content as run %d, %s); left in place"
                         % (self.archive_dir, item[1], ids[first[content]], first[content]))
                continue
            first[content] = item[1]
            unique.append(item + (content,))
        loaded = unique
        try:
            con = self._connect(tmp)
            con.executescript(SCHEMA)
            con.execute("BEGIN")
            for n, name, meta, run, sha, content in loaded:
                source = meta.get("source") if isinstance(meta.get("source"), str) else None
                self._index(con, ids[name], run, sha, content, "%s/%s" % (ARCHIVE, name), source)
            con.execute("COMMIT")
            con.close()
            if set_aside and os.path.exists(self.index_path):
                os.replace(self.index_path, self.index_path + ".bad")
            # A journal left beside the old index must not be applied to the new one.
            for suffix in ("-journal", "-wal", "-shm"):
                if os.path.exists(self.index_path + suffix):
                    os.replace(self.index_path + suffix, self.index_path + ".bad" + suffix)
            os.replace(tmp, self.index_path)
        except (OSError, sqlite3.Error) as e:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise HistoryError("cannot write the index %s: %s" % (self.index_path, getattr(e, "strerror", None) or e))
        self._con = self._connect(self.index_path)
        return len(loaded), skipped

    # ---- writing

    def _index(self, con, run_id, run, sha, content, archived, source):
        ctx = run.context
        con.execute("INSERT INTO runs(%s) VALUES (%s)" % (", ".join(RUN_COLUMNS), ", ".join("?" * len(RUN_COLUMNS))),
                    (run_id, sha, content, archived, source, utc_date(ctx.get("date")),
                     _text(ctx.get("parbench_git_revision")), _text(ctx.get("parbench_profile")), machine_of(ctx),
                     segment_of(ctx), _text(ctx.get("host_name")),
                     _text(ctx.get("gpu")), _text(ctx.get("cpu_model")),
                     json.dumps(cli.finite(ctx), sort_keys=True), run_id))
        rows = entry_rows(run)
        con.executemany("INSERT INTO entries(%s) VALUES (%s)" % (", ".join(ENTRY_COLUMNS),
                                                                 ", ".join("?" * len(ENTRY_COLUMNS))),
                        [(run_id, r["name"], r["family"], r["device"], r["disposition"], r["reason"],
                          r["repetitions"], r["median"], r["low"], r["high"], r["mad"],
                          None if r["times"] is None else json.dumps(r["times"]),
                          json.dumps(r["counters"], sort_keys=True)) for r in rows])
        return len(rows)

    def ingest(self, path):
        """Store the run at `path`: (run_id, added). added is False when a run
        of the same content is already in the history, whatever its bytes.
        Raises Refused (nothing stored) for what the contract refuses
        (results.load_strict); HistoryError when the history cannot be written."""
        run, data, sha, content = read_run(path)
        try:
            return self._ingest(run, path, data, sha, content)
        except sqlite3.DatabaseError as e:
            self._heal(e)
            return self._ingest(run, path, data, sha, content)

    def _known(self, con, content):
        """(id, sha256, archived, source) of the run with this content, or None."""
        return con.execute("SELECT id, sha256, archived, source FROM runs WHERE content = ?", (content,)).fetchone()

    def _ingest(self, run, path, data, sha, content):
        con = self._con
        row = self._known(con, content)
        if row is not None:
            self._restore_member(row, path, data, sha)
            return row[0], False
        rel = "%s/%s.json.gz" % (ARCHIVE, sha)
        member = os.path.join(self.dir, rel)
        for w in run.warnings:
            self.log("%s: warning: %s" % (path, w))
        if not any(k in run.context for k in MACHINE_KEYS):
            self.log("%s: warning: the context names no CPU or GPU (%s): filed under machine %s with other such runs"
                     % (path, ", ".join(MACHINE_KEYS), machine_of(run.context)))
        if utc_date(run.context.get("date")) is None:
            self.log("%s: warning: the context has no date; ordered after dated runs, by ingest" % path)
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            if _is_busy(e):
                raise HistoryError("%s is locked by another process; try again" % self.index_path)
            raise
        try:
            row = self._known(con, content)
            if row is not None:  # another process ingested it meanwhile
                con.execute("ROLLBACK")
                return row[0], False
            run_id = con.execute("SELECT coalesce(max(max(id), max(ingested)), 0) + 1 FROM runs").fetchone()[0]
            self._index(con, run_id, run, sha, content, rel, path)
            self._write_member(member, data, run_id, path)
            con.execute("COMMIT")
        except BaseException as e:
            try:
                con.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(e, OSError):
                raise HistoryError("cannot write %s: %s" % (member, e.strerror or e))
            raise
        return run_id, True

    def _restore_member(self, row, path, data, sha):
        """A run already indexed whose archive member is gone: write this copy
        (the same content) back. Its bytes may differ from the lost member's:
        then it is archived under its own name and the run's row points to it."""
        run_id, old_sha, archived, source = row
        if os.path.exists(os.path.join(self.dir, archived)):
            return
        rel = "%s/%s.json.gz" % (ARCHIVE, sha)
        try:  # the member records the run's first source, as the index does
            self._write_member(os.path.join(self.dir, rel), data, run_id, source)
        except OSError as e:
            raise HistoryError("cannot write %s: %s" % (os.path.join(self.dir, rel), e.strerror or e))
        if sha != old_sha:
            self._con.execute("UPDATE runs SET sha256 = ?, archived = ? WHERE id = ?", (sha, rel, run_id))
        self.log("%s: its archive copy %s was missing; written again%s"
                 % (path, archived, "" if sha == old_sha else " from this copy (the same content), as " + rel))

    def _write_member(self, member, data, run_id, source):
        comment = json.dumps({"parbench_history": ARCHIVE_FORMAT, "ingest": run_id, "source": source},
                             sort_keys=True, ensure_ascii=True)
        write_atomic(member, gzip_with_comment(data, comment))

    # ---- reading

    def runs(self, machine=None):
        """Every run (of one machine), in series order: dicts of the runs
        columns (context parsed) and passed / errors / unsupported counts."""
        where, args = ("WHERE r.machine = ?", (machine,)) if machine else ("", ())
        rows = self._query(
            "SELECT r.*, "
            "(SELECT count(*) FROM entries e WHERE e.run_id = r.id AND e.disposition = 'passed') AS passed, "
            "(SELECT count(*) FROM entries e WHERE e.run_id = r.id AND e.disposition NOT IN ('passed', 'unsupported')) "
            "AS errors, "
            "(SELECT count(*) FROM entries e WHERE e.run_id = r.id AND e.disposition = 'unsupported') AS unsupported "
            "FROM runs r %s ORDER BY %s" % (where, ORDER), args)
        out = []
        for r in rows:
            d = dict(r)
            d["context"] = json.loads(d["context"]) if d["context"] else {}
            d["gpu"] = gpu_name(d["gpu"])
            out.append(d)
        return out

    def machines(self):
        """One dict per machine: machine, segments, runs, first, last (dates), gpu, cpu, hosts."""
        rows = self._query(
            "SELECT machine, count(DISTINCT segment) AS segments, count(*) AS runs, min(date) AS first, "
            "max(date) AS last, max(gpu) AS gpu, max(cpu) AS cpu, group_concat(DISTINCT host) AS hosts "
            "FROM runs GROUP BY machine ORDER BY min(ingested)")
        return [dict(dict(r), gpu=gpu_name(r["gpu"])) for r in rows]

    def names(self, machine=None):
        """The run names of one machine's (or every) run, sorted."""
        if machine:
            rows = self._query("SELECT DISTINCT e.name FROM entries e JOIN runs r ON r.id = e.run_id "
                               "WHERE r.machine = ? ORDER BY e.name", (machine,))
        else:
            rows = self._query("SELECT DISTINCT name FROM entries ORDER BY name")
        return [r[0] for r in rows]

    def machines_of(self, name):
        """The machines that have an entry named `name`."""
        return [r[0] for r in self._query("SELECT DISTINCT r.machine FROM entries e JOIN runs r ON r.id = e.run_id "
                                          "WHERE e.name = ? ORDER BY r.machine", (name,))]

    def resolve_machine(self, text):
        """The machine id that is, or begins with, `text`; HistoryError when none or several."""
        ids = [m["machine"] for m in self.machines()]
        if text in ids:
            return text
        hits = [m for m in ids if m.startswith(text)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise HistoryError("--machine %s is the start of %d machines (%s); give more of it"
                               % (text, len(hits), ", ".join(hits)))
        raise HistoryError("no machine %s in the history (%s)" % (
            text, "it has: " + ", ".join(ids) if ids else "it holds no runs"))

    def series(self, name, machine):
        """The points of one benchmark on one machine, in series order (date,
        then ingest). Each a dict: run_id, date, revision, segment,
        new_segment (the segment differs from the previous point's),
        segment_change ([key, old, new] of the keys that changed there),
        disposition, reason, repetitions, median, low, high, mad (seconds;
        None when not passed / below 3 repetitions), times (list, [] when not
        passed), counters (dict)."""
        rows = self._query(
            "SELECT r.id AS run_id, r.date, r.revision, r.segment, r.context, e.disposition, e.reason, "
            "e.repetitions, e.median, e.low, e.high, e.mad, e.times, e.counters "
            "FROM entries e JOIN runs r ON r.id = e.run_id WHERE e.name = ? AND r.machine = ? ORDER BY %s" % ORDER,
            (name, machine))
        out, prev = [], None
        for r in rows:
            p = dict(r)
            ctx = p.pop("context")
            p["times"] = json.loads(p["times"]) if p["times"] else []
            p["counters"] = json.loads(p["counters"]) if p["counters"] else {}
            p["new_segment"] = prev is not None and prev[0] != p["segment"]
            p["segment_change"] = []
            if p["new_segment"]:
                p["segment_change"] = [list(c) for c in segment_changes(json.loads(prev[1] or "{}"),
                                                                        json.loads(ctx or "{}"))]
            prev = (p["segment"], ctx)
            out.append(p)
        return out


# ------------------------------------------------------------------ PostgreSQL

# The same tables in PostgreSQL, where several machines write one history: a
# run's file is kept in the database (runs.data, the gzip member the archive
# would hold), which is the source of truth there, so nothing is rebuilt.
PG_MIGRATIONS = [
    """
    CREATE TABLE runs(
      id INTEGER PRIMARY KEY, sha256 TEXT UNIQUE NOT NULL, content TEXT UNIQUE NOT NULL,
      archived TEXT NOT NULL, source TEXT, date TEXT, revision TEXT, profile TEXT, machine TEXT,
      segment TEXT, host TEXT, gpu TEXT, cpu TEXT, context TEXT, ingested INTEGER, data BYTEA);
    CREATE TABLE entries(
      run_id INTEGER REFERENCES runs(id), name TEXT, family TEXT, device TEXT, disposition TEXT, reason TEXT,
      repetitions INTEGER, median DOUBLE PRECISION, low DOUBLE PRECISION, high DOUBLE PRECISION,
      mad DOUBLE PRECISION, times TEXT, counters TEXT, PRIMARY KEY(run_id, name));
    CREATE INDEX entries_name ON entries(name);
    CREATE INDEX runs_machine ON runs(machine, date, ingested);
    """,
]


class PgHistory(History):
    """A history in a PostgreSQL database (--history postgresql://...): the
    same commands, tables and reading as a directory's; ingests from several
    machines at once are applied one after the other (regress/store/db.py), each
    in one transaction, so a run is stored whole or not at all."""

    def __init__(self, url, create=False, log=None, check=True, retries=1):
        from regress.store import db as dbm
        self._dbm, self.url, self.retries = dbm, url, retries
        self.dir = dbm.redact(url)
        self.log = log or _stderr
        self._db = None
        self._connect_db(create)

    def _connect_db(self, create=False):
        dbm = self._dbm
        try:
            self._db = dbm.Db(self.url)
            with self._db.write():
                version = self._db.version("history")
                if version > len(PG_MIGRATIONS):
                    raise HistoryError("%s has history schema version %d; this parbench knows up to %d"
                                       % (self.dir, version, len(PG_MIGRATIONS)))
                if version == 0 and not create:
                    raise HistoryError("%s: no history there (ci/history --history URL ingest FILE starts one)"
                                       % self.dir)
                for i in range(version, len(PG_MIGRATIONS)):
                    for stmt in PG_MIGRATIONS[i].split(";"):
                        if stmt.strip():
                            self._db.execute(stmt)
                    self._db.set_version("history", i + 1)
        except dbm.Unavailable as e:
            raise HistoryError(str(e))

    def close(self):
        if self._db is not None:
            self._db.close()
            self._db = None

    def _query(self, sql, args=()):
        try:
            return self._db.execute(sql.replace("group_concat(DISTINCT host)", "string_agg(DISTINCT host, ',')"),
                                    args)
        except self._dbm.Unavailable as e:
            raise HistoryError(str(e))

    def rebuild(self, set_aside=False):
        raise HistoryError("%s: a PostgreSQL history is its own source of truth; there is no index to rebuild"
                           % self.dir)

    def ingest(self, path):
        run, data, sha, content = read_run(path)
        for attempt in range(self.retries + 1):
            try:
                return self._pg_ingest(run, path, data, sha, content)
            except (self._dbm.Unavailable,) + self._db.errors as e:
                # The transaction was not committed: nothing of this run is
                # stored. Ingest is idempotent by content, so it is retried.
                if attempt == self.retries:
                    raise HistoryError("%s: not stored (%s); nothing of it was written, ingest it again"
                                       % (path, str(e).strip().splitlines()[0] if str(e).strip() else e))
                self.log("%s: the database went away mid-ingest (%s); retrying" % (path, str(e).strip()[:200]))
                self.close()
                try:
                    self._connect_db()
                except HistoryError:
                    pass

    def _pg_ingest(self, run, path, data, sha, content):
        if self._db is None:
            self._connect_db()
        db = self._db
        with db.write():
            row = db.execute("SELECT id FROM runs WHERE content = ?", (content,))
            if row:
                return row[0][0], False
            run_id = db.execute("SELECT coalesce(max(id), 0) + 1 FROM runs")[0][0]
            comment = json.dumps({"parbench_history": ARCHIVE_FORMAT, "ingest": run_id, "source": path},
                                 sort_keys=True, ensure_ascii=True)
            self._index(db, run_id, run, sha, content, "db:runs.data", path)
            db.execute("UPDATE runs SET data = ? WHERE id = ?",
                       (db._pg.Binary(gzip_with_comment(data, comment)), run_id))
        return run_id, True


def open_history(spec, create=False, log=None, check=True):
    """The history `spec` names: a PostgreSQL URL or a directory."""
    from regress.store import db as dbm
    if dbm.is_url(spec):
        return PgHistory(spec, create=create, log=log, check=check)
    return History(spec, create=create, log=log, check=check)


# ------------------------------------------------------------------ output

def fmt_time(v):
    return fmt.fmt_time(v, "-", "us")


def table(head, rows, left=()):
    rows = [tuple("-" if c is None else str(c) for c in r) for r in rows]
    widths = [max([len(head[i])] + [len(r[i]) for r in rows]) for i in range(len(head))]
    fmt = "  ".join(("%%-%ds" if i in left else "%%%ds") % w for i, w in enumerate(widths))
    return "\n".join((fmt % r).rstrip() for r in [tuple(head)] + rows)


def _hardware(gpu, cpu):
    return gpu or cpu or "unknown hardware"


def _describe_machine(m):
    return "%s (%s%s)" % (m["machine"], m["gpu"] + "; " if m["gpu"] else "", m["cpu"] or "no CPU named")


def cmd_ingest(h, args, out):
    refused = False
    for path in args.files:
        try:
            run_id, added = h.ingest(path)
        except Refused as e:
            refused = True
            _stderr(str(e))
            continue
        if added:
            r = h._query("SELECT machine, segment, (SELECT count(*) FROM entries WHERE run_id = ?) FROM runs "
                         "WHERE id = ?", (run_id, run_id))[0]
            out("%s: added as run %d (machine %s, segment %s, %d benchmarks)" % (path, run_id, r[0], r[1], r[2]))
        else:
            out("%s: already in the history (run %d)" % (path, run_id))
    return EXIT_INPUT if refused else EXIT_OK


def cmd_list(h, args, out):
    machine = h.resolve_machine(args.machine) if args.machine else None
    runs = h.runs(machine)
    if not runs:
        out("no runs in %s" % h.dir)
        return EXIT_OK
    out(table(("run", "date", "revision", "profile", "machine", "segment", "hardware", "passed/errors"),
              [(r["id"], r["date"], r["revision"], r["profile"], r["machine"], r["segment"],
                _hardware(r["gpu"], r["cpu"]), "%d/%d" % (r["passed"], r["errors"])) for r in runs],
              left=(1, 2, 3, 4, 5, 6)))
    return EXIT_OK


def run_entries(h, run_id):
    """The passed entries of one run: dicts of name, repetitions, median,
    low, high, times (seconds)."""
    rows = h._query("SELECT name, repetitions, median, low, high, times FROM entries WHERE run_id = ? AND "
                    "disposition = 'passed' AND median IS NOT NULL ORDER BY name", (run_id,))
    return [dict(r, times=json.loads(r["times"]) if r["times"] else []) for r in rows]


def export_bmf(run, entries):
    """Bencher Metric Format: {benchmark: {"latency": {value, lower_value,
    upper_value}}}, nanoseconds (Bencher's latency measure): the median of the
    repetitions and their range."""
    return {e["name"]: {"latency": {"value": e["median"] * 1e9, "lower_value": e["low"] * 1e9,
                                    "upper_value": e["high"] * 1e9}} for e in entries}


def export_gab(run, entries):
    """github-action-benchmark's customSmallerIsBetter input: a list of
    {name, unit, value, range, extra}, nanoseconds; range is half the
    repetitions' span."""
    where = "; ".join(x for x in (run.get("revision") and "revision %s" % run["revision"],
                                  run.get("gpu") or run.get("cpu"), run.get("date")) if x)
    return [{"name": e["name"], "unit": "ns", "value": e["median"] * 1e9,
             "range": "\u00b1 %.6g" % ((e["high"] - e["low"]) * 1e9 / 2.0),
             "extra": "median of %d repetitions; %s" % (e["repetitions"], where)} for e in entries]


EXPORTS = {"bmf": export_bmf, "github-action-benchmark": export_gab}


def cmd_export(h, args, out):
    machine = h.resolve_machine(args.machine) if args.machine else None
    runs = h.runs(machine)
    if not runs:
        raise HistoryError("no runs in %s%s" % (h.dir, " for machine %s" % machine if machine else ""))
    if args.run is None:
        machines = {r["machine"] for r in runs}
        if len(machines) > 1:
            raise HistoryError("%d machines in %s: name one with --machine (ci/history machines lists them)"
                               % (len(machines), h.dir))
        run = runs[-1]
    else:
        run = next((r for r in runs if r["id"] == args.run), None)
        if run is None:
            raise HistoryError("no run %d in %s%s" % (args.run, h.dir, " of machine %s" % machine if machine else ""))
    entries = run_entries(h, run["id"])
    doc = EXPORTS[args.format](run, entries)
    text = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"
    if args.out in (None, "-"):
        out(text.rstrip("\n"))
    else:
        try:
            write_atomic(args.out, text.encode("utf-8"))
        except OSError as e:
            raise HistoryError("cannot write %s: %s" % (args.out, e.strerror or e))
        _stderr("run %d (%s), %d benchmarks, as %s in %s"
                % (run["id"], run["date"] or "no date", len(entries), args.format, args.out))
    return EXIT_OK


def cmd_machines(h, args, out):
    ms = h.machines()
    if not ms:
        out("no runs in %s" % h.dir)
        return EXIT_OK
    out(table(("machine", "segments", "runs", "first", "last", "gpu", "cpu", "hosts"),
              [(m["machine"], m["segments"], m["runs"], m["first"], m["last"], m["gpu"], m["cpu"], m["hosts"])
               for m in ms], left=(0, 3, 4, 5, 6, 7)))
    return EXIT_OK


def cmd_series(h, args, out):
    name = args.name
    if not h.machines():
        raise HistoryError("%s holds no runs (ci/history ingest FILE adds one)" % h.dir)
    if args.machine:
        machine = h.resolve_machine(args.machine)
        if name not in h.names(machine):
            others = h.machines_of(name)
            if others:
                raise HistoryError("no benchmark %s on machine %s; it is on %s" % (name, machine, ", ".join(others)))
            raise HistoryError(_unknown_name(h, name, machine))
    else:
        ms = h.machines_of(name)
        if not ms:
            raise HistoryError(_unknown_name(h, name, None))
        if len(ms) > 1:
            info = {m["machine"]: m for m in h.machines()}
            raise HistoryError("%s has runs on %d machines: choose one with --machine (%s)"
                               % (name, len(ms), "; ".join(_describe_machine(info[m]) for m in ms)))
        machine = ms[0]
    points = h.series(name, machine)
    m = next(x for x in h.machines() if x["machine"] == machine)
    out("%s on machine %s" % (name, _describe_machine(m)))
    rows = []
    for p in points:
        change = ", ".join("%s %s -> %s" % (k, _value(a) or "(none)", _value(b) or "(none)")
                           for k, a, b in p["segment_change"])
        disp = p["disposition"] if p["disposition"] == "passed" else "%s: %s" % (p["disposition"], p["reason"] or "")
        rows.append((p["date"], p["revision"], ("* " if p["new_segment"] else "") + p["segment"],
                     fmt_time(p["median"]),
                     "%s - %s" % (fmt_time(p["low"]), fmt_time(p["high"])) if p["low"] is not None else "-",
                     p["repetitions"], disp, ("new segment: " + change) if p["new_segment"] else ""))
    out(table(("date", "revision", "segment", "median", "low - high", "reps", "disposition", ""), rows,
              left=(0, 1, 2, 6, 7)))
    if len(points) == 1:
        out("one point: no trend yet")
    elif any(p["new_segment"] for p in points):
        out("* a new segment starts (driver, toolkit, compiler or build change): times across it are not comparable")
    return EXIT_OK


def _unknown_name(h, name, machine):
    names = h.names(machine)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    where = " on machine %s" % machine if machine else ""
    return "no benchmark %s in the history%s%s" % (name, where, "; did you mean %s?" % close[0] if close else "")


def cmd_rebuild(h, args, out):
    n, skipped = h.rebuild()
    out("index %s rebuilt from the archive: %d runs%s" % (
        h.index_path, n, ", %d archive members skipped (named above, left in place)" % skipped if skipped else ""))
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise HistoryError("%s (see ci/history --help)" % message)


def make_parser():
    p = _Parser(prog="history", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="parbench's history store: every run ingested is kept (archive/, gzip JSON) and "
                            "indexed (index.sqlite), per machine.",
                epilog="exit status: 0 done; 2 bad input or usage (one line \"history: ...\")")
    p.add_argument("--history", default=DEFAULT_DIR, metavar="DIR",
                   help="the history directory (default: %(default)s/ in the current directory)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    s = sub.add_parser("ingest", help="store runs (re-ingesting one is a no-op)")
    s.add_argument("files", nargs="+", metavar="FILE", help="Google Benchmark JSON (.json or .json.gz)")
    s = sub.add_parser("list", help="the runs, in date order")
    s.add_argument("--machine", metavar="ID", help="only this machine's runs (an id or its start)")
    sub.add_parser("machines", help="the machines and their segments")
    s = sub.add_parser("series", help="one benchmark's times over the runs of one machine")
    s.add_argument("name", metavar="NAME", help="the run name as bench writes it, "
                   "Family/Variant/key:value/.../manual_time")
    s.add_argument("--machine", metavar="ID", help="the machine (an id or its start); needed when several ran NAME")
    sub.add_parser("rebuild", help="recreate index.sqlite from the archive")
    s = sub.add_parser("export", help="one run as Bencher's BMF JSON or github-action-benchmark's input")
    s.add_argument("format", choices=sorted(EXPORTS), help="bmf (Bencher Metric Format) or "
                   "github-action-benchmark (its customSmallerIsBetter tool)")
    s.add_argument("--machine", metavar="ID", help="the machine (an id or its start); needed when several ran")
    s.add_argument("--run", type=int, metavar="N", help="the run (ci/history list); default the machine's latest")
    s.add_argument("--out", metavar="FILE", help="write there (default: standard output)")
    return p


COMMANDS = {"ingest": cmd_ingest, "list": cmd_list, "machines": cmd_machines, "series": cmd_series,
            "rebuild": cmd_rebuild, "export": cmd_export}


def main(argv=None, out=print):
    try:
        args = make_parser().parse_args(argv)
        if not args.command:
            raise HistoryError("give a command: %s (see ci/history --help)" % ", ".join(COMMANDS))
        with open_history(args.history, create=args.command == "ingest", check=args.command != "rebuild") as h:
            return COMMANDS[args.command](h, args, out)
    except HistoryError as e:
        _stderr(str(e))
        return EXIT_INPUT


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
