"""A history in a PostgreSQL database (--history postgresql://...): the
tables of a directory's index, with each run's archive member in the
database itself (runs.data), which is the source of truth there."""
import time

from regress.store import db as dbm
from regress.store.archive import gzip_with_comment, member_comment
from regress.store.runs import HistoryError, read_run
from regress.store.sqlite import History, _stderr

# How long a command waits for a server it lost to come back: a restart
# takes seconds, and an ingest that gave up would fail the night's step.
RECONNECT_SECONDS = 30.0
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
        self._dbm, self.url, self.retries = dbm, url, retries
        self.dir = dbm.redact(url)
        self.log = log or _stderr
        self._db, self._reached = None, False
        self._connect_db(create)

    def _connect_db(self, create=False):
        """Connects and brings the schema up to date. A server this command
        reached before and lost (a restart) is waited for, up to
        RECONNECT_SECONDS; one never reached is reported at once."""
        deadline = None
        while True:
            try:
                return self._open_db(create)
            except HistoryError as e:
                if not self._reached or not isinstance(e.__cause__, self._dbm.Unavailable):
                    raise
                if deadline is None:
                    deadline = time.monotonic() + RECONNECT_SECONDS
                    self.log("%s: the server went away (%s); waiting up to %.0f s for it to come back"
                             % (self.dir, str(e.__cause__).rsplit(": ", 1)[-1], RECONNECT_SECONDS))
                elif time.monotonic() > deadline:
                    raise HistoryError("%s (it did not come back within %.0f s)" % (e, RECONNECT_SECONDS))
                self.close()
                time.sleep(0.5)

    def _open_db(self, create):
        dbm = self._dbm
        try:
            self._db = dbm.Db(self.url)
            self._reached = True
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
            raise HistoryError(str(e)) from e

    def close(self):
        if self._db is not None:
            self._db.close()
            self._db = None

    def _query(self, sql, args=(), decode=None):
        try:
            rows = self._db.execute(sql.replace("group_concat(DISTINCT host)", "string_agg(DISTINCT host, ',')"),
                                    args)
        except self._dbm.Unavailable as e:
            raise HistoryError(str(e))
        return [decode(r) for r in rows] if decode else rows

    def rebuild(self, set_aside=False):
        raise HistoryError("%s: a PostgreSQL history is its own source of truth; there is no index to rebuild"
                           % self.dir)

    def ingest(self, path):
        run, data, sha, content = read_run(path)
        if self._db is None:
            self._connect_db()
        lost = (self._dbm.Unavailable,) + self._db.errors
        for attempt in range(self.retries + 1):
            try:
                return self._pg_ingest(run, path, data, sha, content)
            except lost as e:
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
            self._index(db, run_id, run, sha, content, "db:runs.data", path)
            db.execute("UPDATE runs SET data = ? WHERE id = ?",
                       (db._pg.Binary(gzip_with_comment(data, member_comment(run_id, path))), run_id))
        return run_id, True
