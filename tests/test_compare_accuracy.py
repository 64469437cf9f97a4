#!/usr/bin/env python3
"""Accuracy and speed of the comparator (regress/compare.py; the unit tests
are tests/test_compare.py).

1. Its accuracy on synthetic suites with the noise measured on the H200
   (results/nvidia-h200/compare/README.md): within-run spread log-normal around
   0.25% (90% below 2%), heavy-tailed repetitions (Student t, 3 degrees of
   freedom) with occasional slow outliers, and an offset per process (each
   run of a binary) of about 1.2x the within-run spread, log-normally spread:
   - paired, sequential (compare --run's default: looks at 4, 6, 8, 12, 16
     and 24 rounds, the t-test before 12): A/A, at most 1% of 1000 suites
     of 300 benchmarks raise any alarm (measured: 8; 4 with the looks at 8,
     12, 16 and 24 before), at least 80% SAME (85%), 8.8 rounds per
     benchmark (11.4 before); 5% slower at 1% noise and 2% slower at 0.5%
     noise: at least 95% SLOWER (100.0% and 99.9%, in 4.7 and 5.5 rounds
     per benchmark, each look counting the earlier looks' SLOWER as
     rejected; 99.7% and 99.5% in 5.1 and 6.0 with them as p = 1), and one
     such benchmark among 300: at least 95% (99.2%) and 90% (96.7%);
   - two files (15 repetitions a side) with the run-to-run noise known
     (--noise, --history): A/A at most 5e-4 false alarms per benchmark
     (8e-5; see test_files_aa_with_known_run_noise for why not per suite)
     and at least 80% SAME (81%: SAME needs the interval inside the 2%
     floor, not inside a threshold the spread widens); 30% slower at 1%
     noise found always, 10% for 95%; 5% slower at 1% noise within a
     session: >= 95% SLOWER.
2. Its speed on 1000 benchmarks x 15 repetitions.
"""
import copy
import math
import sys
import time
import unittest

import numpy as np

from regress.stats import decide
from regress.verdict.sequential import SEQUENTIAL_CAP, look_settings, sequential_looks
from regress.verdict.settings import Settings
from test_compare import CommandBase, doc, series


RNG_SEED = 20261123
SUITES, BENCHMARKS = 1000, 300
LOOKS = None   # the looks of the sequential procedure; None: compare --run's (a study sets others)


def noise_model(rng, rows):
    """Per benchmark: within-run spread and per-process offset spread (log)."""
    within = np.minimum(0.10, 0.0025 * np.exp(1.62 * rng.standard_normal(rows)))
    process = within * 1.2 * np.exp(0.8 * rng.standard_normal(rows))
    return within, process


def heavy(rng, shape, scale):
    """Heavy-tailed log noise: Student t (3 dof, unit variance) plus 2% slow outliers of up to +50%."""
    t = rng.standard_t(3, size=shape) / math.sqrt(3.0)
    out = rng.random(shape) < 0.02
    return scale * t + out * rng.uniform(0.0, math.log(1.5), size=shape)


def one_run(rng, within, process, reps):
    """Log times of one process: its offset plus heavy-tailed repetitions."""
    rows = within.shape[0]
    offset = process * rng.standard_t(5, size=rows) / math.sqrt(5.0 / 3.0)
    return offset[:, None] + heavy(rng, (rows, reps), within[:, None])


def sequential(rng, within, process, shift, suites, cap=SEQUENTIAL_CAP):
    """compare --run's sequential procedure on synthetic rounds (what
    regress.verdict.sequential.sequential_rows does with Samples): (verdicts, rounds used)."""
    rows = within.shape[0]
    # Each round: one process per side, its median over 3 repetitions.
    A = np.stack([np.median(one_run(rng, within, process, 3), axis=1) for _ in range(cap)], axis=1)
    B = np.stack([np.median(one_run(rng, within, process, 3), axis=1) for _ in range(cap)], axis=1)
    D = B - A + np.broadcast_to(shift, (rows, 1))
    looks = LOOKS or sequential_looks(cap)
    verdict = np.full(rows, "AMBIGUOUS", dtype=object)
    used = np.zeros(rows, dtype=int)
    undecided = np.ones(rows, dtype=bool)
    rejected = np.zeros(suites, dtype=int)   # each suite's SLOWER/FASTER of earlier looks
    for k, n in enumerate(looks):
        settings = look_settings(Settings.make("paired"), looks, BENCHMARKS, n)
        r = decide.decide_paired(D[:, :n], settings.level, test=settings.paired_test)
        for s in range(suites):
            idx = np.arange(s * BENCHMARKS, (s + 1) * BENCHMARKS)
            idx = idx[undecided[idx]]
            if not idx.size:
                continue
            part = {key: v[idx] for key, v in r.items()}
            v = decide.verdicts(part, decide.DEFAULT_FLOORS[("gpu", "paired")], decide.DEFAULT_MULTIPLE["paired"],
                                settings.alpha, correction="bh", family=BENCHMARKS,
                                same_floor=decide.EQUIVALENCE_FLOORS["gpu"], rejected=rejected[s])["verdict"]
            final = (v != "AMBIGUOUS") | (k == len(looks) - 1)
            verdict[idx[final]] = v[final]
            used[idx[final]] = n
            undecided[idx[final]] = False
            rejected[s] += int(np.isin(v, ("SLOWER", "FASTER")).sum())
    return verdict, used


