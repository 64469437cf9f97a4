"""The one loader of parbench's Google Benchmark JSON.

Reads files written by Google Benchmark 1.7.x and 1.8.x (with or without
repetitions and aggregates), in parbench's schema 1 (README.md, "JSON schema":
a "parbench" object on every entry, parbench_schema and parbench_counters in
the context) or older. Parses run names with the grammar of
impl/core/run_name.hpp (Family/Variant/key:value.../time kind[_aggregate]),
and classifies every entry by disposition:

  passed         timed, with its counters
  unsupported    not run: the variant cannot (1.8: "skipped"; 1.7: an error
                 whose message starts with "unsupported: ")
  incorrect      verification failed ("incorrect: ...")
  out_of_memory  an allocation failed ("out of memory: ...")
  failed         the variant threw ("failed: ...", or any other error)

Schema 1 entries carry their disposition, reason, role, device and rate in
entry["parbench"]; older entries get the disposition from the message
prefixes, the device from the `on_gpu` counter when it is there, and no role,
rate or counter kinds (None / {}): nothing is guessed from variant names.

A passed repetition whose time is 0 or negative is no measurement: it reads as
failed ("passed with a time per iteration of 0.0: not a measurement"), so every
tool counts it as the error entry the comparator calls it.

Two ways to load, one contract for bad input (docs/tools/README.md, "Bad
input"):

  load(path)         tolerant: malformed entries are dropped and a file cut
                     off mid-run (the "benchmarks" array left open) keeps its
                     complete entries, each said in run.warnings. For what
                     reads partial files on purpose: the repair tool, resumed
                     rounds, check-run --allow-warnings, history archives
                     written before the contract.
  load_strict(path)  the contract: what load() recovers from is refused too.
                     Every tool that computes on a file (compare, history,
                     plot, table, check-run, the nightly's baseline) calls it,
                     so the same defect is the same line and exit 2 in each.

Both raise only LoadError; its subclass BadInput carries the one line
"[WHAT: ]PATH: DEFECT" that a tool prints after "TOOL: ". Only the Python
standard library is used, so the checks in tests/ run with any python3.
"""
import json
import os
import re
import sys

from regress.cli import EXIT_INPUT
# The document layer's names are part of the loader's API: tools call
# results.read_text, results.parse_document, results.content_sha256.
from regress.load.document import (ANNOTATION_KEYS, Cut, DocumentError, _check_shape, _finite, _is_number,  # noqa: F401
                                   _what, content_sha256, parse_document, printable, read_text)

SCHEMA = 1
DISPOSITIONS = ("passed", "unsupported", "incorrect", "out_of_memory", "failed")
ERROR_DISPOSITIONS = ("incorrect", "out_of_memory", "failed")
ROLES = ("baseline", "ceiling", "variant")
DEVICES = ("cpu", "gpu")
AGGREGATES = ("mean", "median", "stddev", "cv")
# Message prefixes the harness writes (kept in schema 1 for humans and older tools).
PREFIXES = (("unsupported: ", "unsupported"), ("incorrect: ", "incorrect"),
            ("out of memory: ", "out_of_memory"), ("failed: ", "failed"))
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

# The context keys that decide whether two runs can be compared, by the
# entries they matter to ("all", a device, or a parbench.library). HARD: a
# difference means other hardware, build or inputs (the comparator refuses,
# the history starts another machine or segment). SOFT: worth a warning.
FINGERPRINT_HARD = {
    "all": ("parbench_fixtures_version", "parbench_build_type", "parbench_seed"),
    "cpu": ("cpu_model", "num_cpus", "parbench_cxx_compiler", "cpu_simd"),
    "gpu": ("gpu", "gpu_sm_count", "parbench_cuda_compiler", "parbench_cuda_architectures", "parbench_flush_l2",
            "parbench_gpu_start"),
    "openblas": ("openblas_config",),
}
FINGERPRINT_SOFT = {
    "all": ("library_version", "library_build_type", "parbench_cxx_flags"),
    "cpu": ("omp_places", "omp_proc_bind", "parbench_aslr"),
    "gpu": ("gpu_driver", "cuda_runtime", "cuda_driver_api", "parbench_cuda_flags"),
    "openblas": ("openblas_num_threads_at_start",),
    "cublas": (),
    "nccl": ("nccl_version",),
}

