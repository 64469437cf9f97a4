#!/usr/bin/env python3
"""The tools' decisions, held fixed across restructuring.

The comparator's verdict JSON, console table and Markdown on committed run
pairs (a CPU and a GPU A/A pair, each as it is and with NEW's times x1.30, and
the CPU pair with the paired A/A noise), and the trends' changes.json on a
stepped nightly history, must stay byte for byte what they were when the
golden file was written: a change of layout or of code shape must not change
a verdict. A change of behaviour that an issue asks for regenerates the golden
file in its own commit (`tests/test_behaviour.py --regenerate`), so the diff
shows what moved.

Normalised before comparing: the inputs' directory (a temporary one here)
and module paths named in notes (`regress/....py`), which follow the layout.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "behaviour")
GOLDEN = os.path.join(DATA, "golden.json.gz")
CI = os.path.join(ROOT, "ci")

# name: the comparator's arguments after BASE NEW (inputs named by their file in DATA)
COMPARE_CASES = {
    "cpu-aa": ("cpu-base.json.gz", "cpu-new.json.gz"),
    "cpu-x1.30": ("cpu-base.json.gz", "cpu-new.json.gz", "--scale-new", "1.30"),
    "cpu-x1.30-noise": ("cpu-base.json.gz", "cpu-new.json.gz", "--scale-new", "1.30",
                        "--noise", "cpu-paired-aa.json.gz"),
    "gpu-aa": ("gpu-base.json.gz", "gpu-new.json.gz"),
    "gpu-x1.30": ("gpu-base.json.gz", "gpu-new.json.gz", "--scale-new", "1.30"),
    "gpu-x1.02-filter": ("gpu-base.json.gz", "gpu-new.json.gz", "--scale-new", "1.02",
                         "--filter", "^(GEMM|Sort)/"),
}

_MODULE = re.compile(r"regress/[a-z_/]+\.py")


def normalise(text, work):
    return _MODULE.sub("<module>", text.replace(work + os.sep, "").replace(work, "."))


def run(args, work):
    p = subprocess.run(args, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p


def compare_outputs(work):
    out = {}
    for case, args in COMPARE_CASES.items():
        files = [a if not a.endswith(".json.gz") else os.path.join(work, a) for a in args]
        j, md = os.path.join(work, case + ".json"), os.path.join(work, case + ".md")
        p = run([os.path.join(CI, "compare"), *files, "--json", j, "--markdown", md], work)
        with open(j) as f:
            verdicts = f.read()
        with open(md) as f:
            markdown = f.read()
        out[case] = {"exit": p.returncode, "console": normalise(p.stdout, work),
                     "stderr": normalise(p.stderr, work), "json": normalise(verdicts, work),
                     "markdown": normalise(markdown, work)}
    return out


def trends_output(work):
    with gzip.open(os.path.join(DATA, "history.json.gz"), "rt") as f:
        docs = json.load(f)
    hist = os.path.join(work, "hist")
    paths = []
    for i, d in enumerate(docs):
        paths.append(os.path.join(work, "night-%02d.json" % i))
        with open(paths[-1], "w") as f:
            json.dump(d, f)
    p = run([os.path.join(CI, "history"), "--history", hist, "ingest", *paths], work)
    if p.returncode:
        raise AssertionError("ingest: " + p.stderr)
    p = run([os.path.join(CI, "trends"), "--history", hist, "--out", os.path.join(work, "trends")], work)
    with open(os.path.join(work, "trends", "changes.json")) as f:
        changes = json.load(f)
    # The ledger's nights run from a change to the moment its alert was
    # raised, which is the day the test runs: kept out of the golden.
    for m in changes["ledger"]["months"] + [changes["ledger"]["total"]]:
        m["nights_to_alert"] = m["nights_to_culprit"] = "the nights up to the test's day"
    changes = json.dumps(changes, indent=2, sort_keys=True) + "\n"
    return {"exit": p.returncode, "stdout": normalise(p.stdout, work), "stderr": normalise(p.stderr, work),
            "changes": normalise(changes, work)}


def outputs():
    work = tempfile.mkdtemp(prefix="behaviour-")
    try:
        for name in os.listdir(DATA):
            if name != "golden.json.gz":
                shutil.copy(os.path.join(DATA, name), work)
        return {"compare": compare_outputs(work), "trends": trends_output(work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Behaviour(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with gzip.open(GOLDEN, "rt") as f:
            cls.golden = json.load(f)
        cls.now = outputs()

    def test_compare_cases(self):
        self.assertEqual(sorted(self.now["compare"]), sorted(self.golden["compare"]))
        for case, want in self.golden["compare"].items():
            got = self.now["compare"][case]
            for part in ("exit", "json", "console", "markdown", "stderr"):
                with self.subTest(case=case, part=part):
                    self.assertEqual(got[part], want[part])

    def test_the_cases_decide_something(self):
        # The golden file must hold real verdicts: the x1.30 GPU pair is SLOWER
        # and gates (exit 1), the A/A pairs do not.
        g = self.golden["compare"]
        self.assertEqual(g["gpu-x1.30"]["exit"], 1)
        self.assertIn('"SLOWER"', g["gpu-x1.30"]["json"])
        self.assertEqual(g["gpu-aa"]["exit"], 0)
        self.assertEqual(g["cpu-aa"]["exit"], 0)

    def test_trends(self):
        for part in ("exit", "changes", "stdout", "stderr"):
            with self.subTest(part=part):
                self.assertEqual(self.now["trends"][part], self.golden["trends"][part])
        self.assertIn("regression", self.golden["trends"]["changes"])


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        with gzip.open(GOLDEN, "wt") as f:
            json.dump(outputs(), f, indent=1, sort_keys=True)
        print("wrote", GOLDEN)
    else:
        unittest.main()
