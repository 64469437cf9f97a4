#!/usr/bin/env python3
"""Every chart of plots/plot drawn from real and synthetic runs, end to end
through the report (the unit tests of plots/ are tests/test_plots.py)."""
import json
import os
import tempfile
import unittest

from plots import report_charts
from test_plots import DATA, energy_run, mlp_run, run_plot, scan_run, sor_run, synthetic


class Charts(unittest.TestCase):
    def test_every_chart_from_real_and_synthetic_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, doc in (("syn", synthetic()), ("sor", sor_run()), ("mlp", mlp_run()),
                              ("energy", energy_run()), ("scan", scan_run())):
                paths.append(os.path.join(tmp, name + ".json"))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            out = os.path.join(tmp, "out")
            p = run_plot(os.path.join(DATA, "gb171.json"), os.path.join(DATA, "gb183.json"), *paths,
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
