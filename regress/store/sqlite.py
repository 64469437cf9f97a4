"""A history in a directory: the archive (regress/store/archive.py), the
source of truth, and index.sqlite, an SQLite index of its runs and their
entries derived from it (rebuilt when missing, corrupt or of another
version). regress/store/history.py describes the layout and the rules;
open_history there opens a directory or a PostgreSQL URL."""
import gzip
import hashlib
import json
import os
import sqlite3
import sys
import zlib

from regress import cli
from regress.load import results
from regress.store.archive import ARCHIVE, ARCHIVE_FORMAT, gzip_comment, gzip_with_comment, member_comment, \
    write_atomic
from regress.store.runs import MACHINE_KEYS, HistoryError, _text, entry_rows, gpu_name, machine_of, read_run, \
    segment_changes, segment_of, utc_date

TOOL = "history"
INDEX_VERSION = 2          # PRAGMA user_version of index.sqlite (2: runs.content)
INDEX = "index.sqlite"

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


class MemberError(Exception):
    """An archive member that cannot be indexed."""


def _stderr(line):
    print("%s: %s" % (TOOL, line), file=sys.stderr, flush=True)


# ------------------------------------------------------------------ history

def _is_corruption(e):
    if isinstance(e, ValueError):  # a stored JSON column that does not parse
        return True
    if isinstance(e, sqlite3.OperationalError):
        msg = str(e).lower()
        # A text column whose bytes are not UTF-8 is a damaged page as much as a malformed one.
        return "no such table" in msg or "no such column" in msg or "malformed" in msg or "could not decode" in msg
    return isinstance(e, sqlite3.DatabaseError)


def _is_busy(e):
    return isinstance(e, sqlite3.OperationalError) and ("locked" in str(e).lower() or "busy" in str(e).lower())


class History:
    """A history directory (regress/store/history.py describes it).

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
    ingested(run_id)        (machine, segment, benchmarks) of one run
    passed_entries(run_id)  [dict] of its passed entries
    benchmark_info(machine) {name: (family, device)}

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
            return "cannot be opened (%s)" % results.printable(str(e))
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
        except (sqlite3.Error, UnicodeDecodeError) as e:  # a schema whose text is not UTF-8 is damaged too
            if _is_busy(e):
                con.close()
                raise HistoryError("%s is locked by another process; try again" % self.index_path)
            con.close()
            return "is corrupt (%s)" % results.printable(str(e))
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
        self._rebuild_because("is corrupt (%s)" % results.printable(str(e)))

    def _query(self, sql, args=(), decode=None):
        """The rows of a query, each through decode (which parses its JSON
        columns). An index SQLite cannot read, or whose stored JSON does not
        parse, is corrupt: rebuilt from the archive once, the query run again."""
        while True:
            try:
                rows = self._con.execute(sql, args).fetchall()
                return [decode(r) for r in rows] if decode else rows
            except (sqlite3.DatabaseError, ValueError) as e:
                self._heal(e)  # raises what it cannot heal, or a second time

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
        write_atomic(member, gzip_with_comment(data, member_comment(run_id, source)))

    # ---- reading

    def runs(self, machine=None):
        """Every run (of one machine), in series order: dicts of the runs
        columns (context parsed) and passed / errors / unsupported counts."""
        where, args = ("WHERE r.machine = ?", (machine,)) if machine else ("", ())
        return self._query(
            "SELECT r.*, "
            "(SELECT count(*) FROM entries e WHERE e.run_id = r.id AND e.disposition = 'passed') AS passed, "
            "(SELECT count(*) FROM entries e WHERE e.run_id = r.id AND e.disposition NOT IN ('passed', 'unsupported')) "
            "AS errors, "
            "(SELECT count(*) FROM entries e WHERE e.run_id = r.id AND e.disposition = 'unsupported') AS unsupported "
            "FROM runs r %s ORDER BY %s" % (where, ORDER), args,
            lambda r: dict(dict(r), context=json.loads(r["context"]) if r["context"] else {}, gpu=gpu_name(r["gpu"])))

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

    def ingested(self, run_id):
        """(machine, segment, benchmarks) of one run: what ingest reports of it."""
        r = self._query("SELECT machine, segment, (SELECT count(*) FROM entries WHERE run_id = ?) FROM runs "
                        "WHERE id = ?", (run_id, run_id))[0]
        return r[0], r[1], r[2]

    def passed_entries(self, run_id):
        """The passed entries of one run: dicts of name, repetitions, median,
        low, high, times (seconds)."""
        return self._query("SELECT name, repetitions, median, low, high, times FROM entries WHERE run_id = ? AND "
                           "disposition = 'passed' AND median IS NOT NULL ORDER BY name", (run_id,),
                           lambda r: dict(r, times=json.loads(r["times"]) if r["times"] else []))

    def benchmark_info(self, machine):
        """{name: (family, device)} of the machine's entries (the most frequent when they vary)."""
        rows = self._query("SELECT e.name, e.family, e.device, count(*) FROM entries e JOIN runs r ON r.id = e.run_id "
                           "WHERE r.machine = ? GROUP BY e.name, e.family, e.device", (machine,))
        best = {}
        for name, family, device, n in rows:
            key = (device is not None, n, family or "", device or "")
            if name not in best or key > best[name][0]:
                best[name] = (key, family, device)
        return {name: (family, device) for name, (_, family, device) in best.items()}

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
            (name, machine), lambda r: dict(r, times=json.loads(r["times"]) if r["times"] else [],
                                            counters=json.loads(r["counters"]) if r["counters"] else {},
                                            context=json.loads(r["context"] or "{}")))
        out, prev = [], None
        for p in rows:
            ctx = p.pop("context")
            p["new_segment"] = prev is not None and prev[0] != p["segment"]
            p["segment_change"] = []
            if p["new_segment"]:
                p["segment_change"] = [list(c) for c in segment_changes(prev[1], ctx)]
            prev = (p["segment"], ctx)
            out.append(p)
        return out