ROUND_PROCESS_S, ROUND_BENCHMARK_S = 0.95, 0.134   # the H200's cost of a process, and of a benchmark in it


def device_seconds(used, looks=None):
    """The device time a suite's sequential rounds take (mean over the
    suites), from the rounds each benchmark ran (used: suites x benchmarks)."""
    looks = looks or sequential_looks(SEQUENTIAL_CAP)
    cost, prev = 0.0, 0
    for n in looks:
        active = (used >= n).sum(axis=1).mean() if n > looks[0] else used.shape[1]
        cost += (n - prev) * 2 * (ROUND_PROCESS_S + ROUND_BENCHMARK_S * active)
        prev = n
    return cost


def run_suites(mode, shift, noise=None, suites=SUITES, offsets=True, one=False):
    """Verdict arrays (suites x benchmarks) of synthetic suites. noise: one
    value for every benchmark instead of the measured model (within-run
    spread noise/2 and process offsets noise*sqrt(3)/2: 1 in total; without
    offsets, the repetitions alone have this spread)."""
    rng = np.random.default_rng(RNG_SEED + (1 if mode == "files" else 0) + int(shift * 1000))
    rows = suites * BENCHMARKS
    if noise is None:
        within, process = noise_model(rng, rows)
    elif offsets:
        within, process = np.full(rows, noise / 2.0), np.full(rows, noise * math.sqrt(3.0) / 2.0)
    else:
        within, process = np.full(rows, noise), np.zeros(rows)
    out = np.empty((suites, BENCHMARKS), dtype=object)
    if one:  # only the first benchmark of each suite changes
        shift = np.where(np.arange(rows) % BENCHMARKS == 0, shift, 0.0)[:, None]
    if mode == "paired":
        verdict, rounds_used = sequential(rng, within, process, shift, suites)
        return verdict.reshape(suites, BENCHMARKS), rounds_used.reshape(suites, BENCHMARKS)
    else:
        X = one_run(rng, within, process, 15)
        Y = one_run(rng, within, process, 15) + shift
        # The run-to-run noise as paired A/A rounds measure it (--noise).
        known = np.sqrt(process ** 2 + (within ** 2) / 3.0) if offsets else np.full(rows, 0.0025)
        r = decide.decide_unpaired(X, Y, extra_noise=known)
    for s in range(suites):
        sl = slice(s * BENCHMARKS, (s + 1) * BENCHMARKS)
        part = {k: v[sl] for k, v in r.items()}
        out[s] = decide.verdicts(part, 0.02, decide.DEFAULT_MULTIPLE[mode])["verdict"]
    return out, None


