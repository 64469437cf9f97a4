"""The data side of the charts (plots/report.py): entries grouped into one
Stat per instance and source (median seconds, spread, counters), and the pure
selections the charts draw from: labels, families, baselines, each variant's
own 1-thread run, the most threads, ceilings and fractions of them. No
matplotlib here."""
import math
import re

from regress import derived
from regress import results


class NoData(Exception):
    """The input holds nothing this chart can draw; the message says what is missing."""


class Stat:
    """One instance of one source across repetitions: median seconds, spread, counters."""

    def __init__(self, entries):
        e0 = entries[0]
        self.run, self.entries, self.source = e0.run, entries, e0.source
        self.role, self.device, self.rate = e0.role, e0.device, e0.rate
        secs = [e.seconds() for e in entries]
        self.seconds = derived.median(secs)
        self.stdev = _stdev(secs)
        self.cv = derived.cv(secs)
        self.n = len(secs)

    def spread_of(self, value):
        """`value`'s spread from the repetitions' relative spread of seconds; None without repetitions."""
        if self.stdev is None or not self.seconds or value is None:
            return None
        return value * self.stdev / self.seconds

    def counter(self, key):
        vals = [e.counter(key) for e in self.entries if e.counter(key) is not None]
        return derived.median(vals) if vals else None

    def counter_stdev(self, key):
        return _stdev([e.counter(key) for e in self.entries if e.counter(key) is not None])

    def arg(self, key, cast=str):
        v = self.run.args.get(key)
        if v is None:
            return None
        try:
            return cast(v)
        except ValueError:
            return None

    def problem(self):
        """The run's arguments without knobs: equal for all variants of one problem."""
        return self.run.problem()

    def workers(self):
        """threads x ranks (1 where the run name has neither)."""
        return (self.arg("threads", int) or 1) * (self.arg("ranks", int) or 1)


def _stdev(vals):
    """The sample standard deviation; None below two values (no spread is known)."""
    if len(vals) < 2:
        return None
    mean = sum(vals) / len(vals)
    return math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))


def collect(runs):
    groups = {}
    for run in runs:
        for e in run.passed():
            if e.seconds() is not None:
                groups.setdefault((e.source, e.run.base()), []).append(e)
    return [Stat(es) for es in groups.values()]


def machine(runs):
    ctx = runs[0].context if runs else {}
    parts = [ctx.get("cpu_model") or ctx.get("host_name", "")]
    gpu = ctx.get("gpu", "")
    if isinstance(gpu, str) and gpu and not gpu.startswith("none"):
        parts.append(gpu)
    return " / ".join(str(p) for p in parts if p)


def work(problem):
    """Size of a problem, for choosing which to draw: the product of its numeric dimensions."""
    w = 1.0
    for k, v in problem:
        if k in ("M", "N", "K", "D", "n"):
            try:
                w *= float(v)
            except ValueError:
                pass
    return w


def problem_label(problem):
    return " ".join("%s=%s" % (k, v) for k, v in problem)


def several_sources(stats):
    return len({s.source for s in stats}) > 1


def source_suffix(s, several):
    return " [%s]" % s.source if several else ""


def label(s, several=False):
    knob = [("%s %s" % (k, s.run.args[k])) for k in results.KNOBS if k in s.run.args]
    return s.run.variant + (" (%s)" % ", ".join(knob) if knob else "") + source_suffix(s, several)


def missing_roles(stats, what):
    """NoData for files written before parbench described its entries."""
    if stats and all(s.role is None for s in stats):
        return NoData("%s needs the roles parbench writes into each entry (schema 1); these files predate them: "
                      "ci/upgrade-json FILE stamps an old file" % what)
    return None


def natural(text):
    """Sort key that orders the numbers inside labels by value (block 32 < block 128)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def by_family(stats, family):
    return [s for s in stats if s.run.family == family]


def baselines(stats):
    """{(source, family, problem): Stat} of the entries marked baseline."""
    return {(s.source, s.run.family, s.problem()): s for s in stats if s.role == "baseline"}


def own_single(stats):
    """{(source, family, variant, problem): Stat} of each variant's 1-thread (1-rank) run."""
    out = {}
    for s in stats:
        if s.arg("threads", int) == 1 and s.arg("ranks", int) in (None, 1):
            out[(s.source, s.run.family, s.run.variant, s.problem())] = s
    return out


def at_most_threads(ss):
    """Threaded variants at their most threads only (one line per variant and source)."""
    most = {}
    for s in ss:
        t = s.arg("threads", int)
        if t is not None:
            key = (s.source, s.run.variant)
            most[key] = max(most.get(key, 0), t)
    return [s for s in ss if s.arg("threads", int) in (None, most.get((s.source, s.run.variant)))]


def ceilings(stats):
    """{(source, kind, device): (rate, Stat)} of the entries marked ceiling,
    read through their own rate counter (the best of their kind if several)."""
    out = {}
    for s in stats:
        if s.role != "ceiling" or not s.rate:
            continue
        v = s.counter(s.rate[0])
        if v and v > 0:
            key = (s.source, s.rate[1], s.device)
            if key not in out or v > out[key][0]:
                out[key] = (v, s)
    return out


def fractions(stats):
    """[(Stat, fraction, ceiling Stat)] of every non-ceiling entry whose rate
    has a ceiling of its kind on its device in its source. An entry run on G
    GPUs (the gpus knob) is measured against G times the one-GPU ceiling."""
    ceil = ceilings(stats)
    rows = []
    for s in stats:
        if s.role == "ceiling" or not s.rate or s.device is None:
            continue
        c = ceil.get((s.source, s.rate[1], s.device))
        v = s.counter(s.rate[0])
        if c is None or v is None:
            continue
        rows.append((s, derived.fraction(v, c[0] * (s.arg("gpus", int) or 1)), c[1]))
    return rows
