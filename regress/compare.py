"""parbench's comparator: is NEW slower than BASE, benchmark by benchmark?

Two modes (docs/tools/compare.md):

  compare --run BASE_BENCH NEW_BENCH -- [bench arguments]
      The two binaries run interleaved on this machine (A B B A ...), one
      invocation each per round; the Wilcoxon signed-rank test and the
      Hodges-Lehmann ratio of the pairs decide. Sequential by default: looks
      after 8, 12, 16 and 24 rounds, later rounds only for the undecided
      benchmarks, alpha and the SAME interval's tails split evenly over the
      looks, Benjamini-Hochberg across the benchmarks (sequential_rows).
      --rounds N: N rounds of everything, decided once with Holm. This is
      how a pull request is judged: drift between sessions (clocks, launch
      latency, other tenants) hits both sides of a pair alike.
  compare BASE.json NEW.json
      Two files, entries paired by run name, every repetition used: the
      Mann-Whitney U test and the Hodges-Lehmann shift with its interval.
      The run-to-run noise of each benchmark (--noise, --history or the
      prior: regress/stats/noise.py) bounds the offset of each side's process.

Verdict per benchmark, on the time per iteration (or --metric):
  SLOWER / FASTER  significant after the multiple-comparison correction,
                   the estimate beyond the benchmark's threshold, and (two
                   files) the interval beyond the margin of process offsets
  SAME             the whole confidence interval lies inside +-threshold
  AMBIGUOUS        neither proven, with the reason
  UNRELIABLE       a GPU entry whose throttled flag or SM clock differs
  NOT_SAME_WORK    a counter describing the problem differs (sizes, flops
                   per call, iteration counts): never read as faster
  NEW / MISSING    only in NEW / only in BASE
  ERROR            an error entry (incorrect, out of memory, failed) in NEW
A SLOWER whose code fingerprint and library versions are the same on both
sides is marked same_code ("machine or noise") and never gates; the vendor
libraries' rows are control series for the others (_controls).

Threshold: max(floor, multiple x noise); paired, the noise of one run
measured over the rounds (multiple 1); two files, the spread of the
repetitions (multiple 3). Margin (two files): RUN_MULTIPLE x the run-to-run
noise x the machine's tail factor.

Exit status: 0 nothing regressed; 1 a SLOWER or ERROR verdict; 2 bad input
or a bad command line; 3 runs not comparable (the fingerprint); 4 --run
stopped by --max-seconds before its rounds were done (rerun the same command
to resume).
"""
import argparse
import copy
import math
import os
import re
import sys
import time

import numpy as np

from regress import cli
from regress.load import results
from regress.run import rounds
from regress.load import fmt
from regress.load.fmt import fmt_time
from regress.stats import ranks as stats
from regress.stats import decide
from regress.stats.decide import (ALPHA, DEFAULT_FLOORS, DEFAULT_MULTIPLE, LEVEL, RUN_MULTIPLE, decide_paired,
                                  decide_unpaired, verdicts)
from regress.stats import noise as noise_mod
from regress.store import noise as history_noise

TOOL = "compare"
FORMAT = 1
EXIT_OK, EXIT_REGRESSION, EXIT_INPUT, EXIT_INCOMPARABLE, EXIT_INCOMPLETE = 0, 1, 2, 3, 4

# Most urgent first: the order of the summary and of the table's groups.
VERDICTS = ("ERROR", "SLOWER", "NOT_SAME_WORK", "UNRELIABLE", "MISSING", "NEW",
            "AMBIGUOUS", "FASTER", "SAME")
GATING = ("ERROR", "SLOWER")

MIN_ROUNDS = 8
CLOCK_TOLERANCE = 0.02   # SM clock medians further apart than this: UNRELIABLE
RESULT_TOLERANCE = 1e-6  # relative, for result counters (inertia); integers must match

# Context keys of the fingerprint (results.FINGERPRINT_*), by the scope of
# the entries they matter to. Hard: a difference refuses the comparison
# (exit 3). Soft: a warning.
HARD = results.FINGERPRINT_HARD
SOFT = results.FINGERPRINT_SOFT


class InputError(Exception):
    """Unreadable input: one line, exit 2."""


class NotComparable(Exception):
    """A hard fingerprint mismatch: one line, exit 3."""


# ------------------------------------------------------------------ samples

class Sample:
    """What one side knows about one benchmark."""
    __slots__ = ("name", "family", "device", "library", "values", "errors", "unsupported",
                 "work", "throttled", "clock", "rate", "entry", "no_metric", "code", "libver", "models")

    def __init__(self, name, entry):
        self.name, self.entry = name, entry
        self.family = entry.run.family
        self.device, self.library = entry.device, entry.library
        self.values = []        # log metric per repetition (files) or per round (paired)
        self.errors = []        # why an entry is an error: "incorrect: ...", ...
        self.unsupported = []
        self.work = {}          # counter -> set of values (problem/model/knob/result)
        self.throttled = []     # throttled per repetition (GPU)
        self.clock = []         # sm_clock_max_mhz per repetition (GPU)
        self.rate = None        # (counter, [values]) of the entry's declared rate
        self.no_metric = False  # passed, but without the --metric counter
        self.code = set()       # parbench.code of its entries: the code it ran
        self.libver = set()     # parbench.library_version of its entries
        self.models = set()     # parbench.gpu of its entries: the GPU model each ran on (ci/run-suite)


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


WORK_KINDS = ("problem", "model", "knob", "result")


def collect(run, metric=None, higher_better=False, group=False):
    """{run name: Sample} of one Run: one value per repetition, or with group
    one per benchmark (the median of this run's repetitions: a paired round)."""
    out = {}
    work_keys = [k for k, info in run.counter_kinds.items() if info.get("kind") in WORK_KINDS]
    per_run = {}
    for e in run.entries:
        if e.aggregate:
            continue
        name = e.run_name
        s = out.get(name)
        if s is None:
            s = out[name] = Sample(name, e)
        if e.disposition == "unsupported":
            s.unsupported.append(e)
            continue
        if e.is_error:
            s.errors.append("%s: %s" % (e.disposition.replace("_", " "), e.reason or e.message))
            continue
        v = _metric_value(e, metric, higher_better)
        if v is None:
            if metric is None:  # a passed entry whose time is 0 or missing is no measurement
                s.errors.append("passed with a time per iteration of %r: not a measurement" % e.raw.get("real_time"))
            else:
                s.no_metric = True  # a passed entry without the --metric counter: left out
            continue
        per_run.setdefault(name, []).append(v)
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
    for name, vals in per_run.items():
        out[name].values = [float(np.median(vals))] if group else vals
    return out


def merge_rounds(samples_per_round):
    """One Sample per benchmark over paired rounds: values[i] is round i's
    median, None where that round has no passed value."""
    merged = {}
    n = len(samples_per_round)
    for i, samples in enumerate(samples_per_round):
        for name, s in samples.items():
            m = merged.get(name)
            if m is None:
                m = merged[name] = Sample(name, s.entry)
                m.values = [None] * n
            if s.values:
                m.values[i] = s.values[0]
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
    return merged


