#!/usr/bin/env python3
"""kmeans-inputs and peers/kmeans_peers.py: the arrays are bench's k-means
inputs (shapes, no zeros, every first centroid one of the points, the same
arrays for the same seed, other ones for another); bad arguments exit 2 with
one line; the peer script writes JSON the loader reads, with bench-style
names and counters (scikit-learn is stood in for by a stub that runs Lloyd
in NumPy, as CI has neither it nor PyTorch), and without any peer it says
why in one line and exits 2.

    test_kmeans_peers.py PATH/TO/kmeans-inputs
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from regress.load import results

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(ROOT, "peers", "kmeans_peers.py")

INPUTS = None

# A stand-in for sklearn.cluster.KMeans: Lloyd in NumPy, from the given init.
STUB = '''
import numpy as np
__version__ = "stub"
class KMeans:
    def __init__(self, n_clusters, init, n_init, max_iter, tol, algorithm):
        assert algorithm == "lloyd" and n_init == 1 and tol == 0.0
        self.c, self.max_iter = np.array(init, dtype=float), max_iter
    def fit(self, x):
        c = self.c
        for _ in range(self.max_iter):
            d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(2)
            a = d.argmin(1)
            self.inertia_ = float(d.min(1).sum())
            for j in range(len(c)):
                if (a == j).any():
                    c[j] = x[a == j].mean(0)
        self.n_iter_, self.cluster_centers_ = self.max_iter, c
        return self
'''


def inputs(*args):
    return subprocess.run([INPUTS] + list(args), capture_output=True, text=True, timeout=120)


def peers(*args, env=None):
    return subprocess.run([sys.executable, PEERS] + list(args), capture_output=True, text=True, timeout=300,
                          env=env)


class KMeansInputs(unittest.TestCase):
    def test_the_arrays(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "a")
            p = inputs("--shape=777x3x5", "--dist=blobs", "--out=" + out)
            self.assertEqual(p.returncode, 0, p.stderr)
            x, c = np.load(os.path.join(out, "points.npy")), np.load(os.path.join(out, "init.npy"))
            with open(os.path.join(out, "problem.json"), encoding="utf-8") as f:
                prob = json.load(f)
            self.assertEqual((x.shape, c.shape), ((777, 3), (5, 3)))
            self.assertEqual((prob["N"], prob["D"], prob["K"], prob["dist"]), (777, 3, 5, "blobs"))
            self.assertTrue(np.all(x != 0))
            for row in c:  # each first centroid is a distinct point
                self.assertTrue(np.any(np.all(x == row, axis=1)))
            self.assertEqual(len({tuple(r) for r in c}), 5)
            again = os.path.join(tmp, "b")
            self.assertEqual(inputs("--shape=777x3x5", "--dist=blobs", "--out=" + again).returncode, 0)
            self.assertTrue(np.array_equal(x, np.load(os.path.join(again, "points.npy"))))
            other = os.path.join(tmp, "c")
            self.assertEqual(inputs("--shape=777x3x5", "--dist=blobs", "--seed=5", "--out=" + other).returncode, 0)
            self.assertFalse(np.array_equal(x, np.load(os.path.join(other, "points.npy"))))
            self.assertEqual(prob["type"], "f64")
            # Type f32: the same points rounded to float.
            single = os.path.join(tmp, "d")
            self.assertEqual(inputs("--shape=777x3x5", "--dist=blobs", "--type=f32", "--out=" + single).returncode, 0)
            xs = np.load(os.path.join(single, "points.npy"))
            self.assertTrue(np.array_equal(xs, x.astype(np.float32).astype(np.float64)))
            self.assertFalse(np.array_equal(xs, x))
            with open(os.path.join(single, "problem.json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["type"], "f32")

    def test_bad_arguments(self):
        with tempfile.TemporaryDirectory() as tmp:
            for args, words in ((["--shape=3x4x8", "--out=" + tmp], "K must not exceed N"),
                                (["--shape=10x4", "--out=" + tmp], "NxDxK"),
                                (["--shape=10x4x2"], "--out=DIR is required"),
                                (["--shape=10x4x2", "--out=" + tmp, "--dist=gauss"], "gauss"),
                                (["--shape=10x4x2", "--out=" + tmp, "--dist=uniform,blobs"], "one distribution"),
                                (["--shape=10x4x2", "--out=" + tmp, "--type=f16"], "f16"),
                                (["--bogus"], "unknown argument")):
                p = inputs(*args)
                self.assertEqual(p.returncode, 2, args)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(words, p.stderr)


class Peers(unittest.TestCase):
    def test_json_from_a_stub_sklearn(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "in")
            self.assertEqual(inputs("--shape=500x4x6", "--out=" + data).returncode, 0)
            stub = os.path.join(tmp, "stub", "sklearn")
            os.makedirs(stub)
            with open(os.path.join(stub, "__init__.py"), "w", encoding="utf-8") as f:
                f.write('__version__ = "stub"\n')
            with open(os.path.join(stub, "cluster.py"), "w", encoding="utf-8") as f:
                f.write(STUB)
            env = dict(os.environ, PYTHONPATH=os.path.join(tmp, "stub"))
            out = os.path.join(tmp, "peers.json")
            p = peers(data, "--iterations=4", "--repetitions=2", "--peers=sklearn", "--out=" + out, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            run = results.load(out)
            names = {e.raw["run_name"] for e in run.entries}
            self.assertEqual(names, {"KMeans/sklearn.Lloyd/cfg:custom/dist:uniform/N:500/D:4/K:6/manual_time"})
            med = [e for e in run.entries if e.aggregate == "median"]
            self.assertEqual(len(med), 1)
            self.assertEqual(med[0].counters()["lloyd_iterations"], 4.0)
            self.assertGreater(med[0].counters()["inertia"], 0)
            self.assertEqual(run.context["sklearn_version"], "stub")
            # f32 inputs: the name carries the type as bench's does.
            single = os.path.join(tmp, "in32")
            self.assertEqual(inputs("--shape=500x4x6", "--type=f32", "--out=" + single).returncode, 0)
            p = peers(single, "--iterations=2", "--repetitions=1", "--peers=sklearn", "--out=" + out, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            names = {e.raw["run_name"] for e in results.load(out).entries}
            self.assertEqual(names, {"KMeans/sklearn.Lloyd/cfg:custom/type:f32/dist:uniform/N:500/D:4/K:6/manual_time"})

    def test_no_peer_is_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "in")
            self.assertEqual(inputs("--shape=50x2x3", "--out=" + data).returncode, 0)
            env = dict(os.environ, PYTHONPATH=os.path.join(tmp, "nothing"))
            p = peers(data, "--peers=torch", "--out=" + os.path.join(tmp, "x.json"), env=env)
            if p.returncode == 0:
                self.skipTest("PyTorch with a GPU is here")
            self.assertEqual(p.returncode, 2)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn("no peer could run", p.stderr)
            for args, words in (([tmp + "/none", "--out=x.json"], "not a kmeans-inputs folder"),
                                ([data, "--peers=R", "--out=x.json"], "--peers takes"),
                                ([data, "--peers=torch-tf32", "--out=x.json"], "inputs of type f32 only"),
                                ([data, "--iterations=0", "--out=x.json"], "must be >= 1")):
                p = peers(*args)
                self.assertEqual(p.returncode, 2, args)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(words, p.stderr)


if __name__ == "__main__":
    INPUTS = os.path.abspath(sys.argv.pop(1))
    unittest.main()
