#!/usr/bin/env python3
"""sor-solve and the report's SOR field pictures: the converged field is a
NumPy file of the grid's shape that satisfies the discrete equation (its
residual recomputed here in NumPy), the residuals fall to the tolerance, the
analytic problem lands near its exact solution; divergence and bad input
give their exit codes; plots/plot --sor-field draws the figure, and a folder
that is not sor-solve's is one line and exit 2.

    test_sor_solve.py PATH/TO/sor-solve
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOLVE = None


def run(*args):
    return subprocess.run([SOLVE] + list(args), capture_output=True, text=True, timeout=300)


def gs_correction(u, meta, a0, a1, b0, b1):
    """sor.hpp's correction(), independently in NumPy, over the interior."""
    h1, h2 = meta["h1"], meta["h2"]
    r = h1 * h1 / (h2 * h2)
    d = 4 * (1 + r)
    m, n = u.shape
    x = (np.arange(1, m - 1) * h1)[:, None]
    y = (np.arange(1, n - 1) * h2)[None, :]
    a = a0 + a1 * x * (1 - x) * (0.5 - y)
    b = b0 + b1 * y * (1 - y) * (x - 0.5)
    xp, xm, yp, ym = u[2:, 1:-1], u[:-2, 1:-1], u[1:-1, 2:], u[1:-1, :-2]
    gs = ((2 + h1 * a) * xp + (2 - h1 * a) * xm + r * ((2 + h2 * b) * yp + (2 - h2 * b) * ym)) / d
    return gs - u[1:-1, 1:-1]


class SorSolve(unittest.TestCase):
    def test_vortex_converges_and_satisfies_the_equation(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "v")
            p = run("--grid=65x47", "--omega=1.7", "--tol=1e-10", "--every=5", "--out=" + out)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("converged in", p.stderr)
            u = np.load(os.path.join(out, "field.npy"))
            with open(os.path.join(out, "residuals.json")) as f:
                meta = json.load(f)
            self.assertEqual(u.shape, (65, 47))
            self.assertEqual(u.dtype, np.float64)
            self.assertTrue(meta["converged"])
            self.assertEqual(meta["sweeps"] % 5, 0)
            self.assertEqual(len(meta["residuals"]), meta["sweeps"] // 5)
            self.assertLessEqual(meta["residuals"][-1], 1e-10)
            self.assertGreater(meta["residuals"][-2], 1e-10)
            e = gs_correction(u, meta, 0, 50, 0, 50)
            self.assertAlmostEqual(float(np.sqrt(np.mean(e * e))), meta["residuals"][-1], delta=1e-13)
            # Boundary: (1 - x)(1 - y) + x y on the unit square.
            self.assertEqual(u[0, 0], 1.0)
            self.assertEqual(u[-1, -1], 1.0)
            self.assertAlmostEqual(u[0, -1], 0.0)
            self.assertTrue(np.all((u > -1e-9) & (u < 1 + 1e-9)), "a max principle: values within the boundary's")

    def test_analytic_is_near_the_exact_solution(self):
        with tempfile.TemporaryDirectory() as d:
            p = run("--grid=65x65", "--field=analytic", "--omega=1.9", "--tol=1e-13", "--out=" + d)
            self.assertEqual(p.returncode, 0, p.stderr)
            u = np.load(os.path.join(d, "field.npy"))
            x = np.linspace(0, 1, 65)[:, None]
            y = np.linspace(0, 1, 65)[None, :]
            alpha = (-2 + np.sqrt(4 + 1 + 4 * np.pi ** 2)) / 2
            exact = np.exp(alpha * x - 0.5 * y) * np.sin(np.pi * y)
            err = np.max(np.abs(u - exact))
            self.assertLess(err, 1e-3)
            self.assertGreater(err, 1e-7, "an O(h^2) scheme cannot be this exact at h = 1/64")

    def test_divergence_and_budget_are_exit_3_with_files(self):
        with tempfile.TemporaryDirectory() as d:
            p = run("--grid=33x41", "--omega=1.95", "--max-sweeps=5000", "--out=" + d)
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("diverged", p.stderr)
            with open(os.path.join(d, "residuals.json")) as f:
                self.assertFalse(json.load(f)["converged"])
            p = run("--grid=65x65", "--max-sweeps=20", "--out=" + d)
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("did not converge after 20 sweeps", p.stderr)

    def test_bad_input_is_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            for args, text in ((["--grid=2x9"], "out of range"), (["--grid=9x9", "--omega=2"], "omega"),
                               (["--grid=9"], "is not MxN"), (["--out=" + d], "--grid=MxN is required"),
                               (["--grid=9x9", "--out=" + d, "--tol=-1"], "not positive"),
                               (["--grid=9x9", "--out=" + d, "--bogus"], "unknown argument")):
                if not any(a.startswith("--out") for a in args):
                    args = args + ["--out=" + d]
                p = run(*args)
                self.assertEqual(p.returncode, 2, (args, p.stderr))
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(text, p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "field.npy")))


class ReportField(unittest.TestCase):
    def test_report_draws_the_field_and_rejects_other_folders(self):
        with tempfile.TemporaryDirectory() as d:
            solved = os.path.join(d, "solved")
            self.assertEqual(run("--grid=40x30", "--tol=1e-6", "--out=" + solved).returncode, 0)
            # Any readable run will do beside the fields (a file without
            # entries is refused as bad input, docs/tools/README.md).
            smoke = os.path.join(HERE, "data", "gb171.json")
            rep = os.path.join(d, "rep")
            p = subprocess.run([os.path.join(ROOT, "plots", "plot"), smoke, "--sor-field", solved,
                                "--sor-field", os.path.join(d, "nothing"), "--out", rep, "--svg"],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 2, p.stderr)
            lines = [ln for ln in p.stderr.splitlines() if "--sor-field" in ln]
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn("not a sor-solve folder", lines[0])
            self.assertTrue(os.path.isfile(os.path.join(rep, "field_solved.png")))
            self.assertTrue(os.path.isfile(os.path.join(rep, "field_solved.svg")))
            with open(os.path.join(rep, "sor.html"), encoding="utf-8") as f:  # the SOR page
                html = f.read()
            self.assertIn("<a href='field_solved.svg'><img src='field_solved.png'", html)
            self.assertIn("SOR vortex field 40x30", html)


if __name__ == "__main__":
    SOLVE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
