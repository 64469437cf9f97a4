"""The verdict of every benchmark of two sample maps (compare): pairing by
name, the checks that need no statistics (errors, missing sides, work,
clocks), then the statistics of all the others at once (decide_rows), and
the control series (controls)."""
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from regress.load import fmt
from regress.stats import ranks
from regress.stats.decide import decide_paired, run_multiple_for, decide_unpaired, verdicts
from regress.verdict import across
from regress.verdict.checks import clock_problem, work_mismatch
from regress.verdict.rows import (WITH_CONTROLS, WITH_RESULTS, WITH_SAME_CODE, WITH_STATISTICS, WITH_VERDICT, Control,
                                  RateChange, Row)
from regress.verdict.samples import Sample

_pct = fmt.pct


@dataclass
class Pair:
    """A row to decide by statistics, with its two sides."""
    row: Row
    a: Sample
    b: Sample
    unreliable: Optional[str]   # why the clocks make its verdict UNRELIABLE, or None


def bound(thr, negative):
    """The threshold as a change of the time on one side: +thr slower, or
    1/(1+thr) - 1 faster (the threshold is symmetric in log time)."""
    return 1.0 / (1.0 + thr) - 1.0 if negative else thr


def source_words(source):
    if source == "prior":
        return "the prior for this device and family (regress/stats/noise.py)"
    if source == "A/A":
        return "--noise"
    return "--history, %s runs" % source.split()[-1] if source and source.startswith("history") else str(source)


def _unsupported_reason(entries):
    return "unsupported: %s" % (entries[0].reason or entries[0].message)


def _ok(sample, errors_count=True):
    return sample is not None and not (errors_count and sample.errors) and any(v is not None for v in sample.values)


def _without_statistics(a, b, kinds, settings):
    """(verdict, reason) of a benchmark measured on one side only, or on GPU
    models or with work that differ; (None, notes): it goes to the statistics,
    with the result counters --results-may-differ let differ."""
    if not _ok(b, errors_count=False):
        return "MISSING", _unsupported_reason(b.unsupported) if b is not None and b.unsupported else "not in NEW"
    if not _ok(a):
        if a is not None and a.errors:
            return "NEW", "BASE: " + a.errors[0]
        return "NEW", "BASE: " + _unsupported_reason(a.unsupported) if a is not None and a.unsupported \
            else "not in BASE"
    if a.models and b.models and a.models != b.models and not settings.across:
        # Entries pair by GPU model too: a suite spread over a host's GPUs
        # names each entry's.
        return "NOT_SAME_WORK", "ran on %s in BASE, %s in NEW" % (" / ".join(sorted(a.models)),
                                                                  " / ".join(sorted(b.models)))
    notes = [] if settings.results_may_differ else None
    mism = work_mismatch(a, b, kinds, notes)
    if mism:
        return "NOT_SAME_WORK", "%s is %s in BASE, %s in NEW" % mism
    return None, notes


def _ceilings(a, b):
    """Across hardware: the ceiling each side's fractions are of (None: that
    side has no fraction)."""
    kind = next((s.ceiling[0] for s in (b, a) if s is not None and s.ceiling), None)
    return {"ceiling": kind, "base_ceiling": a.ceiling[1] if a is not None and a.ceiling else None,
            "new_ceiling": b.ceiling[1] if b is not None and b.ceiling else None}


def compare(base, new, settings, metric, kinds=None):
    """Rows, one per benchmark, of BASE and NEW sample maps ({name: Sample}).
    paired: values are per round, aligned by index."""
    kinds = kinds or {}
    rows, pairs = [], []
    for name in sorted(set(base) | set(new)):
        a, b = base.get(name), new.get(name)
        s = b or a
        row = Row(name, s.family, s.device or "cpu", library=s.library or None)
        if settings.across:
            row.across = _ceilings(a, b)
        if b is not None and b.errors:
            row.decide("ERROR", b.errors[0])
            rows.append(row)
            continue
        if (a is not None and a.no_metric) or (b is not None and b.no_metric):
            continue  # the compared counter is not one this benchmark has
        if not _ok(a) and not _ok(b, errors_count=False):
            continue  # unsupported on both sides: nothing to say
        rows.append(row)
        verdict, notes = _without_statistics(a, b, kinds, settings)
        if verdict:
            row.decide(verdict, notes)
            continue
        row.results_differ = notes or []
        unreliable = clock_problem(a, b, settings.across)
        if settings.across and not unreliable:
            unreliable = across.above_ceiling(a, b)
        pairs.append(Pair(row, a, b, unreliable))
    decide_rows(pairs, settings, metric)
    for p in pairs:
        if p.row.results_differ:
            p.row.add_reason("results differ: " + ", ".join(p.row.results_differ), WITH_RESULTS)
    return rows


