"""The comparator's decision rule over a batch of benchmarks, as arrays: the
rank tests' estimates and intervals (decide_unpaired, two files;
decide_paired, paired rounds), the thresholds, and the verdict of each row
after the multiple-comparison correction (verdicts). Pure statistics: the
rows, their reasons and their rendering are regress.verdict's and
regress.report's."""
import argparse
import math
import re

import numpy as np

from regress.stats import ranks as stats

# Default floors (fraction of the time) by device and mode: the smallest
# change SLOWER/FASTER may name. Paired rounds resolve 1% on either device
# (the noise of one run has a median of 0.2-0.7% on the H200, and CPU duet
# rounds cancel what a shared machine does to both sides); two files hold
# one process per side, hence 2% GPU and 10% CPU (docs/tools/compare.md).
DEFAULT_FLOORS = {("gpu", "paired"): 0.01, ("gpu", "files"): 0.02,
                  ("cpu", "paired"): 0.01, ("cpu", "files"): 0.10}
# The smallest change a user cares about, by device: SAME needs the whole
# interval inside +-this, as an equivalence test does, in either mode. A
# --floor sets both this and the threshold's floor.
EQUIVALENCE_FLOORS = {"gpu": 0.02, "cpu": 0.05}
# threshold = max(floor, MULTIPLE x noise). Paired: the noise of one run,
# measured over the rounds: a change smaller than one run's noise is not
# reported, whatever the rounds prove. Two files: the spread of the
# repetitions within each file.
DEFAULT_MULTIPLE = {"paired": 1.0, "files": 3.0}
# Two files hold one process offset per side, which their repetitions do not
# see (on the H200 5-30% for launch-bound kernels while repetitions agree
# within 1-6%). SLOWER/FASTER need the interval beyond RUN_MULTIPLES[device]
# x the run-to-run noise (regress.stats.noise). GPU: 8, sized for offsets
# with Student-t tails, whose difference stays inside it for all but ~1e-4 of
# benchmarks (tests/test_compare_accuracy.py). CPU: what the committed CPU
# A/A pairs of two files justify (CPU_AA_PAIRS): their largest standardised
# offset difference, |change| / (run-to-run noise x tail factor), x
# CPU_MULTIPLE_SAFETY, rounded up to a half (justified_multiple;
# tests/test_compare_cpu.py recomputes it).
RUN_MULTIPLES = {"gpu": 8.0, "cpu": 7.0}
RUN_MULTIPLE = RUN_MULTIPLES["gpu"]
CPU_AA_PAIRS = ("results/reference/dev-2core/compare-files-history-aa.json.gz",
                "results/reference/dev-2core/compare-files-history8-aa.json.gz")
CPU_MULTIPLE_SAFETY = 1.25
ALPHA = 0.05       # family-wise error rate of SLOWER / FASTER (Holm)
LEVEL = 0.90       # confidence interval for SAME: two one-sided tests at 5%
# A sequential comparison's looks at fewer rounds use the paired t-test: the
# exact signed-rank test cannot give a p below 2 / 2^n, too large to decide
# anything at 4 or 6 rounds under the correction (regress/verdict/sequential.py).
WSR_FROM = 12


def parse_floor(spec):
    """A --floor value, [FAMILY/]cpu|gpu=PERCENT, as ((family or None, device),
    fraction); argparse's ArgumentTypeError, with the one line, otherwise."""
    m = re.match(r"^(?:([A-Za-z0-9_.-]+)/)?(cpu|gpu)=([0-9]*\.?[0-9]+)%?$", spec)
    if not m:
        raise argparse.ArgumentTypeError("--floor %r is not [FAMILY/]cpu|gpu=PERCENT" % spec)
    return (m.group(1), m.group(2)), float(m.group(3)) / 100.0


def parse_change(text):
    """A change as "2%" or "0.02", above 0 (argparse type)."""
    try:
        v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a change (2%% or 0.02)" % text)
    if not 0 < v < 10:
        raise argparse.ArgumentTypeError("%r is not a change above 0" % text)
    return v


def floor_for(floors, mode, family, device):
    """The floor of a benchmark: the family's own for its device in `floors`
    ({(family or None, device): fraction}), else the device's there, else
    DEFAULT_FLOORS for the mode ("paired" or "files")."""
    device = device or "cpu"
    for key in ((family, device), (None, device)):
        if key in floors:
            return floors[key]
    return DEFAULT_FLOORS[(device, mode)]


def same_floor_for(floors, family, device):
    """The floor of SAME (the equivalence margin) of a benchmark: the one
    --floor gave for it (its family's, else its device's), else
    EQUIVALENCE_FLOORS."""
    device = device or "cpu"
    for key in ((family, device), (None, device)):
        if key in floors:
            return floors[key]
    return EQUIVALENCE_FLOORS[device]


def thresholds(noise, floor, multiple):
    """max(floor, multiple x noise), elementwise; a NaN noise counts as 0
    (the floor alone)."""
    noise = np.nan_to_num(np.asarray(noise, dtype=float))
    return np.maximum(floor, multiple * noise)