# Knob arguments: how a variant runs, not what it solves (a reference variant
# may lack some of them).
KNOBS = ("threads", "block", "ranks", "gpus")

# Google Benchmark's own fields of an entry and their JSON types; every other
# key is a user counter (a number, or null for a value that is not finite).
_STR_FIELDS = ("name", "run_name", "run_type", "aggregate_name", "aggregate_unit", "label",
               "error_message", "skip_message", "time_unit", "big_o")
_BOOL_FIELDS = ("error_occurred", "skipped")
_NOT_COUNTERS = frozenset(_STR_FIELDS + _BOOL_FIELDS + ("parbench",))
# Google Benchmark's own numeric fields (not user counters).
_GB_NUMBERS = frozenset(("family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
                         "iterations", "real_time", "cpu_time", "rms", "complexity_n"))


# The defects of a file, by kind, in the order they are checked: load() raises
# "unreadable"; load_strict() raises every kind. The wording of each is made
# here only, so every tool says the same thing about the same file.
DEFECTS = ("unreadable", "cut", "malformed", "no_repetitions")
# The repair the messages of a cut file and of malformed entries name.
REPAIR = "ci/close-truncated %s FIXED.json"


class LoadError(Exception):
    """A file that is missing, unreadable, truncated before any entry or not Google Benchmark JSON."""


class BadInput(LoadError):
    """A file the contract refuses. str() is the one line every tool prints
    after "TOOL: ", "[WHAT: ]PATH: DEFECT", and the tool exits EXIT_INPUT (2).

    path    the file as given
    defect  what is wrong, one line, the same in every tool
    kind    one of DEFECTS
    what    the file's role in the tool ("BASE", "NEW"), or None"""

    def __init__(self, path, defect, kind="unreadable", what=None):
        self.path, self.defect, self.kind, self.what = path, defect, kind, what
        super().__init__(("%s: " % what if what else "") + "%s: %s" % (path, defect))


class EntryError(ValueError):
    """Entry(): a benchmark entry with wrong types or missing fields."""


# ---------------------------------------------------------------- run names

class RunName:
    def __init__(self, family, variant, args, time_kind="", aggregate=""):
        self.family, self.variant, self.args = family, variant, dict(args)
        self.arg_order = [k for k, _ in args]
        self.time_kind, self.aggregate = time_kind, aggregate

    def problem(self):
        """The arguments without knobs: the same for every variant of one problem."""
        return tuple((k, self.args[k]) for k in self.arg_order if k not in KNOBS)

    def base(self):
        """Family/Variant/key:value... without time kind or aggregate."""
        return "/".join([self.family, self.variant] + ["%s:%s" % (k, self.args[k]) for k in self.arg_order])


_TOKEN = re.compile(r"^[^/: ]+$")
# A control character or a line separator: no harness names a benchmark with
# one, and every tool would print it into its tables and its one-line messages.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def parse_run_name(name):
    """RunName of "Family/Variant[/key:value...][/manual_time|real_time][_aggregate]"; ValueError if not."""
    if _CONTROL.search(name):
        raise ValueError("run name %r holds a control character" % name)
    parts = name.split("/")
    if len(parts) < 2 or not _TOKEN.match(parts[0]) or not _TOKEN.match(parts[1]):
        raise ValueError("run name %r is not Family/Variant[/key:value...]" % name)
    aggregate = ""
    if len(parts) > 2:
        for agg in AGGREGATES:
            if parts[-1].endswith("_" + agg) and len(parts[-1]) > len(agg) + 1:
                aggregate = agg
                parts[-1] = parts[-1][: -len(agg) - 1]
                break
    time_kind, args = "", []
    for i, p in enumerate(parts[2:], start=2):
        if i == len(parts) - 1 and p in ("manual_time", "real_time"):
            time_kind = p
            continue
        key, sep, value = p.partition(":")
        if not sep or not _TOKEN.match(key) or not _TOKEN.match(value):
            raise ValueError("run name %r: component %r is not key:value" % (name, p))
        args.append((key, value))
    return RunName(parts[0], parts[1], args, time_kind, aggregate)