def scale(samples, settings):
    """--scale-new: NEW's times x F (its log values + log F; rates / F)."""
    f = getattr(settings, "scale_new", None)
    if not f:
        return
    shift = math.log(f)
    for s in samples.values():
        s.values = [None if v is None else v + shift for v in s.values]
        if s.rate:
            s.rate = (s.rate[0], [r / f for r in s.rate[1]])


# -------------------------------------------------------------- fingerprint

def scopes_of(sample):
    sc = {"all", sample.device or "cpu"}
    if sample.library:
        sc.add(sample.library)
    return sc


def fingerprint_check(base_ctx, new_ctx, scopes):
    """(hard, soft): lists of (key, base value, new value) that differ, for the
    keys of the given scopes. A key absent on one side only is soft."""
    hard, soft = [], []
    for table, out in ((HARD, hard), (SOFT, soft)):
        for scope in sorted(scopes):
            for key in table.get(scope, ()):
                a, b = base_ctx.get(key), new_ctx.get(key)
                if a == b:
                    continue
                if a is None or b is None:
                    soft.append((key, a, b))
                else:
                    out.append((key, a, b))
    seen, uniq = set(), []
    for k in soft:
        if k[0] not in seen:
            seen.add(k[0])
            uniq.append(k)
    return hard, uniq


# ---------------------------------------------------------------- decisions

class Settings:
    def __init__(self, mode, alpha=ALPHA, level=LEVEL, floors=None, multiple=None, metric=None,
                 noise=None, correction="holm"):
        self.mode, self.alpha, self.level = mode, alpha, level
        self.floors = dict(floors or {})   # (family or None, device) -> fraction
        self.multiple = DEFAULT_MULTIPLE[mode] if multiple is None else multiple
        self.metric = metric
        self.noise = noise or {}           # name -> noise from an earlier paired A/A comparison
        self.noise_given = noise is not None
        self.noise_model = noise_mod.Model()
        self.noise_model.add_paired(self.noise)
        self.history = None                # --history DIR
        self.correction = correction       # "holm" or "bh"
        self.family = None                 # multiple-comparison family size, when larger than the rows
        self.results_may_differ = False    # --results-may-differ: fractional results need not match

    def correction_name(self):
        return "Holm" if self.correction == "holm" else "Benjamini-Hochberg"

    def floor(self, family, device):
        return decide.floor_for(self.floors, self.mode, family, device)


def _bound(thr, negative):
    """The threshold as a change of the time on one side: +thr slower, or
    1/(1+thr) - 1 faster (the threshold is symmetric in log time)."""
    return 1.0 / (1.0 + thr) - 1.0 if negative else thr


def _source_words(source):
    if source == "prior":
        return "the prior for this device and family (regress/stats/noise.py)"
    if source == "A/A":
        return "--noise"
    return "--history, %s runs" % source.split()[-1] if source and source.startswith("history") else str(source)


def _code_identity(row, a, b):
    """Marks a row whose code and library versions are the same on both
    sides (the run's "code" and "library_version" of every entry): a change
    there comes from the machine or noise, not from the code."""
    if a.code and b.code:
        row["code"] = "same" if a.code == b.code and a.libver == b.libver else "changed"


def _work_mismatch(a, b, kinds, notes=None):
    """First counter describing the work that differs: (name, base, new), or
    None. Problem, model and knob counters must be equal; a result counter
    (iterations, inertia) equal when integral, else within RESULT_TOLERANCE,
    unless notes is a list (--results-may-differ): then a fractional result
    that differs is described there and does not count."""
    for k in sorted(set(a.work) & set(b.work)):
        va, vb = sorted(a.work[k]), sorted(b.work[k])
        if va == vb:
            continue
        if kinds.get(k) == "result":
            # Results may differ in their last bits between repetitions
            # (atomic float sums): the medians of the two sides are compared.
            x, y = float(np.median(va)), float(np.median(vb))
            integral = all(float(v).is_integer() for v in va + vb)
            if x == y or (not integral and abs(x - y) <= RESULT_TOLERANCE * max(abs(x), abs(y))):
                continue
            if not integral and notes is not None:
                notes.append("%s %.12g in BASE, %.12g in NEW" % (k, x, y))
                continue
            return k, "%.12g" % x, "%.12g" % y

        def show(v):
            return "%.12g" % v[0] if len(v) == 1 else "/".join("%.12g" % x for x in v)

        return k, show(va), show(vb)
    return None


def _clock_problem(a, b):
    if a.device != "gpu":
        return None
    ta = any(t > 0 for t in a.throttled)
    tb = any(t > 0 for t in b.throttled)
    if ta != tb:
        return "throttled on the %s side only" % ("BASE" if ta else "NEW")
    if a.clock and b.clock:
        ca, cb = float(np.median(a.clock)), float(np.median(b.clock))
        if abs(ca - cb) > CLOCK_TOLERANCE * max(ca, cb):
            return "SM clock %.0f MHz in BASE, %.0f MHz in NEW" % (ca, cb)
    return None


def _reason_of(reasons):
    return reasons[0]


def _unsupported_reason(entries):
    return "unsupported: %s" % (entries[0].reason or entries[0].message)


def compare(base, new, settings, kinds=None):
    """Rows (dicts, one per benchmark) of BASE and NEW sample maps
    ({name: Sample}). paired: values are per round, aligned by index."""
    kinds = kinds or {}
    rows, tests = [], []
    for name in sorted(set(base) | set(new)):
        a, b = base.get(name), new.get(name)
        s = b or a
        row = {"name": name, "family": s.family, "device": s.device or "cpu"}
        if s.library:
            row["library"] = s.library
        if b is not None and b.errors:
            row.update(verdict="ERROR", reason=_reason_of(b.errors))
            rows.append(row)
            continue
        if (a is not None and a.no_metric) or (b is not None and b.no_metric):
            continue  # the compared counter is not one this benchmark has
        rows.append(row)
        a_ok = a is not None and not a.errors and any(v is not None for v in a.values)
        b_ok = b is not None and any(v is not None for v in b.values)
        if not a_ok and not b_ok:
            rows.pop()  # unsupported on both sides: nothing to say
            continue
        if not b_ok:
            why = _unsupported_reason(b.unsupported) if b is not None and b.unsupported else "not in NEW"
            row.update(verdict="MISSING", reason=why)
            continue
        if not a_ok:
            why = "BASE: " + _reason_of(a.errors) if a is not None and a.errors else \
                ("BASE: " + _unsupported_reason(a.unsupported) if a is not None and a.unsupported else "not in BASE")
            row.update(verdict="NEW", reason=why)
            continue
        if a.models and b.models and a.models != b.models:
            # Entries pair by GPU model too: a suite spread over a host's GPUs
            # names each entry's.
            row.update(verdict="NOT_SAME_WORK", reason="ran on %s in BASE, %s in NEW"
                       % (" / ".join(sorted(a.models)), " / ".join(sorted(b.models))))
            continue
        notes = [] if settings.results_may_differ else None
        mism = _work_mismatch(a, b, kinds, notes)
        if mism:
            row.update(verdict="NOT_SAME_WORK", reason="%s is %s in BASE, %s in NEW" % mism)
            continue
        if notes:
            row["results_differ"] = notes
        row["_a"], row["_b"] = a, b
        clock = _clock_problem(a, b)
        if clock:
            row["_unreliable"] = clock
        tests.append(row)
    _decide_rows(tests, settings)
    for row in tests:
        if row.get("results_differ"):
            note = "results differ: " + ", ".join(row["results_differ"])
            row["reason"] = (row["reason"] + "; " + note) if row.get("reason") else note
    return rows


