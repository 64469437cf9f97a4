"""What a series can see: the power of the comparator's paired rounds and of
two nightly runs, from a benchmark's measured noise (ci/history plan, the
comparator's detectable change, its starting look).

Paired rounds. A round's log difference has the variance of two runs,
2 noise^2 (noise: the noise of one run, as decide_paired measures it), so
the mean over n rounds has the standard error se = sqrt(2) noise / sqrt(n).
SLOWER needs the change significant at the look's level (alpha / k over k
looks, two-sided) and its estimate beyond the threshold max(floor, multiple
x noise). A change d is found with probability about

    power(d) = Phi(min((d - threshold) / se, d / se - z(1 - alpha_look / 2)))

(the smaller of the two conditions' normal probabilities, which is what
holds them both up to their correlation), and the smallest change found
with power P is max(threshold + z(P) se, (z(1 - alpha_look / 2) + z(P)) se).
A change below the threshold is not found at any number of rounds: the
floor, or one run's noise, is the smallest change of interest.

Two nightly runs (two files, one process a side) flag what lies beyond
max(floor, run multiple x run-to-run noise x tail factor): the spread of the
repetitions is small beside the process offsets they cannot see.

The noise. decide_paired's noise is a robust spread (median absolute
deviation) of the rounds, which heavy tails leave small while the test's
interval widens: on the 2-core machine's duet rounds the interval at 24
rounds was 3x what the robust noise gives. effective_noise reads the noise
back from a comparison's own interval instead, (hi - lo) / (2 z) sqrt(n) /
sqrt(2) in log time, and keeps the larger.

The family. A look corrects over the whole comparison (Benjamini-Hochberg):
a change found in most benchmarks is tested near alpha_look, one found in
few near alpha_look / the family. paired_power, paired_detectable and
rounds_for take the level they are given (ci/history plan: alpha_look, a
change the whole selection shares). tests/test_plan.py checks them against
the committed scaled replays at the level a suite's own rejections allow
(docs/perf/compare.md, "What a series can see").

All in log time (a change d is log(1 + change)); the figures come back as
changes.
"""
import math

from scipy import stats

from regress.stats.decide import WSR_FROM

POWER = 0.95
ROUNDS_LIMIT = 1000   # rounds_for: more than this is "not with rounds"


def _z(p):
    return float(stats.norm.ppf(p))


def _log(change):
    return math.log1p(change)


def paired_power(change, noise, rounds, floor, alpha_look, multiple=1.0):
    """The chance that `rounds` paired rounds call a change of `change` SLOWER."""
    d = _log(change)
    se = math.sqrt(2.0) * noise / math.sqrt(rounds)
    threshold = math.log1p(max(floor, multiple * noise))
    return float(stats.norm.cdf(min((d - threshold) / se, d / se - _z(1 - alpha_look / 2))))


def same_within_reach(change, noise, rounds, same_floor, level):
    """Whether the interval at `rounds`, centred on the change so far, could
    lie inside +-same_floor (SAME still reachable)."""
    half = _z(1 - (1 - level) / 2) * math.sqrt(2.0) * noise / math.sqrt(rounds)
    return abs(_log(change)) + half < _log(same_floor)


def paired_detectable(noise, rounds, floor, alpha_look, multiple=1.0, power=POWER):
    """The smallest change that `rounds` paired rounds find with `power`."""
    se = math.sqrt(2.0) * noise / math.sqrt(rounds)
    threshold = math.log1p(max(floor, multiple * noise))
    zp = _z(power)
    return math.expm1(max(threshold + zp * se, (_z(1 - alpha_look / 2) + zp) * se))


def rounds_for(change, noise, floor, alpha_look, multiple=1.0, power=POWER):
    """The fewest paired rounds that find `change` with `power`; None when
    none can (the change is within the threshold) or more than ROUNDS_LIMIT."""
    if _log(change) <= math.log1p(max(floor, multiple * noise)):
        return None
    for n in range(2, ROUNDS_LIMIT + 1):
        if paired_detectable(noise, n, floor, alpha_look, multiple, power) <= change:
            return n
    return None


def files_detectable(run_noise, floor, run_multiple, tail=1.0):
    """The smallest change two files (one run a side) flag."""
    return max(floor, math.expm1(run_multiple * run_noise * tail))


def effective_noise(row, level, sequential=False):
    """The noise of one run that a paired verdict row's interval implies
    (its `ci` at the `level` of its look, over `n_base` rounds), or its
    robust `noise` when that is larger; None without either. sequential:
    the row is of a sequential comparison, whose looks before WSR_FROM
    rounds give the paired t-test's interval: its half-width is Student's
    quantile (4.2 at 4 rounds and 97.5%), not the normal's (2.2), times the
    standard error."""
    noise, ci, n = row.get("noise"), row.get("ci"), row.get("n_base")
    if not ci or not n or ci[0] is None or ci[1] is None or ci[0] <= -1:
        return noise
    q = 1 - (1 - level) / 2
    quantile = float(stats.t.ppf(q, n - 1)) if sequential and 2 <= n < WSR_FROM else _z(q)
    se = (math.log1p(ci[1]) - math.log1p(ci[0])) / (2 * quantile)
    implied = se * math.sqrt(n) / math.sqrt(2.0)
    return implied if noise is None else max(noise, implied)