class Accuracy(unittest.TestCase):
    def aa(self, mode):
        v, used = run_suites(mode, 0.0)
        alarms = np.isin(v, ("SLOWER", "FASTER"))
        suites_alarmed = int(alarms.any(axis=1).sum())
        same = float((v == "SAME").mean())
        print("%s A/A: %d of %d suites of %d with an alarm (%d alarms, %.2g per benchmark); SAME for %.1f%%%s"
              % (mode, suites_alarmed, SUITES, BENCHMARKS, int(alarms.sum()), alarms.mean(), 100 * same,
                 "" if used is None else "; %.1f rounds per benchmark" % used.mean()),
              file=sys.stderr)
        return suites_alarmed, alarms.mean(), same

    def detection(self, mode, factor, noise, offsets=True, single_target=0.95):
        v, used = run_suites(mode, math.log(factor), noise=noise, suites=100, offsets=offsets)
        rate = float((v == "SLOWER").mean())
        # One regression among 300 gets no help from the others.
        one, _ = run_suites(mode, math.log(factor), noise=noise, suites=SUITES, offsets=offsets, one=True)
        single = float((one[:, 0] == "SLOWER").mean())
        alarms = int(np.isin(one[:, 1:], ("SLOWER", "FASTER")).sum())
        print("%s, one benchmark of %d %g%% slower at %g%% noise: SLOWER in %.1f%% of %d suites, %d alarms elsewhere"
              % (mode, BENCHMARKS, 100 * (factor - 1), 100 * noise, 100 * single, SUITES, alarms), file=sys.stderr)
        print("%s %g%% slower at %g%% noise (%s): SLOWER for %.1f%%%s"
              % (mode, 100 * (factor - 1), 100 * noise,
                 "process offsets and repetitions" if offsets else "repetitions; the run-to-run noise known",
                 100 * rate, "" if used is None else ", %.1f rounds per benchmark" % used.mean()),
              file=sys.stderr)
        self.assertGreaterEqual(single, single_target)
        self.assertFalse(np.isin(v, ("FASTER",)).any())
        return rate

    def test_paired_aa(self):
        suites, _, same = self.aa("paired")
        self.assertLessEqual(suites, SUITES // 100)
        self.assertGreaterEqual(same, 0.80)

    def test_paired_detects_5_percent(self):
        self.assertGreaterEqual(self.detection("paired", 1.05, 0.01), 0.95)

    def test_paired_detects_2_percent(self):
        self.assertGreaterEqual(self.detection("paired", 1.02, 0.005, single_target=0.90), 0.95)

    def test_looks_from_4_rounds_decide_sooner_at_the_same_power(self):
        # Today's schedule against the one before it (looks at 8, 12, 16 and
        # 24 rounds, the signed-rank test throughout): the device time of a
        # suite from the H200's round costs (docs/perf/compare.md: 0.95 s a
        # process, 0.134 s a benchmark a side), against 12 fixed rounds.
        from regress.verdict import sequential as seq
        out = {}
        try:
            for label, looks, wsr_from in (("before", [8, 12, 16, 24], 0), ("now", None, seq.WSR_FROM)):
                globals()["LOOKS"], seq.WSR_FROM = looks, wsr_from
                for case, shift, noise in (("x1.02 at 0.5%", math.log(1.02), 0.005),
                                           ("x1.02, measured noise", math.log(1.02), None)):
                    v, used = run_suites("paired", shift, noise=noise, suites=100)
                    out[(label, case)] = (float((v == "SLOWER").mean()), device_seconds(used, looks))
        finally:
            globals()["LOOKS"], seq.WSR_FROM = None, 12
        fixed = 12 * (2 * ROUND_PROCESS_S + 2 * ROUND_BENCHMARK_S * BENCHMARKS)
        for (label, case), (power, secs) in sorted(out.items()):
            print("looks %s, %s: SLOWER for %.1f%%, %.0f s a suite of %d (%.0f%% of 12 fixed rounds)"
                  % (label, case, 100 * power, secs, BENCHMARKS, 100 * secs / fixed), file=sys.stderr)
        for case in ("x1.02 at 0.5%", "x1.02, measured noise"):
            self.assertGreaterEqual(out[("now", case)][0], out[("before", case)][0] - 0.02)
            self.assertLess(out[("now", case)][1], 0.9 * out[("before", case)][1])

    def test_files_aa_with_known_run_noise(self):
        # Two files hold one process offset per side: no margin keeps a
        # heavy-tailed difference inside it for every one of 300 benchmarks
        # and still sees 5% at 1% noise. Bounded per benchmark instead; a
        # gate on two files wants a paired rerun (the nightly job's rule).
        suites, per_benchmark, same = self.aa("files")
        self.assertLessEqual(per_benchmark, 5e-4)
        self.assertGreaterEqual(same, 0.80)

    def test_files_detect_5_percent_within_a_session(self):
        self.assertGreaterEqual(self.detection("files", 1.05, 0.01, offsets=False), 0.95)

    def test_files_detect_10_and_30_percent_with_offsets(self):
        # What --history gives two files: the run-to-run noise known. At 1%
        # noise the margin is 8%: 10% is found most of the time, 30% always.
        self.assertGreaterEqual(self.detection("files", 1.30, 0.01, single_target=0.99), 0.99)
        self.assertGreaterEqual(self.detection("files", 1.10, 0.01, single_target=0.5), 0.5)


# ----------------------------------------------------------- the command


class Speed(CommandBase):
    def test_speed_1000_benchmarks_15_repetitions(self):
        entries = []
        for i in range(1000):
            entries += series("GEMM/V%d/M:64/manual_time" % i, 1e-3, 15, seed=i)
        a = self.write("a.json", doc(entries))
        b = self.write("b.json", doc(copy.deepcopy(entries)))
        t0 = time.monotonic()
        p = self.run_tool(a, b, "--json", "v.json")
        dt = time.monotonic() - t0
        print("compare of 1000 benchmarks x 15 repetitions: %.2f s" % dt, file=sys.stderr)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1000 SAME", p.stdout)
        # The target is 2 s on the 2-core machine (measured in the README); a
        # loaded CI runner gets slack.
        self.assertLess(dt, 10.0)


if __name__ == "__main__":
    unittest.main()
