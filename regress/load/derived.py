"""Derived figures, defined once: every chart, table and summary computes
them here, and tests/test_plots.py pins each with exact numbers.

  speedup(t_base, t)         T(baseline) / T(variant), the same problem
  efficiency(t_own1, t, w)   T(the variant's own 1-thread, 1-rank run) / T(variant) / w,
                             w = threads x ranks (the workers it ran with)
  weak_efficiency(t1, t)     T(own 1-GPU run) / T(variant): weak scaling, each GPU's share
                             of the problem fixed, so the ideal time is constant
  fraction(rate, ceiling)    a rate as a fraction of the ceiling of its kind measured
                             in the same run; above 1 + CEILING_NOISE it is not a
                             result but a measurement problem (see classify_fraction)
  cv(values)                 sample standard deviation / mean of repetitions
  intensity(flops, bytes)    arithmetic intensity, flop per byte of the entry's traffic model
  roof(peak, bandwidth, ai)  the roofline: min(peak GFLOP/s, bandwidth GB/s x intensity)
  pareto(points)             the (time, energy) points no other point beats in both: none
                             takes less time and less energy (ties in one, less in the other
                             dominate), sorted by time

Only the Python standard library is used.
"""
import math
import statistics

# Measuring the same work twice in one run (e.g. a library GEMM variant at the
# ceiling's own size) gives fractions within a few percent of 1 either way;
# above this margin a "fraction of ceiling" means the ceiling was measured
# badly (too short, disturbed, or the wrong limit), not that it was beaten.
CEILING_NOISE = 0.03

# A parallel efficiency below this at more than one thread means the run was
# slower than its own 1-thread run would have been on one of its threads:
# oversubscribed cores or a disturbed machine, not a property of the code.
LOW_EFFICIENCY = 0.1

# A coefficient of variation above this across repetitions is listed as a
# finding: medians of such runs move by more than the effects people look for.
HIGH_CV = 0.05


def _positive(x, what):
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x) or x <= 0:
        raise ValueError("%s must be a finite number > 0, got %r" % (what, x))
    return float(x)


def speedup(t_base, t):
    """How many times faster than the family baseline on the same problem."""
    return _positive(t_base, "baseline time") / _positive(t, "time")


def efficiency(t_own1, t, workers):
    """Parallel efficiency: the speedup over the variant's own run with one
    thread (and one rank), divided by the workers (threads x ranks)."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError("workers must be an integer >= 1, got %r" % (workers,))
    return speedup(t_own1, t) / workers


def weak_efficiency(t_own1, t):
    """Weak-scaling efficiency: the variant's own time on one worker's share
    over its time on g shares with g workers (1 when the time stays flat)."""
    return speedup(t_own1, t)


def fraction(rate, ceiling):
    """A rate as a fraction of its ceiling."""
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not math.isfinite(rate) or rate < 0:
        raise ValueError("rate must be a finite number >= 0, got %r" % (rate,))
    return rate / _positive(ceiling, "ceiling")


def intensity(flops, nbytes):
    """Arithmetic intensity: the work model's flop per byte of the traffic model."""
    return _positive(flops, "flops") / _positive(nbytes, "bytes")


def roof(peak, bandwidth, ai):
    """The attainable GFLOP/s at intensity `ai` (flop/B) under a compute
    ceiling `peak` (GFLOP/s) and a memory ceiling `bandwidth` (GB/s); None
    for either: that roof alone."""
    ai = _positive(ai, "intensity")
    roofs = [_positive(peak, "peak")] if peak is not None else []
    if bandwidth is not None:
        roofs.append(_positive(bandwidth, "bandwidth") * ai)
    if not roofs:
        raise ValueError("a roof needs a peak or a bandwidth")
    return min(roofs)


def classify_fraction(f):
    """'ok' up to 1, 'at ceiling' up to 1 + CEILING_NOISE (the noise of measuring
    the same thing twice), 'above ceiling' beyond: a measurement problem."""
    if f <= 1.0:
        return "ok"
    if f <= 1.0 + CEILING_NOISE:
        return "at ceiling"
    return "above ceiling"


def median(values):
    vals = list(values)
    if not vals:
        raise ValueError("median of no values")
    return statistics.median(vals)


def cv(values):
    """Coefficient of variation of repetitions; None for fewer than two values
    or a zero mean (undefined, never NaN)."""
    vals = list(values)
    if len(vals) < 2:
        return None
    mean = statistics.fmean(vals)
    if mean == 0:
        return None
    return statistics.stdev(vals) / abs(mean)


def pareto(points):
    """The points of [(seconds, joules), ...] that no other point dominates
    (at most as long and at most as much energy, less in one), by time: the
    choices worth having when both time and energy count."""
    front, least = [], math.inf
    for t, e in sorted(points, key=lambda p: (p[0], p[1])):
        if e < least:
            front.append((t, e))
            least = e
    return front