@dataclass
class Batch:
    """The statistics of a batch of pairs, as arrays by pair."""
    est: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    p_two: np.ndarray
    noise: np.ndarray
    min_p: np.ndarray
    run_noise: np.ndarray
    sources: list          # where each run-to-run noise comes from
    decision: dict = None  # decide.verdicts' arrays: verdict, p_adj, threshold, margin, decidable

    @property
    def tested(self):
        return int(np.sum(~np.isnan(self.p_two)))


def _groups(pairs, mode):
    """Pairs by the shape of their values, so each group is one vectorised
    call; sets the counts of each row."""
    groups = {}
    for i, pair in enumerate(pairs):
        a, b, row = pair.a, pair.b, pair.row
        if mode == "paired":
            d = [y - x for x, y in zip(a.values, b.values) if x is not None and y is not None]
            row.n_base = row.n_new = len(d)
            groups.setdefault(("paired", len(d)), []).append((i, d))
        else:
            row.n_base, row.n_new = len(a.values), len(b.values)
            groups.setdefault(("files", len(a.values), len(b.values)), []).append((i, (a.values, b.values)))
    return groups


def _looked_up(pairs, settings):
    """(noise, source) of each pair's run-to-run noise. Paired: a --noise A/A
    value raises the noise the rounds measure (decide_paired). Two files:
    every benchmark has one, from --noise, --history or the prior, and it sets
    the margin that process offsets get (verdicts())."""
    model = settings.noise_model
    if settings.mode == "paired":
        return [model.measured.get(p.row.name, (np.nan, None)) for p in pairs]
    return [model.lookup(p.row.name, p.row.device, p.row.family) for p in pairs]


def _rank_tests(pairs, settings):
    """The rank tests of every group: a Batch without its decision."""
    n = len(pairs)
    looked = _looked_up(pairs, settings)
    st = Batch(est=np.full(n, np.nan), lo=np.full(n, -np.inf), hi=np.full(n, np.inf), p_two=np.full(n, np.nan),
               noise=np.full(n, np.nan), min_p=np.ones(n), run_noise=np.array([v for v, _ in looked], dtype=float),
               sources=[s for _, s in looked])
    for key, members in _groups(pairs, settings.mode).items():
        idx = np.array([i for i, _ in members])
        if key[0] == "paired":
            if key[1] < 2:
                continue
            r = decide_paired(np.array([d for _, d in members]), settings.level, st.run_noise[idx],
                              settings.paired_test)
        else:
            if key[1] < 1 or key[2] < 1:
                continue
            X = np.array([x for _, (x, _) in members])
            Y = np.array([y for _, (_, y) in members])
            r = decide_unpaired(X, Y, settings.level)
        st.est[idx], st.lo[idx], st.hi[idx] = r["est"], r["lo"], r["hi"]
        st.p_two[idx], st.noise[idx], st.min_p[idx] = r["p_two"], r["noise"], r["min_p"]
    return st


def decide_rows(pairs, settings, metric):
    """Statistics for the rows that have samples on both sides; the
    correction (Holm, or Benjamini-Hochberg for a sequential look) over all."""
    if not pairs:
        return
    st = _rank_tests(pairs, settings)
    floors = np.array([settings.floor(p.row.family, p.row.device) for p in pairs])
    same_floors = np.array([settings.same_floor(p.row.family, p.row.device) for p in pairs])
    margin_noise = np.full(len(pairs), np.nan) if settings.mode == "paired" else st.run_noise
    st.decision = verdicts({"est": st.est, "lo": st.lo, "hi": st.hi, "p_two": st.p_two, "noise": st.noise,
                            "min_p": st.min_p, "run_noise": margin_noise}, floors, settings.multiple,
                           settings.alpha, tail=settings.noise_model.tail, correction=settings.correction,
                           family=settings.family, rejected=settings.rejected,
                           run_multiple=np.array([run_multiple_for(p.row.device) for p in pairs]),
                           same_floor=same_floors)
    for i, pair in enumerate(pairs):
        _measurements(pair, i, st, settings, metric)
        if np.isnan(st.est[i]):
            pair.row.verdict = "AMBIGUOUS"
            pair.row.add_reason("too few %s to decide (%d and %d)" % (_unit(settings), pair.row.n_base,
                                                                      pair.row.n_new), WITH_VERDICT)
            continue
        _judge(pair, i, st, settings, metric)


