"""Which ceiling an entry's rate is read against, decided once for the
report's charts (plots/report_stats.py) and the comparator's fractions
across hardware (regress/verdict/samples.py).

A ceiling is an entry marked `ceiling` (the Ceiling family), read through its
own rate counter; an entry's rate (parbench.rate: a counter and a ceiling
kind) is read against the ceiling of that kind measured on the same device
in the same source (run): the best of that kind where several measured it
(a peer copy per pair of GPUs, a library GEMM at two sizes), as STREAM
reports its best. An entry run on G GPUs (the gpus knob) is read against G
times the one-GPU ceiling.

The matching works on anything that has an entry's `role`, `rate`, `device`,
`source`, `run` and a `counter(key)` that gives its value over the
repetitions: the charts' Stat, or `Repetitions` below (the median of one
instance's passed repetitions).
"""
from regress.load import derived


def ceilings(items):
    """{(source, kind, device): (rate, item)} of the items marked ceiling,
    read through their own rate counter (the best of their kind if several)."""
    out = {}
    for s in items:
        if s.role != "ceiling" or not s.rate:
            continue
        v = s.counter(s.rate[0])
        if v and v > 0:
            key = (s.source, s.rate[1], s.device)
            if key not in out or v > out[key][0]:
                out[key] = (v, s)
    return out


def gpus(item):
    """The GPUs an entry ran on: its gpus knob, 1 without one."""
    try:
        return max(int(item.run.args.get("gpus", 1)), 1)
    except ValueError:
        return 1


def ceiling_for(item, ceil):
    """(the ceiling's rate for this item, the ceiling item): the ceiling of
    `ceil` (ceilings()) of the item's rate kind on its device in its source,
    G times for an item on G GPUs; None for an item without a rate or device,
    or whose source measured no ceiling of that kind there."""
    if not item.rate or item.device is None:
        return None
    c = ceil.get((item.source, item.rate[1], item.device))
    if c is None:
        return None
    return c[0] * gpus(item), c[1]


class Repetitions:
    """One instance's passed repetitions (entries of one run name) as an item
    of ceilings(): what the first says of it, and the median of a counter."""

    def __init__(self, entries):
        e0 = entries[0]
        self.entries = entries
        self.role, self.rate, self.device, self.source, self.run = e0.role, e0.rate, e0.device, e0.source, e0.run

    def counter(self, key):
        vals = [e.counter(key) for e in self.entries if e.counter(key) is not None]
        return derived.median(vals) if vals else None


def run_ceilings(run):
    """ceilings() of one Run: each ceiling instance read through the median
    of its passed repetitions, as the report reads it."""
    groups = {}
    for e in run.passed():
        if e.role == "ceiling":
            groups.setdefault(e.run.base(), []).append(e)
    return ceilings(Repetitions(es) for es in groups.values())
