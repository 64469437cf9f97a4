#!/usr/bin/env python3
"""The Python house: the engine's layers, read from the code's own imports.

regress/ is a package of layers, each a subpackage, and the tools on top:

  1 load     the one loader of bench JSON, derived figures, formatters
  2 stats    rank tests, the decision rule, noise, change points, series
  3 verdict  the comparator's decisions as typed records
  4 store    the history (SQLite, PostgreSQL), alerts, the history's noise
  5 report   console, Markdown, the pull-request comment
  6 run      launch, paired rounds, suite, nightly, bisection, evidence
    tools    regress/<tool>.py: a command's arguments and wiring (ci/<tool>)

plots/ draws; it reads the layers up to store, never report, run or a tool.
A module imports only its own layer, the layers below it, and the shared
regress/cli.py; a tool imports the layers and plots/, never another tool.
Every import counts, also one inside a function. No circle anywhere; no
module over MAX_MODULE lines and no function over MAX_FUNCTION.
"""
import ast
import glob
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LAYERS = {"load": 1, "stats": 2, "verdict": 3, "store": 4, "report": 5, "run": 6}
PLOTS_MAY_READ = {"load", "stats", "verdict", "store"}
MAX_MODULE = 600
MAX_FUNCTION = 100


def modules():
    """{dotted name: path} of regress/ and plots/."""
    out = {}
    for pkg in ("regress", "plots"):
        for path in glob.glob(os.path.join(ROOT, pkg, "**", "*.py"), recursive=True):
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return out


def imports(path, known):
    """The modules of `known` that the file at `path` imports, anywhere in it."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
        else:
            continue
        for n in names:
            # the longest known module the name starts with
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n and n not in ("regress", "plots"):
                found.add(n)
    return found


def place(mod):
    """('layer', name), ('tool', name), ('shared', name) or ('plots', name)."""
    parts = mod.split(".")
    if parts[0] == "plots":
        return "plots", mod
    if len(parts) >= 3 and parts[1] in LAYERS:
        return "layer", parts[1]
    if len(parts) == 2 and parts[1] in LAYERS:
        return "layer", parts[1]
    if mod == "regress.cli":
        return "shared", mod
    return "tool", mod


def allowed(a, b):
    """Whether module a may import module b."""
    (ka, la), (kb, lb) = place(a), place(b)
    if kb == "shared":
        return True
    if ka == "shared":
        return False
    if ka == "layer":
        return kb == "layer" and LAYERS[lb] <= LAYERS[la]
    if ka == "plots":
        return kb == "plots" or (kb == "layer" and lb in PLOTS_MAY_READ)
    return kb in ("layer", "plots")  # a tool: the layers and the charts, never another tool


class Layers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mods = modules()
        cls.graph = {m: imports(p, cls.mods) - {m} for m, p in cls.mods.items()}

    def test_the_layers_exist(self):
        for layer in LAYERS:
            self.assertIn("regress." + layer, self.mods)
        self.assertGreater(len(self.mods), 30)

    def test_no_import_circle(self):
        state, circles = {}, []

        def visit(m, stack):
            state[m] = 1
            stack.append(m)
            for n in sorted(self.graph.get(m, ())):
                if state.get(n) == 1:
                    circles.append(stack[stack.index(n):] + [n])
                elif n not in state:
                    visit(n, stack)
            stack.pop()
            state[m] = 2

        for m in sorted(self.graph):
            if m not in state:
                visit(m, [])
        self.assertEqual(circles, [], "import circles")

    def test_imports_go_one_way(self):
        wrong = sorted("%s -> %s" % (a, b) for a, bs in self.graph.items() for b in bs if not allowed(a, b))
        self.assertEqual(wrong, [], "imports against the layers")

    def test_sizes(self):
        big = []
        for m, path in sorted(self.mods.items()):
            with open(path, encoding="utf-8") as f:
                src = f.read()
            lines = src.count("\n")
            if lines > MAX_MODULE:
                big.append("%s: %d lines" % (m, lines))
            for node in ast.walk(ast.parse(src)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1
                    if n > MAX_FUNCTION:
                        big.append("%s.%s: %d lines" % (m, node.name, n))
        self.assertEqual(big, [], "modules over %d lines, functions over %d" % (MAX_MODULE, MAX_FUNCTION))


if __name__ == "__main__":
    unittest.main()