CONTROL_SHARE = 0.5   # controls "moved as much": at least half the change, in log time, same direction


def _controls(rows):
    """The vendor libraries timed in the same runs (rows whose entries name a
    library, and whose library version did not change) are control series: a
    change of the project's code has nothing to do with them, so when they
    moved as much as a SLOWER or FASTER row, the row says so."""
    controls = [r for r in rows if r.get("library") and r.get("change") is not None
                and r.get("code") != "changed" and r["verdict"] not in ("NOT_SAME_WORK", "UNRELIABLE")]
    for row in rows:
        if row["verdict"] not in ("SLOWER", "FASTER") or row.get("library"):
            continue
        same_family = [c for c in controls if c["device"] == row["device"] and c["family"] == row["family"]]
        pool = same_family or [c for c in controls if c["device"] == row["device"]]
        if not pool:
            continue
        moved = float(np.median([math.log1p(c["change"]) for c in pool]))
        mine = math.log1p(row["change"])
        row["control"] = {"change": math.expm1(moved), "n": len(pool),
                          "libraries": sorted({c["library"] for c in pool})}
        if moved * mine > 0 and abs(moved) >= CONTROL_SHARE * abs(mine):
            note = "the controls moved as much (%s, median %s over %d)" % (
                "/".join(row["control"]["libraries"]), _pct(math.expm1(moved)), len(pool))
            row["controls_moved"] = True
            row["reason"] = (row["reason"] + "; " + note) if row.get("reason") else note


def _decide_rows(rows, settings):
    """Statistics for the rows that have samples on both sides, grouped by shape
    so each group is one vectorised call; Holm over all of them."""
    if not rows:
        return
    groups = {}
    for i, row in enumerate(rows):
        a, b = row["_a"], row["_b"]
        if settings.mode == "paired":
            d = [y - x for x, y in zip(a.values, b.values) if x is not None and y is not None]
            row["n_base"] = row["n_new"] = len(d)
            groups.setdefault(("paired", len(d)), []).append((i, d))
        else:
            row["n_base"], row["n_new"] = len(a.values), len(b.values)
            groups.setdefault(("files", len(a.values), len(b.values)), []).append((i, (a.values, b.values)))
    n = len(rows)
    est, lo, hi = np.full(n, np.nan), np.full(n, -np.inf), np.full(n, np.inf)
    p_two, noise, min_p = np.full(n, np.nan), np.full(n, np.nan), np.ones(n)
    model = settings.noise_model
    # Run-to-run noise. Paired: a --noise A/A value raises the noise the
    # rounds measure (decide_paired). Two files: every benchmark has one, from
    # --noise, --history or the prior, and it sets the margin that process
    # offsets get (verdicts()).
    if settings.mode == "paired":
        looked = [model.measured.get(row["name"], (np.nan, None)) for row in rows]
    else:
        looked = [model.lookup(row["name"], row["device"], row["family"]) for row in rows]
    run_noise = np.array([v for v, _ in looked], dtype=float)
    for key, members in groups.items():
        idx = np.array([i for i, _ in members])
        if key[0] == "paired":
            if key[1] < 2:
                continue
            D = np.array([d for _, d in members])
            r = decide_paired(D, settings.level, run_noise[idx])
        else:
            if key[1] < 1 or key[2] < 1:
                continue
            X = np.array([x for _, (x, _) in members])
            Y = np.array([y for _, (_, y) in members])
            r = decide_unpaired(X, Y, settings.level)
        est[idx], lo[idx], hi[idx] = r["est"], r["lo"], r["hi"]
        p_two[idx], noise[idx], min_p[idx] = r["p_two"], r["noise"], r["min_p"]
    floors = np.array([settings.floor(row["family"], row["device"]) for row in rows])
    margin_noise = np.full(n, np.nan) if settings.mode == "paired" else run_noise
    r = verdicts({"est": est, "lo": lo, "hi": hi, "p_two": p_two, "noise": noise, "min_p": min_p,
                  "run_noise": margin_noise}, floors, settings.multiple, settings.alpha,
                 tail=model.tail, correction=settings.correction, family=settings.family)
    thr, margin = r["threshold"], r["margin"]
    m = int(np.sum(~np.isnan(p_two)))
    unit = "rounds" if settings.mode == "paired" else "repetitions"
    for i, row in enumerate(rows):
        a, b = row.pop("_a"), row.pop("_b")
        va = [v for v in a.values if v is not None]
        vb = [v for v in b.values if v is not None]
        row["base"] = _unlog(np.median(va), settings)
        row["new"] = _unlog(np.median(vb), settings)
        row["threshold"] = float(thr[i])
        row["noise"] = None if np.isnan(noise[i]) else float(noise[i])
        if settings.mode == "files":
            row["run_noise"] = float(run_noise[i])
            row["run_noise_source"] = looked[i][1]
            row["margin"] = float(math.expm1(margin[i]))
        elif not np.isnan(run_noise[i]):
            row["run_noise"] = float(run_noise[i])
            row["run_noise_source"] = looked[i][1]
        if not getattr(settings, "scale_new", None):  # --scale-new stands for a change of NEW's code
            _code_identity(row, a, b)
        if np.isnan(est[i]):
            row.update(verdict="AMBIGUOUS", reason="too few %s to decide (%d and %d)"
                       % (unit, row["n_base"], row["n_new"]))
            row.update(change=None, ci=[None, None], p=None)
            continue
        row["change"] = float(math.expm1(est[i]))
        row["ci"] = [None if not np.isfinite(lo[i]) else float(math.expm1(lo[i])),
                     None if not np.isfinite(hi[i]) else float(math.expm1(hi[i]))]
        row["p"] = float(r["p_adj"][i])
        v = r["verdict"][i]
        tau = math.log1p(thr[i])
        if v == "AMBIGUOUS" and not r["decidable"][i]:
            need = stats.sizes_for(settings.alpha / max(m, 1), "wsr" if settings.mode == "paired" else "mw")
            row["reason"] = "too few %s to decide: %d and %d give p >= %.2g, %s over %d benchmarks needs < %.2g%s" % (
                unit, row["n_base"], row["n_new"], min_p[i], settings.correction_name(), m,
                settings.alpha / max(m, 1),
                "" if need is None else " (%d %s)" % (need, "rounds" if settings.mode == "paired" else "per side"))
        elif v == "AMBIGUOUS" and settings.mode == "files" and row["p"] <= settings.alpha and abs(est[i]) > tau:
            # Significant within the two sessions and beyond the threshold,
            # but inside what the two processes' offsets alone can give.
            row["reason"] = ("%s, but two processes of one binary differ by up to %s here (%g x run-to-run noise "
                             "%s, from %s%s): confirm with compare --run BASE_BENCH NEW_BENCH"
                             % (_pct(row["change"]), _pct(row["margin"], False), RUN_MULTIPLE,
                                _pct(run_noise[i], False), _source_words(looked[i][1]),
                                "" if model.tail <= 1 else ", x%.2f for this machine's tails" % model.tail))
        elif v == "AMBIGUOUS" and row["p"] > settings.alpha and abs(est[i]) > tau:
            row["reason"] = "%s beyond %s but not significant (p %.2g)" % (
                _pct(row["change"]), _pct(_bound(thr[i], est[i] < 0)), row["p"])
        if settings.mode == "paired":
            ratio = math.log(row["new"] / row["base"]) if row["base"] > 0 and row["new"] > 0 else est[i]
            if settings.metric and settings.higher_better:
                ratio = -ratio
            if abs(ratio - est[i]) > tau and v != "SAME":
                note = ("the pairs' change %s differs from the medians' ratio %s: the rounds drifted, and the "
                        "pairs (same moment, both binaries) decide" % (_pct(row["change"]), _pct(math.expm1(ratio))))
                row["reason"] = (row["reason"] + "; " + note) if row.get("reason") else note
        if v == "AMBIGUOUS" and not row.get("reason"):
            row["reason"] = "the interval %s ... %s neither clears the threshold nor lies inside +-%s" % (
                _pct(row["ci"][0]), _pct(row["ci"][1]), _pct(thr[i], False))
        if "_unreliable" in row:
            row["reason"] = row.pop("_unreliable") + ("; statistics said %s" % v)
            v = "UNRELIABLE"
        if v in ("SLOWER", "FASTER") and row.get("code") == "same":
            # The same object code and library versions ran on both sides:
            # the machine or noise moved, and that never fails a gate.
            row["same_code"] = True
            note = "same code: machine or noise"
            row["reason"] = note + ("; " + row["reason"] if row.get("reason") else "")
        row["verdict"] = v
        if a.rate and b.rate and a.rate[0] == b.rate[0]:
            ra, rb = float(np.median(a.rate[1])), float(np.median(b.rate[1]))
            row["rate"] = {"counter": a.rate[0], "base": ra, "new": rb, "change": rb / ra - 1.0}


