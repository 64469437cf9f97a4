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
deviation of its first differences of log medians, divided by sqrt(2): a
step between two nights is one large difference, which the median ignores,
so a regression does not inflate the noise that judges it; a disturbed night
is two large differences, ignored the same way. Only the newest HISTORY_POINTS
runs count, and a series needs MIN_POINTS passed runs (MIN_POINTS - 1
differences); fewer fall back to the prior.

Its distribution. The comparator allows RUN_MULTIPLE (8) x the noise for the
difference of two process offsets (decide.RUN_MULTIPLE), a bound sized for
offsets with Student-t tails of 5 degrees of freedom, whose standardised
differences have a 99th percentile of MODEL_Q99 = 3.5 (of |z|, z = difference
/ (sqrt 2 x noise)). The machine's own standardised differences, pooled over
its series, give their 99th percentile; where it is above the model's, their
ratio (the tail factor) scales the allowance up: a machine whose nights
disagree more often than the model assumes gets a wider allowance, never a
narrower one.

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


def series_noise(medians):
    """(noise, standardised first differences) of one series of medians
    (seconds, oldest first); (None, []) with fewer than MIN_POINTS."""
    x = [math.log(m) for m in medians if isinstance(m, (int, float)) and m > 0 and math.isfinite(m)]
    x = x[-HISTORY_POINTS:]
    if len(x) < MIN_POINTS:
        return None, []
    d = np.diff(np.asarray(x))
    s = max(NOISE_MIN, 1.4826 * float(np.median(np.abs(d - np.median(d)))) / math.sqrt(2.0))
    return s, list(np.abs(d) / (math.sqrt(2.0) * s))


def tail_factor(z):
    """max(1, 99th percentile of |z| / MODEL_Q99); 1 with fewer than 100 values."""
    if len(z) < 100:
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
