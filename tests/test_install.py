#!/usr/bin/env python3
"""`pip install .` gives the parbench-<tool> commands, one per ci/ wrapper.

The package is installed into a fresh venv that sees Debian's numpy, scipy
and matplotlib (--system-site-packages) with no build isolation, so no
index is asked; the copy installed is the source tree's Python (regress/,
plots/, ci/, pyproject.toml, setup.py) in a temporary folder, so the
checkout gets no build files. Then each installed command must behave as
its wrapper: --help exits 0, a missing input is one line and exit 2."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def wrappers():
    """{name: module} of the ci/ wrappers (and plots/plot) that run `python -m MODULE`."""
    out = {}
    for path in glob.glob(os.path.join(ROOT, "ci", "*")) + [os.path.join(ROOT, "plots", "plot")]:
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                m = re.search(r'-m ((?:regress|plots)\.[a-z_]+) "\$@"$', f.read(), re.M)
            if m:
                out[os.path.basename(path)] = m.group(1)
    return out


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="parbench-install-")
        src = os.path.join(cls.tmp, "src")
        os.mkdir(src)
        for part in ("regress", "plots", "ci"):
            shutil.copytree(os.path.join(ROOT, part), os.path.join(src, part),
                            ignore=shutil.ignore_patterns("__pycache__"))
        for part in ("pyproject.toml", "setup.py"):
            shutil.copy(os.path.join(ROOT, part), src)
        cls.venv = os.path.join(cls.tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", cls.venv], check=True)
        p = subprocess.run([os.path.join(cls.venv, "bin", "pip"), "install", "--no-build-isolation", "--no-deps",
                            "--no-index", "-q", src], capture_output=True, text=True)
        if p.returncode:
            raise AssertionError("pip install failed: " + p.stdout + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def bin(self, name):
        return os.path.join(self.venv, "bin", name)

    def test_one_command_per_wrapper(self):
        want = {"parbench-" + w for w in wrappers()}
        self.assertGreaterEqual(len(want), 15)
        have = {os.path.basename(p) for p in glob.glob(self.bin("parbench-*"))}
        self.assertEqual(have, want)

    def test_commands_run_their_tools(self):
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the installed package, not the checkout
        for name, module in sorted(wrappers().items()):
            with self.subTest(name=name):
                p = subprocess.run([self.bin("parbench-" + name), "--help"], capture_output=True, text=True,
                                   cwd=self.tmp, env=env, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("usage:", p.stdout)
        p = subprocess.run([self.bin("parbench-compare"), "missing-a.json", "missing-b.json"], capture_output=True,
                           text=True, cwd=self.tmp, env=env, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines(), ["compare: BASE: missing-a.json: no such file"])


if __name__ == "__main__":
    unittest.main()