def _unlog(v, settings):
    return float(math.exp(-v)) if settings.metric and settings.higher_better else float(math.exp(v))


# ----------------------------------------------------------------- loading

def load_run(path, what):
    """A Run for the comparator: the loader's contract (results.load_strict)
    refuses what it cannot use, one line, exit 2."""
    try:
        return results.load_strict(path, what)
    except results.LoadError as e:
        raise InputError(str(e))


def metric_direction(runs, metric):
    """(higher_better, unit) of the compared metric; InputError for an unknown counter."""
    if metric in (None, "real_time"):
        return False, "s"
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
            return info.get("better") == "higher", info.get("unit", "")
    for run in runs:
        if any(metric in e.raw for e in run.entries):
            raise InputError("--metric %s: the files do not say whether higher is better (schema 0)" % metric)
    raise InputError("--metric %s: no entry has that counter" % metric)


def check_fingerprint(base_run, new_run, samples, warn):
    scopes = set()
    for s in samples:
        scopes |= scopes_of(s)
    hard, soft = fingerprint_check(base_run.context, new_run.context, scopes)
    if hard:
        key, a, b = hard[0]
        more = "" if len(hard) == 1 else " (and %s)" % ", ".join(k for k, _, _ in hard[1:])
        raise NotComparable("runs not comparable: %s is %r in BASE and %r in NEW%s" % (key, a, b, more))
    for key, a, b in soft:
        warn("warning: %s differs (BASE %r, NEW %r); compared anyway" % (key, a, b))
    return soft


# ------------------------------------------------------------------ output

_pct = fmt.pct


def _order(rows):
    rank = {v: i for i, v in enumerate(VERDICTS)}

    def key(r):
        c = r.get("change")
        c = 0.0 if c is None else c
        # Within a verdict the largest changes first (FASTER: the largest gain).
        return (rank[r["verdict"]], c if r["verdict"] == "FASTER" else -c, r["name"])
    return sorted(rows, key=key)


def summary_counts(rows):
    counts = {v: 0 for v in VERDICTS}
    for r in rows:
        counts[r["verdict"]] += 1
    return counts


def gates(row):
    """Whether a row fails the comparison: SLOWER (not with the same code on
    both sides) or ERROR."""
    return row["verdict"] in GATING and not row.get("same_code")


def exit_code(rows):
    return EXIT_REGRESSION if any(gates(r) for r in rows) else EXIT_OK


def describe_exit(code):
    return {EXIT_OK: "nothing regressed", EXIT_REGRESSION: "a confirmed regression or an error entry in NEW"}[code]


def _time(v, unit):
    if v is not None and unit != "s":
        return "%.4g" % v
    return fmt_time(v, "-", "us")


def _rate(r):
    """The declared rate's change, mirroring the time's (one verdict): "-9.09% GFLOPS"."""
    rate = r.get("rate")
    return "-" if not rate else "%s %s" % (_pct(rate["change"]), rate["counter"])


def _run_noise(r):
    """The run-to-run noise and where it came from: "1.10% prior", "0.40% h14" (history, 14 runs), "0.30% A/A"."""
    v = r.get("run_noise")
    if v is None:
        return "-"
    src = r.get("run_noise_source") or ""
    short = "h" + src.split()[-1] if src.startswith("history") else src
    return "%s %s" % (_pct(v, False), short)


def render_console(doc, only_changes=False):
    rows = doc["benchmarks"]
    unit = doc["metric"]["unit"]
    if doc.get("sequential"):
        how = "sequential, Benjamini-Hochberg over %d benchmarks at each look (below)" % doc["settings"]["tested"]
    else:
        how = "%d%% intervals; %s over %d benchmarks at alpha %g" % (
            round(doc["settings"]["level"] * 100), doc["settings"]["correction"], doc["settings"]["tested"],
            doc["settings"]["alpha"])
    lines = [doc["title"], "metric: %s; %s" % (doc["metric"]["describe"], how),
             "threshold: " + doc["settings"]["threshold_rule"]]
    for w in doc["warnings"]:
        lines.append("warning: " + w)
    for w in doc.get("notes", ()):
        lines.append("note: " + w)
    head = ("verdict", "change", "interval", "thresh", "noise", "run noise", "p(adj)", "n", "base", "new", "rate",
            "benchmark")
    table = []
    for r in _order(rows):
        if only_changes and r["verdict"] == "SAME":
            continue
        ci = r.get("ci") or [None, None]
        table.append((r["verdict"], _pct(r.get("change")),
                      "[%s, %s]" % (_pct(ci[0]), _pct(ci[1])) if r.get("change") is not None else "-",
                      _pct(r.get("threshold"), False) if r.get("threshold") is not None else "-",
                      _pct(r.get("noise"), False) if r.get("noise") is not None else "-",
                      _run_noise(r),
                      "%.2g" % r["p"] if r.get("p") is not None else "-",
                      "%d/%d" % (r["n_base"], r["n_new"]) if "n_base" in r else "-",
                      _time(r.get("base"), unit), _time(r.get("new"), unit), _rate(r),
                      r["name"] + ("  (%s)" % r["reason"] if r.get("reason") else "")))
    widths = [max(len(head[i]), *(len(t[i]) for t in table)) if table else len(head[i]) for i in range(len(head))]
    fmt = "  ".join("%%-%ds" % w if i in (0, 11) else "%%%ds" % w for i, w in enumerate(widths))
    lines.append(fmt % head)
    lines.extend(fmt % t for t in table)
    seq = doc.get("sequential")
    if seq:
        lines.append("sequential: looks at %s rounds (alpha %.3g, %.1f%% intervals each); verdicts after %s; "
                     "%.1f rounds per benchmark on average" % (
                         ", ".join(map(str, seq["looks"])), seq["alpha_per_look"], 100 * seq["level_per_look"],
                         ", ".join("%s rounds: %d" % (k, v) for k, v in sorted(seq["decided_at"].items(),
                                                                               key=lambda kv: int(kv[0]))),
                         seq["mean_rounds"]))
    lines.append(doc["summary_line"])
    return "\n".join(l.rstrip() for l in lines) + "\n"