def _unit(settings):
    return "rounds" if settings.mode == "paired" else "repetitions"


def _unlog(v, metric):
    return float(math.exp(-v)) if metric.inverted() else float(math.exp(v))


def _measurements(pair, i, st, settings, metric):
    """What a row shows whatever its verdict: medians, threshold, noise."""
    row = pair.row
    row.base = _unlog(np.median(pair.a.measured()), metric)
    row.new = _unlog(np.median(pair.b.measured()), metric)
    row.threshold = float(st.decision["threshold"][i])
    row.floor = float(st.decision["floor"][i])
    row.noise = None if np.isnan(st.noise[i]) else float(st.noise[i])
    if settings.mode == "files":
        row.run_noise, row.run_noise_source = float(st.run_noise[i]), st.sources[i]
        row.margin = float(math.expm1(st.decision["margin"][i]))
    elif not np.isnan(st.run_noise[i]):
        row.run_noise, row.run_noise_source = float(st.run_noise[i]), st.sources[i]
    if not settings.scale_new and pair.a.code and pair.b.code:
        # The code and library versions of every entry the same on both
        # sides: a change comes from the machine or noise, not from the code.
        # --scale-new stands for a change of NEW's code.
        same = pair.a.code == pair.b.code and pair.a.libver == pair.b.libver
        row.code = "same" if same else "changed"


def _judge(pair, i, st, settings, metric):
    """The verdict of a row the tests could decide, with its reasons and rate."""
    row, est, thr = pair.row, st.est[i], st.decision["threshold"][i]
    row.change = float(math.expm1(est))
    row.ci = [None if not np.isfinite(st.lo[i]) else float(math.expm1(st.lo[i])),
              None if not np.isfinite(st.hi[i]) else float(math.expm1(st.hi[i]))]
    row.p = float(st.decision["p_adj"][i])
    v = st.decision["verdict"][i]
    if v == "AMBIGUOUS":
        _why_ambiguous(row, i, st, settings)
    if settings.mode == "paired":
        _drift(row, est, thr, v, metric)
    if v == "AMBIGUOUS" and not row.reasons:
        row.add_reason("the interval %s ... %s neither clears the threshold nor lies inside +-%s" % (
            _pct(row.ci[0]), _pct(row.ci[1]), _pct(thr, False)), WITH_STATISTICS)
    if pair.unreliable:
        row.set_reason(pair.unreliable + "; statistics said %s" % v, WITH_STATISTICS)
        v = "UNRELIABLE"
    if v in ("SLOWER", "FASTER") and row.code == "same":
        # The same object code and library versions ran on both sides:
        # the machine or noise moved, and that never fails a gate.
        row.same_code = True
        row.prefix_reason("same code: machine or noise", WITH_SAME_CODE)
    row.verdict = v
    a, b = pair.a, pair.b
    if a.rate and b.rate and a.rate[0] == b.rate[0]:
        row.rate = RateChange(a.rate[0], float(np.median(a.rate[1])), float(np.median(b.rate[1])))


def _decide_with(settings, source):
    """The command that would decide a row this comparison leaves open."""
    if settings.mode == "paired":
        return "more rounds (--max-rounds) or a quieter machine"
    if source == "prior":
        return "decide with --history DIR (this machine's nightly series) or compare --run BASE_BENCH NEW_BENCH"
    return "confirm with compare --run BASE_BENCH NEW_BENCH"


