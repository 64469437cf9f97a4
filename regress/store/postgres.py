"""A history in a PostgreSQL database (--history postgresql://...): the
tables of a directory's index, with each run's archive member in the
database itself (runs.data), which is the source of truth there."""
from regress.store import db as dbm
from regress.store.archive import gzip_with_comment, member_comment
from regress.store.runs import HistoryError, read_run
from regress.store.sqlite import History, _stderr

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
            self._index(db, run_id, run, sha, content, "db:runs.data", path)
            db.execute("UPDATE runs SET data = ? WHERE id = ?",
                       (db._pg.Binary(gzip_with_comment(data, member_comment(run_id, path))), run_id))
        return run_id, True