def render_markdown(doc):
    rows = _order(doc["benchmarks"])
    out = ["### parbench compare: %s" % doc["summary_line"], "",
           doc["title"] + ".", "",
           "Metric: %s. Threshold per benchmark = %s; SLOWER/FASTER need the change beyond it and "
           "p < %g after Holm over %d benchmarks; SAME needs the %d%% interval inside it." % (
               doc["metric"]["describe"], doc["settings"]["threshold_rule"], doc["settings"]["alpha"],
               doc["settings"]["tested"], round(doc["settings"]["level"] * 100)), ""]
    for w in doc["warnings"]:
        out.append("> warning: " + w)
    for w in doc.get("notes", ()):
        out.append("> note: " + w)
    if doc["warnings"] or doc.get("notes"):
        out.append("")

    def table(rs):
        t = ["| verdict | benchmark | change | interval | threshold | noise | run noise | p (adj.) | n | base | new "
             "| rate |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        unit = doc["metric"]["unit"]
        for r in rs:
            ci = r.get("ci") or [None, None]
            name = "`%s`" % r["name"] + (" (%s)" % r["reason"].replace("|", "\\|") if r.get("reason") else "")
            t.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["verdict"], name, _pct(r.get("change")),
                "%s ... %s" % (_pct(ci[0]), _pct(ci[1])) if r.get("change") is not None else "-",
                _pct(r.get("threshold"), False) if r.get("threshold") is not None else "-",
                _pct(r.get("noise"), False) if r.get("noise") is not None else "-",
                _run_noise(r),
                "%.2g" % r["p"] if r.get("p") is not None else "-",
                "%d/%d" % (r["n_base"], r["n_new"]) if "n_base" in r else "-",
                _time(r.get("base"), unit), _time(r.get("new"), unit), _rate(r)))
        return t
    notable = [r for r in rows if r["verdict"] != "SAME"]
    if notable:
        out += table(notable) + [""]
    same = [r for r in rows if r["verdict"] == "SAME"]
    if same:
        out += ["<details><summary>%d SAME</summary>" % len(same), ""] + table(same) + ["", "</details>", ""]
    return "\n".join(out)


def threshold_rule(settings):
    if settings.mode == "paired":
        return "max(floor, %g x the noise of one run, measured over the rounds)" % settings.multiple
    return ("max(floor, %g x the spread of the repetitions); SLOWER/FASTER also need the interval beyond "
            "%g x the run-to-run noise (--noise, --history or the prior: the 'run noise' column), what two "
            "processes' offsets can give" % (settings.multiple, RUN_MULTIPLE))


def _sequential_summary(rows, settings):
    """Looks, the rounds each verdict needed, and the benchmark-rounds run
    (what the device time is proportional to, launch overheads aside)."""
    looks = getattr(settings, "looks", None)
    if not looks:
        return None
    at = {}
    for r in rows:
        if "rounds" in r:
            at[str(r["rounds"])] = at.get(str(r["rounds"]), 0) + 1
    used = sum(r.get("rounds", 0) for r in rows)
    k = len(looks)
    return {"looks": looks, "alpha_per_look": settings.alpha / k, "level_per_look": 1 - (1 - settings.level) / k,
            "decided_at": at, "benchmark_rounds": used,
            "mean_rounds": used / len(rows) if rows else 0.0}


def build_document(rows, settings, base_desc, new_desc, warnings, metric_desc, unit):
    counts = summary_counts(rows)
    code = exit_code(rows)
    parts = ["%d %s" % (counts[v], v) for v in VERDICTS if counts[v]]
    same_code = sum(1 for r in rows if r.get("same_code"))
    if same_code:
        parts.append("%d of them with the same code (machine or noise, not gating)" % same_code)
    tested = sum(1 for r in rows if r.get("p") is not None)
    doc = {
        "parbench_compare": FORMAT,
        "mode": settings.mode,
        "title": "BASE %s vs NEW %s (%s)" % (base_desc["label"], new_desc["label"],
                                             "paired rounds on this machine" if settings.mode == "paired"
                                             else "two files"),
        "base": base_desc, "new": new_desc,
        "metric": {"name": settings.metric or "real_time", "unit": unit, "describe": metric_desc},
        "settings": {"alpha": settings.alpha, "level": settings.level, "multiple": settings.multiple,
                     "threshold_rule": threshold_rule(settings),
                     "floors": {"%s%s" % ("" if f is None else f + "/", d): v
                                for (f, d), v in sorted(settings.floors.items(), key=str)},
                     "default_floors": {"%s/%s" % k: v for k, v in sorted(DEFAULT_FLOORS.items())
                                        if k[1] == settings.mode},
                     "tested": tested, "correction": settings.correction_name(),
                     "run_noise_tail": settings.noise_model.tail,
                     "results_may_differ": settings.results_may_differ},
        "same_code": same_code,
        "warnings": list(warnings) + (["NEW's times multiplied by %g (--scale-new)" % settings.scale_new]
                                      if getattr(settings, "scale_new", None) else []),
        "notes": list(settings.noise_model.describe),
        "sequential": _sequential_summary(rows, settings),
        "summary": counts,
        "exit": code,
        "summary_line": "%s; exit %d (%s)" % (", ".join(parts) or "nothing compared", code, describe_exit(code)),
        "benchmarks": [{k: v for k, v in r.items()} for r in _order(rows)],
    }
    return doc


def describe_run(run, path):
    ctx = run.context
    return {"label": os.path.basename(str(path)), "path": str(path),
            "revision": ctx.get("parbench_git_revision"),
            "gpu": ctx.get("gpu"), "cpu": ctx.get("cpu_model"),
            "profile": ctx.get("parbench_profile")}


def write_outputs(doc, args, out=sys.stdout):
    out.write(render_console(doc, args.only_changes))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(render_markdown(doc))
    if args.json:
        with open(args.json, "w") as f:
            cli.dump(doc, f)
    if args.plot:
        from plots import compare_plot
        compare_plot.plot(doc, doc["benchmarks"], args.plot)


