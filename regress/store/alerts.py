"""The alerts of a history: each confirmed change of a machine's series,
grouped by cause, with a life of triage states (the states and rules:
regress/alerts.py, ci/alerts --help).

ci/trends raises and closes them (Alerts.sync, with recovery judging whether
a benchmark is back within its noise); people triage them (Alerts.triage).
They live in DIR/alerts.sqlite, beside the runs' archive, or in the
database of a history in PostgreSQL: unlike the run index they are not
derived from the runs, so they are never rebuilt; the schema carries a
version and is migrated forward on open. Writers take the database's write
lock (regress/store/db.py), so two commands at once are applied one after
the other; one that waits past the timeout says so and changes nothing."""
import datetime
import getpass
import math
import os
import sqlite3
import statistics

from regress.load.results import printable
from regress.store import db as dbm

FILE = "alerts.sqlite"
STATES = ("untriaged", "acknowledged", "invalid", "wontfix", "fixed", "backed_out", "detected_fixed")
OPEN = ("untriaged", "acknowledged")
HUMAN = tuple(s for s in STATES if s != "detected_fixed")
NEAR_RUNS = 2        # a change found again within this many runs of its alert's is the same change
# The states in which a person has judged an alert's change real: its runs
# are no run-to-run noise, and compare --history leaves them out
# (judged_real). Not invalid: a person's word that the change was noise or a
# machine problem, which no run marks to ignore (sync only raises it no
# more); its runs are the noise the history is there to measure. Not
# detected_fixed (ci/trends', no person's) nor untriaged.
JUDGED_REAL = ("acknowledged", "wontfix", "fixed", "backed_out")
# How long a writer waits for another one (PARBENCH_LOCK_SECONDS overrides it).
LOCK_SECONDS = float(os.environ.get("PARBENCH_LOCK_SECONDS") or 30.0)

# Each migration takes the schema from version i to i + 1.
MIGRATIONS = [
    """
    CREATE TABLE alerts (
        id {id},
        machine TEXT NOT NULL,
        grouped_by TEXT NOT NULL,
        direction TEXT NOT NULL,
        culprit TEXT,
        culprit_subject TEXT,
        revision_before TEXT,
        revision_after TEXT,
        date TEXT,
        state TEXT NOT NULL DEFAULT 'untriaged',
        UNIQUE (machine, grouped_by)
    );
    CREATE TABLE alert_benchmarks (
        alert_id INTEGER NOT NULL REFERENCES alerts (id),
        name TEXT NOT NULL,
        direction TEXT NOT NULL,
        step DOUBLE PRECISION NOT NULL,
        threshold DOUBLE PRECISION,
        ordinal INTEGER NOT NULL,
        run_id INTEGER NOT NULL,
        segment TEXT,
        PRIMARY KEY (alert_id, name)
    );
    CREATE TABLE events (
        id {id},
        alert_id INTEGER NOT NULL REFERENCES alerts (id),
        at TEXT NOT NULL,
        who TEXT NOT NULL,
        state_from TEXT,
        state_to TEXT NOT NULL,
        why TEXT
    );
    """,
]


class AlertError(Exception):
    """Bad input, or a store that cannot be used: one line, exit 2."""


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def default_who():
    return os.environ.get("PARBENCH_USER") or os.environ.get("USER") or getpass.getuser()


