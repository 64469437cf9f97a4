"""Run-to-run noise per benchmark: how far two processes of one binary can
disagree, which two files (one process per side) cannot measure themselves.

Three sources, strongest first:

  --noise VERDICT.json  the noise of one run measured by a paired A/A
                        comparison (compare --run BENCH BENCH --json).
  --history DIR         the series of this machine in a history store
                        (regress/store/): the noise of each benchmark's
                        nightly medians, learnt from their first differences.
  the prior             a value per device and family (PRIORS), from this
                        project's own paired A/A runs, for benchmarks that
                        neither source covers.

From history. A series' run-to-run noise is 1.4826 x the median absolute
deviation of its first differences of log medians, divided by sqrt(2), and a
difference is taken only between two runs of one piece of the series
(pieces): the series is cut where a machine segment starts (another driver
or library) and at every change point that the project's detector finds in
each segment (series.change_points: changepoint.detect as ci/trends runs it,
with the benchmark's two-file floor), and the runs of a change that a person
has judged real (its alert acknowledged, won't fix, fixed or backed out:
regress/store/noise.py) are left out, the series cut there too. A detected
step then contributes no difference at all, neither to the noise of its
series nor to the tail factor below. A step that the detector does not find
(one run old, or below the floor) is one large difference, which the median
ignores, and a disturbed night two. Only the newest HISTORY_POINTS measured
runs count, and the change points are sought among them only: compare reads
the series of every benchmark it compares, and the detector's cost grows
with the square of a series' length (some 40 ms a series at 500 runs, 5 ms
at 60).

The differences of all the pieces are pooled, and a series needs
MIN_POINTS - 1 of them; with fewer the prior stands in. Pooled rather than
the newest piece alone: a step moves a benchmark's level and rarely its
noise in log time, and the median absolute deviation is a coarse estimate
(a relative standard error of about 50% from 5 differences, 15% from 59),
so the newest piece alone would trade the noise of a long series for a
guess as soon as a step is found. So a newest piece shorter than MIN_POINTS
needs no rule of its own: its differences join the older pieces'.

Its distribution. The comparator allows RUN_MULTIPLES[device] (GPU 8, CPU 7)
x the noise for the difference of two process offsets (decide.RUN_MULTIPLES);
the GPU's is sized for offsets with Student-t tails of 5 degrees of freedom, whose standardised
differences have a 99th percentile of MODEL_Q99 = 3.5 (of |z|, z = difference
/ (sqrt 2 x noise)). The machine's own standardised differences, each taken
within a piece and against its own series' noise, pooled over its series,
give their 99th percentile; where it is above the model's, their ratio (the
tail factor) scales the allowance up: a machine whose nights disagree more
often than the model assumes gets a wider allowance, never a narrower one.

The pool is one for all series, so what enters it must be noise: a step
that entered it as one large difference per stepped series lifted the
factor of every series (issue 65: +30% in 12 series of 112 took it from
1.37 to 3.00, and the same +30% elsewhere from 40 SLOWER to 10). Within the
pieces a detected step is no difference at all, and the pool leaves out
every |z| beyond Z_CUT = 8: a difference that large is a level shift that
the detector has not found (a step at the newest run, which segments of at
least 2 runs cannot confirm yet, or one below the floor) or a gross night,
not the tail of the noise. A cut, not a cap per series: a step is one
difference in each series it hits, which no cap per series stops. Under the
model 1 difference in 10,000 lies beyond 8, so the cut leaves the model's
percentile where it is, and the factor is at most Z_CUT / MODEL_Q99 = 2.29.
Its cost is in young histories, whose noise, a median of few differences,
can read low enough to put ordinary differences beyond 8: with log-normal
noise and 8 nights a series 0.5% of them lie there, and the factor is 1.22
instead of 1.49; from 10 nights on, 0.06% and less.

What a detected step still changes for the others is that its series has
one difference fewer, its noise a median of one value fewer. With 112
series of 2% log-normal noise, 12 of them +30% half-way, the others' factor
moved by 0.01 to 0.02 on average at 10 to 12 nights (at most 0.17 in 20 draws); at
16 nights it stayed exactly where it was in 29 draws of 30 (the rule before:
lifted in 28, by up to 0.6). A step at the newest night that a series whose
noise reads high puts below Z_CUT still enters the pool: at 16 nights the
others' factor moved in 6 draws of 30, by at most 0.16 (before: up to 0.57).
(tests/test_history_noise.py.)

The prior. PRIORS holds, per device and family, the 90th percentile of the
noise of one run over every benchmark of the project's paired A/A runs
(results/reference/*/compare-paired-aa*.json.gz), rounded up to 0.1%: a
benchmark about which nothing is known is taken to be as noisy as the
noisiest tenth of the measured ones. tests/test_compare.py recomputes the
table from those files.
"""
import math

import numpy as np

HISTORY_POINTS = 60
MIN_POINTS = 6
MODEL_Q99 = 3.5
Z_CUT = 8.0               # a |z| beyond it is a level shift or a gross night, not the noise's tail
NOISE_MIN = 1e-4          # a constant series: a resolution, not a zero

