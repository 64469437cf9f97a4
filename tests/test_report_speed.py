#!/usr/bin/env python3
"""The report of a smoke run (every family, the CPU variants measured, the
GPU ones unsupported on a machine without one) is drawn in at most
REPORT_SECONDS on the 2-core machine: chart kinds drawn by parallel workers,
PNG only. Run alone (RUN_SERIAL), so the time is the report's, not the
neighbours'.

The bound scales with the machine: where two processes drawing REFERENCE's
twelve figures side by side (the report's work on two cores, in miniature)
take longer than REPORT_SECONDS / REFERENCE_RATIO, the bound is
REFERENCE_RATIO times that. A host that draws every figure three times slower
than the one the bound was set on then fails no test, and a report that
became slower than its machine still does.

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
REFERENCE_RATIO = 2.0  # measured: the smoke report takes 1.25 reference runs (docs/perf/report.md)

# Twelve log-log charts of six labelled lines, laid out and written as PNG
# the way plots/report_draw.py writes a chart.
REFERENCE = """
import os, sys, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
for i in range(12):
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    xs = [2 ** k for k in range(1, 12)]
    for j in range(6):
        ax.plot(xs, [(j + 1) * x ** (0.5 + 0.1 * j) for x in xs], marker="o", ms=3,
                label="variant %d (threads %d)" % (j, 2 ** j))
    ax.set(xscale="log", yscale="log", xlabel="size", ylabel="seconds per call")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=6)
    fig.suptitle("reference figure %d\\nmachine" % i, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(sys.argv[1], "f%d.png" % i), dpi=110)
    plt.close(fig)
"""


def reference_seconds():
    """Wall time of two REFERENCE processes run side by side."""
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        t0 = time.monotonic()
        procs = [subprocess.Popen([os.path.join(ROOT, "ci", "python"), "-c", REFERENCE, d],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for d in (a, b)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            if p.returncode != 0:
                raise AssertionError("the reference drawing failed: %s" % err)
        return time.monotonic() - t0


class ReportSpeed(unittest.TestCase):
    def test_the_smoke_report_in_ten_seconds(self):
        before = reference_seconds()
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(ROOT, "plots", "plot"), SMOKE, "--out", tmp], capture_output=True,
                               text=True, timeout=300)
            dt = time.monotonic() - t0
            after = reference_seconds()
            ref = max(before, after)  # a disturbance in the window lengthens the yardstick too
            bound = max(REPORT_SECONDS, REFERENCE_RATIO * ref)
            print("smoke report: %.1f s (bound %.1f s; reference %.1f / %.1f s: report = %.2f references), %s"
                  % (dt, bound, before, after, dt / ref, p.stdout.strip()), file=sys.stderr)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")  # no warning, no worker's traceback
            pages = sorted(f for f in os.listdir(tmp) if f.endswith(".html"))
            self.assertGreater(len(pages), 5, pages)  # the summary and the family pages
            self.assertGreater(len([f for f in os.listdir(tmp) if f.endswith(".png")]), 40)
            self.assertLessEqual(dt, bound)


if __name__ == "__main__":
    SMOKE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