def _why_ambiguous(row, i, st, settings):
    """The reason of an AMBIGUOUS verdict the statistics can name."""
    est, thr, m = st.est[i], st.decision["threshold"][i], st.tested
    tau = math.log1p(thr)
    source = st.sources[i] if settings.mode == "files" else None
    if not st.decision["decidable"][i]:
        paired = settings.mode == "paired"
        need = ranks.sizes_for(settings.alpha / max(m, 1), "wsr" if paired else "mw")
        needs = "" if need is None else " (%d %s)" % (need, "rounds" if paired else "per side")
        row.add_reason("too few %s to decide: %d and %d give p >= %.2g, %s over %d benchmarks needs < %.2g%s" % (
            _unit(settings), row.n_base, row.n_new, st.min_p[i], settings.correction_name(), m,
            settings.alpha / max(m, 1), needs), WITH_STATISTICS)
    elif settings.mode == "files" and row.p <= settings.alpha and abs(est) > tau:
        # Significant within the two sessions and beyond the threshold, but
        # inside what the two processes' offsets alone can give.
        tail = settings.noise_model.tail
        row.add_reason("%s, but two processes of one binary differ by up to %s here (%s x run-to-run noise "
                       "%s, from %s%s): %s"
                       % (_pct(row.change), _pct(row.margin, False), "%g" % run_multiple_for(row.device),
                          _pct(st.run_noise[i], False), source_words(source),
                          "" if tail <= 1 else ", x%.2f for this machine's tails" % tail,
                          _decide_with(settings, source)), WITH_STATISTICS)
    elif row.p > settings.alpha and abs(est) > tau:
        row.add_reason("%s beyond %s but not significant (p %.2g)" % (
            _pct(row.change), _pct(bound(thr, est < 0)), row.p), WITH_STATISTICS)
    elif thr > row.floor and abs(est) <= tau:
        # Inside the threshold, not inside the floor: the noise, not the
        # change, sets what this comparison can see.
        row.add_reason("cannot tell a change under %s on this machine (the interval %s ... %s, the floor %s): %s"
                       % (_pct(thr, False), _pct(row.ci[0]), _pct(row.ci[1]), _pct(row.floor, False),
                          _decide_with(settings, source)), WITH_STATISTICS)
    elif abs(est) <= tau:
        row.add_reason("the interval %s ... %s does not rule out a change of %s, the floor: %s"
                       % (_pct(row.ci[0]), _pct(row.ci[1]), _pct(row.floor, False),
                          _decide_with(settings, source)), WITH_STATISTICS)


def _drift(row, est, thr, v, metric):
    """Paired: a note when the pairs and the ratio of the medians disagree."""
    ratio = math.log(row.new / row.base) if row.base > 0 and row.new > 0 else est
    if metric.inverted():
        ratio = -ratio
    if abs(ratio - est) > math.log1p(thr) and v != "SAME":
        row.add_reason("the pairs' change %s differs from the medians' ratio %s: the rounds drifted, and the pairs "
                       "(same moment, both binaries) decide" % (_pct(row.change), _pct(math.expm1(ratio))),
                       WITH_STATISTICS)


CONTROL_SHARE = 0.5   # controls "moved as much": at least half the change, in log time, same direction


def controls(rows):
    """The vendor libraries timed in the same runs (rows whose entries name a
    library, and whose library version did not change) are control series: a
    change of the project's code has nothing to do with them, so when they
    moved as much as a SLOWER or FASTER row, the row says so."""
    pool_all = [r for r in rows if r.library and r.change is not None
                and r.code != "changed" and r.verdict not in ("NOT_SAME_WORK", "UNRELIABLE")]
    for row in rows:
        if row.verdict not in ("SLOWER", "FASTER") or row.library:
            continue
        same_family = [c for c in pool_all if c.device == row.device and c.family == row.family]
        pool = same_family or [c for c in pool_all if c.device == row.device]
        if not pool:
            continue
        moved = float(np.median([math.log1p(c.change) for c in pool]))
        mine = math.log1p(row.change)
        row.control = Control(math.expm1(moved), len(pool), sorted({c.library for c in pool}))
        if moved * mine > 0 and abs(moved) >= CONTROL_SHARE * abs(mine):
            row.controls_moved = True
            row.add_reason("the controls moved as much (%s, median %s over %d)" % (
                "/".join(row.control.libraries), _pct(math.expm1(moved)), len(pool)), WITH_CONTROLS)
