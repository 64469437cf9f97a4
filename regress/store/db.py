"""The SQL databases the history and its alerts live in: SQLite (Python's
sqlite3, a file: the embedded default) or PostgreSQL (python3-psycopg2, a
server several machines write to), chosen by what the history is given: a
directory, or a URL postgresql://USER@HOST/DB (libpq's form: ?host=/dir for
a Unix socket).

One small surface over both: statements written with "?" placeholders and
the SQL both accept; write() is a transaction that writers take one at a
time (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction-scoped advisory
lock), so concurrent ingests and triages are applied one after the other,
never deadlocked; versions of each component's schema in one table,
migrated forward on open.

A server that cannot be reached or goes away raises Unavailable, whose text
is one line; a transaction it interrupts was not committed."""
import re
import sqlite3

POSTGRES = ("postgresql://", "postgres://")
LOCK_KEY = 7340501  # the advisory lock that PostgreSQL writers take: any fixed number, the same everywhere


class Unavailable(Exception):
    """The database cannot be used: one line."""


def is_url(spec):
    return isinstance(spec, str) and spec.startswith(POSTGRES)


def _line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class Db:
    """A connection: kind "sqlite" or "postgresql"."""

    def __init__(self, spec, timeout=60.0):
        self.spec, self.timeout = spec, timeout
        if is_url(spec):
            self.kind = "postgresql"
            try:
                import psycopg2
                import psycopg2.extras
            except ImportError:
                raise Unavailable("a PostgreSQL history needs python3-psycopg2 (apt-get install python3-psycopg2)")
            self._pg = psycopg2
            try:
                self.con = psycopg2.connect(spec, connect_timeout=max(1, int(timeout)))
            except psycopg2.Error as e:
                raise Unavailable("cannot reach %s: %s" % (redact(spec), _line(e)))
            self.con.autocommit = True
            self._cursor_factory = psycopg2.extras.DictCursor
            self.errors = (psycopg2.Error,)
        else:
            self.kind = "sqlite"
            self.con = sqlite3.connect(spec, timeout=timeout, isolation_level=None)
            self.con.row_factory = sqlite3.Row
            self.errors = (sqlite3.Error,)

    def close(self):
        try:
            self.con.close()
        except Exception:  # noqa: BLE001  closing a connection a server dropped
            pass

    def _sql(self, sql):
        return sql.replace("?", "%s") if self.kind == "postgresql" else sql

    def execute(self, sql, args=()):
        """The rows of a statement (each indexable by position and by name)."""
        if self.kind == "sqlite":
            return self.con.execute(sql, args).fetchall()
        try:
            with self.con.cursor(cursor_factory=self._cursor_factory) as cur:
                cur.execute(self._sql(sql), tuple(args))
                return cur.fetchall() if cur.description else []
        except self._pg.OperationalError as e:
            raise Unavailable("%s: %s" % (redact(self.spec), _line(e)))

    def executemany(self, sql, rows):
        if self.kind == "sqlite":
            self.con.executemany(sql, rows)
            return
        try:
            with self.con.cursor() as cur:
                cur.executemany(self._sql(sql), [tuple(r) for r in rows])
        except self._pg.OperationalError as e:
            raise Unavailable("%s: %s" % (redact(self.spec), _line(e)))

    def insert_id(self, sql, args=()):
        """INSERT ... and the id of the new row."""
        if self.kind == "sqlite":
            return self.con.execute(sql, args).lastrowid
        return self.execute(sql + " RETURNING id", args)[0][0]

    def write(self):
        return _Write(self)

    # ---- schema versions, per component
    def version(self, component):
        self.execute("CREATE TABLE IF NOT EXISTS parbench_schema (component TEXT PRIMARY KEY, version INTEGER "
                     "NOT NULL)")
        rows = self.execute("SELECT version FROM parbench_schema WHERE component = ?", (component,))
        return rows[0][0] if rows else 0

    def set_version(self, component, version):
        self.execute("DELETE FROM parbench_schema WHERE component = ?", (component,))
        self.execute("INSERT INTO parbench_schema (component, version) VALUES (?, ?)", (component, version))


class _Write:
    """A write transaction, one writer at a time; rolled back on any error."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        db = self.db
        if db.kind == "sqlite":
            db.con.execute("BEGIN IMMEDIATE")
        else:
            db.execute("BEGIN")
            db.execute("SELECT pg_advisory_xact_lock(?)", (LOCK_KEY,))
        return db

    def __exit__(self, kind, exc, tb):
        db = self.db
        if kind is None:
            db.execute("COMMIT")
            return False
        try:
            db.execute("ROLLBACK")
        except Exception:  # noqa: BLE001  a connection that is gone rolled back by itself
            pass
        return False


def redact(spec):
    """A URL without its password."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", spec)