# (device, family): the 90th percentile of the paired A/A noise of one run,
# pooled over the sessions of PRIOR_SOURCES; (device, None) for the other
# families of that device (the largest of its measured families).
PRIORS = {
    ("gpu", "GEMM"): 0.011,   # nvidia-h200, 2 sessions, 96 values
    ("gpu", "Sort"): 0.028,   # nvidia-h200, 2 sessions, 66 values
    ("gpu", None): 0.028,
    ("cpu", "GEMM"): 0.105,   # dev-2core, 1 session, 20 values (1-thread CPU GEMM)
    ("cpu", None): 0.105,
}
PRIOR_SOURCES = {
    "gpu": ("results/reference/nvidia-h200/compare-paired-aa.json.gz",
            "results/reference/nvidia-h200/compare-paired-aa-2.json.gz"),
    "cpu": ("results/reference/dev-2core/compare-paired-aa.json.gz",),
}
PRIOR_QUANTILE = 90


class NoiseError(Exception):
    """An unusable --history: one line, exit 2."""


def prior(device, family):
    device = device or "cpu"
    return PRIORS.get((device, family), PRIORS[(device, None)])


def prior_table(paths):
    """{(device, family): rounded-up 90th percentile of the noise of one run}
    of paired verdict files: how PRIORS is made."""
    import gzip
    import json
    pooled = {}
    for p in paths:
        with gzip.open(p, "rt") as f:
            doc = json.load(f)
        for r in doc["benchmarks"]:
            if isinstance(r.get("noise"), (int, float)):
                pooled.setdefault((r["device"], r["family"]), []).append(r["noise"])
    return {k: math.ceil(np.percentile(v, PRIOR_QUANTILE) * 1000 - 1e-9) / 1000 for k, v in pooled.items()}


def timed(point):
    """Whether a point of a series holds a time (series.measured's rule)."""
    m = point.get("median")
    return isinstance(m, (int, float)) and m > 0 and math.isfinite(m)


def window_start(points):
    """The index of the first point of the newest HISTORY_POINTS measured
    runs of a series (0 when it has fewer)."""
    idx = [i for i, p in enumerate(points) if timed(p)]
    return idx[-HISTORY_POINTS] if len(idx) > HISTORY_POINTS else 0


def pieces(points, floor, leave_out=()):
    """The medians (seconds) of one series' newest HISTORY_POINTS measured
    runs, in the pieces within which their differences are run-to-run noise:
    cut where a machine segment starts and at every change point found in
    each (series.change_points; floor: the benchmark's, as ci/trends), the
    runs whose indices are in leave_out left out and cut at. points: oldest
    first, as History.series gives them (median, None for a run without a
    time: skipped, not cut at; new_segment)."""
    # Imported here: the detector brings scipy, which a comparison without
    # --history has no use for (and compare starts faster without it).
    from regress.stats.series import change_points, split_segments
    start = window_start(points)
    pts = points[start:]
    cuts = {a for a, _ in split_segments(pts)} | {c["index"] for c in change_points(pts, floor)}
    out = [[]]
    for i, p in enumerate(pts):
        gone = i + start in leave_out
        if i in cuts or gone:
            out.append([])
        if not gone and timed(p):
            out[-1].append(float(p["median"]))
    return [q for q in out if q]


def series_noise(parts):
    """(noise, standardised first differences) of one series from its
    pieces (lists of medians, seconds, oldest first: pieces()): the
    differences of log medians within each piece, pooled; (None, []) with
    fewer than MIN_POINTS - 1 of them."""
    d = []
    for q in parts:
        x = [math.log(m) for m in q if isinstance(m, (int, float)) and m > 0 and math.isfinite(m)]
        d += list(np.diff(np.asarray(x, dtype=float)))
    if len(d) < MIN_POINTS - 1:
        return None, []
    d = np.asarray(d)
    s = max(NOISE_MIN, 1.4826 * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2.0))
    return s, list(np.abs(d) / (math.sqrt(2.0) * s))


def tail_factor(z):
    """max(1, 99th percentile of the |z| up to Z_CUT / MODEL_Q99); 1 with
    fewer than 100 of them."""
    z = np.asarray(z, dtype=float)
    z = z[z <= Z_CUT]
    if z.size < 100:
        return 1.0
    return max(1.0, float(np.percentile(z, 99)) / MODEL_Q99)


class Model:
    """The run-to-run noise of the benchmarks of one comparison."""

    def __init__(self):
        self.measured = {}    # name -> (noise, source label)
        self.tail = 1.0
        self.describe = []    # lines for the document's warnings / settings

    def lookup(self, name, device, family):
        """(noise, source): the measured value, else the prior."""
        if name in self.measured:
            return self.measured[name]
        return prior(device, family), "prior"

    def add_paired(self, noise_by_name):
        for k, v in noise_by_name.items():
            old = self.measured.get(k)
            if old is None or v > old[0]:
                self.measured[k] = (v, "A/A")
