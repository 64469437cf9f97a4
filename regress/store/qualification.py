"""The gate's qualification: whether the comparator, on this machine and the
gate's own selection, stays quiet on identical code (compare --qualify: one
binary on both sides). Any SLOWER or FASTER there puts the gate in the
"unqualified" state for the machine's fingerprint: the gate then reports its
verdicts but fails no build, and says why, until a qualification passes
again. A qualification runs again whenever the fingerprint changes.

The state is one JSON file (compare --qualify-state FILE; the nightly job's
HISTORY/qualification.json), a list of records, newest last:

    {"format": 1, "records": [{"fingerprint", "machine", "when", "source",
      "compared", "alarms": [{"name", "verdict", "change"}], "state"}]}

Only the standard library, and store's own identities."""
import datetime
import json
import os

from regress.store.runs import MACHINE_KEYS, SEGMENT_KEYS, identity, machine_of

FORMAT = 1
FILE = "qualification.json"
QUALIFIED, UNQUALIFIED = "qualified", "unqualified"
# The machine's fingerprint: its hardware and the software its times depend
# on (the history's machine and segment keys) and the threads' placement.
KEYS = MACHINE_KEYS + SEGMENT_KEYS + ("omp_places", "omp_proc_bind", "parbench_aslr")


class QualificationError(Exception):
    """A state file that cannot be read or written: one line, exit 2."""


def fingerprint(context):
    return identity(context, KEYS)


def alarms_of(doc):
    """The SLOWER and FASTER rows of a verdict document, as records."""
    return [{"name": b["name"], "verdict": b["verdict"], "change": b.get("change")}
            for b in doc.get("benchmarks", []) if b.get("verdict") in ("SLOWER", "FASTER")]


def describe(record):
    """One line for a record: its state, when, and why."""
    if record["state"] == QUALIFIED:
        return "qualified on %s: 0 of %d benchmarks moved on identical code (%s)" % (
            record["when"][:10], record["compared"], record["source"])
    names = ", ".join("%s %s" % (a["name"], a["verdict"]) for a in record["alarms"][:3])
    more = "" if len(record["alarms"]) <= 3 else " and %d more" % (len(record["alarms"]) - 3)
    return ("unqualified since %s: %d of %d benchmarks moved on identical code (%s: %s%s); verdicts are reported "
            "but fail no build until a qualification passes (ci/compare --qualify)"
            % (record["when"][:10], len(record["alarms"]), record["compared"], record["source"], names, more))


class State:
    """The records of one state file."""

    def __init__(self, path):
        self.path = path
        self.records = []
        if os.path.exists(path):
            try:
                with open(path) as f:
                    doc = json.load(f)
            except (OSError, ValueError) as e:
                raise QualificationError("qualification state %s: cannot read it: %s" % (path, e))
            if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("records"), list) \
                    or not all(isinstance(r, dict) and isinstance(r.get("fingerprint"), str)
                               and r.get("state") in (QUALIFIED, UNQUALIFIED) and isinstance(r.get("when"), str)
                               and isinstance(r.get("source"), str) and isinstance(r.get("compared"), int)
                               and isinstance(r.get("alarms"), list)
                               and all(isinstance(a, dict) for a in r["alarms"]) for r in doc["records"]):
                raise QualificationError("qualification state %s: not one (compare --qualify-state writes one)"
                                         % path)
            self.records = doc["records"]

    def latest(self, fp):
        """The newest record of this fingerprint, or None: a fingerprint never
        qualified (a new machine, a driver update) needs a qualification."""
        return next((r for r in reversed(self.records) if r["fingerprint"] == fp), None)

    def add(self, rec):
        """Appends a record (make_record) and writes the file; the record."""
        self.records.append(rec)
        tmp = self.path + ".tmp"
        try:
            if os.path.dirname(self.path):
                os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "w") as f:
                json.dump({"format": FORMAT, "records": self.records}, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, self.path)
        except OSError as e:
            raise QualificationError("qualification state %s: cannot write it: %s" % (self.path, e))
        return rec


def make_record(context, doc, source, when=None):
    """The qualification a verdict document of one binary on both sides
    shows, for the machine of `context`."""
    alarms = alarms_of(doc)
    return {"fingerprint": fingerprint(context), "machine": machine_of(context),
            "when": when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "source": source, "compared": len(doc.get("benchmarks", [])), "alarms": alarms,
            "state": UNQUALIFIED if alarms else QUALIFIED}