def _filtered(a, b, settings):
    if settings.filter:
        a = {k: v for k, v in a.items() if settings.filter.search(k)}
        b = {k: v for k, v in b.items() if settings.filter.search(k)}
        if not a and not b:
            raise InputError("--filter %s matches no benchmark" % settings.filter.pattern)
    if settings.noise_given:
        names = set(a) | set(b)
        known = sum(1 for k in names if k in settings.noise)
        if not known:
            raise InputError("--noise: the file has the run-to-run noise of none of these benchmarks")
        line = "--noise covers %d of %d benchmarks; the other %d use %s" % (
            known, len(names), len(names) - known,
            "the prior for their device and family" if settings.mode == "files" else "the noise their rounds measure")
        # A sequential --run analyses its rounds once per look: one note.
        if known < len(names) and line not in settings.noise_model.describe:
            settings.noise_model.describe.append(line)
    return a, b


def _no_metric_warning(a, b, settings, warn):
    n = len({k for side in (a, b) for k, v in side.items() if v.no_metric})
    if not n:
        return []
    line = "%d benchmarks have no %s counter; left out" % (n, settings.metric)
    warn("warning: " + line)
    return [line]


# --------------------------------------------------------------- two files

def compare_files(base_path, new_path, settings, warn):
    base = load_run(base_path, "BASE")
    new = load_run(new_path, "NEW")
    higher, unit = metric_direction([base, new], settings.metric)
    settings.higher_better = higher
    a = collect(base, settings.metric, higher)
    b = collect(new, settings.metric, higher)
    scale(b, settings)
    a, b = _filtered(a, b, settings)
    both = [a[k] for k in a if k in b]
    soft = check_fingerprint(base, new, both, warn)
    if settings.history:
        try:
            measured = sorted(k for k in a if k in b and a[k].values and b[k].values)
            history_noise.load_history(settings.noise_model, settings.history, new.context, measured, warn)
        except noise_mod.NoiseError as e:
            raise InputError(str(e))
    elif not settings.noise_given:
        settings.noise_model.describe.append(
            "run-to-run noise from the prior per device and family (regress/stats/noise.py); --history DIR gives "
            "this machine's own")
    warnings = ["%s differs (BASE %r, NEW %r)" % s for s in soft]
    for what, run in (("BASE", base), ("NEW", new)):
        for w in run.warnings:
            warnings.append("%s %s: %s" % (what, base_path if what == "BASE" else new_path, w))
    for what, side in (("BASE", a), ("NEW", b)):
        counts = [len(s.values) for s in side.values() if s.values]
        if counts and max(counts) < 2:
            line = ("%s has 1 repetition per benchmark: too few to decide (AMBIGUOUS, never a gate); "
                    "run with --benchmark_repetitions=10 or more" % what)
            warn("warning: " + line)
            warnings.append(line)
    kinds = {k: v.get("kind") for run in (base, new) for k, v in run.counter_kinds.items()}
    warnings += _no_metric_warning(a, b, settings, warn)
    rows = compare(a, b, settings, kinds)
    _controls(rows)
    return rows, describe_run(base, base_path), describe_run(new, new_path), warnings, unit, None


# ----------------------------------------------------------- paired rounds

SEQUENTIAL_CAP = 24   # rounds at most, by default, of a sequential comparison
FIRST_LOOK = 8


def sequential_looks(cap):
    """The rounds after which a sequential comparison decides what it can:
    8, 12, 16, then x1.5 (even), and the cap last."""
    looks = [n for n in (FIRST_LOOK, 12, 16) if n < cap]
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


def look_settings(settings, looks, family):
    """The settings of one look: alpha and the SAME interval's tails split
    evenly over the looks (Bonferroni across looks: the chance of any false
    SLOWER/FASTER, or of a false SAME per benchmark, over the whole sequence
    is at most that of one fixed-size comparison), Benjamini-Hochberg across
    the benchmarks with the whole comparison as its family."""
    k = len(looks)
    sk = copy.copy(settings)
    sk.alpha = settings.alpha / k
    sk.level = 1.0 - (1.0 - settings.level) / k
    sk.correction = "bh"
    sk.family = family
    return sk


def sequential_rows(a, b, settings, kinds, looks, done):
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
    for k, n in enumerate(looks):
        if n > done:
            return decided, (n, sorted(undecided))
        sk = look_settings(settings, looks, family)
        rows = compare(_truncated(a, undecided, n), _truncated(b, undecided, n), sk, kinds)
        seen = set()
        for row in rows:
            seen.add(row["name"])
            if row["verdict"] != "AMBIGUOUS" or k == len(looks) - 1:
                row["rounds"] = n
                if row["verdict"] == "AMBIGUOUS" and "too few" not in row.get("reason", ""):
                    row["reason"] = "undecided after %d rounds, the cap (--max-rounds)%s" % (
                        n, "; " + row["reason"] if row.get("reason") else "")
                decided.append(row)
                undecided.discard(row["name"])
        undecided &= seen  # nothing to decide for a benchmark without a row (unsupported on both sides)
        if not undecided:
            break
    return decided, None


def _load_rounds(workdir, n):
    runs = {"base": [], "new": []}
    for r in range(n):
        for side in ("base", "new"):
            runs[side].append(load_run(rounds.path(workdir, r, side), "%s round %d" % (side.upper(), r + 1)))
    return runs


def analyse_paired(workdir, settings, warn, sequential=None):
    """Rows of the rounds stored in workdir (compare --run writes them), and
    what is pending: (rows, base, new, warnings, unit, pending). A fixed
    comparison (compare --run --rounds N) decides once over all its rounds;
    a sequential one (the manifest's looks, or `sequential`: a list of looks
    to replay over a fixed run's rounds) decides look by look."""
    manifest = rounds.read_manifest(workdir)
    looks = sequential or manifest.get("looks")
    if looks:
        n = rounds.leading_done(workdir)
        if n < looks[0]:
            raise InputError("%s: %d of %d rounds done (the first look); run the same compare --run again to go on"
                             % (workdir, n, looks[0]))
    else:
        n = manifest["rounds"]
        done = rounds.done(workdir, n)
        if done < n:
            raise InputError("%s: %d of %d rounds done; run the same compare --run again to finish them"
                             % (workdir, done, n))
    runs = _load_rounds(workdir, n)
    higher, unit = metric_direction(runs["base"] + runs["new"], settings.metric)
    settings.higher_better = higher
    a = merge_rounds([collect(run, settings.metric, higher, group=True) for run in runs["base"]])
    b = merge_rounds([collect(run, settings.metric, higher, group=True) for run in runs["new"]])
    scale(b, settings)
    a, b = _filtered(a, b, settings)
    both = [a[k] for k in a if k in b]
    soft = check_fingerprint(runs["base"][0], runs["new"][0], both, warn)
    warnings = ["%s differs (BASE %r, NEW %r)" % s for s in soft]
    kinds = {k: v.get("kind") for run in runs["base"][:1] + runs["new"][:1] for k, v in run.counter_kinds.items()}
    warnings += _no_metric_warning(a, b, settings, warn)
    pending = None
    if looks:
        rows, pending = sequential_rows(a, b, settings, kinds, looks, n)
        settings.looks = looks
    else:
        rows = compare(a, b, settings, kinds)
    _controls(rows)
    desc = []
    for side in ("base", "new"):
        d = describe_run(runs[side][0], manifest[side])
        d["label"] = os.path.basename(manifest[side])
        d["sha256"] = manifest[side + "_sha256"]
        d["rounds"] = n
        env = (manifest.get("env") or {}).get(side)
        if env:  # one binary on two GPUs, say: the environment tells the sides apart
            d["env"] = env
            d["label"] += " [%s]" % " ".join("%s=%s" % kv for kv in sorted(env.items()))
        own = (manifest.get("side_args") or {}).get(side)
        if own:  # one binary with and without a flag
            d["args"] = own
            d["label"] += " [%s]" % " ".join(own)
        desc.append(d)
    if desc[0]["label"] == desc[1]["label"]:
        desc[0]["label"], desc[1]["label"] = manifest["base"], manifest["new"]
    return rows, desc[0], desc[1], warnings, unit, pending