class Alerts:
    """The alerts of one history: a directory (DIR/alerts.sqlite) or a
    PostgreSQL URL (the history's own database)."""

    def __init__(self, directory, create=True):
        if dbm.is_url(directory):
            self.path = dbm.redact(directory)
            spec = directory
        else:
            if not os.path.isdir(directory):
                raise AlertError("%s is not a history directory" % directory)
            self.path = spec = os.path.join(directory, FILE)
            if not create and not os.path.exists(self.path):
                raise AlertError("%s holds no alerts yet (ci/trends raises them)" % directory)
        try:
            self.db = dbm.Db(spec, timeout=LOCK_SECONDS)
            if self.db.kind == "sqlite":
                self.db.execute("PRAGMA foreign_keys = ON")
            else:
                self.db.execute("SET lock_timeout = %d" % int(LOCK_SECONDS * 1000))
            self._migrate()
        except dbm.Unavailable as e:
            raise AlertError(str(e))
        except sqlite3.DatabaseError as e:
            raise AlertError("%s: %s" % (self.path, _why(e)))

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _migrate(self):
        with self.write():
            version = self.db.version("alerts")
            if version > len(MIGRATIONS):
                raise AlertError("%s has schema version %d; this parbench knows up to %d"
                                 % (self.path, version, len(MIGRATIONS)))
            ident = "INTEGER PRIMARY KEY" if self.db.kind == "sqlite" else "SERIAL PRIMARY KEY"
            for i in range(version, len(MIGRATIONS)):
                for stmt in MIGRATIONS[i].replace("{id}", ident).split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.set_version("alerts", i + 1)

    def write(self):
        return _Transaction(self.db, self.path)

    # ------------------------------------------------------------ reading
    def _read(self, sql, args=()):
        """The rows of a query; a database that fails under it (a damaged page, a
        text that is no longer UTF-8, a server gone) is one line: the alerts are
        kept nowhere else, so nothing rebuilds them."""
        try:
            return self.db.execute(sql, args)
        except self.db.errors + (dbm.Unavailable,) as e:
            raise AlertError("%s: %s" % (self.path, _why(e)))

    def alert(self, alert_id):
        rows = self._read("SELECT * FROM alerts WHERE id = ?", (alert_id,))
        row = rows[0] if rows else None
        if row is None:
            raise AlertError("no alert %s in %s" % (alert_id, self.path))
        a = dict(row)
        a["benchmarks"] = [dict(r) for r in self._read(
            "SELECT * FROM alert_benchmarks WHERE alert_id = ? ORDER BY abs(step) DESC, name", (alert_id,))]
        a["events"] = [dict(r) for r in self._read(
            "SELECT * FROM events WHERE alert_id = ? ORDER BY id", (alert_id,))]
        a["worst_step"] = max((b["step"] for b in a["benchmarks"]), key=abs, default=0.0)
        return a

    def alerts(self, machine=None, states=None):
        """Worst first: open regressions, then the other open alerts, then the
        closed ones; by the size of their largest step within each."""
        sql, args = "SELECT id FROM alerts", []
        if machine:
            sql += " WHERE machine = ?"
            args.append(machine)
        out = [self.alert(r["id"]) for r in self._read(sql, args)]
        if states:
            out = [a for a in out if a["state"] in states]
        return sorted(out, key=rank)

    # ------------------------------------------------------------ writing
    def sync(self, machine, changes, recovered, when=None):
        """Raise, extend and close the machine's alerts from ci/trends'
        confirmed changes (dicts with name, direction, step, threshold,
        ordinal, run_id, segment, revision_before, revision_after, date and
        culprit). recovered(benchmark row) says whether a benchmark of an
        alert is back within its noise: (bool, why). Returns {"raised": [ids],
        "closed": [ids], "suppressed": [ids]: invalid alerts found again};
        each change gets "alert": its alert's id and state."""
        when = when or now_utc()
        raised, closed, suppressed = [], [], set()
        with self.write():
            rows = [dict(r) for r in self.db.execute(
                "SELECT b.*, a.state FROM alert_benchmarks b JOIN alerts a ON a.id = b.alert_id WHERE a.machine = ?",
                (machine,))]
            for c in sorted(changes, key=lambda c: (c["ordinal"], c["name"])):
                same = [r for r in rows if r["name"] == c["name"] and r["direction"] == c["direction"]
                        and r["segment"] == c.get("segment") and abs(r["ordinal"] - c["ordinal"]) <= NEAR_RUNS]
                if same:
                    aid = min(same, key=lambda r: abs(r["ordinal"] - c["ordinal"]))["alert_id"]
                    self.db.execute("UPDATE alert_benchmarks SET step = ?, threshold = ?, ordinal = ?, run_id = ? "
                                    "WHERE alert_id = ? AND name = ?",
                                    (c["step"], c.get("threshold"), c["ordinal"], c["run_id"], aid, c["name"]))
                else:
                    aid = self._group(machine, c, when, raised)
                    self.db.execute("DELETE FROM alert_benchmarks WHERE alert_id = ? AND name = ?", (aid, c["name"]))
                    self.db.execute("INSERT INTO alert_benchmarks (alert_id, name, direction, step, threshold, "
                                    "ordinal, run_id, segment) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                    (aid, c["name"], c["direction"], c["step"], c.get("threshold"), c["ordinal"],
                                     c["run_id"], c.get("segment")))
                    rows.append({"alert_id": aid, "name": c["name"], "direction": c["direction"],
                                 "segment": c.get("segment"), "ordinal": c["ordinal"], "state": None})
                k = c.get("culprit") or {}
                row = self.db.execute("SELECT culprit, state FROM alerts WHERE id = ?", (aid,))[0]
                if k.get("commit") and row[0] is None:
                    # Named after the alert was raised: an event, so the ledger knows when.
                    self.db.execute("UPDATE alerts SET culprit = ?, culprit_subject = ? WHERE id = ?",
                                    (k["commit"], k.get("subject"), aid))
                    self._event(aid, when, "parbench", row[1], row[1],
                                "culprit %s named by ci/bisect" % k["commit"][:12])
                state = self.db.execute("SELECT state FROM alerts WHERE id = ?", (aid,))[0][0]
                if state == "invalid":
                    suppressed.add(aid)
                c["alert"] = {"id": aid, "state": state}
            for (aid,) in [tuple(r) for r in self.db.execute("SELECT id FROM alerts WHERE machine = ? AND state IN "
                                                             "(%s) ORDER BY id" % ",".join("?" * len(OPEN)),
                                                             (machine,) + OPEN)]:
                bench = [dict(r) for r in self.db.execute("SELECT * FROM alert_benchmarks WHERE alert_id = ?",
                                                          (aid,))]
                verdicts = [recovered(b) for b in bench]
                if bench and all(ok for ok, _ in verdicts):
                    self._set_state(aid, "detected_fixed", "parbench", when,
                                    "; ".join("%s: %s" % (b["name"], why) for b, (_, why) in zip(bench, verdicts)))
                    closed.append(aid)
            for c in changes:
                if c.get("alert"):
                    c["alert"]["state"] = self.db.execute("SELECT state FROM alerts WHERE id = ?",
                                                          (c["alert"]["id"],))[0][0]
        return {"raised": raised, "closed": closed, "suppressed": sorted(suppressed)}

    def _group(self, machine, c, when, raised):
        """The alert a new change joins: its culprit's, else its run's; raised when there is none."""
        k = c.get("culprit") or {}
        grouped_by = "culprit:%s" % k["commit"] if k.get("commit") else "run:%d" % c["run_id"]
        row = self.db.execute("SELECT id FROM alerts WHERE machine = ? AND grouped_by = ?", (machine, grouped_by))
        if row:
            return row[0][0]
        aid = self.db.insert_id("INSERT INTO alerts (machine, grouped_by, direction, culprit, culprit_subject, "
                                "revision_before, revision_after, date) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                (machine, grouped_by, c["direction"], k.get("commit"), k.get("subject"),
                                 c.get("revision_before"), c.get("revision_after"), c.get("date")))
        self._event(aid, when, "parbench", None, "untriaged", "confirmed change of %s" % c["name"])
        raised.append(aid)
        return aid

    def _set_state(self, aid, state, who, when, why):
        old = (self.db.execute("SELECT state FROM alerts WHERE id = ?", (aid,)) or [None])[0]
        if old is None:
            raise AlertError("no alert %s in %s" % (aid, self.path))
        self.db.execute("UPDATE alerts SET state = ? WHERE id = ?", (state, aid))
        self._event(aid, when, who, old[0], state, why)
        return old[0]

    def _event(self, aid, when, who, old, new, why):
        self.db.execute("INSERT INTO events (alert_id, at, who, state_from, state_to, why) VALUES (?, ?, ?, ?, ?, ?)",
                        (aid, when, who, old, new, why))

    def triage(self, aid, state, who=None, why=None, when=None):
        if state not in HUMAN:
            raise AlertError("%r is not a state to triage to; one of: %s" % (state, ", ".join(HUMAN)))
        with self.write():
            return self._set_state(aid, state, who or default_who(), when or now_utc(), why)