# ------------------------------------------------------------------ entries

def legacy_disposition(raw):
    """(disposition, message, reason) of an entry from Google Benchmark's fields
    and the message prefixes: what files written before schema 1 say."""
    if raw.get("skipped") or raw.get("skip_message"):  # Google Benchmark 1.8 skip
        message = raw.get("skip_message") or ""
        disposition = "unsupported"
    elif raw.get("error_occurred"):
        message = raw.get("error_message") or ""
        disposition = "failed"
    else:
        return "passed", "", ""
    for prefix, kind in PREFIXES:
        if message.startswith(prefix):
            # A skip is unsupported whatever its message says; an error's prefix names its kind.
            return (disposition if disposition == "unsupported" else kind), message, message[len(prefix):]
    return disposition, message, message


class Entry:
    """One benchmark entry (an iteration or an aggregate).

    raw          the JSON object as read
    name         its "name"
    run          RunName of its run_name (or name)
    aggregate    "" for an iteration, else "mean" / "median" / "stddev" / "cv"
    disposition  one of DISPOSITIONS
    message      Google Benchmark's error_message / skip_message ("" when passed)
    reason       parbench.reason, or the message without its prefix ("" when passed)
    role         "baseline" / "ceiling" / "variant", or None when the file does not say
    device       "cpu" / "gpu" (parbench.device, else the on_gpu counter), or None
    rate         (counter, ceiling kind), e.g. ("GFLOPS", "gemm_f32"), or None
    roof         the compute ceiling kind bounding its flops where the rate is read against another
                 kind (parbench.rate.roof, e.g. "gemm_f64" for a bandwidth-rated stencil), or None
    source       the label of the Run it belongs to (None outside a Run)
    run_name     its "run_name" (the name without aggregate suffix), else its name
    library      parbench.library: the vendor library a library variant calls, or None
    code         parbench.code: the fingerprint of the code it ran, or None
    library_version  parbench.library_version: that library's version, or None
    gpu          parbench.gpu: the GPU model it ran on (ci/run-suite), or None
    energy       parbench.energy: why the entry has no energy reading, or None

    Raises EntryError (a ValueError) when the entry is malformed."""

    def __init__(self, raw):
        if not isinstance(raw, dict):
            raise EntryError("is %s, not an object" % _what(raw))
        self.raw = raw
        for key in _STR_FIELDS:
            if key in raw and not isinstance(raw[key], str):
                raise EntryError("'%s' is %s" % (key, _what(raw[key])))
        for key in _BOOL_FIELDS:
            if key in raw and not isinstance(raw[key], bool):
                raise EntryError("'%s' is %s" % (key, _what(raw[key])))
        for key, v in raw.items():
            if key not in _NOT_COUNTERS and v is not None and not _is_number(v):
                raise EntryError("'%s' is %s" % (key, _what(v)))
        if "name" not in raw:
            raise EntryError("no 'name'")
        if _CONTROL.search(raw["name"]):
            raise EntryError("'name' %r holds a control character" % raw["name"])
        self.name = raw["name"]
        try:
            self.run = parse_run_name(raw.get("run_name", self.name))
        except ValueError as e:
            raise EntryError(str(e))
        unit = raw.get("time_unit", "ns")
        if unit not in TIME_UNITS:
            raise EntryError("unknown time_unit %r" % unit)
        self.aggregate = raw.get("aggregate_name", "") or self.run.aggregate
        self.disposition, self.message, self.reason = legacy_disposition(raw)
        self.run_name = raw.get("run_name", self.name)
        self.role = self.device = self.rate = self.roof = self.source = None
        self.library = self.code = self.library_version = self.gpu = self.energy = None
        pb = raw.get("parbench")
        if pb is not None:
            self._read_parbench(pb)
        if self.device is None and "on_gpu" in raw:
            on_gpu = self.counter("on_gpu")
            if on_gpu in (0, 1):
                self.device = "gpu" if on_gpu == 1 else "cpu"
        if self.disposition == "passed" and not self.aggregate:
            t = raw.get("real_time")
            if not _finite(t):
                raise EntryError("'real_time' is %s" % ("not finite" if _is_number(t) else _what(t)
                                                        if "real_time" in raw else "missing"))
            if not t > 0 or self.seconds() is None:
                # A repetition timed at 0 (or less), or at a time that is 0
                # once in seconds (5e-324 ns), measured nothing: an error
                # entry, as the comparator reports it, in every tool alike.
                self.disposition = "failed"
                self.reason = "passed with a time per iteration of %r: not a measurement" % t

    def _read_parbench(self, pb):
        if not isinstance(pb, dict):
            raise EntryError("'parbench' is %s, not an object" % _what(pb))
        d = pb.get("disposition")
        if d not in DISPOSITIONS:
            raise EntryError("parbench.disposition %s is not one of %s" % (_repr(d), "/".join(DISPOSITIONS)))
        self.disposition = d
        if "reason" in pb:
            if not isinstance(pb["reason"], str):
                raise EntryError("parbench.reason is %s" % _what(pb["reason"]))
            self.reason = pb["reason"]
        elif d == "passed":
            self.reason = ""
        # Descriptive strings: a value of another type is left unread, as the
        # tools always have.
        for key in ("library", "code", "library_version", "gpu"):
            if isinstance(pb.get(key), str):
                setattr(self, key, pb[key])
        if pb.get("energy"):
            self.energy = str(pb["energy"])
        for key, allowed in (("role", ROLES), ("device", DEVICES)):
            if key in pb:
                if pb[key] not in allowed:
                    raise EntryError("parbench.%s %s is not one of %s" % (key, _repr(pb[key]), "/".join(allowed)))
                setattr(self, key, pb[key])
        if "rate" in pb:
            r = pb["rate"]
            if not (isinstance(r, dict) and isinstance(r.get("counter"), str) and isinstance(r.get("ceiling"), str)):
                raise EntryError("parbench.rate is not {\"counter\": ..., \"ceiling\": ...}")
            self.rate = (r["counter"], r["ceiling"])
            if "roof" in r:
                if not isinstance(r["roof"], str):
                    raise EntryError("parbench.rate.roof is %s, not a ceiling kind" % _what(r["roof"]))
                self.roof = r["roof"]

    @property
    def is_error(self):
        """incorrect, out_of_memory or failed."""
        return self.disposition in ERROR_DISPOSITIONS

    @property
    def on_gpu(self):
        """True / False from device; None when the file does not say (no guessing from names)."""
        return None if self.device is None else self.device == "gpu"

    def counter(self, key, default=None):
        """The value of `key` when it is a finite number (not a boolean), else default."""
        v = self.raw.get(key)
        return v if _finite(v) else default

    def has(self, key):
        """Whether the entry's JSON object has `key`, whatever its value."""
        return key in self.raw

    def counters(self):
        """{name: value} of the entry's user counters that are finite numbers."""
        return {k: v for k, v in self.raw.items() if k not in _NOT_COUNTERS and k not in _GB_NUMBERS and _finite(v)}

    def seconds(self):
        """Time per iteration in seconds (real_time, which is manual time here); None when real_time \
is not a finite number, or a time that is no time once in seconds (5e-324 ns underflows to 0)."""
        v = self.raw.get("real_time")
        if not _finite(v):
            return None
        s = v * TIME_UNITS[self.raw.get("time_unit", "ns")]
        return None if v != 0 and s == 0 else s

    def __repr__(self):
        return "Entry(%r, %s)" % (self.name, self.disposition)


