"""The data side of the charts (plots/report.py): entries grouped into one
Stat per instance and source (median seconds, spread, counters), and the pure
selections the charts draw from: labels, families, baselines, each variant's
own 1-thread run, the most threads, ceilings and fractions of them. No
matplotlib here."""
import math
import re

from regress.load import derived
from regress.load import results
from regress.load.ceilings import ceiling_for, ceilings


class NoData(Exception):
    """The input holds nothing this chart can draw; the message says what is missing."""


class Stat:
    """One instance of one source across repetitions: median seconds, spread,
    counters, and `declared`, its file's parbench_counters (kinds and units)."""

    def __init__(self, entries):
        e0 = entries[0]
        self.declared = {}
        self.run, self.entries, self.source = e0.run, entries, e0.source
        self.role, self.device, self.rate, self.roof = e0.role, e0.device, e0.rate, e0.roof
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
    groups, declared = {}, {}
    for run in runs:
        for e in run.passed():
            if e.seconds() is not None:
                key = (e.source, e.run.base())
                groups.setdefault(key, []).append(e)
                declared.setdefault(key, run.counter_kinds)
    out = []
    for key, es in groups.items():
        s = Stat(es)
        s.declared = declared[key] if isinstance(declared[key], dict) else {}
        out.append(s)
    return out


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


def _declared(s, kind, unit):
    return sorted(k for k, v in s.declared.items()
                  if isinstance(v, dict) and v.get("kind") == kind and v.get("unit") == unit)


def roofline_points(stats):
    """[(Stat, intensity in flop/B, GFLOP/s per GPU)] of every non-ceiling
    entry whose file declares a work model in flop and a traffic model in
    bytes of the same unit of work, with that unit's time: <w>_per_<unit>
    (kind "model", unit "flop"), <b>_per_<unit> (kind "model", unit "B") and
    seconds_per_<unit> (kind "time"), as "flops_per_call", "bytes_per_call"
    and "seconds_per_call". An entry on G GPUs is drawn per GPU."""
    rows = []
    for s in stats:
        if s.role == "ceiling" or s.device is None:
            continue
        for fk in _declared(s, "model", "flop"):
            unit = fk.partition("_per_")[2]
            bk = [k for k in _declared(s, "model", "B") if k.partition("_per_")[2] == unit]
            flops, secs = s.counter(fk), s.counter("seconds_per_" + unit)
            nbytes = s.counter(bk[0]) if bk else None
            if not unit or not all(v is not None and v > 0 for v in (flops, nbytes, secs)):
                continue
            rows.append((s, derived.intensity(flops, nbytes), flops / secs * 1e-9 / (s.arg("gpus", int) or 1)))
            break
    return rows


def roofs(stats):
    """{(source, device): ([(peak GFLOP/s, ceiling Stat)], (bandwidth GB/s, ceiling Stat) or None)}:
    the compute ceilings (a rate in GFLOP/s) and the memory ceiling (kind
    "bandwidth", the best if several) measured in each source."""
    out = {}
    for (source, _, device), (v, c) in ceilings(stats).items():
        unit = (c.declared.get(c.rate[0]) or {}).get("unit")
        peaks, bw = out.setdefault((source, device), ([], None))
        if unit == "GFLOP/s":
            peaks.append((v, c))
        elif c.rate[1] == "bandwidth" and (bw is None or v > bw[0]):  # memory, not a link between GPUs
            out[(source, device)] = (peaks, (v, c))
    return out


def fractions(stats):
    """[(Stat, fraction, ceiling Stat)] of every non-ceiling entry whose rate
    has a ceiling of its kind on its device in its source (regress/load/ceilings.py:
    an entry run on G GPUs against G times the one-GPU ceiling)."""
    ceil = ceilings(stats)
    rows = []
    for s in stats:
        if s.role == "ceiling":
            continue
        c = ceiling_for(s, ceil)
        v = s.counter(s.rate[0]) if c else None
        if v is None:
            continue
        rows.append((s, derived.fraction(v, c[0]), c[1]))
    return rows
