"""The console scripts of pyproject.toml: parbench-<tool> for each ci/<tool>
that runs `python -m MODULE`, and parbench-plot for plots/plot. Each is
regress.console's launcher of that module, so a tool runs installed exactly
as its wrapper runs it."""
import glob
import os
import re

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
WRAPPER = re.compile(r'^(?:[A-Z_]+=\S+ )*exec .*-m ((?:regress|plots)\.[a-z_]+) "\$@"$', re.M)


def scripts():
    found = {}
    for path in sorted(glob.glob(os.path.join(HERE, "ci", "*")) + [os.path.join(HERE, "plots", "plot")]):
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            m = WRAPPER.search(f.read())
        if m:
            name = os.path.basename(path)
            found["parbench-" + name] = "regress.console:" + m.group(1).replace(".", "__")
    return ["%s = %s" % kv for kv in sorted(found.items())]


setup(entry_points={"console_scripts": scripts()})
