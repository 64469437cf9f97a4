"""The one loader of parbench's Google Benchmark JSON.

Reads files written by Google Benchmark 1.7.x and 1.8.x (with or without
repetitions and aggregates), parses run names with the grammar of
impl/core/run_name.hpp, and classifies every entry by disposition:

  passed       timed, with its counters
  skipped      unsupported / excluded, with the reason (1.8: "skipped";
               1.7: an error whose message starts with "unsupported: ")
  incorrect    verification failed ("incorrect: ...")
  failed       the variant threw ("failed: ...", "out of memory: ...")

Only the Python standard library is used, so the checks in tests/ run with
any python3; charts import matplotlib separately.
"""
import json
import re
import sys

AGGREGATES = ("mean", "median", "stddev", "cv")
SKIP_PREFIXES = ("unsupported: ",)
ERROR_PREFIXES = {"incorrect: ": "incorrect", "failed: ": "failed", "out of memory: ": "oom"}


# Knob arguments: how a variant runs, not what it solves (a reference variant
# may lack them: cuBLAS has no block, Seq no threads or ranks).
KNOBS = ("threads", "block", "ranks")

# Variant names of the GPU backends, for files without the `on_gpu` counter.
GPU_VARIANT_PREFIXES = ("CUDA", "cuBLAS", "Thrust", "CUB")


class LoadError(Exception):
    """A file that is missing, truncated or not Google Benchmark JSON."""


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


def parse_run_name(name):
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


class Entry:
    def __init__(self, raw):
        self.raw = raw
        self.name = raw["name"]
        self.run = parse_run_name(raw.get("run_name", self.name))
        self.aggregate = raw.get("aggregate_name", "") or self.run.aggregate
        self.message = ""
        if raw.get("skipped") or raw.get("skip_message"):  # Google Benchmark 1.8 skip
            self.disposition, self.message = "skipped", raw.get("skip_message", "")
        elif raw.get("error_occurred"):
            self.message = raw.get("error_message", "")
            self.disposition = "failed"
            if self.message.startswith(SKIP_PREFIXES):
                self.disposition = "skipped"
            for prefix, kind in ERROR_PREFIXES.items():
                if self.message.startswith(prefix):
                    self.disposition = kind
        else:
            self.disposition = "passed"

    @property
    def is_error(self):
        return self.disposition in ("incorrect", "failed", "oom")

    @property
    def on_gpu(self):
        """Whether the entry ran on the GPU: the `on_gpu` counter the registrar
        writes, or for files written before it, the GPU variants' names."""
        v = self.counter("on_gpu")
        if v is not None:
            return v == 1
        return self.run.variant.split(".")[0] in GPU_VARIANT_PREFIXES

    def counter(self, key, default=None):
        v = self.raw.get(key, default)
        return v if isinstance(v, (int, float)) else default

    def seconds(self):
        """Time per iteration in seconds (real_time, which is manual time here)."""
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[self.raw.get("time_unit", "ns")]
        return self.raw["real_time"] * scale


class Run:
    def __init__(self, path, context, entries):
        self.path, self.context, self.entries = path, context, entries

    def passed(self):
        return [e for e in self.entries if e.disposition == "passed" and not e.aggregate]

    def errors(self):
        return [e for e in self.entries if e.is_error]

    def skipped(self):
        return [e for e in self.entries if e.disposition == "skipped"]


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise LoadError("%s: no such file" % path)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LoadError("%s: not valid JSON (truncated?): %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) or "context" not in doc:
        raise LoadError("%s: not Google Benchmark JSON (no 'context' and 'benchmarks')" % path)
    try:
        entries = [Entry(b) for b in doc["benchmarks"]]
    except (KeyError, ValueError) as e:
        raise LoadError("%s: bad benchmark entry: %s" % (path, e))
    return Run(path, doc["context"], entries)


def load_or_exit(path, tool):
    """load(path) for a command-line tool: on a bad file, one line on stderr and exit status 2."""
    try:
        return load(path)
    except LoadError as e:
        print("%s: %s" % (tool, e), file=sys.stderr)
        sys.exit(2)