# -------------------------------------------------------------------- main

def _load_noise(path):
    """{name: run-to-run noise} from the verdict JSON of a paired comparison."""
    try:
        doc = cli.strict_loads(results.read_text(path))  # plain or gzip-compressed
    except (results.DocumentError, ValueError) as e:
        raise InputError("--noise %s: %s" % (path, e))
    if not isinstance(doc, dict) or doc.get("parbench_compare") != FORMAT or \
            not isinstance(doc.get("benchmarks"), list):
        raise InputError("--noise %s: not a compare verdict file (compare --json writes one)" % path)
    if doc.get("mode") != "paired":
        raise InputError("--noise %s: a two-file comparison measures no run-to-run noise; give the verdict "
                         "of a paired (compare --run) A/A run" % path)
    out = {}
    for r in doc["benchmarks"]:
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            v = r.get("noise")
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0:
                out[r["name"]] = float(v)
    return out


def make_parser():
    p = cli.ArgumentParser(
        TOOL, "ci/compare",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare two parbench runs benchmark by benchmark: SLOWER, FASTER, SAME, AMBIGUOUS, "
                    "UNRELIABLE, NOT_SAME_WORK, NEW, MISSING or ERROR.",
        usage="compare BASE.json NEW.json [options]\n"
              "       compare --run BASE_BENCH NEW_BENCH [--rounds N] [--workdir DIR] [options] -- [bench arguments]",
        epilog="""modes:
  two files   entries paired by run name, every repetition used (Mann-Whitney U,
              Hodges-Lehmann shift); use 10 or more repetitions per side
  --run       the two binaries interleaved on this machine, A B B A ... (Wilcoxon
              signed-rank over the rounds, Hodges-Lehmann ratio); sequential:
              looks at 8, 12, 16 and 24 rounds, later rounds only for the
              undecided benchmarks; rounds are kept in --workdir, so an
              interrupted or --max-seconds run resumes, and --analyse DIR
              compares them again without running anything

verdicts: SLOWER/FASTER need the change significant after the correction
over all benchmarks compared and beyond the benchmark's threshold, and with
two files the interval beyond 8 x the run-to-run noise (--noise, --history
or the prior); SAME needs the interval inside +-threshold. Threshold, paired:
max(floor, 1 x the noise of one run, measured over the rounds); two files:
max(floor, 3 x the spread of the repetitions). Default floors: GPU 1% paired,
2% two files; CPU 5% paired, 10% two files.

exit status: 0 nothing regressed; 1 a SLOWER or ERROR verdict; 2 unreadable
input or bad usage; 3 runs not comparable (a hard fingerprint key differs);
4 --run stopped by --max-seconds before all rounds ran (rerun to resume)""")
    p.add_argument("files", nargs="*", metavar="FILE", help="BASE.json NEW.json")
    p.add_argument("--run", nargs=2, metavar=("BASE_BENCH", "NEW_BENCH"),
                   help="run the two bench binaries interleaved (arguments for them after --)")
    for side in ("base", "new"):
        p.add_argument("--%s-env" % side, action="append", default=[], metavar="VAR=VALUE",
                       help="--run: set VAR for the %s binary's invocations (repeatable); e.g. one bench on two "
                       "GPUs: --base-env CUDA_VISIBLE_DEVICES=0 --new-env CUDA_VISIBLE_DEVICES=1" % side.upper())
        p.add_argument("--%s-arg" % side, action="append", default=[], metavar="ARG",
                       help="--run: a bench argument for the %s binary's invocations only (repeatable); e.g. what "
                       "a flag does to the times: --new-arg=--no-energy" % side.upper())
    p.add_argument("--rounds", type=int, help="a fixed number of paired rounds, every benchmark in each, decided "
                   "once (Holm); default: sequential, rounds until each benchmark is decided")
    p.add_argument("--max-rounds", type=int, help="sequential: the cap on rounds (default %d; looks at 8, 12, 16, "
                   "then x1.5)" % SEQUENTIAL_CAP)
    p.add_argument("--sequential", action="store_true", help="with --analyse DIR of a fixed run: replay the "
                   "sequential procedure over its rounds (what it would have decided, and after how many rounds)")
    p.add_argument("--workdir", default="compare-rounds", help="where --run keeps its rounds (default %(default)s)")
    p.add_argument("--analyse", metavar="DIR", help="compare the rounds an earlier --run kept in DIR, running nothing")
    p.add_argument("--scale-new", type=float, metavar="F",
                   help="multiply NEW's times by F (rates by 1/F) before comparing: measures what a change "
                        "of that size would be called, e.g. on A/A data")
    p.add_argument("--max-seconds", type=float, help="--run: start no invocation after this many seconds; "
                   "exit 4, rerun to resume")
    p.add_argument("--results-may-differ", action="store_true",
                   help="a fractional result counter (inertia) that differs does not make NOT_SAME_WORK: a change "
                        "that sums floats in another order moves it; the row notes it (iteration counts and the "
                        "problem must still match)")
    p.add_argument("--metric", help="a time, rate or energy counter to compare instead of the time per "
                   "iteration (rates mirror the time: the same verdict; joules_per_call: SLOWER is more energy)")
    p.add_argument("--floor", action="append", type=decide.parse_floor, default=[], metavar="[FAMILY/]DEVICE=PCT",
                   help="minimum effect, e.g. gpu=2, cpu=10, Sort/gpu=3 (repeatable)")
    p.add_argument("--multiple", type=float, help="threshold >= this x the measured noise (default %g paired, "
                   "%g two files)" % (DEFAULT_MULTIPLE["paired"], DEFAULT_MULTIPLE["files"]))
    p.add_argument("--noise", metavar="VERDICT.json",
                   help="run-to-run noise per benchmark from an earlier compare --json of a paired A/A run: "
                        "two files then use 8x it in the threshold, and may call a change proven")
    p.add_argument("--history", metavar="DIR",
                   help="two files: the run-to-run noise of each benchmark from this machine's series in the "
                        "history store DIR (ci/history); benchmarks it cannot cover use the prior")
    p.add_argument("--alpha", type=float, default=ALPHA, help="error rate of SLOWER/FASTER: family-wise (two files, "
                   "--rounds), false discovery rate and family-wise under no change (sequential) (default %(default)s)")
    p.add_argument("--filter", help="compare only benchmarks whose name matches this regular expression")
    p.add_argument("--json", metavar="FILE", help="write the verdicts as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown report (for a pull-request comment)")
    p.add_argument("--plot", metavar="FILE", help="draw the changes with their intervals and thresholds "
                   "(PNG or SVG, by the name; needs matplotlib)")
    p.add_argument("--only-changes", action="store_true", help="console: leave out SAME rows")
    return p