def _counter_kind(v):
    """Whether v declares a counter as the tools read it: an object whose kind, unit and better are text."""
    return isinstance(v, dict) and isinstance(v.get("kind"), str) and \
        all(isinstance(v.get(f, ""), str) for f in ("unit", "better"))


def _repr(v):
    s = json.dumps(v) if isinstance(v, (str, int, float, bool, type(None))) else _what(v)
    return s if len(s) < 40 else s[:37] + "..."


# --------------------------------------------------------------------- runs

class Run:
    """The entries of one file.

    path, context, entries   as read (entries: Entry objects, malformed ones dropped)
    label                    its name in tables and charts: the file name without ".json" unless given
    schema                   context parbench_schema (0 for files written before schema 1)
    counter_kinds            context parbench_counters: {counter: {"kind": ..., "unit": ..., "better": ...}}, \
{} before schema 1
    warnings                 one-line strings: what was dropped, recovered or not understood
    cut                      a Cut when load() recovered a file cut off mid-run, else None
    malformed                [(index in "benchmarks", name or None, what is wrong)] of the entries load() dropped
    raw_entries              the "benchmarks" list as read (malformed entries included), or None"""

    def __init__(self, path, context, entries, label=None, warnings=None):
        self.path, self.context, self.entries = path, context, list(entries)
        self.malformed, self.raw_entries = [], None
        if label is None:
            label = os.path.basename(str(path))
            if label.endswith(".json"):
                label = label[:-5]
        self.label = label
        self.warnings = list(warnings or [])
        self.cut = None
        for e in self.entries:
            e.source = label
        self.schema, self.counter_kinds = 0, {}
        ctx = context if isinstance(context, dict) else {}
        if "parbench_schema" in ctx:
            s = ctx["parbench_schema"]
            if _finite(s) and s == int(s) and s >= 0:
                self.schema = int(s)
                if self.schema > SCHEMA:
                    self.warnings.append("written with schema %d; this loader knows schema %d" % (self.schema, SCHEMA))
            else:
                self.warnings.append("context parbench_schema is %s, not a number; read as schema 0" % _repr(s))
        if "parbench_counters" in ctx:
            kinds = ctx["parbench_counters"]
            if not isinstance(kinds, dict):
                self.warnings.append("context parbench_counters is %s, not an object; counter kinds unknown"
                                     % _what(kinds))
            else:
                bad = [k for k, v in kinds.items() if not _counter_kind(v)]
                self.counter_kinds = {k: v for k, v in kinds.items() if k not in bad}
                if bad:
                    self.warnings.append("context parbench_counters: %d counters without a kind (or with a unit or "
                                         "better that is not text) ignored; first: %r" % (len(bad), bad[0]))

    def kind_of(self, counter):
        """The kind of `counter` (rate, time, problem, knob, model, result, clock, flag, share), or None when
        not declared."""
        info = self.counter_kinds.get(counter)
        return info["kind"] if info else None

    def passed(self):
        """Passed iterations (no aggregates)."""
        return [e for e in self.entries if e.disposition == "passed" and not e.aggregate]

    def errors(self):
        """Entries that are incorrect, out_of_memory or failed."""
        return [e for e in self.entries if e.is_error]

    def unsupported(self):
        return [e for e in self.entries if e.disposition == "unsupported"]

    skipped = unsupported  # the old name: unsupported entries

    def content_sha256(self):
        """The identity of the run's content: content_sha256() of its context and
        every entry as read (malformed ones included)."""
        raw = self.raw_entries if self.raw_entries is not None else [e.raw for e in self.entries]
        return content_sha256(self.context, raw)


