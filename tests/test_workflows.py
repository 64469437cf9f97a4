#!/usr/bin/env python3
"""The CI workflows under .github/workflows/ parse as YAML, have the shape
GitHub Actions reads (on, jobs, runs-on, steps that run or use), and every
repository command they name exists and is executable; the options they pass
to parbench's commands are ones those commands accept."""
import glob
import os
import re
import subprocess
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKFLOWS = sorted(glob.glob(os.path.join(ROOT, ".github", "workflows", "*.yml")))
ACTIONS = ("actions/checkout@v4", "actions/upload-artifact@v4")
COMMAND = re.compile(r"(?<![\w./-])((?:ci|plots)/[A-Za-z0-9_.-]+)")


def commands(script):
    """(command, the rest of its line) for each ci/ or plots/ command named."""
    joined = script.replace("\\\n", " ")
    for line in joined.splitlines():
        for m in COMMAND.finditer(line):
            yield m.group(1), line[m.end():]


class Workflows(unittest.TestCase):
    def test_there_are_two(self):
        names = sorted(os.path.basename(p) for p in WORKFLOWS)
        self.assertEqual(names, ["nightly.yml", "pull-request.yml"])

    def test_shape_and_commands(self):
        for path in WORKFLOWS:
            with open(path) as f:
                doc = yaml.safe_load(f)
            name = os.path.basename(path)
            # PyYAML reads the key `on` as the boolean True (YAML 1.1).
            self.assertTrue("on" in doc or True in doc, name)
            self.assertIn("jobs", doc, name)
            for job, spec in doc["jobs"].items():
                self.assertIn("runs-on", spec, (name, job))
                self.assertTrue(spec.get("steps"), (name, job))
                for step in spec["steps"]:
                    self.assertTrue(("run" in step) != ("uses" in step), (name, job, step))
                    if "uses" in step:
                        self.assertIn(step["uses"], ACTIONS, (name, job))
                        continue
                    for cmd, rest in commands(step["run"]):
                        full = os.path.join(ROOT, cmd)
                        self.assertTrue(os.path.isfile(full) and os.access(full, os.X_OK),
                                        "%s: %s names %s, which is not an executable file" % (name, job, cmd))
                        self.check_options(cmd, rest, name)

    def check_options(self, cmd, rest, where):
        """Every --option given to a parbench command appears in its --help."""
        opts = re.findall(r"(?<!\S)(--[a-z][a-z-]*)", rest.split(" -- ")[0])
        if not opts:
            return
        p = subprocess.run([os.path.join(ROOT, cmd), "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=60)
        self.assertEqual(p.returncode, 0, (cmd, p.stderr))
        for o in opts:
            self.assertIn(o, p.stdout, "%s: %s has no option %s" % (where, cmd, o))


if __name__ == "__main__":
    unittest.main()