def judged_real(directory, machine):
    """{benchmark: [run id]}: the first run of each change of the machine's
    alerts in a JUDGED_REAL state. {} for a history directory without
    alerts.sqlite, which this does not create; AlertError for a store that
    cannot be read."""
    if not dbm.is_url(directory) and not os.path.exists(os.path.join(directory, FILE)):
        return {}
    out = {}
    with Alerts(directory, create=False) as store:
        for a in store.alerts(machine, states=JUDGED_REAL):
            for b in a["benchmarks"]:
                out.setdefault(b["name"], []).append(b["run_id"])
    return out


class _Transaction:
    """The database's write transaction; a lock held past the timeout, or a
    database that fails, is bad input's one line (nothing was committed)."""

    def __init__(self, db, path):
        self.db, self.path, self.inner = db, path, db.write()

    def __enter__(self):
        try:
            self.inner.__enter__()
        except self.db.errors + (dbm.Unavailable,) as e:
            raise AlertError("%s: %s (another command holds it; try again)" % (self.path, _why(e)))
        return self

    def __exit__(self, kind, exc, tb):
        try:
            self.inner.__exit__(kind, exc, tb)
        except self.db.errors + (dbm.Unavailable,) as e:
            raise AlertError("%s: %s" % (self.path, _why(e)))
        if isinstance(exc, self.db.errors + (dbm.Unavailable,)):
            raise AlertError("%s: %s" % (self.path, _why(exc)))
        return False