def _entry_name(raw):
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) else None


def entry_label(index, name):
    """How a message names an entry: its index in "benchmarks" (from 0, as
    jq '.benchmarks[N]' reads it) and its name."""
    return "entry %d '%s'" % (index, printable(name)) if name is not None else "entry %d, no name" % index


def describe_cut(cut, path):
    """The one line about a file cut off mid-run."""
    return "cut off mid-run after %d complete entries; %s writes a closed copy" % (cut.complete, REPAIR % path)


def describe_malformed(malformed, path):
    """The one line about a file's malformed entries ([(index, name, reason)])."""
    index, name, reason = malformed[0]
    where = "%s (%s)" % (reason, entry_label(index, name))
    if len(malformed) == 1:
        return "malformed entry: %s; %s writes a copy without it" % (where, REPAIR % path)
    return "%d malformed entries, first: %s; %s writes a copy without them" % (len(malformed), where, REPAIR % path)


def read_entries(benchmarks):
    """([Entry], [(index, name or None, reason)]) of a "benchmarks" list: the
    well-formed entries and what is wrong with each of the others."""
    entries, malformed = [], []
    for i, raw in enumerate(benchmarks):
        try:
            entries.append(Entry(raw))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            malformed.append((i, _entry_name(raw), str(e)))
    return entries, malformed


