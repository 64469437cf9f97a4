#!/usr/bin/env python3
"""Tests of the run-to-run noise that compare --history learns from a
history store (regress/stats/noise.py, regress/store/noise.py): differences
only within the pieces between change points, machine segments and the runs
of changes judged real, and a tail factor that a step in some series does
not move for the others.

Synthetic nightly histories: each benchmark's median a night is log-normal
around its level (2% by default), three repetitions a night; a step
multiplies a series from one night on. The stores are built by ingesting
the runs, as ci/history does, and read by from_history, as compare does.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from regress.stats import noise
from regress.store import alerts, history
from regress.store import noise as hnoise
from test_compare import snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CONTEXT = {"host_name": "h", "parbench_schema": 1, "parbench_git_revision": "abc", "cpu_model": "Xeon",
           "num_cpus": 16, "gpu": "NVIDIA H200", "gpu_sm_count": "132", "gpu_driver": "580",
           "cuda_runtime": "13.0", "parbench_build_type": "Release", "parbench_fixtures_version": "1",
           "parbench_seed": "7", "parbench_cxx_compiler": "GNU 13", "parbench_cuda_compiler": "NVIDIA 13.0",
           "openblas_config": "OpenBLAS 0.3.26"}
SERIES, STEPPED, STEP = 112, 12, 1.30


def name(i):
    return "GEMM/V%d/M:64/manual_time" % i


def entries(nm, seconds, reps=3, device="gpu"):
    """reps repetitions whose median is `seconds` exactly (time unit "s")."""
    times = [seconds, seconds * 1.001, seconds * 0.999, seconds * 1.002, seconds * 0.998] * reps
    out = []
    for r in range(reps):
        t = times[r]
        out.append({"name": nm, "family_index": 0, "per_family_instance_index": 0, "run_name": nm,
                    "run_type": "iteration", "repetitions": reps, "repetition_index": r, "threads": 1,
                    "iterations": 10, "real_time": t, "cpu_time": t, "time_unit": "s",
                    "parbench": {"disposition": "passed", "role": "variant", "device": device}})
    return out


def nightly(n, series=SERIES, sd=0.02, seed=0):
    """{name: n medians}: log-normal noise of sd around a level per series."""
    rng = np.random.default_rng(seed)
    return {name(i): list(1e-3 * (1 + i / 10) * np.exp(sd * rng.standard_normal(n))) for i in range(series)}


def stepped(values, names, at, factor=STEP):
    out = dict(values)
    for k in names:
        out[k] = [v * (factor if i >= at else 1.0) for i, v in enumerate(values[k])]
    return out


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="history-noise-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def store(self, label, values, devices=None, context_of=None):
        """A history of len(values[...]) nightly runs; values[name][i] None:
        no entry that night; context_of(i): the context's changes that night."""
        h = os.path.join(self.dir, label)
        n = max(len(v) for v in values.values())
        with history.History(h, create=True, log=lambda line: None) as store:
            for i in range(n):
                ctx = dict(CONTEXT, date="2026-%02d-%02dT02:00:00+00:00" % (1 + i // 28, 1 + i % 28),
                           parbench_git_revision="r%03d" % i)
                ctx.update((context_of or (lambda i: {}))(i))
                bench = []
                for k, v in sorted(values.items()):
                    if i < len(v) and v[i] is not None:
                        bench += entries(k, v[i], device=(devices or {}).get(k, "gpu"))
                path = os.path.join(self.dir, "%s-%03d.json" % (label, i))
                with open(path, "w") as f:
                    json.dump({"context": ctx, "benchmarks": bench}, f)
                store.ingest(path)
        return h

    def noise_of(self, h, names, **kw):
        return hnoise.from_history(h, CONTEXT, sorted(names), **kw)


class Steps(Base):
    def test_a_step_in_12_series_leaves_the_others_as_they_were(self):
        # 16 nights: a young history, where one step difference per stepped
        # series is near 1% of the pool, the share its 99th percentile reads.
        # (Of 30 seeds, the rule before lifts the factor in 28, by up to 0.6;
        # this rule leaves it as it is in 29, and in the 30th moves it 0.001:
        # a stepped series has a difference fewer, its noise a median of one
        # value fewer.)
        n = 16
        quiet = nightly(n, seed=1)
        names = sorted(quiet)
        hit = [name(i) for i in range(STEPPED)]
        loud = stepped(quiet, hit, n // 2)
        a = self.noise_of(self.store("quiet", quiet), names)
        b = self.noise_of(self.store("loud", loud), names)
        others = [k for k in names if k not in hit]
        self.assertEqual(len(others), 100)
        # (a) Every other series keeps its noise and the machine its tail
        # factor, exactly: their thresholds and margins are the same.
        self.assertEqual({k: a[0][k] for k in others}, {k: b[0][k] for k in others})
        self.assertEqual(a[1], b[1])
        self.assertEqual((a[2], b[2], a[3], b[3]), (0, 0, 0, 0))
        # The rule before (differences across the whole series, all in the
        # pool) let the 12 step differences lift every series' factor.
        self.assertGreater(old_tail(loud), old_tail(quiet) + 0.3)
        # (b) The stepped series' own noise: its differences less the one at
        # the step, exactly, and close to the noise without the step.
        for k in hit:
            x = quiet[k]
            s, _ = noise.series_noise([x[:n // 2], x[n // 2:]])
            self.assertAlmostEqual(b[0][k][0], s, delta=1e-12 * s)
            self.assertEqual(b[0][k][1], "history %d" % n)

    def test_the_stepped_series_noise_stays_near_its_own(self):
        # (b) On a history of 60 nights, the noise of each stepped series is
        # within 20% of what it is without the step.
        n = 60
        quiet = nightly(n, series=STEPPED, seed=3)
        names = sorted(quiet)
        a = self.noise_of(self.store("quiet", quiet), names)[0]
        b = self.noise_of(self.store("loud", stepped(quiet, names, n // 2)), names)[0]
        for k in names:
            self.assertLess(abs(b[k][0] / a[k][0] - 1), 0.20, k)

    def test_an_undetected_step_at_the_newest_run(self):
        # The newest night +30% in 12 series: too new for the detector (2
        # runs a side), one difference at z ~ 9 in each. Beyond Z_CUT it is
        # no part of the pool, so the others' factor stays; with those
        # differences in, it rose by 0.37. A series whose noise reads high
        # puts its step below Z_CUT, into the pool: of 30 seeds, the factor
        # moved in 6, by at most 0.16 (by up to 0.57 before).
        n = 16
        quiet = nightly(n, seed=1)
        names = sorted(quiet)
        hit = [name(i) for i in range(STEPPED)]
        loud = stepped(quiet, hit, n - 1)
        a = self.noise_of(self.store("quiet", quiet), names)
        b = self.noise_of(self.store("loud", loud), names)
        self.assertEqual({k: a[0][k] for k in names if k not in hit}, {k: b[0][k] for k in names if k not in hit})
        self.assertEqual(b[1], a[1])
        self.assertGreater(old_tail(loud), old_tail(quiet) + 0.3)

    def test_the_pool_leaves_out_gross_differences(self):
        rng = np.random.default_rng(1)
        z = list(np.abs(rng.standard_t(3, 2000)))
        base = noise.tail_factor(z)
        self.assertGreater(base, 1.0)
        self.assertEqual(noise.tail_factor(z + [noise.Z_CUT + 0.1] * 100), base)
        self.assertNotEqual(noise.tail_factor(z + [noise.Z_CUT] * 100), base)
        self.assertEqual(noise.tail_factor([noise.Z_CUT + 1] * 200), 1.0)   # nothing left: too few


class Segments(Base):
    def test_a_short_newest_piece_pools_with_the_older_ones(self):
        # (d) A step 3 nights from the end: the newest piece holds 3 runs,
        # fewer than MIN_POINTS. Its 2 differences join the older piece's
        # 26: the noise is theirs, not the prior, and near the unstepped one.
        n = 30
        quiet = nightly(n, series=3, seed=7)
        k = name(0)
        v = stepped(quiet, [k], n - 3)
        got = self.noise_of(self.store("late", v), [k])
        self.assertEqual(got[2], 0)
        s, _ = noise.series_noise([quiet[k][:n - 3], quiet[k][n - 3:]])
        self.assertAlmostEqual(got[0][k][0], s, delta=1e-12 * s)
        whole, _ = noise.series_noise([quiet[k]])
        self.assertLess(abs(s / whole - 1), 0.2)

    def test_too_few_differences_within_pieces_use_the_prior(self):
        # 6 nights: a series with a step after 3 holds 2 + 2 differences,
        # fewer than MIN_POINTS - 1: the prior. Unstepped, 5: its own noise.
        quiet = nightly(6, series=2, sd=0.01, seed=2)
        v = stepped(quiet, [name(0)], 3)
        got = self.noise_of(self.store("young", v), sorted(v))
        self.assertEqual(got[2], 1)
        self.assertNotIn(name(0), got[0])
        self.assertEqual(got[0][name(1)][1], "history 6")
        # The note says why.
        model = noise.Model()
        line = hnoise.load_history(model, os.path.join(self.dir, "young"), CONTEXT, sorted(v), None)
        self.assertIn("1 with fewer than 5 differences within segments use the prior", line)
        self.assertEqual(model.lookup(name(0), "gpu", "GEMM"), (noise.prior("gpu", "GEMM"), "prior"))

    def test_no_difference_across_a_machine_segment(self):
        # A driver update at night 15 moves one benchmark +30%: no change
        # point within either segment, and no difference across them.
        n = 30
        quiet = nightly(n, series=2, seed=4)
        k = name(0)
        v = stepped(quiet, [k], 15)
        h = self.store("driver", v, context_of=lambda i: {"gpu_driver": "590"} if i >= 15 else {})
        got = self.noise_of(h, sorted(v))
        s, z = noise.series_noise([quiet[k][:15], quiet[k][15:]])
        self.assertAlmostEqual(got[0][k][0], s, delta=1e-12 * s)
        self.assertEqual(got[0][k][1], "history 30")
        self.assertLess(max(z), 8.0)


class Triaged(Base):
    """(c) The runs of a change that a person judged real are left out."""

    def setUp(self):
        super().setUp()
        # A CPU benchmark +8% from night 20: below the CPU floor of two files
        # (10%), so no change point, but ci/trends with --floor cpu=5 raised
        # it. 1% noise: the step is a difference of z ~ 5.4 in the pool.
        n = 40
        self.at = 20
        quiet = nightly(n, series=2, sd=0.01, seed=11)
        self.k, self.other = name(0), name(1)
        self.x = [v * (1.08 if i >= self.at else 1.0) for i, v in enumerate(quiet[self.k])]
        values = {self.k: self.x, self.other: quiet[self.other]}
        self.h = self.store("triaged", values, devices={self.k: "cpu", self.other: "cpu"})
        with history.History(self.h, log=lambda line: None) as store:
            self.machine = history.machine_of(CONTEXT)
            self.run_ids = [r["id"] for r in store.runs(self.machine)]

    def raise_alert(self, name_, at, machine=None):
        c = {"name": name_, "direction": "slower", "step": 0.08, "threshold": 0.05, "ordinal": at,
             "run_id": self.run_ids[at], "segment": None, "revision_before": "r%03d" % (at - 1),
             "revision_after": "r%03d" % at, "date": None, "culprit": None}
        with alerts.Alerts(self.h) as store:
            store.sync(machine or self.machine, [c], lambda row: (False, "not back"))
            return c["alert"]["id"]

    def test_the_runs_of_a_change_judged_real_are_left_out(self):
        names = [self.k, self.other]
        none = self.noise_of(self.h, names)
        plain, plain_z = noise.series_noise([self.x])
        self.assertAlmostEqual(none[0][self.k][0], plain, delta=1e-12 * plain)
        self.assertGreater(max(plain_z), 4.0)       # the step's difference
        aid = self.raise_alert(self.k, self.at)
        r = alerts.NEAR_RUNS
        kept, kept_z = noise.series_noise([self.x[:self.at - r], self.x[self.at + r + 1:]])
        self.assertLess(max(kept_z), 4.0)
        for state in alerts.HUMAN:
            with alerts.Alerts(self.h) as store:
                store.triage(aid, state, who="test")
            got = self.noise_of(self.h, names)
            if state in ("acknowledged", "wontfix", "fixed", "backed_out"):
                self.assertAlmostEqual(got[0][self.k][0], kept, delta=1e-12 * kept, msg=state)
                self.assertEqual((got[0][self.k][1], got[3]), ("history %d" % (40 - 2 * r - 1), 2 * r + 1), state)
            else:   # untriaged, invalid: every run counts
                self.assertEqual(got[0][self.k], none[0][self.k], state)
                self.assertEqual(got[3], 0, state)
            self.assertEqual(got[0][self.other], none[0][self.other], state)

    def test_only_this_machines_alerts_and_nothing_stored_changes(self):
        aid = self.raise_alert(self.k, self.at, machine="another")
        with alerts.Alerts(self.h) as store:
            store.triage(aid, "wontfix", who="test")
        before = snapshot(self.h)
        got = self.noise_of(self.h, [self.k])
        self.assertEqual(got[3], 0)
        self.assertEqual(snapshot(self.h), before)

    def test_compare_says_what_it_left_out(self):
        aid = self.raise_alert(self.k, self.at)
        with alerts.Alerts(self.h) as store:
            store.triage(aid, "wontfix", who="test")
        side = []
        for label, scale in (("base", 1.0), ("new", 1.5)):
            doc = {"context": dict(CONTEXT, date="2026-03-01T02:00:00+00:00"),
                   "benchmarks": entries(self.k, 1e-3 * scale, reps=5, device="cpu")}
            side.append(os.path.join(self.dir, label + ".json"))
            with open(side[-1], "w") as f:
                json.dump(doc, f)
        p = subprocess.run([sys.executable, "-m", "regress.compare", side[0], side[1], "--history", self.h],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=ROOT,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        self.assertNotIn("Traceback", p.stderr)
        self.assertIn("5 runs of changes triaged as real left out", p.stdout)
        self.assertIn(" h35 ", p.stdout)


def old_tail(values):
    """The tail factor of the rule before: differences across whole series,
    every one of them in the pool."""
    z = sum((noise.series_noise([v])[1] for v in values.values()), [])
    return max(1.0, float(np.percentile(z, 99)) / noise.MODEL_Q99)


if __name__ == "__main__":
    unittest.main()
