#!/usr/bin/env python3
"""Every command in the code blocks of README.md and docs/ parses as written:
a bench line lists its benchmarks (--benchmark_list_tests added, so nothing
runs) with this build's bench, a Python tool's line gets through its argument
parser, a shell tool's options are ones it takes, and the bench arguments a
tool forwards after "--" list too. Then bench's checks of Google Benchmark's
own flags from the command line: bad values are exit 2 with one line and no
file left behind, and --benchmark_min_time takes both spellings.

    test_doc_commands.py BUILD_DIR"""
import argparse
import contextlib
import glob
import importlib
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = None
DOCS = ["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
BENCH = re.compile(r"(^|/)bench$")
# Words that stand for something the reader supplies: a line whose bench
# arguments hold one is checked up to its tool's parser only.
PLACEHOLDERS = {"...", "ARGS"}
# A GPU build's line asking for more GPUs than this host has: bench parsed
# it, and refuses only the count (one line, exit 2).
GPUS_ASKED = re.compile(r"^bench: --[a-z-]+: \d+ GPUs asked, \d+ visible[^\n]*\n$")
# The variants only a CUDA build registers (as unsupported where no GPU is).
GPU_VARIANT = re.compile(r"(CUDA|cuBLAS|CUB|Thrust|NCCL)")
PYTHON_TOOL = re.compile(r"-m ((?:regress|plots)\.[a-z_]+)")


def code_lines(path):
    """(line number, text) of each line of a fenced or indented code block,
    with backslash continuations joined."""
    with open(os.path.join(ROOT, path)) as f:
        lines = f.read().split("\n")
    out, fence, held = [], False, None
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not (fence or line.startswith("    ")):
            continue
        text = line.strip()
        if held:
            held = (held[0], held[1] + " " + text)
        else:
            held = (i, text)
        if text.endswith("\\"):
            held = (held[0], held[1][:-1].rstrip())
            continue
        out.append(held)
        held = None
    return out


def commands(text):
    """Each simple command of a shell line as a word list: comments dropped,
    split at ;, &&, || and |, redirections and VAR=value prefixes taken off."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split, lexer.commenters = True, "#"
    try:
        words = list(lexer)
    except ValueError:
        return []
    cmds, cur, skip = [], [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in (";", "&&", "||", "|", "&"):
            cmds.append(cur)
            cur = []
        elif w in (">", ">>", "<", "2>", "&>"):
            skip = True
        elif not cur and re.match(r"^[A-Z_][A-Z0-9_]*=", w):
            continue
        else:
            cur.append(w)
    cmds.append(cur)
    return [c for c in cmds if c]


def the_commands():
    """(where, the command's words) for every command of a code block that
    names bench, a ci/ tool or plots/plot."""
    found = []
    for path in DOCS:
        rel = os.path.relpath(os.path.join(ROOT, path), ROOT)
        for n, text in code_lines(path):
            for words in commands(text):
                if words[0] == "mpirun":
                    words = words[next((i for i, w in enumerate(words) if BENCH.search(w)), len(words)):]
                if words and (BENCH.search(words[0]) or re.match(r"^(ci/[\w.-]+|plots/plot)$", words[0])):
                    found.append(("%s:%d" % (rel, n), words))
    return found


class Parsed(Exception):
    """Raised in place of running a tool once its arguments parsed."""


@contextlib.contextmanager
def parse_only():
    """argparse that stops with Parsed once the outermost parse is done (and
    parse_args has refused what it does not know): the tool's main runs up to
    its parse and no further."""
    known, full = argparse.ArgumentParser.parse_known_args, argparse.ArgumentParser.parse_args
    depth = [0]

    def patched_known(self, *a, **kw):
        depth[0] += 1
        try:
            result = known(self, *a, **kw)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            raise Parsed()
        return result

    def patched_full(self, *a, **kw):
        depth[0] += 1  # its own parse_known_args is not the outermost
        try:
            full(self, *a, **kw)
        finally:
            depth[0] -= 1
        raise Parsed()
    argparse.ArgumentParser.parse_known_args, argparse.ArgumentParser.parse_args = patched_known, patched_full
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_known_args, argparse.ArgumentParser.parse_args = known, full


def parses(module, argv):
    """"" when the tool's main gets through its parser with argv, else what it said."""
    err = io.StringIO()
    with parse_only(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = importlib.import_module(module).main(argv)
        except Parsed:
            return ""
        except SystemExit as e:
            code = e.code
    # A tool whose parser reports through its own error (ci/history) returns.
    return "exit %s: %s" % (code, err.getvalue().strip())


def python_module(tool):
    """The module a ci/ or plots/ wrapper runs (`ci/python -m MODULE`), or None."""
    with open(os.path.join(ROOT, tool)) as f:
        m = PYTHON_TOOL.search(f.read())
    return m.group(1) if m else None


def bench_args_of(words):
    """The arguments after a tool's "--", for bench; None without any."""
    return words[words.index("--") + 1:] if "--" in words else None


class DocCommands(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.cmds = the_commands()
        cls.tmp = tempfile.TemporaryDirectory()
        listed = subprocess.run([os.path.join(BUILD, "bench"), "--benchmark_list_tests"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        cls.cuda = bool(GPU_VARIANT.search(listed))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def bench(self, args):
        """Runs this build's bench on args as a listing; (exit status, stderr)."""
        out = os.path.join(self.tmp.name, "run.json")
        args = ["--benchmark_out=" + out if a.startswith("--benchmark_out=") else a for a in args]
        cmd = [os.path.join(BUILD, "bench")] + args
        if "--help" not in args:
            cmd.append("--benchmark_list_tests=true")
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           cwd=self.tmp.name, timeout=120)
        return p.returncode, p.stderr

    def test_there_are_commands_of_every_kind(self):
        kinds = {("bench" if BENCH.search(w[0]) else w[0]) for _, w in self.cmds}
        self.assertGreaterEqual(len(self.cmds), 90)
        for k in ("bench", "ci/compare", "ci/bisect", "ci/nightly", "ci/history", "plots/plot", "ci/gpu.sh"):
            self.assertIn(k, kinds)

    def test_bench_lines_list(self):
        checked = skipped = 0
        for where, words in self.cmds:
            args = words[1:] if BENCH.search(words[0]) else bench_args_of(words)
            if words[0] in ("ci/default-job.sh",):
                args = words[1:]
            if args is None or PLACEHOLDERS & set(args):
                continue
            with self.subTest(where=where, line=" ".join(words)):
                code, err = self.bench(args)
                if code == 2 and "build/gpu/" in words[0] and GPUS_ASKED.search(err):
                    continue  # a line for a host of more GPUs: it parsed, and this host has too few
                if code == 2 and not self.cuda and "matches none of the" in err and GPU_VARIANT.search(" ".join(args)):
                    skipped += 1  # a build without CUDA registers no CUDA variant for the filter to match
                    continue
                self.assertEqual(code, 0, "%s: %s" % (where, err.strip()))
                checked += 1
        print("bench lines listed: %d (%d need a CUDA build)" % (checked, skipped), file=sys.stderr)
        self.assertGreaterEqual(checked + skipped, 30)

    def test_python_tool_lines_parse(self):
        checked = 0
        for where, words in self.cmds:
            if BENCH.search(words[0]) or words[0].endswith(".sh"):
                continue
            module = python_module(words[0])
            self.assertIsNotNone(module, "%s: %s is no Python tool this test knows" % (where, words[0]))
            argv = words[1:]
            if "--help" in argv:
                continue
            with self.subTest(where=where, line=" ".join(words)):
                self.assertEqual(parses(module, argv), "", where)
                checked += 1
        print("tool lines parsed: %d" % checked, file=sys.stderr)
        self.assertGreaterEqual(checked, 60)

    def test_a_bad_line_is_caught(self):
        self.assertEqual(parses("regress.compare", ["a.json", "b.json", "--history", "h"]), "")
        self.assertEqual(parses("regress.compare", ["a.json", "b.json", "--no-such-option"]),
                         "exit 2: compare: unrecognized arguments: --no-such-option (see ci/compare --help)")
        self.assertEqual(parses("regress.history", ["--history", "h", "no-such-command"]),
                         "exit 2: history: argument COMMAND: invalid choice: 'no-such-command' (choose from 'ingest', "
                         "'list', 'machines', 'series', 'rebuild', 'plan', 'export') (see ci/history --help)")
        self.assertEqual(self.bench(["--benchmark_filter=^GEMM/", "--benchmark_min_time=2ms"])[0], 2)
        self.assertEqual(self.bench(["--benchmark_filter=^GEMM/", "--benchmark_min_time=2s"])[0], 0)

    def test_shell_tool_options_are_known(self):
        """A shell tool's options are named in its usage comment and taken by
        its option loop (a case label), since it has no parser to ask."""
        for where, words in self.cmds:
            if not words[0].endswith(".sh"):
                continue
            with open(os.path.join(ROOT, words[0])) as f:
                script = f.read()
            head = "".join(ln for ln in script.splitlines(True) if ln.startswith("#"))
            own = words[1:words.index("--")] if "--" in words else words[1:]
            for opt in (w.split("=")[0] for w in own if w.startswith("--")):
                if words[0] == "ci/default-job.sh":
                    continue  # every argument goes to bench (test_bench_lines_list)
                with self.subTest(where=where, option=opt):
                    self.assertIn(opt, head, "%s: %s does not document %s" % (where, words[0], opt))
                    self.assertRegex(script, r"\n\s*%s\)" % re.escape(opt).replace("\\|", "|"))


class BenchFlags(unittest.TestCase):
    """Google Benchmark's flags as bench checks them, from the command line."""

    def bench(self, *args, cwd=None):
        return subprocess.run([os.path.join(BUILD, "bench")] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, cwd=cwd, timeout=120)

    def test_bad_values_are_exit_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            for args, text in ((["--benchmark_format=xml"], "--benchmark_format=xml: unknown value"),
                               (["--benchmark_time_unit=hours"], "--benchmark_time_unit=hours: unknown value"),
                               (["--benchmark_out=" + out, "--benchmark_out_format=xml"],
                                "--benchmark_out_format=xml: unknown value"),
                               (["--benchmark_min_time=fast"], "--benchmark_min_time=fast: not seconds"),
                               (["--benchmark_repetitions=ten"], "not a count of at least 1"),
                               (["--benchmark_counters_tabular=maybe"], "not a boolean")):
                with self.subTest(args=args):
                    p = self.bench("--profile=smoke", "--benchmark_filter=^GEMM/Naive/", *args)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertEqual(p.stdout, "")
                    lines = p.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 1, p.stderr)
                    self.assertTrue(lines[0].startswith("bench: ") and text in lines[0], lines[0])
            # The refused out format left no empty file behind.
            self.assertFalse(os.path.exists(out))

    def test_min_time_in_both_spellings_runs(self):
        """Both spellings reach the library in its own: a real run, whose JSON
        records the minimum time it was given."""
        with tempfile.TemporaryDirectory() as tmp:
            for value in ("0.002", "0.002s"):
                out = os.path.join(tmp, "run-%s.json" % value)
                p = self.bench("--benchmark_filter=^GEMM/Naive/op:AB/type:f32/M:64/", "--gemm-shapes=64",
                               "--threads=1", "--benchmark_min_time=" + value, "--benchmark_out=" + out,
                               "--no-energy")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertNotIn("unrecognized", p.stderr)
                with open(out) as f:
                    self.assertIn('"run_name": "GEMM/Naive/op:AB/type:f32/M:64/', f.read())

    def test_the_environment_is_checked_too(self):
        env = dict(os.environ, BENCHMARK_FORMAT="xml")
        p = subprocess.run([os.path.join(BUILD, "bench"), "--profile=smoke", "--benchmark_list_tests"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(), "bench: BENCHMARK_FORMAT=xml: unknown value (one of console, json, csv)")


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.path.isfile(os.path.join(sys.argv[1], "bench")):
        print("usage: test_doc_commands.py BUILD_DIR (with bench built)", file=sys.stderr)
        sys.exit(2)
    BUILD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
