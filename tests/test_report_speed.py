#!/usr/bin/env python3
"""The report of a smoke run (every family, the CPU variants measured, the
GPU ones unsupported on a machine without one) is drawn in at most
REPORT_SECONDS on the 2-core machine: charts rendered in parallel, PNG only.
Run alone (RUN_SERIAL), so the time is the report's, not the neighbours'.

    test_report_speed.py SMOKE.json"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REPORT_SECONDS = 10.0


class ReportSpeed(unittest.TestCase):
    def test_the_smoke_report_in_ten_seconds(self):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(ROOT, "plots", "plot"), SMOKE, "--out", tmp], capture_output=True,
                               text=True, timeout=300)
            dt = time.monotonic() - t0
            print("smoke report: %.1f s, %s" % (dt, p.stdout.strip()), file=sys.stderr)
            self.assertEqual(p.returncode, 0, p.stderr)
            pages = sorted(f for f in os.listdir(tmp) if f.endswith(".html"))
            self.assertGreater(len(pages), 5, pages)  # the summary and the family pages
            self.assertGreater(len([f for f in os.listdir(tmp) if f.endswith(".png")]), 40)
            self.assertLessEqual(dt, REPORT_SECONDS)


if __name__ == "__main__":
    SMOKE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