def load(path, label=None):
    """Run of the file at `path` (label: its name in tables; default the file
    name without .json), tolerant of a cut file and malformed entries (each
    said in run.warnings, in the words load_strict() refuses them with).
    Raises BadInput("PATH: reason"), a LoadError, and nothing else."""
    try:
        doc, cut = parse_document(read_text(path))
    except DocumentError as e:
        raise BadInput(path, str(e))
    warnings = []
    if cut is not None:
        warnings.append(describe_cut(cut, path))
    entries, malformed = read_entries(doc["benchmarks"])
    if malformed:
        warnings.append(describe_malformed(malformed, path))
    run = Run(path, doc["context"], entries, label=label)
    run.warnings[:0] = warnings
    run.cut, run.malformed, run.raw_entries = cut, malformed, doc["benchmarks"]
    return run


def refusal(run, path=None, malformed=True):
    """(kind, defect) of what the contract refuses in a loaded Run, or None:
    a file cut off mid-run, malformed entries (unless malformed=False: an
    archive member indexed before the contract), or no repetitions."""
    path = run.path if path is None else path
    if run.cut is not None:
        return "cut", describe_cut(run.cut, path)
    if run.malformed and malformed:
        return "malformed", describe_malformed(run.malformed, path)
    if not any(not e.aggregate for e in run.entries):
        if run.malformed:
            return "malformed", describe_malformed(run.malformed, path)
        if run.entries:
            return "no_repetitions", "only aggregates, no repetitions (run without --benchmark_report_aggregates_only)"
        return "no_repetitions", "no benchmark entries"
    return None


def load_strict(path, what=None, label=None):
    """The Run of `path` under the contract: a file that cannot be read, one
    cut off mid-run, one with a malformed entry, or one without repetitions
    raises BadInput (a LoadError) whose str() is the one line
    "[WHAT: ]PATH: DEFECT" (what: the file's role, e.g. "BASE"); the tool
    prints it after "TOOL: " and exits EXIT_INPUT. The Run's remaining
    warnings are about its context only (a newer schema, counter kinds not
    understood): each tool prints them as "TOOL: PATH: warning: ..."."""
    try:
        run = load(path, label)
    except BadInput as e:
        raise BadInput(path, e.defect, e.kind, what)
    found = refusal(run, path)
    if found:
        raise BadInput(path, found[1], found[0], what)
    return run


def load_or_exit(path, tool, label=None, warn=True, strict=True):
    """load_strict(path) for a command-line tool (load() with strict=False): on
    a bad file, the one line "TOOL: PATH: DEFECT" on stderr and exit status 2;
    the Run's warnings one line each on stderr ("TOOL: PATH: warning: ...")."""
    try:
        run = load_strict(path, label=label) if strict else load(path, label)
    except LoadError as e:
        print("%s: %s" % (tool, e), file=sys.stderr)
        sys.exit(EXIT_INPUT)
    if warn:
        for w in run.warnings:
            print("%s: %s: warning: %s" % (tool, path, w), file=sys.stderr)
    return run
