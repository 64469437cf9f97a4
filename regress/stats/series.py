"""One benchmark's series in a machine's history, analysed: its segments
(runs between changes of driver or library), the change points the
detector finds in each, the pieces between them, the threshold of the
latest segment, and the baseline a family chart divides by; and the changes
of a machine's series together, worst first, those accepted with a
baseline marked."""
import datetime
import math

import numpy as np

from regress.load.fmt import chart_stem
from regress.stats import changepoint
from regress.stats import ranks as stats

BASELINE_RUNS = 3  # a family chart divides each benchmark by its median over these first runs


def finite_or_none(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


# ---------------------------------------------------------------- analysis

def split_segments(points):
    """[(start, end)] of the runs of one machine segment each (a point with new_segment starts one)."""
    bounds = [0] + [i for i, p in enumerate(points) if i and p.get("new_segment")] + [len(points)]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i + 1] > bounds[i]]


def change_points(points, floor, multiple=changepoint.MULTIPLE, confirm=changepoint.CONFIRM):
    """The changes of one series, found machine segment by machine segment
    (split_segments: no change is sought across a change of driver or
    library): detect's dicts, their index into points, with "segment", the
    segment's id. What ci/trends reports and raises alerts from, and where
    compare --history stops taking differences (regress/stats/noise.py)."""
    out = []
    for a, b in split_segments(points):
        for c in changepoint.detect(points[a:b], floor, multiple=multiple, confirm=confirm):
            c["index"] += a
            c["segment"] = points[a].get("segment")
            out.append(c)
    return out


def measured(p):
    """Whether a point of a series holds a time (a failed run holds none)."""
    m = p.get("median")
    return m is not None and m > 0 and math.isfinite(m)


class Series:
    """One benchmark on the machine: its points, change points, segments and threshold."""

    def __init__(self, name, family, device, floor, points, ordinal, confirm, multiple):
        self.name, self.family, self.device, self.floor = name, family, device, floor
        self.points = points
        self.x = [ordinal[p["run_id"]] for p in points]
        self.stem = chart_stem(name)
        self.changes = change_points(points, floor, multiple, confirm)  # detect's dicts, index into points
        self.pieces = []           # (first x, last x, median) of the detector's segments
        self.segments = split_segments(points)
        for a, b in self.segments:
            cuts = [a] + [c["index"] for c in self.changes if a <= c["index"] < b] + [b]
            for i in range(len(cuts) - 1):
                js = [j for j in range(cuts[i], cuts[i + 1]) if measured(points[j])]
                if js:
                    self.pieces.append((self.x[js[0]], self.x[js[-1]],
                                        float(np.median([points[j]["median"] for j in js]))))
        # The threshold of the latest segment (detect gives it with each change; the
        # same rule here when it found none), and the median it is drawn around.
        self.threshold, self.noise, self.centre = None, None, None
        if self.segments:
            a, b = self.segments[-1]
            mine = [c for c in self.changes if a <= c["index"] < b]
            if mine:
                self.threshold, self.noise = mine[-1]["threshold"], mine[-1]["noise"]
            else:
                logs = np.log([p["median"] for p in points[a:b] if measured(p)])
                noise = stats.robust_sd(logs - np.median(logs), axis=0) if logs.size >= 3 else float("nan")
                self.noise = finite_or_none(noise)
                self.threshold = changepoint.threshold(noise, floor, multiple)
            last = [pc for pc in self.pieces if pc[1] >= self.x[a]]
            if last:
                self.centre = last[-1][2]

    def prev_x(self, c):
        """The x of the last measured run before change c (the commit range's start)."""
        for i in range(c["index"] - 1, -1, -1):
            if measured(self.points[i]):
                return self.x[i]
        return self.x[c["index"]] - 1

    def baseline(self):
        """The median of the first BASELINE_RUNS measured runs of the benchmark's latest segment."""
        for a, b in reversed(self.segments):
            vals = [p["median"] for p in self.points[a:b] if measured(p)]
            if vals:
                return float(np.median(vals[:BASELINE_RUNS]))
        return None


def metric_points(points, metric):
    """A series' points with the counter `metric` (its median over the run's
    repetitions) in the place of the time; a run without it is unmeasured."""
    out = []
    for p in points:
        q = dict(p)
        v = (p.get("counters") or {}).get(metric)
        ok = isinstance(v, (int, float)) and v > 0 and math.isfinite(v)
        q.update(median=float(v) if ok else None, low=float(v) if ok else None, high=float(v) if ok else None,
                 mad=None, times=[float(v)] if ok else [])
        out.append(q)
    return out


# ---------------------------------------------------------------- the changes

def rank(c):
    """Worst first: confirmed regressions, tentative regressions, then improvements (confirmed
    first); by size within each."""
    group = {("confirmed", "slower"): 0, ("tentative", "slower"): 1,
             ("confirmed", "faster"): 2, ("tentative", "faster"): 3}[(c["status"], c["direction"])]
    return (group, -abs(c["step"]), c["name"], c["index"])


def changes_of(series):
    """Every change of the series, worst first (rank): detect's dicts with
    the benchmark's name, family, device, floor, chart stem and run id."""
    changes = []
    for s in series:
        for c in s.changes:
            d = dict(c)
            d.update(name=s.name, family=s.family, device=s.device, floor=s.floor, stem=s.stem,
                     run_id=s.points[c["index"]]["run_id"])
            changes.append(d)
    changes.sort(key=rank)
    return changes


def instant(date):
    """An ISO date as an aware datetime (UTC when it has no offset), or None."""
    if not isinstance(date, str):
        return None
    try:
        d = datetime.datetime.fromisoformat(date.strip())
    except ValueError:
        return None
    return d if d.tzinfo is not None else d.replace(tzinfo=datetime.timezone.utc)


def mark_accepted(changes, accepted_through):
    """Each change gets "accepted": a regression first measured at or before
    `accepted_through` (an aware datetime, or None: none is) was accepted
    with the machine's baseline of that date."""
    for c in changes:
        d = instant(c["date"])
        c["accepted"] = bool(accepted_through is not None and d is not None and c["direction"] == "slower"
                             and d <= accepted_through)