def decide_unpaired(X, Y, level=LEVEL, extra_noise=None):
    """The statistics of a batch of benchmarks with equal repetition counts:
    X (rows x n) BASE, Y (rows x m) NEW, log metric values (larger = slower);
    extra_noise: run-to-run noise per row (--noise) or None. A dict of arrays
    (est, lo, hi, p_up, p_down, p_two, noise, run_noise, min_p) for verdicts()."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    n, m = X.shape[1], Y.shape[1]
    r = stats.shift_test(stats.unpaired_effects(X, Y), "mw", n, m, level)
    # The spread of the repetitions, pooled over both sides (each about its own median).
    if n + m >= 6 and min(n, m) >= 2:
        noise = stats.robust_sd(np.concatenate([X - np.median(X, axis=1, keepdims=True),
                                                Y - np.median(Y, axis=1, keepdims=True)], axis=1))
    else:
        noise = np.full(X.shape[0], np.nan)
    r["noise"] = noise
    r["run_noise"] = np.full(X.shape[0], np.nan) if extra_noise is None else np.asarray(extra_noise, dtype=float)
    r["min_p"] = np.full(X.shape[0], stats.min_two_sided_p("mw", n, m))
    return r


def decide_paired(D, level=LEVEL, extra_noise=None, test="wsr"):
    """Like decide_unpaired for paired rounds: D (rows x rounds) of log(NEW/BASE).
    test: "wsr", the exact signed-rank test and the Hodges-Lehmann ratio, or
    "t", the paired t-test (a sequential comparison's early looks)."""
    D = np.asarray(D, dtype=float)
    n = D.shape[1]
    if test == "t":
        r = stats.t_shift(D, level)
    else:
        r = stats.shift_test(stats.walsh_averages(D), "wsr", n, 0, level)
    # The noise of one run: a pair's difference has twice its variance.
    noise = stats.robust_sd(D) / math.sqrt(2.0) if n >= 3 else np.full(D.shape[0], np.nan)
    if extra_noise is not None:
        noise = np.fmax(noise, extra_noise)
    r["noise"] = noise
    r["run_noise"] = np.full(D.shape[0], np.nan)
    r["min_p"] = np.full(D.shape[0], 0.0 if test == "t" else stats.min_two_sided_p("wsr", n))
    return r


def run_multiple_for(device):
    """The margin's multiple of the run-to-run noise for a device's benchmarks."""
    return RUN_MULTIPLES.get(device or "cpu", RUN_MULTIPLES["cpu"])


def justified_multiple(docs):
    """The CPU multiple that verdict documents of two-file A/A comparisons
    justify: the largest standardised offset difference of their CPU rows,
    |log(1 + change)| / (run_noise x the document's tail factor), since the
    margin multiplies both, x CPU_MULTIPLE_SAFETY, up to a half."""
    z = []
    for doc in docs:
        tail = doc["settings"].get("run_noise_tail") or 1.0
        z += [abs(math.log1p(r["change"])) / (r["run_noise"] * tail) for r in doc["benchmarks"]
              if r.get("device") == "cpu" and r.get("change") is not None and r.get("run_noise")]
    return math.ceil(2.0 * CPU_MULTIPLE_SAFETY * max(z)) / 2.0


def verdicts(r, floor, multiple, alpha=ALPHA, tail=1.0, correction="holm", family=None, run_multiple=RUN_MULTIPLE,
             same_floor=None, rejected=0):
    """Adds threshold, margin, p_adj (and p_holm), decidable and verdict
    (object array) to a result dict of decide_*; the multiple-comparison
    family is every row of r.

    threshold: max(floor, multiple x noise), the smallest change of interest.
    margin: run_multiple x run_noise x tail, how far two processes' offsets
    can plausibly disagree (two files; 0 where run_noise is NaN). SLOWER needs
    the change significant, its estimate beyond the threshold and its whole
    interval beyond the margin. SAME needs the interval inside +-same_floor
    (default: floor), the smallest change of interest, as an equivalence test
    does: where the noise makes the threshold wider than that, an interval
    inside the threshold but not inside the floor does not show the two sides
    equal. A change proven beyond the threshold is SLOWER or FASTER even
    where its interval also lies inside +-same_floor.
    correction: "holm" (family-wise) or "bh" (Benjamini-Hochberg, the false
    discovery rate; under no change at all also family-wise). family: the
    size of the multiple-comparison family when it holds more benchmarks
    than these rows (a sequential look at the undecided ones). rejected:
    how many of the others earlier looks found SLOWER or FASTER; they count
    as p = 0, the rest as p = 1, so a benchmark left for a later look
    competes with what is still open, not with a family of p = 1. Under the
    complete null nothing was rejected before and this is the p = 1 rule;
    tests/test_compare_accuracy.py holds the error rates on synthetic
    suites."""
    rows = len(r["est"])
    thr = thresholds(r["noise"], floor, multiple)
    tau = np.log1p(thr)
    margin = run_multiple * tail * np.nan_to_num(np.asarray(r.get("run_noise", np.full(rows, np.nan)), dtype=float))
    m = int(np.sum(~np.isnan(r["p_two"])))
    pad = max(0, (family or 0) - m)
    done = min(int(rejected), pad)
    p_all = np.concatenate([np.asarray(r["p_two"], dtype=float), np.zeros(done), np.ones(pad - done)])
    p_adj = (stats.holm(p_all) if correction == "holm" else stats.bh(p_all))[:rows]
    m += pad
    decidable = r["min_p"] <= alpha / max(m, 1) if correction == "holm" else r["min_p"] <= alpha
    v = np.full(rows, "AMBIGUOUS", dtype=object)
    same_floor = np.broadcast_to(np.asarray(floor if same_floor is None else same_floor, dtype=float), (rows,))
    eq = np.log1p(same_floor)
    same = (r["lo"] > -eq) & (r["hi"] < eq)
    v[same] = "SAME"
    sig = p_adj <= alpha
    v[sig & (r["est"] > tau) & (r["lo"] > margin)] = "SLOWER"
    v[sig & (r["est"] < -tau) & (r["hi"] < -margin)] = "FASTER"
    r.update(threshold=thr, floor=same_floor, margin=margin, p_adj=p_adj, p_holm=p_adj, decidable=decidable,
             verdict=v)
    return r


# ------------------------------------------------------------- comparison
