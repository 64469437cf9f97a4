#!/usr/bin/env python3
"""regress/gemm_tune.py: the table written from a tuning sweep."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = ["-m", "regress.gemm_tune"]


def entry(variant, tile, seconds, op="AB", typ="f32", size=1024, error=None):
    name = "GEMM/%s/op:%s/type:%s/M:%d/N:%d/K:%d" % (variant, op, typ, size, size, size)
    if tile:
        name += "/tile:" + tile
    name += "/manual_time"
    e = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 3, "iterations": 10,
         "real_time": seconds * 1e9, "cpu_time": 1.0, "time_unit": "ns"}
    if error:
        e["error_occurred"] = True
        e["error_message"] = error
    return e


def sweep(entries, cc="9.0"):
    return {"context": {"gpu": "NVIDIA H200", "gpu_compute_capability": cc}, "benchmarks": entries}


class GemmTune(unittest.TestCase):
    def run_tool(self, doc, *args):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "sweep.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        out = os.path.join(d, "table.inc")
        p = subprocess.run([sys.executable, *TOOL, path, "--out", out] + list(args), capture_output=True, text=True)
        table = None
        if os.path.exists(out):
            with open(out) as f:
                table = f.read()
        return p, table

    def test_the_median_fastest_passed_tile_wins_per_shape_and_op(self):
        doc = sweep([
            # AB 1024: a's median 2.0 ms beats b's 2.5 though b has the single fastest repetition
            entry("CUDA.Pipelined", "a", 2.0e-3), entry("CUDA.Pipelined", "a", 2.1e-3),
            entry("CUDA.Pipelined", "a", 1.9e-3),
            entry("CUDA.Pipelined", "b", 1.0e-3), entry("CUDA.Pipelined", "b", 2.5e-3),
            entry("CUDA.Pipelined", "b", 2.6e-3),
            # AtB 1024: c is fastest but one repetition was wrong, so b wins
            entry("CUDA.Pipelined", "c", 1.0e-3, op="AtB"),
            entry("CUDA.Pipelined", "c", 1.0e-3, op="AtB", error="incorrect: 3 of 9 elements"),
            entry("CUDA.Pipelined", "b", 3.0e-3, op="AtB"),
            # f64 on another variant, and an entry without a tile (ignored)
            entry("CUDA.DMMA", "x", 4.0e-3, typ="f64", size=2048),
            entry("CUDA.DMMA", "y", 5.0e-3, typ="f64", size=2048),
            entry("cuBLAS", None, 0.5e-3),
        ])
        p, table = self.run_tool(doc, "--default", "CUDA.Pipelined=b")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [ln for ln in table.splitlines() if ln.startswith("{")]
        self.assertEqual(rows, [
            '{"CUDA.DMMA", "AB", "f64", 2048, 2048, 2048, "x"},',
            '{"CUDA.Pipelined", "AB", "f32", 1024, 1024, 1024, "a"},',
            '{"CUDA.Pipelined", "AtB", "f32", 1024, 1024, 1024, "b"},',
        ])
        self.assertIn("NVIDIA H200, sm_90", table)
        self.assertIn("tile c failed; left out", p.stderr)
        # summary: a (2.0 ms) against the default b (2.5 ms): gain 1.250
        self.assertIn("| CUDA.Pipelined | AB | f32 | 1024x1024x1024 | a | 2.000 | b | 2.500 | 1.250 |", p.stdout)

    def test_a_sweep_replaces_its_groups_rows_and_keeps_the_others(self):
        d = tempfile.mkdtemp()
        out = os.path.join(d, "table.inc")
        with open(out, "w") as f:
            f.write('// Written by regress/gemm_tune.py from sweep.json (NVIDIA H100 80GB HBM3, sm_90); rerun '
                    'ci/tune-gemm to change.\n{"CUDA.DMMA", "AB", "f64", 1024, 1024, 1024, "old"},\n'
                    '{"CUDA.Pipelined", "AB", "f32", 4096, 4096, 4096, "stale"},\n')
        path = os.path.join(d, "sweep.json")
        with open(path, "w") as f:
            json.dump(sweep([entry("CUDA.Pipelined", "new", 1e-3)]), f)
        p = subprocess.run([sys.executable, *TOOL, path, "--out", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            rows = [ln for ln in f.read().splitlines() if ln.startswith("{")]
        self.assertEqual(rows, ['{"CUDA.DMMA", "AB", "f64", 1024, 1024, 1024, "old"},',
                                '{"CUDA.Pipelined", "AB", "f32", 1024, 1024, 1024, "new"},'])
        self.assertIn("1 other rows kept", p.stderr)
        # each group names the sweep that chose it: the kept one its old
        # table's, the replaced one this sweep's GPU
        with open(out) as f:
            text = f.read()
        self.assertIn("// CUDA.DMMA AB f64: sweep.json (NVIDIA H100 80GB HBM3, sm_90)\n", text)
        self.assertIn("// CUDA.Pipelined AB f32: sweep.json (NVIDIA H200, sm_90)\n", text)
        self.assertNotIn("H100", text.replace("// CUDA.DMMA AB f64: sweep.json (NVIDIA H100 80GB HBM3, sm_90)", ""))
        # and a second sweep of the other group keeps the first one's line
        with open(path, "w") as f:
            json.dump(dict(sweep([entry("CUDA.DMMA", "d", 1e-3, typ="f64")]), context={
                "gpu": "NVIDIA H100 PCIe", "gpu_compute_capability": "9.0"}), f)
        p = subprocess.run([sys.executable, *TOOL, path, "--out", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn("// CUDA.DMMA AB f64: sweep.json (NVIDIA H100 PCIe, sm_90)\n", text)
        self.assertIn("// CUDA.Pipelined AB f32: sweep.json (NVIDIA H200, sm_90)\n", text)
        self.assertIn('{"CUDA.Pipelined", "AB", "f32", 1024, 1024, 1024, "new"},', text)
        # an unwritable table: one line, exit 2
        p = subprocess.run([sys.executable, *TOOL, path, "--out", os.path.join(d, "no", "such", "dir", "t.inc")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot write", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_a_sweep_without_tiles_or_with_only_failures_is_an_error(self):
        p, table = self.run_tool(sweep([entry("cuBLAS", None, 1e-3)]))
        self.assertEqual(p.returncode, 1)
        self.assertIn("--gemm-tile", p.stderr)
        self.assertIsNone(table)
        p, table = self.run_tool(sweep([entry("CUDA.Pipelined", "a", 1e-3, error="incorrect: x")]))
        self.assertEqual(p.returncode, 1)
        self.assertIn("no configuration passed", p.stderr)

    def test_the_default_output_is_named_after_the_gpu_and_a_bad_file_is_one_line(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "sweep.json")
        with open(path, "w") as f:
            json.dump(sweep([entry("CUDA.Pipelined", "a", 1e-3)], cc="unknown"), f)
        p = subprocess.run([sys.executable, *TOOL, path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("give --out", p.stderr)
        p = subprocess.run([sys.executable, *TOOL, os.path.join(d, "missing.json")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertNotIn("Traceback", p.stderr)


if __name__ == "__main__":
    unittest.main()
