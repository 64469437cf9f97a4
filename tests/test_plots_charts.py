#!/usr/bin/env python3
"""Every chart of plots/plot drawn from real and synthetic runs, end to end
through the report (the unit tests of plots/ are tests/test_plots.py)."""
import json
import os
import tempfile
import unittest

from plots import report_charts
from test_plots import DATA, mlp_run, run_plot, sor_run, synthetic


class Charts(unittest.TestCase):
    def test_every_chart_from_real_and_synthetic_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            syn = os.path.join(tmp, "syn.json")
            json.dump(synthetic(), open(syn, "w"))
            sor = os.path.join(tmp, "sor.json")
            with open(sor, "w") as f:
                json.dump(sor_run(), f)
            mlp = os.path.join(tmp, "mlp.json")
            with open(mlp, "w") as f:
                json.dump(mlp_run(), f)
            out = os.path.join(tmp, "out")
            p = run_plot(os.path.join(DATA, "gb171.json"), os.path.join(DATA, "gb183.json"), syn, sor, mlp,
                         "--out", out, "--svg")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
            files = os.listdir(out)
            for chart in report_charts.CHARTS:
                pngs = [f for f in files if f.startswith(chart) and f.endswith(".png")]
                self.assertTrue(pngs, "no %s chart; stderr: %s" % (chart, p.stderr))
                for f in pngs:
                    self.assertGreater(os.path.getsize(os.path.join(out, f)), 5000)
                    self.assertTrue(os.path.exists(os.path.join(out, f[:-4] + ".svg")))  # with --svg
                    self.assertNotRegex(f, r"_\d+\.png$")  # named by what it shows, not numbered
            self.assertIn("index.html", files)
            self.assertIn("report.md", files)


if __name__ == "__main__":
    unittest.main(verbosity=2)
