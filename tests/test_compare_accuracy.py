#!/usr/bin/env python3
"""Accuracy and speed of the comparator (regress/compare.py; the unit tests
are tests/test_compare.py).

1. Its accuracy on synthetic suites with the noise measured on the H200
   (results/nvidia-h200/compare/README.md): within-run spread log-normal around
   0.25% (90% below 2%), heavy-tailed repetitions (Student t, 3 degrees of
   freedom) with occasional slow outliers, and an offset per process (each
   run of a binary) of about 1.2x the within-run spread, log-normally spread:
   - paired A/A: at most 1% of 1000 suites of 300 benchmarks raise any alarm;
   - paired, 5% slower at 1% noise: at least 95% of benchmarks SLOWER;
   - two files (15 repetitions a side) A/A with the run-to-run noise known
     (--noise): at most 5e-4 false alarms per benchmark (see
     test_files_aa_with_known_run_noise for why not per suite); two files,
     5% slower at 1% noise within a session: >= 95% SLOWER.
2. Its speed on 1000 benchmarks x 15 repetitions.
"""
import copy
import math
import sys
import time
import unittest

import numpy as np

from regress import compare
from test_compare import CommandBase, doc, series


RNG_SEED = 20261123
SUITES, BENCHMARKS = 1000, 300


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
        n = compare.auto_rounds(BENCHMARKS)
        # Each round: one process per side, its median over 3 repetitions.
        A = np.stack([np.median(one_run(rng, within, process, 3), axis=1) for _ in range(n)], axis=1)
        B = np.stack([np.median(one_run(rng, within, process, 3), axis=1) for _ in range(n)], axis=1) + shift
        r = compare.decide_paired(B - A)
    else:
        X = one_run(rng, within, process, 15)
        Y = one_run(rng, within, process, 15) + shift
        # The run-to-run noise as paired A/A rounds measure it (--noise).
        known = np.sqrt(process ** 2 + (within ** 2) / 3.0) if offsets else np.full(rows, 0.005)
        r = compare.decide_unpaired(X, Y, extra_noise=known)
    for s in range(suites):
        sl = slice(s * BENCHMARKS, (s + 1) * BENCHMARKS)
        part = {k: v[sl] for k, v in r.items()}
        out[s] = compare.verdicts(part, 0.02, compare.DEFAULT_MULTIPLE[mode])["verdict"]
    return out


class Accuracy(unittest.TestCase):
    def aa(self, mode):
        v = run_suites(mode, 0.0)
        alarms = np.isin(v, ("SLOWER", "FASTER"))
        suites_alarmed = int(alarms.any(axis=1).sum())
        same = float((v == "SAME").mean())
        print("%s A/A: %d of %d suites of %d with an alarm (%d alarms, %.2g per benchmark); SAME for %.1f%%"
              % (mode, suites_alarmed, SUITES, BENCHMARKS, int(alarms.sum()), alarms.mean(), 100 * same),
              file=sys.stderr)
        return suites_alarmed, alarms.mean(), same

    def detection(self, mode, offsets=True):
        v = run_suites(mode, math.log(1.05), noise=0.01, suites=100, offsets=offsets)
        rate = float((v == "SLOWER").mean())
        # One regression among 300 gets no help from Holm's later steps.
        one = run_suites(mode, math.log(1.05), noise=0.01, suites=SUITES, offsets=offsets, one=True)
        single = float((one[:, 0] == "SLOWER").mean())
        alarms = int(np.isin(one[:, 1:], ("SLOWER", "FASTER")).sum())
        print("%s, one benchmark of %d 5%% slower: SLOWER in %.1f%% of %d suites, %d alarms elsewhere"
              % (mode, BENCHMARKS, 100 * single, SUITES, alarms), file=sys.stderr)
        self.assertGreaterEqual(single, 0.95)
        print("%s 5%% slower at 1%% noise (%s): SLOWER for %.1f%%"
              % (mode, "process offsets and repetitions" if offsets else "repetitions; 0.5% run-to-run noise known",
                 100 * rate),
              file=sys.stderr)
        self.assertFalse(np.isin(v, ("FASTER",)).any())
        return rate

    def test_paired_aa(self):
        suites, _, same = self.aa("paired")
        self.assertLessEqual(suites, SUITES // 100)
        self.assertGreaterEqual(same, 0.95)

    def test_paired_detects_5_percent(self):
        self.assertGreaterEqual(self.detection("paired"), 0.95)

    def test_files_aa_with_known_run_noise(self):
        # Two files hold one process offset per side: no threshold keeps a
        # heavy-tailed difference inside it for every one of 300 benchmarks
        # and still sees 5% at 1% noise. Bounded per benchmark instead; a
        # gate on two files wants a paired rerun (the nightly job's rule).
        suites, per_benchmark, same = self.aa("files")
        self.assertLessEqual(per_benchmark, 5e-4)
        self.assertGreaterEqual(same, 0.95)

    def test_files_detect_5_percent_within_a_session(self):
        self.assertGreaterEqual(self.detection("files", offsets=False), 0.95)


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