def _why(e):
    """The database's reason in one line (a damaged text it quotes may hold any character)."""
    return printable(str(e).strip().split("\n")[0]) if str(e).strip() else type(e).__name__


def rank(a):
    group = (0 if a["state"] in OPEN and a["direction"] == "slower" else
             1 if a["state"] in OPEN else 2 if a["direction"] == "slower" else 3)
    return (group, -abs(a["worst_step"]), a["id"])


def recovery(points, ordinal_of, row, measured, local=5, tail=3):
    """(recovered, why) for one benchmark of an alert: the median of its last
    `tail` runs of the change's segment against the median of the up to
    `local` runs before the change, within the change's threshold in log
    time. points: the benchmark's series (oldest first, with run_id,
    segment, median); ordinal_of: run id -> the run's place."""
    mine = [p for p in points if p.get("segment") == row["segment"] and measured(p)]
    before = [p["median"] for p in mine if ordinal_of[p["run_id"]] < row["ordinal"]][-local:]
    after = [p["median"] for p in mine if ordinal_of[p["run_id"]] >= row["ordinal"]]
    if not before or len(after) <= tail or row["threshold"] is None:
        return False, "too few runs since the change"
    b, t = statistics.median(before), statistics.median(after[-tail:])
    move = t / b - 1.0
    ok = abs(math.log(t / b)) <= math.log1p(row["threshold"])
    return ok, "the last %d runs %+.1f%% from the level before the change (threshold %.1f%%)" % (
        tail, 100 * move, 100 * row["threshold"])
