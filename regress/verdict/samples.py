"""What each side knows about each benchmark: the samples of a Run (collect),
merged over paired rounds (merge_rounds), and the compared metric the files
declare (metric_direction). Values are logs of the time per iteration (or of
the --metric counter; of its inverse when higher is better). Across hardware
(collect with a run's ceilings) they are logs of the inverse of each
repetition's fraction of its own run's ceiling (fraction_value)."""
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from regress.load import derived, results
from regress.load.ceilings import ceiling_for
from regress.verdict.settings import Metric


class InputError(Exception):
    """Unreadable input: one line, exit 2."""


class NotComparable(Exception):
    """A hard fingerprint mismatch: one line, exit 3."""


WORK_KINDS = ("problem", "model", "knob", "result")


@dataclass
class Sample:
    """What one side knows about one benchmark."""
    name: str
    entry: results.Entry
    family: str = ""
    device: Optional[str] = None
    library: Optional[str] = None
    values: list = field(default_factory=list)       # log metric per repetition (files) or per round (paired)
    errors: list = field(default_factory=list)       # why an entry is an error: "incorrect: ...", ...
    unsupported: list = field(default_factory=list)  # its unsupported entries
    work: dict = field(default_factory=dict)         # counter -> set of values (problem/model/knob/result)
    throttled: list = field(default_factory=list)    # throttled per repetition (GPU)
    clock: list = field(default_factory=list)        # sm_clock_max_mhz per repetition (GPU)
    rate: Optional[tuple] = None                     # (counter, [values]) of the entry's declared rate
    no_metric: bool = False                          # passed, but without the --metric counter
    code: set = field(default_factory=set)           # parbench.code of its entries: the code it ran
    libver: set = field(default_factory=set)         # parbench.library_version of its entries
    models: set = field(default_factory=set)         # parbench.gpu: the GPU model each ran on (ci/run-suite)
    ceiling: Optional[tuple] = None                  # across hardware: (kind, its run's ceiling) it is read against
    not_across: Optional[str] = None                 # across hardware: why a passed entry has no fraction

    @classmethod
    def of(cls, name, entry):
        return cls(name, entry, family=entry.run.family, device=entry.device, library=entry.library)

    def measured(self):
        """Its values that are measurements (a paired round without one is None)."""
        return [v for v in self.values if v is not None]


def _metric_value(entry, metric, higher_better):
    if metric is None:
        v = entry.seconds()
    else:
        v = entry.counter(metric)
    if v is None or not v > 0:
        return None
    return -math.log(v) if higher_better else math.log(v)


def _rate_counter(entry, run):
    if entry.rate:
        return entry.rate[0]
    for k in sorted(entry.counters()):
        if run.kind_of(k) == "rate":
            return k
    return None


def _add_passed(s, e, run, work_keys):
    """What a passed entry tells besides its value: code, work, clocks, rate."""
    for have, key in ((s.code, e.code), (s.libver, e.library_version), (s.models, e.gpu)):
        if key is not None:
            have.add(key)
    for k in work_keys:
        w = e.counter(k)
        if w is not None:
            s.work.setdefault(k, set()).add(w)
    if s.device == "gpu":
        t = e.counter("throttled")
        if t is not None:
            s.throttled.append(t)
        c = e.counter("sm_clock_max_mhz")
        if c is not None:
            s.clock.append(c)
    rc = _rate_counter(e, run)
    if rc is not None and e.counter(rc):
        if s.rate is None:
            s.rate = (rc, [])
        if s.rate[0] == rc:
            s.rate[1].append(e.counter(rc))


# Why an entry has no fraction of a ceiling, whichever run it is in.
CEILING_ITSELF = "a ceiling: what the others are read against"
NO_RATE = "no rate read against a ceiling (parbench.rate)"


def fraction_value(e, ceil):
    """(-log of the entry's rate / its run's ceiling of the rate's kind, the
    ceiling) of a passed entry, or (None, why it has none). ceil: the run's
    ceilings (regress/load/ceilings.py). The inverse, as for any rate: higher
    is better, and the value is of the time it implies."""
    if e.role == "ceiling":
        return None, CEILING_ITSELF
    if not e.rate:
        return None, NO_RATE
    c = ceiling_for(e, ceil)
    if c is None:
        return None, "its run measured no %s ceiling on the %s" % (e.rate[1], e.device or "unknown device")
    v = e.counter(e.rate[0])
    if v is None or not v > 0:
        return None, "its rate %s is %r" % (e.rate[0], v)
    return -math.log(derived.fraction(v, c[0])), c[0]