def run_sequential(args, bench_args, settings, warn):
    """compare --run without --rounds: rounds until every benchmark is
    decided or the cap; each call resumes from the rounds in --workdir. The
    result of analyse_paired, or None when --max-seconds stopped it."""
    cap = args.max_rounds or SEQUENTIAL_CAP
    looks = sequential_looks(cap)
    started = time.monotonic()
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    pending, res = (looks[0], None), None
    manifest = os.path.join(args.workdir, "manifest.json")
    if os.path.isfile(manifest) and rounds.leading_done(args.workdir) >= looks[0]:
        # Rounds already there are read only when they are this comparison's.
        rounds.check_workdir(args.run[0], args.run[1], bench_args, args.workdir, args.env, {"looks": looks},
                             args.side_args)
        old = rounds.read_manifest(args.workdir)
        if old.get("looks") == looks:
            res = analyse_paired(args.workdir, settings, warn)
            pending = res[5]
    while pending is not None:
        target, names = pending
        left = None
        if args.max_seconds is not None:
            left = args.max_seconds - (time.monotonic() - started)
        if names is not None:
            log("compare: sequential: %d benchmarks undecided; rounds up to %d (looks %s)"
                % (len(names), target, ", ".join(map(str, looks))))
        if not rounds.run(args.run[0], args.run[1], bench_args, args.workdir, target, left, log,
                          select=names, extra={"looks": looks}, env=args.env, side_args=args.side_args):
            return None
        res = analyse_paired(args.workdir, settings, warn)
        pending = res[5]
    return res


def main(argv=None):
    argv, bench_args = cli.split_at_dashes(argv)
    parser = make_parser()
    args = parser.parse_args(argv)

    def warn(line):
        print("%s: %s" % (TOOL, line), file=sys.stderr)

    def fail(code, line):
        print("%s: %s" % (TOOL, line), file=sys.stderr)
        return code

    if sum(map(bool, (args.run, args.files, args.analyse))) > 1:
        return fail(EXIT_INPUT, "give two files, --run or --analyse, not several")
    if args.scale_new is not None and not args.scale_new > 0:
        return fail(EXIT_INPUT, "--scale-new must be a positive factor")
    if not args.run and not args.analyse and len(args.files) != 2:
        return fail(EXIT_INPUT, "needs BASE.json NEW.json, or --run BASE_BENCH NEW_BENCH (see --help)")
    if bench_args and not args.run:
        return fail(EXIT_INPUT, "arguments after -- are for --run")
    args.env, args.side_args = {}, {}
    for side in ("base", "new"):
        if getattr(args, side + "_arg"):
            if not args.run:
                return fail(EXIT_INPUT, "--%s-arg is for --run" % side)
            args.side_args[side] = list(getattr(args, side + "_arg"))
        given = getattr(args, side + "_env")
        if given and not args.run:
            return fail(EXIT_INPUT, "--%s-env is for --run" % side)
        for item in given:
            var, eq, value = item.partition("=")
            if not eq or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", var):
                return fail(EXIT_INPUT, "--%s-env %s: want VAR=VALUE" % (side, item))
            args.env.setdefault(side, {})[var] = value
    if args.rounds is not None and args.rounds < MIN_ROUNDS:
        return fail(EXIT_INPUT, "--rounds must be at least %d" % MIN_ROUNDS)
    if args.max_rounds is not None and (args.max_rounds < FIRST_LOOK or args.rounds is not None):
        return fail(EXIT_INPUT, "--max-rounds must be at least %d, and is for a sequential --run (without --rounds)"
                    % FIRST_LOOK)
    if args.sequential and not args.analyse:
        return fail(EXIT_INPUT, "--sequential replays the rounds of --analyse DIR")
    if not 0 < args.alpha < 1:
        return fail(EXIT_INPUT, "--alpha must be between 0 and 1")
    try:
        flt = re.compile(args.filter) if args.filter else None
    except re.error as e:
        return fail(EXIT_INPUT, "--filter is not a regular expression: %s" % e)
    mode = "paired" if args.run or args.analyse else "files"
    try:
        noise = _load_noise(args.noise) if args.noise else None
        settings = Settings(mode, alpha=args.alpha, floors=dict(args.floor), multiple=args.multiple,
                            metric=args.metric, noise=noise)
        settings.filter = flt
        settings.results_may_differ = args.results_may_differ
        if args.history and mode != "files":
            raise InputError("--history is for two files; paired rounds measure their own noise")
        settings.history = args.history
        settings.higher_better = False
        settings.scale_new = args.scale_new
        if args.analyse:
            if not os.path.isfile(os.path.join(args.analyse, "manifest.json")):
                raise InputError("%s holds no rounds of compare --run (no manifest.json)" % args.analyse)
            replay = None
            if args.sequential:
                m = rounds.read_manifest(args.analyse)
                if m.get("looks"):
                    raise InputError("--sequential: %s already holds a sequential comparison" % args.analyse)
                replay = sequential_looks(m["rounds"])
            res = analyse_paired(args.analyse, settings, warn, replay)
            if res[5] is not None:
                raise InputError("%s: stopped before the look at %d rounds; run the same compare --run again "
                                 "to go on" % (args.analyse, res[5][0]))
        elif args.run and args.rounds:
            finished = rounds.run(args.run[0], args.run[1], bench_args, args.workdir, args.rounds,
                                  args.max_seconds, lambda s: print(s, file=sys.stderr, flush=True), env=args.env,
                                  side_args=args.side_args)
            if not finished:
                return EXIT_INCOMPLETE
            res = analyse_paired(args.workdir, settings, warn)
        elif args.run:
            res = run_sequential(args, bench_args, settings, warn)
            if res is None:
                return EXIT_INCOMPLETE
        else:
            res = compare_files(args.files[0], args.files[1], settings, warn)
    except (InputError, rounds.RoundsError) as e:
        return fail(EXIT_INPUT, str(e))
    except NotComparable as e:
        return fail(EXIT_INCOMPARABLE, str(e))
    rows, bdesc, ndesc, warnings, unit, _ = res
    if args.metric and args.metric != "real_time":
        metric_desc = "%s (%s, %s is better%s)" % (
            args.metric, unit or "no unit", "higher" if settings.higher_better else "lower",
            "; changes are of the time it implies, 1/%s: + is slower" % args.metric if settings.higher_better else "")
    else:
        metric_desc = "time per iteration (real_time; manual time in parbench), lower is better"
    doc = build_document(rows, settings, bdesc, ndesc, warnings, metric_desc, unit)
    if args.plot:
        if not args.plot.lower().endswith((".png", ".svg", ".pdf")):
            return fail(EXIT_INPUT, "--plot %s: the name must end in .png, .svg or .pdf" % args.plot)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return fail(EXIT_INPUT, "--plot needs matplotlib (apt-get install python3-matplotlib)")
    try:
        write_outputs(doc, args)
    except OSError as e:
        return fail(EXIT_INPUT, "cannot write: %s" % e)
    return doc["exit"]


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
