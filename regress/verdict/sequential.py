"""A sequential comparison over paired rounds: looks after 4, 6, 8, 12, 16
and 24 rounds, the undecided benchmarks going on to the next look, alpha and
the SAME interval's tails split evenly over the looks. Looks before
WSR_FROM rounds use the paired t-test: the exact signed-rank test cannot
give a p below 2 / 2^n, too large to decide anything at 4 or 6 rounds (and,
once earlier looks decided most benchmarks, at 8) under the correction.

Each look corrects over the whole comparison, the earlier looks' SLOWER and
FASTER counting as rejected (decide.verdicts' `rejected`), so a benchmark
left for later is not judged as if it alone were tested against a family of
p = 1. With --delta, a benchmark whose measured noise needs more rounds than
the cap to find that change (regress.stats.plan) stops from FUTILE_FROM
rounds on: more rounds could not decide it, only cost time; stopping for
futility never adds a false alarm."""
import copy
import math

from regress.stats import decide, plan
from regress.verdict.judge import compare
from regress.verdict.rows import WITH_ROUNDS

SEQUENTIAL_CAP = 24   # rounds at most, by default, of a sequential comparison
FIRST_LOOK = 4
WSR_FROM = decide.WSR_FROM   # looks at fewer rounds use the paired t-test
FUTILE_FROM = 6       # --delta: no futility stop before this many rounds (the noise of 4 is too rough)
FUTILE_POWER = 0.5    # --delta: a row stops when the cap gives it less than an even chance of the change


def sequential_looks(cap):
    """The rounds after which a sequential comparison decides what it can:
    4, 6, 8, 12, 16, then x1.5 (even), and the cap last."""
    looks = [n for n in (FIRST_LOOK, 6, 8, 12, 16) if n < cap]
    n = 16
    while True:
        n = int(math.ceil(n * 1.5 / 2.0) * 2)
        if n >= cap:
            break
        looks.append(n)
    looks.append(cap)
    return looks


def _truncated(samples, names, n):
    out = {}
    for k in names:
        s = samples.get(k)
        if s is None:
            continue
        c = copy.copy(s)
        c.values = s.values[:n]
        out[k] = c
    return out


def look_settings(settings, looks, family, n=None, rejected=0):
    """The settings of one look: alpha and the SAME interval's tails split
    evenly over the looks (Bonferroni across looks: the chance of any false
    SLOWER/FASTER, or of a false SAME per benchmark, over the whole sequence
    is at most that of one fixed-size comparison), Benjamini-Hochberg across
    the benchmarks with the whole comparison as its family."""
    k = len(looks)
    return settings.replace(alpha=settings.alpha / k, level=1.0 - (1.0 - settings.level) / k, correction="bh",
                            family=family, rejected=rejected,
                            paired_test="t" if n is not None and n < WSR_FROM else "wsr")


def _final(row, n, stopped=False):
    """A row the look at n rounds decides for good (stopped: for futility)."""
    row.rounds, row.stopped = n, stopped
    if row.verdict == "AMBIGUOUS" and not stopped and "too few" not in (row.reason or ""):
        row.prefix_reason("undecided after %d rounds, the cap (--max-rounds)" % n, WITH_ROUNDS)


def futile(row, settings, sk, cap):
    """--delta: the reason an undecided row stops before the cap, or None:
    with its noise so far, the cap's rounds give it less than an even chance
    of finding the change, and its interval there could not lie inside the
    SAME floor either."""
    if settings.delta is None or row.verdict != "AMBIGUOUS" or row.noise is None or row.change is None:
        return None
    floor = settings.floor(row.family, row.device)
    if plan.paired_power(settings.delta, row.noise, cap, floor, sk.alpha, settings.multiple) >= FUTILE_POWER:
        return None
    same = settings.same_floor(row.family, row.device)
    if plan.same_within_reach(row.change, row.noise, cap, same, sk.level):
        return None
    return ("its noise of one run, %.2f%%, gives a change of %.2f%% (--delta) less than an even chance by the "
            "cap's %d rounds, and its interval cannot fit inside +-%.2f%% there: stopped"
            % (100 * row.noise, 100 * settings.delta, cap, 100 * same))


def sequential_rows(a, b, settings, metric, kinds, looks, done):
    """Replays a sequential comparison over `done` complete rounds: at each
    look n <= done the undecided benchmarks are decided on their first n
    rounds; SLOWER, FASTER, SAME (and ERROR, MISSING, NEW, NOT_SAME_WORK,
    UNRELIABLE) are final, AMBIGUOUS goes on to the next look, and at the
    last look stays. Returns (rows, pending): pending is None when every
    benchmark is decided or the last look is done, else (next look, the
    undecided names)."""
    names = sorted(set(a) | set(b))
    family = len(set(a) & set(b))
    undecided = set(names)
    decided = []
    rejected = 0
    for k, n in enumerate(looks):
        if n > done:
            return decided, (n, sorted(undecided))
        sk = look_settings(settings, looks, family, n, rejected)
        rows = compare(_truncated(a, undecided, n), _truncated(b, undecided, n), sk, metric, kinds)
        seen = set()
        for row in rows:
            seen.add(row.name)
            why = futile(row, settings, sk, looks[-1]) if FUTILE_FROM <= n < looks[-1] else None
            if why:
                row.prefix_reason(why, WITH_ROUNDS)
            if row.verdict != "AMBIGUOUS" or k == len(looks) - 1 or why:
                _final(row, n, bool(why))
                decided.append(row)
                undecided.discard(row.name)
                # Same code on both sides (an A/A): the machine moved, not the
                # code, and nothing is carried, so an A/A keeps the rule of
                # a look that stands alone.
                rejected += row.verdict in ("SLOWER", "FASTER") and not row.same_code
        undecided &= seen  # nothing to decide for a benchmark without a row (unsupported on both sides)
        if not undecided:
            break
    return decided, None


def sequential_summary(rows, settings, looks):
    """Looks, the rounds each verdict needed, and the benchmark-rounds run
    (what the device time is proportional to, launch overheads aside)."""
    if not looks:
        return None
    at = {}
    for r in rows:
        if r.rounds is not None:
            at[str(r.rounds)] = at.get(str(r.rounds), 0) + 1
    used = sum(r.rounds or 0 for r in rows)
    k = len(looks)
    return {"looks": looks, "alpha_per_look": settings.alpha / k, "level_per_look": 1 - (1 - settings.level) / k,
            "decided_at": at, "benchmark_rounds": used, "delta": settings.delta,
            "stopped": sum(1 for r in rows if r.stopped),
            "mean_rounds": used / len(rows) if rows else 0.0}