def collect(run, metric=None, higher_better=False, group=False, ceil=None):
    """{run name: Sample} of one Run: one value per repetition, or with group
    one per benchmark (the median of this run's repetitions: a paired round).
    With ceil (the run's ceilings): across hardware, the values are of each
    repetition's fraction of its ceiling, and metric is not read."""
    out = {}
    work_keys = [k for k, info in run.counter_kinds.items() if info.get("kind") in WORK_KINDS]
    per_run = {}
    for e in run.entries:
        if e.aggregate:
            continue
        name = e.run_name
        s = out.get(name)
        if s is None:
            s = out[name] = Sample.of(name, e)
        if e.disposition == "unsupported":
            s.unsupported.append(e)
            continue
        if e.is_error:
            s.errors.append("%s: %s" % (e.disposition.replace("_", " "), e.reason or e.message))
            continue
        if ceil is not None:
            v, c = fraction_value(e, ceil)
            if v is None:
                s.not_across = s.not_across or c
                continue
            s.ceiling = (e.rate[1], c)
        else:
            v = _metric_value(e, metric, higher_better)
        if v is None:
            if metric is None:  # a passed entry whose time is 0 or missing is no measurement
                s.errors.append("passed with a time per iteration of %r: not a measurement"
                                % e.counter("real_time"))
            else:
                s.no_metric = True  # a passed entry without the --metric counter: left out
            continue
        per_run.setdefault(name, []).append(v)
        _add_passed(s, e, run, work_keys)
    for name, vals in per_run.items():
        out[name].values = [float(np.median(vals))] if group else vals
    return out


def _merge_into(m, s):
    m.errors += s.errors
    m.unsupported += s.unsupported
    m.no_metric = m.no_metric or s.no_metric
    for k, vs in s.work.items():
        m.work.setdefault(k, set()).update(vs)
    m.throttled += s.throttled
    m.code |= s.code
    m.libver |= s.libver
    m.models |= s.models
    m.clock += s.clock
    if s.rate and (m.rate is None or m.rate[0] == s.rate[0]):
        m.rate = (s.rate[0], (m.rate[1] if m.rate else []) + s.rate[1])


def merge_rounds(samples_per_round):
    """One Sample per benchmark over paired rounds: values[i] is round i's
    median, None where that round has no passed value."""
    merged = {}
    n = len(samples_per_round)
    for i, samples in enumerate(samples_per_round):
        for name, s in samples.items():
            m = merged.get(name)
            if m is None:
                m = merged[name] = Sample.of(name, s.entry)
                m.values = [None] * n
            if s.values:
                m.values[i] = s.values[0]
            _merge_into(m, s)
    return merged


def scale(samples, factor):
    """--scale-new: NEW's times x F (its log values + log F; rates / F)."""
    if not factor:
        return
    shift = math.log(factor)
    for s in samples.values():
        s.values = [None if v is None else v + shift for v in s.values]
        if s.rate:
            s.rate = (s.rate[0], [r / factor for r in s.rate[1]])


def load_run(path, what):
    """A Run for the comparator: the loader's contract (results.load_strict)
    refuses what it cannot use, one line, exit 2."""
    try:
        return results.load_strict(path, what)
    except results.LoadError as e:
        raise InputError(str(e))


def metric_direction(runs, metric):
    """The compared Metric (which way is better, its unit); InputError for an unknown counter."""
    if metric in (None, "real_time"):
        return Metric(metric, False, "s")
    if metric == "cpu_time":
        raise InputError("--metric cpu_time: parbench times every run itself (manual time, in real_time); "
                         "the CPU time of the timing thread means nothing here")
    for run in runs:
        info = run.counter_kinds.get(metric)
        if info:
            # A time, a rate, an energy: whatever says which way is better.
            if info.get("better") not in ("higher", "lower"):
                raise InputError("--metric %s is a %s counter, which has no better direction (a time, a rate or "
                                 "an energy has)" % (metric, info.get("kind")))
            return Metric(metric, info.get("better") == "higher", info.get("unit", ""))
    for run in runs:
        if any(e.has(metric) for e in run.entries):
            raise InputError("--metric %s: the files do not say whether higher is better (schema 0)" % metric)
    raise InputError("--metric %s: no entry has that counter" % metric)
