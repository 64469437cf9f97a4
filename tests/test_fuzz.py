#!/usr/bin/env python3
"""The fuzzed front door: every tool that reads a document, fed thousands of
mutated real documents (tests/fuzz_docs.py: cuts, wrong types, huge and
negative numbers, NaN strings, deep nesting, duplicate names, other tools'
JSON, unicode names, gzip), and bench's command line fed random arguments.

The contract held on each (docs/tools/README.md, "Exit status", "Bad input"):
exit 2 with one line "TOOL: ..." on stderr (after nothing but a warning
about the input, a notice of a repair done, a long tool's progress), or a
result the input supports; never a traceback (an exception out of the
tool's main, or cli.run_tool's "internal error" line), never a stderr line
that is not the tool's, and never exit 0 (or a verdict) the document does
not support:

  compare         a verdict names only benchmarks of its inputs; exit 0 or 1
                  only with one benchmark measured on both sides (else 3); a
                  file against itself is never SLOWER or FASTER; the exit the
                  verdict JSON records is the exit
  check-run       exit 0 only for a whole file (strict JSON, every repetition a
                  finite positive time) without an error entry
  table, plot     exit 0 only for a whole file; the table's rows name only its
                  benchmarks, each with a finite time
  close-truncated exit 0 only with a copy every tool reads, of the input's entries
  upgrade-json    exit 0 or 1 only for a whole file; its copy one too
  history         an ingest accepted only for a whole file, then listed,
                  its series and exports read; a corrupt index one line
  trends          on a history with a mutated run, A/A ledger and bisection
                  report: exit 1 exactly when changes.json says the night fails
  alerts          on a history whose alerts database or arguments are mangled,
                  or another tool's file given as the history
  bisect          a finished bisection's state with one file mutated, resumed
                  or started again: exit 2, or 4 (stopped before a build), or
                  a report naming only its own commits and benchmarks

Each tool's main runs in this process (stdout and stderr caught, stdout
strict UTF-8 as a terminal's is); a few documents of each tool also run
through its ci/ command, which must say the same.

Tiers: the unit test (ctest `fuzz`) tries a few hundred documents and a few
dozen bench command lines with a fixed seed; the slow test (`fuzz_slow`,
--slow) 10,200 documents and 600 command lines with a new seed each run.
The run prints the documents tried, the tracebacks and silent passes found
(0 and 0) and the seed; --seed N (or PARBENCH_FUZZ_SEED) repeats a run,
--documents N runs N. What the fuzz found and was mended is a regression
test of the unit tier each, test_finding_* beside its tool's fuzz.
"""
import argparse
import contextlib
import gzip
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

import zlib

try:
    from hypothesis import HealthCheck, Phase, given, seed as seed_of, settings, strategies as st
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:
    sys.exit("tests/test_fuzz.py: needs python3-hypothesis (apt-get install python3-hypothesis; ci/deps.sh "
             "installs it)")

# Hypothesis keeps no examples (every run's settings say database=None) but
# caches its Unicode tables: in the temporary folder, never in the
# repository or the build tree the test runs in.
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "parbench-hypothesis-%d" % os.getuid()))

try:  # beside this file when run as a script
    import fuzz_docs as fd
    import test_trends as tt
except ImportError:
    from tests import fuzz_docs as fd
    from tests import test_trends as tt

from regress import cli  # noqa: E402 (after hypothesis is known to be there)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH = None            # --bench: bench's command line is fuzzed when given
SLOW = 0                # --slow: the slow tier's counts (an index into SHARE's pairs)
SEED = None             # --seed
SCALE = 1.0             # --documents N: the tier's shares scaled to N documents in all
# Documents per tool and tier: the costly tools (a report's charts, the trends
# page) get fewer; the unit tier stays within seconds.
SHARE = {"compare": (60, 2000), "table": (40, 1300), "check-run": (40, 1300), "close-truncated": (30, 1100),
         "upgrade-json": (25, 900), "history": (30, 1300), "alerts": (20, 800), "bisect": (30, 1100),
         "plot": (3, 250), "trends": (2, 150)}
BENCH_RUNS = (40, 600)
SUBPROCESS = (1, 3)     # per tool: documents that also run through the ci/ command
BAD_EXIT, TRACEBACK, SILENT, STRAY = "refusal not one line", "traceback", "silent pass", "stray output"


class Finding(AssertionError):
    def __init__(self, kind, what):
        super().__init__("%s: %s" % (kind, what))
        self.kind, self.what = kind, what


# ---------------------------------------------------------------- running

class Result:
    def __init__(self, rc, err, out, error=None):
        self.rc, self.err, self.out, self.error = rc, err, out, error

    def __repr__(self):
        return "exit %s, stderr %r%s" % (self.rc, self.err[:4], ("; " + self.error) if self.error else "")


def call(main, argv, cwd=None):
    """The tool's main(argv) in this process: Result(exit status, stderr lines,
    stdout, the traceback of an exception that escaped it). Standard output is
    strict UTF-8 as a terminal's, and caught at its file descriptor too (a
    tool may hold the stream it had at import)."""
    err_b, out_b = io.BytesIO(), io.BytesIO()
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="backslashreplace", write_through=True)
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="strict", write_through=True)
    for f in (sys.stdout, sys.__stdout__):
        f.flush()
    saved, here = os.dup(1), os.getcwd()
    error = None
    with tempfile.TemporaryFile() as fd_out:
        os.dup2(fd_out.fileno(), 1)
        try:
            if cwd:
                os.chdir(cwd)
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                try:
                    rc = main(argv)
                except SystemExit as e:
                    rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
                except Exception as e:  # noqa: BLE001 (what the fuzz is after)
                    rc, error = None, where(e)
        finally:
            os.chdir(here)
            sys.__stdout__.flush()
            os.dup2(saved, 1)
            os.close(saved)
        fd_out.seek(0)
        text = out_b.getvalue().decode("utf-8") + fd_out.read().decode("utf-8", "replace")
    return Result(rc, err_b.getvalue().decode("utf-8").splitlines(), text, error)


def where(e):
    """The exception and the frames of parbench's code it passed through, the innermost last."""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if f.filename.startswith(ROOT) and not f.filename.startswith(HERE)]
    return "%s: %s\n%s" % (type(e).__name__, str(e)[:300], "".join(
        "    %s:%d %s: %s\n" % (os.path.relpath(f.filename, ROOT), f.lineno, f.name, f.line) for f in frames[-4:]))


def command(tool, argv, cwd=None):
    """The same through the tool's command (ci/TOOL or plots/plot)."""
    path = os.path.join(ROOT, "plots", "plot") if tool == "plot" else os.path.join(ROOT, "ci", tool)
    p = subprocess.run([path] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, timeout=600)
    return Result(p.returncode, p.stderr.decode("utf-8", "backslashreplace").splitlines(),
                  p.stdout.decode("utf-8", "replace"))


# ------------------------------------------------------ what a document holds

def text_of(data):
    """The text of a document's bytes as a lenient reader sees it, or None."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, ValueError):
            return None
    return data.decode("utf-8", "surrogatepass") if _utf8(data) else None


def _utf8(data):
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def strings_of(*datas):
    """Every JSON string in the documents (cut or not), joined: a name a tool
    prints must be in there."""
    found = []
    for data in datas:
        text = text_of(data) if isinstance(data, bytes) else data
        if text is None:
            continue
        for m in _STRING.finditer(text):
            try:
                found.append(json.loads(m.group(0)))
            except ValueError:
                pass
    return "\x00".join(found)


def strict(text):
    """text as strict JSON, or None."""
    try:
        return cli.strict_loads(text)
    except (ValueError, RecursionError):
        return None


def lenient(text):
    """text as JSON with NaN and Infinity (Google Benchmark writes them in counters), or None."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def disposition(e):
    """passed, unsupported or error, as README.md's schema defines it: parbench.disposition;
    before schema 1, Google Benchmark's skipped flag and error message."""
    pb = e.get("parbench")
    if isinstance(pb, dict) and "disposition" in pb:
        return {"passed": "passed", "unsupported": "unsupported"}.get(pb["disposition"], "error")
    if e.get("skipped") is True:
        return "unsupported"
    if e.get("error_occurred") is True:
        return "unsupported" if str(e.get("error_message", "")).startswith("unsupported: ") else "error"
    return "passed"


def whole(data, errors_allowed=True, strict_json=False):
    """Why the document is not a whole bench JSON file, or None (an
    independent reading of the contract: JSON (NaN and Infinity only where
    Google Benchmark writes them, in counters; none with strict_json, for
    what a tool writes), every string Unicode, an object with a context and a
    list of benchmarks, each an object with a string name, a repetition among
    them, every passed repetition a finite time > 0; errors_allowed=False:
    no error entry either)."""
    text = text_of(data)
    if text is None:
        return "not UTF-8 (or a broken gzip stream)"
    doc = (strict if strict_json else lenient)(text.lstrip("\ufeff"))
    if not isinstance(doc, dict) or not isinstance(doc.get("context"), dict) or \
            not isinstance(doc.get("benchmarks"), list):
        return "not JSON with a context and benchmarks"
    if re.search("[\ud800-\udfff]", json.dumps(doc, ensure_ascii=False)):
        return "a string with a lone surrogate"
    repetitions = 0
    for e in doc["benchmarks"]:
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            return "an entry without a name"
        error, skipped = disposition(e) == "error", disposition(e) == "unsupported"
        aggregate = e.get("run_type") == "aggregate" or e.get("aggregate_name")
        if error and not errors_allowed:
            return "an error entry"
        if aggregate:
            continue
        repetitions += 1
        if not error and not skipped:
            t = e.get("real_time")
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not t > 0 or not _is_finite(t):
                if errors_allowed and isinstance(t, (int, float)) and not isinstance(t, bool) and t <= 0:
                    continue  # a time of 0: a failed entry, not bad input
                return "a passed repetition without a finite time"
            if not errors_allowed and not t > 0:
                return "a repetition timed at 0"
    return None if repetitions else "no repetitions"


def _is_finite(v):
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


# ------------------------------------------------------------------ checks

# What may go before a refusal: a warning about the input, a notice of a
# repair already done (an index rebuilt from the archive), the progress of a
# long tool (a bisection's steps).
NOTICE = re.compile(r": warning: |: rebuilt from the archive \(|"
                    r"^bisect: (building |builds are cached in |\d+ commits after GOOD|step )")


def refusal(res, prefix):
    """Exit 2 (or 3) is one line "PREFIX: ...", after nothing but notices."""
    if not res.err or not res.err[-1].startswith(prefix + ": ") or \
            not all(NOTICE.search(line) for line in res.err[:-1]):
        raise Finding(BAD_EXIT, repr(res))


def clean(res, prefix, codes):
    """The checks of every run: no traceback, the exit status one of
    `codes`, every stderr line the tool's own."""
    if res.error is not None:
        raise Finding(TRACEBACK, res.error)
    if any("internal error" in line for line in res.err):
        raise Finding(TRACEBACK, repr(res))
    if res.rc not in codes:
        raise Finding(SILENT if res.rc in (0, 1) else BAD_EXIT, "exit %r not one of %s: %r" % (res.rc, codes, res))
    stray = [line for line in res.err if not line.startswith(prefix + ": ")]
    if stray:
        raise Finding(STRAY, repr(res))
    if res.rc in (2, 3):
        refusal(res, prefix)


def names_in(names, pool, what):
    missing = [n for n in names if not isinstance(n, str) or n not in pool]
    if missing:
        raise Finding(SILENT, "%s names %r, in no input" % (what, missing[:3]))


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return strict(f.read())
    except (OSError, UnicodeDecodeError):
        return None


# ------------------------------------------------------------------ the fuzz

class Fuzz(unittest.TestCase):
    """One tool per test: `cases` draws its input, `prepare` writes it into a
    fresh folder and returns the argument vector, `check` holds the contract
    on the Result."""
    counts = {}
    seconds = {}
    exits = {}
    findings = []
    tool = None
    prefix = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fuzz-")
        cls.seeds = Fuzz.shared_seeds()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    _seeds = None

    @staticmethod
    def shared_seeds():
        if Fuzz._seeds is None:
            Fuzz._seeds = fd.load_seeds()
        return Fuzz._seeds

    def main(self):
        raise NotImplementedError

    # ---- the findings' regression tests (unit tier): each a fixed document the fuzz once broke a tool with

    def refused(self, res, text):
        """Exit 2, one line "PREFIX: ..." that says `text` (after notices only)."""
        self.assertIsNone(res.error, res.error)
        self.assertEqual(res.rc, 2, res)
        refusal(res, self.prefix)
        self.assertIn(text, res.err[-1])

    def gb171(self, folder, change):
        """tests/data/gb171.json with change(doc) applied, as text, written to FOLDER/gb171.json."""
        doc = fd.read_json(os.path.join(fd.DATA, "gb171.json"))
        change(doc)
        path = os.path.join(folder, "gb171.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def folder(self):
        path = tempfile.mkdtemp(dir=self.tmp)
        self.addCleanup(shutil.rmtree, path, True)
        return path

    def fuzz(self, cases, prepare, check):
        """Runs the tier's share of cases through the tool's main, and a few
        spread over them through its command too; records every finding."""
        n = max(1, round(SHARE[self.tool][SLOW] * SCALE))
        every = max(1, n // SUBPROCESS[SLOW])
        tried, start = [0], time.monotonic()
        main = self.main()

        @settings(max_examples=n, deadline=None, database=None, phases=(Phase.generate,),
                  suppress_health_check=list(HealthCheck))
        @seed_of(SEED + zlib.crc32(self.tool.encode()))  # each tool its own cases
        @given(cases)
        def one(case):
            i = tried[0]
            tried[0] += 1
            folder = os.path.join(self.tmp, "%s-%d" % (self.tool, i))
            os.makedirs(folder)
            try:
                argv, ctx = prepare(case, folder)
                res = call(main, argv, cwd=folder)
                Fuzz.exits.setdefault(self.tool, {}).setdefault(res.rc, 0)
                Fuzz.exits[self.tool][res.rc] += 1
                try:
                    clean(res, self.prefix, self.codes)
                    check(case, folder, ctx, res)
                    if i % every == every // 2 and i // every < SUBPROCESS[SLOW]:
                        self.same_on_the_command_line(case, prepare, folder, res)
                except Finding as f:
                    Fuzz.findings.append((self.tool, f.kind, f.what, repr(case)))
            finally:
                shutil.rmtree(folder, ignore_errors=True)

        one()
        Fuzz.counts[self.tool] = Fuzz.counts.get(self.tool, 0) + tried[0]
        Fuzz.seconds[self.tool] = time.monotonic() - start
        self.assertGreaterEqual(tried[0], n * 0.9, "hypothesis ran fewer cases than asked")

    def same_on_the_command_line(self, case, prepare, folder, res):
        other = folder + "-cmd"
        os.makedirs(other)
        try:
            argv, _ = prepare(case, other)
            p = command(self.tool, argv, cwd=other)
            got = (p.rc, [line.replace(other, folder) for line in p.err])
            if got != (res.rc, res.err):
                raise Finding("command differs", "in process %r, command %r" % ((res.rc, res.err), got))
        finally:
            shutil.rmtree(other, ignore_errors=True)


def cases_of(seeds, kinds=("bench",), **kw):
    return fd.mutated(seeds, kinds=kinds, **kw)


class Compare(Fuzz):
    tool = prefix = "compare"
    codes = (0, 1, 2, 3)

    def main(self):
        from regress import compare
        return compare.main

    def test_compare(self):
        cases = st.fixed_dictionaries({
            "doc": cases_of(self.seeds), "noise": cases_of(self.seeds, kinds=("verdict",)),
            "shape": st.sampled_from(["new", "new", "base", "itself", "noise"]),
            "markdown": st.booleans()})

        def prepare(case, folder):
            m = case["doc"]
            original = os.path.join(folder, "seed.json")
            with open(original, "w") as f:
                f.write(m.seed.text)
            mutated = m.write(os.path.join(folder, "mutated"))
            files = {"new": [original, mutated], "base": [mutated, original], "itself": [mutated, mutated],
                     "noise": [original, original, "--noise", case["noise"].write(os.path.join(folder, "noise"))]}
            argv = files[case["shape"]] + ["--json", "v.json"] + (["--markdown", "r.md"] if case["markdown"] else [])
            return argv, None

        def check(case, folder, ctx, res):
            if res.rc not in (0, 1):
                return
            doc = load_json(os.path.join(folder, "v.json"))
            if not isinstance(doc, dict):
                raise Finding(SILENT, "exit %d without strict verdict JSON" % res.rc)
            if doc.get("exit") != res.rc:
                raise Finding(SILENT, "exit %d, the verdict JSON says %r" % (res.rc, doc.get("exit")))
            rows = doc["benchmarks"]
            names_in([r["name"] for r in rows], strings_of(case["doc"].data, case["doc"].seed.text.encode()),
                     "a verdict")
            # Measured on both sides: compared with statistics, or decided without them on values
            # both sides have (other work, another clock) or on NEW's error entry.
            if not any((r.get("n_base") or 0) > 0 and (r.get("n_new") or 0) > 0
                       or r["verdict"] in ("NOT_SAME_WORK", "UNRELIABLE", "ERROR") for r in rows):
                raise Finding(SILENT, "exit %d with nothing measured on both sides: %s" % (
                    res.rc, doc.get("summary_line")))
            if case["shape"] in ("itself", "noise"):
                moved = [r["name"] for r in rows if r["verdict"] in ("SLOWER", "FASTER")]
                if moved:
                    raise Finding(SILENT, "a file against itself: %s SLOWER or FASTER" % moved[:3])
            gating = [r for r in rows
                      if r["verdict"] == "ERROR" or (r["verdict"] == "SLOWER" and not r.get("same_code"))]
            if bool(gating) != (res.rc == 1):
                raise Finding(SILENT, "exit %d with %d ERROR or SLOWER rows" % (res.rc, len(gating)))

        self.fuzz(cases, prepare, check)

    def test_finding_noise_nested_too_deeply(self):
        """A --noise file nested 100,000 deep: RecursionError out of cli.strict_loads."""
        d = self.folder()
        noise = os.path.join(d, "noise.json")
        with open(noise, "w") as f:
            f.write("[" * 100000 + "]" * 100000)
        seed = os.path.join(fd.DATA, "gb171.json")
        self.refused(call(self.main(), [seed, seed, "--noise", noise]), "--noise %s: nested too deeply" % noise)

    def test_finding_a_control_character_in_a_name(self):
        """A malformed entry whose name holds a form feed: the refusal quoted it raw, two lines to splitlines()."""
        d = self.folder()
        bad = self.gb171(d, lambda doc: doc["benchmarks"][10].update(name="Sort\x0cStd", run_name="Sort\x0cStd"))
        res = call(self.main(), [os.path.join(fd.DATA, "gb171.json"), bad])
        self.refused(res, "(entry 10 'Sort\\x0cStd')")


class Table(Fuzz):
    tool = prefix = "table"
    codes = (0, 2)

    def main(self):
        from plots import table
        return table.main

    def test_table(self):
        opts = st.lists(st.sampled_from([["--counter", "GFLOPS"], ["--counter", "\u540d"], ["--filter", "OMP"],
                                         ["--filter", "("], ["--ratio-to", "Seq"], ["--ratio-to", "OpenBLAS"]]),
                        max_size=2)
        cases = st.tuples(cases_of(self.seeds), opts)

        def prepare(case, folder):
            return [case[0].write(os.path.join(folder, "doc"))] + [a for o in case[1] for a in o], None

        def check(case, folder, ctx, res):
            if res.rc != 0:
                return
            why = whole(case[0].data)
            if why:
                raise Finding(SILENT, "a table of a file with %s" % why)
            pool = strings_of(case[0].data)
            rows = res.out.splitlines()[1:]
            names_in([r.split()[0] for r in rows if r.strip() and not r.startswith("ERROR ")], pool, "the table")
            for r in rows:
                if re.search(r"\b(nan|inf)\b", r) and not r.startswith("ERROR "):
                    raise Finding(SILENT, "a row without a finite number: %r" % r)

        self.fuzz(cases, prepare, check)

    def test_finding_an_integer_too_large_for_a_float(self):
        """A counter of 10**400 (JSON has no limit): OverflowError in the loader's finiteness test."""
        d = self.folder()
        res = call(self.main(), [self.gb171(d, lambda doc: doc["benchmarks"][0].update(GFLOPS=10 ** 400))])
        self.assertEqual((res.rc, res.err, res.error), (0, [], None))
        res = call(self.main(), [self.gb171(d, lambda doc: doc["benchmarks"][0].update(real_time=10 ** 400))])
        self.refused(res, "malformed entry: 'real_time' is not finite (entry 0")


class CheckRun(Fuzz):
    tool = prefix = "check-run"
    codes = (0, 1, 2)

    def main(self):
        from regress import check_run
        return check_run.main

    def test_check_run(self):
        opts = st.lists(st.sampled_from([["--allow-warnings"], ["--no-skips"], ["--context", "num_cpus"],
                                         ["--context", "host_name=\u540d"], ["--require", "GEMM/OMP"]]), max_size=2)
        cases = st.tuples(cases_of(self.seeds), opts)

        def prepare(case, folder):
            return [case[0].write(os.path.join(folder, "doc"))] + [a for o in case[1] for a in o], None

        def check(case, folder, ctx, res):
            if res.rc == 0 and ["--allow-warnings"] not in case[1]:
                why = whole(case[0].data, errors_allowed=False)
                if why:
                    raise Finding(SILENT, "check-run passed a file with %s" % why)

        self.fuzz(cases, prepare, check)

    def test_finding_a_lone_surrogate(self):
        """A context value "\\ud800" (half a UTF-16 pair, valid JSON): check-run printed it and died encoding it;
        the history hashed it and died. The loader refuses such a file as it refuses one that is not UTF-8."""
        d = self.folder()
        path = self.gb171(d, lambda doc: doc["context"].update(host_name="\ud800"))
        res = call(self.main(), [path, "--context", "host_name=h"])
        self.refused(res, "%s: not Unicode text: the string '\\ud800' holds a lone surrogate" % path)
        from regress import history
        res = call(history.main, ["--history", os.path.join(d, "h"), "ingest", path])
        self.assertEqual((res.rc, len(res.err), res.error), (2, 1, None), res)
        self.assertIn("not Unicode text", res.err[0])


class CloseTruncated(Fuzz):
    tool = prefix = "close-truncated"
    codes = (0, 2)

    def main(self):
        from regress import close_truncated
        return close_truncated.main

    def test_close_truncated(self):
        def prepare(case, folder):
            return [case.write(os.path.join(folder, "doc")), "closed.json"], None

        def check(case, folder, ctx, res):
            if res.rc != 0:
                return
            with open(os.path.join(folder, "closed.json"), "rb") as f:
                data = f.read()
            why = whole(data, strict_json=True)
            if why:
                raise Finding(SILENT, "close-truncated wrote a file with %s" % why)
            doc = json.loads(data)
            names_in([e["name"] for e in doc["benchmarks"]], strings_of(case.data), "the closed copy")

        self.fuzz(cases_of(self.seeds), prepare, check)


class Upgrade(Fuzz):
    tool = "upgrade-json"
    prefix = "upgrade_json"
    codes = (0, 1, 2)

    def main(self):
        from regress import upgrade
        return upgrade.main

    def test_upgrade_json(self):
        cases = st.tuples(cases_of(self.seeds), st.booleans())

        def prepare(case, folder):
            path = case[0].write(os.path.join(folder, "doc"))
            return (["--check", path] if case[1] else ["--out", "up.json", path]), None

        def check(case, folder, ctx, res):
            if res.rc == 2:
                return
            why = whole(case[0].data)
            if why:
                raise Finding(SILENT, "upgrade-json exit %d on a file with %s" % (res.rc, why))
            if not case[1]:
                with open(os.path.join(folder, "up.json"), "rb") as f:
                    why = whole(f.read(), strict_json=True)
                if why:
                    raise Finding(SILENT, "upgrade-json wrote a file with %s" % why)

        self.fuzz(cases, prepare, check)


class Plot(Fuzz):
    tool = prefix = "plot"
    codes = (0, 2)

    def main(self):
        from plots import report
        return report.main

    def test_plot(self):
        def prepare(case, folder):
            return [case.write(os.path.join(folder, "doc")), "--out", "report"], None

        def check(case, folder, ctx, res):
            if res.rc != 0:
                return
            why = whole(case.data)
            if why:
                raise Finding(SILENT, "a report of a file with %s" % why)
            if not os.path.isfile(os.path.join(folder, "report", "report.md")):
                raise Finding(SILENT, "exit 0 without report.md")

        self.fuzz(cases_of(self.seeds), prepare, check)

    def test_finding_a_counter_unit_that_is_not_text(self):
        """context parbench_counters with a "better" nested in lists: TypeError joining the report's list of
        declared counters. A declaration whose unit or better is not text is ignored, with the warning of
        one without a kind."""
        d = self.folder()
        path = self.gb171(d, lambda doc: doc["context"]["parbench_counters"]["GFLOPS"].update(better=[["higher"]]))
        res = call(self.main(), [path, "--out", os.path.join(d, "report"), "--chart", "speedup"])
        self.assertEqual((res.rc, res.error), (0, None), res)
        self.assertEqual(res.err, ["plot: %s: warning: context parbench_counters: 1 counters without a kind (or with "
                                   "a unit or better that is not text) ignored; first: 'GFLOPS'" % path])

    def test_finding_a_time_that_underflows(self):
        """A real_time of 5e-324 (the smallest float) in ns: 0.0 once in seconds, and the speedup chart's
        worker died on it (ValueError out of derived.speedup; the fuzz's seed 649604). Such an entry has no
        time; the charts leave it out."""
        d = self.folder()
        with gzip.open(os.path.join(ROOT, "results", "reference", "nvidia-h200", "mpi-grid.json.gz"), "rt") as f:
            doc = json.load(f)
        doc["benchmarks"][10]["real_time"] = 5e-324   # an MPI k-means entry, in ms
        path = os.path.join(d, "mpi-grid.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        res = call(self.main(), [path, "--out", os.path.join(d, "report")])
        self.assertEqual((res.rc, res.error), (0, None), res)
        self.assertEqual(res.err, [])


# ------------------------------------------------------------ the history

class Store(Fuzz):
    """A stepped nightly history (tests/test_trends.py: 12 runs, one confirmed
    regression r6..r7), its alerts raised by ci/trends, made once for every
    class of the history; each case works on a copy."""
    _made = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if Store._made is None:
            import atexit
            import numpy as np
            folder = tempfile.mkdtemp(prefix="fuzz-history-")
            atexit.register(shutil.rmtree, folder, True)
            hist = os.path.join(folder, "hist")
            tt.build_history(hist, tt.nightly(np.random.default_rng(15)), folder)
            from regress import trends
            res = call(trends.main, ["--history", hist, "--out", os.path.join(folder, "page")])
            assert res.rc == 1, res
            Store._made = hist
        cls.hist = Store._made
        cls.names = set(tt.BENCHMARKS)

    def copy(self, folder):
        h = os.path.join(folder, "hist")
        shutil.copytree(self.hist, h)
        return h


def mangle(data, cuts):
    """data cut, or a few bytes overwritten: cuts is (kind, where, junk)."""
    kind, at, junk = cuts
    at = at % (len(data) + 1)
    if kind == "cut":
        return data[:at]
    return data[:at] + junk + data[at + len(junk):]


MANGLE = st.tuples(st.sampled_from(["cut", "overwrite"]), st.integers(0, 1 << 20), st.binary(min_size=1, max_size=64))


class History(Store):
    tool = prefix = "history"
    codes = (0, 2)

    def main(self):
        from regress import history
        return history.main

    def test_history(self):
        cases = st.tuples(cases_of(self.seeds), st.one_of(st.none(), MANGLE))

        def prepare(case, folder):
            h = self.copy(folder)
            if case[1] is not None:  # the index mangled: an ingest or a listing reads it
                index = os.path.join(h, "index.sqlite")
                with open(index, "rb") as f:
                    data = f.read()
                with open(index, "wb") as f:
                    f.write(mangle(data, case[1]))
            return ["--history", h, "ingest", case[0].write(os.path.join(folder, "doc"))], h

        def check(case, folder, h, res):
            from regress import history
            if res.rc == 0:
                why = whole(case[0].data)
                if why:
                    raise Finding(SILENT, "the history ingested a file with %s" % why)
            pool = strings_of(case[0].data) + "\x00" + "\x00".join(self.names)
            for argv in (["list"], ["machines"], ["export", "bmf"]):
                more = call(history.main, ["--history", h] + argv, cwd=folder)
                clean(more, self.prefix, self.codes)
                if argv[0] == "export" and more.rc == 0:
                    doc = strict(more.out)
                    if not isinstance(doc, dict):
                        raise Finding(SILENT, "export bmf printed no strict JSON")
                    names_in(list(doc), pool, "the export")
            doc = strict(text_of(case[0].data) or "")
            first = doc["benchmarks"][0].get("name") if isinstance(doc, dict) and isinstance(
                doc.get("benchmarks"), list) and doc["benchmarks"] and isinstance(doc["benchmarks"][0], dict) else None
            if isinstance(first, str) and res.rc == 0:
                more = call(history.main, ["--history", h, "series", first], cwd=folder)
                clean(more, self.prefix, self.codes)

        self.fuzz(cases, prepare, check)

    def damaged(self, sql):
        """A copy of the history whose index ran `sql`: a page damaged in place."""
        import sqlite3
        h = self.copy(self.folder())
        con = sqlite3.connect(os.path.join(h, "index.sqlite"))
        con.execute(sql)
        con.commit()
        con.close()
        return h

    def test_finding_index_text_that_is_not_utf8(self):
        """A machine id whose bytes are not UTF-8: sqlite3's OperationalError was not seen as corruption."""
        h = self.damaged("UPDATE runs SET machine = CAST(X'929e6cadff' AS TEXT) WHERE id = 1")
        res = call(self.main(), ["--history", h, "machines"])
        self.assertEqual((res.rc, res.error), (0, None), res)
        self.assertRegex(res.err[0], r"^history: index .* is corrupt \(Could not decode to UTF-8.*: rebuilt from")

    def test_finding_index_text_quoted_with_a_control_character(self):
        """The rebuild's notice quoted sqlite3's error, which quotes the damaged bytes: a form feed among them
        made the one line two."""
        h = self.damaged("UPDATE runs SET context = CAST(X'7b0c22ff' AS TEXT) WHERE id = 1")
        res = call(self.main(), ["--history", h, "list"])
        self.assertEqual((res.rc, res.error, len(res.err)), (0, None, 1), res)
        self.assertIn("with text '{\\x0c\"", res.err[0])

    def test_finding_index_schema_with_bytes_that_are_not_utf8(self):
        """A table's CREATE statement overwritten with "#\\xc4y": sqlite3's own error quotes the bytes, and
        building its message raised UnicodeDecodeError, which the index check did not count as damage."""
        h = self.copy(self.folder())
        index = os.path.join(h, "index.sqlite")
        with open(index, "rb") as f:
            data = f.read()
        at = data.index(b"revision TEXT")
        with open(index, "wb") as f:
            f.write(data[:at] + b"#\xc4y" + data[at + 3:])
        res = call(self.main(), ["--history", h, "list"])
        self.assertEqual((res.rc, res.error, len(res.err)), (0, None, 1), res)
        self.assertIn("is corrupt ('utf-8' codec can't decode byte 0xc4", res.err[0])

    def test_finding_a_line_break_in_a_name(self):
        """An entry named "...\\n_cv/real_time" was ingested, and ci/history series quoted it in a refusal of
        two lines. A run name with a control character is malformed now; a name given is quoted escaped."""
        d = self.folder()
        path = self.gb171(d, lambda doc: doc["benchmarks"][0].update(name="\n_cv/real_time"))
        self.refused(call(self.main(), ["--history", os.path.join(d, "h"), "ingest", path]),
                     "malformed entry: 'name' '\\n_cv/real_time' holds a control character (entry 0 "
                     "'\\n_cv/real_time')")
        path = self.gb171(d, lambda doc: doc["benchmarks"][0].update(run_name="GEMM/Naive\x85"))
        self.refused(call(self.main(), ["--history", os.path.join(d, "h"), "ingest", path]),
                     "malformed entry: run name 'GEMM/Naive\\x85' holds a control character (entry 0")
        self.refused(call(self.main(), ["--history", self.hist, "series", "Sort/Std\nx"]),
                     "no benchmark Sort/Std\\nx in the history")

    def test_finding_index_json_that_does_not_parse(self):
        """A stored context that is not JSON: JSONDecodeError out of History.runs()."""
        h = self.damaged("UPDATE runs SET context = '{\"x\": ' WHERE id = 1")
        res = call(self.main(), ["--history", h, "list"])
        self.assertEqual((res.rc, res.error), (0, None), res)
        self.assertIn("is corrupt (Expecting value", res.err[0])
        self.assertIn("r12", res.out)

    def test_finding_an_argument_that_is_not_utf8(self):
        """series $'\\xff' (a byte that is not UTF-8; Python reads it as "\\udcff"): UnicodeEncodeError from sqlite3."""
        res = call(self.main(), ["--history", self.hist, "series", "\udcff"])
        self.refused(res, "argument NAME: '\\udcff' is not UTF-8 text")


class Alerts(Store):
    tool = prefix = "alerts"
    codes = (0, 2)

    def main(self):
        from regress import alerts
        return alerts.main

    def test_alerts(self):
        # "\udcff": a byte that is not UTF-8 in an argument (Python's surrogate escape)
        texts = st.one_of(st.sampled_from(["", "\u540d", "\udcff", "-1", "x" * 300]), ARGV_TEXT)
        ids = st.one_of(st.sampled_from(["1", "0", "-1", "99", str(2 ** 63), str(10 ** 30), "1.5", "x", "\u0661"]),
                        st.integers().map(str))
        argv = st.one_of(
            st.tuples(st.just("list"), st.lists(st.sampled_from(["--all", "--json"]), max_size=2),
                      st.one_of(st.none(), texts)).map(
                lambda t: ["list"] + t[1] + (["--machine", t[2]] if t[2] is not None else [])),
            st.tuples(ids, st.booleans()).map(lambda t: ["show", t[0]] + (["--json"] if t[1] else [])),
            st.tuples(ids, st.sampled_from(["acknowledged", "invalid", "wontfix", "untriaged", "bogus"]),
                      texts, texts).map(lambda t: ["triage", t[0], t[1], "--why", t[2], "--who", t[3]]))
        cases = st.tuples(argv, st.one_of(st.none(), MANGLE), st.one_of(st.none(), cases_of(self.seeds)))

        def prepare(case, folder):
            h = self.copy(folder)
            if case[1] is not None:
                db = os.path.join(h, "alerts.sqlite")
                with open(db, "rb") as f:
                    data = f.read()
                with open(db, "wb") as f:
                    f.write(mangle(data, case[1]))
            if case[2] is not None:  # another tool's file given as the history
                h = case[2].write(os.path.join(folder, "doc"))
            return ["--history", h] + case[0], None

        def check(case, folder, ctx, res):
            if res.rc == 0 and "--json" in case[0]:
                if strict(res.out) is None:
                    raise Finding(SILENT, "--json printed no strict JSON: %r" % res.out[:200])

        self.fuzz(cases, prepare, check)

    def test_finding_an_argument_that_is_not_utf8(self):
        """list --machine $'\\xff', triage --why $'\\xff': UnicodeEncodeError from sqlite3."""
        h = self.copy(self.folder())
        self.refused(call(self.main(), ["--history", h, "list", "--machine", "\udcff"]),
                     "argument --machine: '\\udcff' is not UTF-8 text")
        self.refused(call(self.main(), ["--history", h, "triage", "1", "wontfix", "--why", "\udcff"]),
                     "argument --why: '\\udcff' is not UTF-8 text")
        self.assertEqual(call(self.main(), ["--history", h, "show", "1", "--json"]).out,
                         call(self.main(), ["--history", self.hist, "show", "1", "--json"]).out)

    def test_finding_a_damaged_text_in_the_alerts(self):
        """A triage reason whose bytes are no longer UTF-8 (a page of alerts.sqlite overwritten): sqlite3's
        OperationalError out of a read. The alerts are kept nowhere else: one line, exit 2."""
        import sqlite3
        h = self.copy(self.folder())
        con = sqlite3.connect(os.path.join(h, "alerts.sqlite"))
        con.execute("UPDATE events SET why = CAST(X'630cff' AS TEXT)")
        con.commit()
        con.close()
        self.refused(call(self.main(), ["--history", h, "show", "1"]),
                     "alerts.sqlite: Could not decode to UTF-8 column 'why' with text 'c\\x0c")

    def test_finding_an_alert_number_too_large(self):
        """show 9223372036854775808: OverflowError binding it to an SQLite integer."""
        self.refused(call(self.main(), ["--history", self.hist, "show", str(2 ** 63)]),
                     "argument id: 9223372036854775808 is not an alert's number")


class Trends(Store):
    tool = prefix = "trends"
    codes = (0, 1, 2)

    def main(self):
        from regress import trends
        return trends.main

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        report = fd.read_json(os.path.join(ROOT, "results", "reference", "dev-2core", "bisect-omp-placement.json.gz"))
        report.update(good="r6", bad="r7")
        report["culprits"][0]["benchmarks"] = [tt.STEPPED]
        ledger = {"date": "2026-11-05T02:00:00+00:00", "machine": None, "revision": "r5", "compared": 4,
                  "false_alarms": 0, "counts": {"SAME": 4}}
        cls.extra = [fd.Seed("a bisection report of r6..r7", report), fd.Seed("an A/A ledger line", ledger)]

    def test_trends(self):
        opts = st.lists(st.sampled_from([["--all"], ["--confirm", "1"], ["--floor", "gpu=1"], ["--metric", "GFLOPS"],
                                         ["--accepted-through", "2026-11-30"], ["--accepted-through", "\u540d"]]),
                        max_size=2)
        cases = st.tuples(cases_of(self.seeds), cases_of(self.extra, kinds=("bisect",), others=self.seeds),
                          cases_of(self.extra, kinds=("other",), others=self.seeds), opts)

        def prepare(case, folder):
            h = self.copy(folder)
            from regress.store import history
            with history.History(h, log=lambda line: None) as store:
                try:
                    store.ingest(case[0].write(os.path.join(folder, "doc")))
                except Exception:  # noqa: BLE001 (refused, or a finding of History's own fuzz)
                    pass
            os.makedirs(os.path.join(h, "bisect", "r6..r7"))
            case[1].write(os.path.join(h, "bisect", "r6..r7", "report"))
            with open(os.path.join(h, "aa-ledger.jsonl"), "wb") as f:
                f.write(case[2].data.replace(b"\n", b" ") + b"\n")
            return ["--history", h, "--out", "page"] + [a for o in case[3] for a in o], h

        def check(case, folder, h, res):
            if res.rc == 2:
                return
            doc = load_json(os.path.join(folder, "page", "changes.json"))
            if not isinstance(doc, dict):
                raise Finding(SILENT, "exit %d without changes.json" % res.rc)
            if doc["summary"]["fails_nightly"] != (res.rc == 1):
                raise Finding(SILENT, "exit %d, changes.json fails_nightly %r"
                              % (res.rc, doc["summary"]["fails_nightly"]))
            names_in([c["name"] for c in doc["changes"]], strings_of(case[0].data) + "\x00" + "\x00".join(self.names),
                     "changes.json")

        self.fuzz(cases, prepare, check)

    def test_finding_a_bisection_report_nested_too_deeply(self):
        """HIST/bisect/RANGE/report.json nested 100,000 deep: RecursionError out of attach_culprits. A
        report that cannot be read names no culprit; the trends are the same."""
        h = self.copy(self.folder())
        os.makedirs(os.path.join(h, "bisect", "r6..r7"))
        with open(os.path.join(h, "bisect", "r6..r7", "report.json"), "w") as f:
            f.write("[" * 100000 + "]" * 100000)
        res = call(self.main(), ["--history", h, "--out", os.path.join(h, "page")])
        self.assertEqual((res.rc, res.err, res.error), (1, [], None), res)

    def test_finding_a_bisection_report_that_is_null(self):
        """report.json holding null: AttributeError, the culprits read before the range that would refuse it."""
        from regress.store import trends
        h = self.folder()
        os.makedirs(os.path.join(h, "bisect", "r6..r7"))
        with open(os.path.join(h, "bisect", "r6..r7", "report.json"), "w") as f:
            f.write("null")
        change = {"name": tt.STEPPED, "revision_before": "r6", "revision_after": "r7"}
        trends.attach_culprits([change], h)
        self.assertIsNone(change["culprit"])

    def test_finding_aa_ledger_lines_it_cannot_read(self):
        """aa-ledger.jsonl lines nested 100,000 deep (RecursionError), counting 1e400 false alarms
        (OverflowError), dated 5 (a TypeError sorting the nights): each an unreadable line, counted."""
        from regress.store import trends
        h = self.folder()
        good = {"date": "2026-11-05T02:00:00+00:00", "machine": "m", "revision": "r5", "compared": 4,
                "false_alarms": 1, "counts": {"SAME": 3, "SLOWER": 1}}
        with open(os.path.join(h, "aa-ledger.jsonl"), "w") as f:
            for line in ("[" * 100000 + "]" * 100000, json.dumps(dict(good, false_alarms=1e400)),
                         json.dumps(dict(good, date=5)), json.dumps(good)):
                f.write(line + "\n")
        nights, totals = trends.read_aa_ledger(h, "m")
        self.assertEqual((len(nights), totals["unreadable"], totals["false_alarms"]), (1, 3, 1))

    def test_finding_culprits_that_are_not_objects(self):
        """A report whose culprits are a number and an object without a commit: AttributeError (k.get) in
        attach_culprits; one with a subject of another type went on to the alerts and the page."""
        from regress.store import trends
        h = self.folder()
        os.makedirs(os.path.join(h, "bisect", "r6..r7"))
        good = {"commit": "c0ffee", "benchmarks": [tt.STEPPED], "subject": ["not", "text"], "chance_wrong": "x"}
        with open(os.path.join(h, "bisect", "r6..r7", "report.json"), "w") as f:
            json.dump({"good": "r6", "bad": "r7", "culprits": [5, {"benchmarks": [tt.STEPPED]}, good]}, f)
        change = {"name": tt.STEPPED, "revision_before": "r6", "revision_after": "r7"}
        trends.attach_culprits([change], h)
        self.assertEqual((change["culprit"]["commit"], change["culprit"]["subject"],
                          change["culprit"]["chance_wrong"]), ("c0ffee", None, None))


# ------------------------------------------------------------- the bisection

class Bisect(Fuzz):
    """A finished bisection of a two-commit repository (no build needed: its
    state holds both builds, the benchmarks and the ends' verdicts) resumed
    with one of its files mutated, or started again with GOOD BAD on it, and
    --max-seconds 0, so a state that asks for a build stops (exit 4) before
    it runs one."""
    tool = prefix = "bisect"
    codes = (0, 2, 4)
    MOVED, STILL = "Fake/A/manual_time", "Fake/B/manual_time"

    def main(self):
        from regress import bisect
        return bisect.main

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        from regress.run import bisect, rounds
        repo = os.path.join(cls.tmp, "repo")
        os.makedirs(repo)
        for args in (["init", "-q"], ["config", "user.email", "t@example.org"], ["config", "user.name", "T"],
                     ["commit", "-q", "--allow-empty", "-m", "good"], ["commit", "-q", "--allow-empty", "-m", "bad"]):
            subprocess.run(["git", "-C", repo] + args, check=True)
        good, bad = [bisect.resolve(repo, r) for r in ("HEAD~1", "HEAD")]
        cls.state = os.path.join(cls.tmp, "state")
        ns = argparse.Namespace(good=good, bad=bad, repo=repo, all_parents=False, max_rounds=8, build="false",
                                bench="out/bench", cache=os.path.join(cls.tmp, "cache"), state=cls.state,
                                resume=False)
        params = bisect.state_params(ns, ["--benchmark_min_time=0.01s"])
        cls.again = [good, bad, "--repo", repo, "--build", "false", "--bench", "out/bench", "--cache", ns.cache,
                     "--max-rounds", "8"]
        verdict = fd.read_json(os.path.join(ROOT, "results", "reference", "dev-2core", "compare-paired-aa.json.gz"))
        rows = verdict["benchmarks"][:2]
        rows[0].update(name=cls.MOVED, verdict="SLOWER", change=0.3)
        rows[1].update(name=cls.STILL, verdict="SAME")
        verdict["benchmarks"] = rows
        files = {"state.json": params, "builds.json": {sha: {"ok": True, "seconds": 1.0} for sha in (good, bad)},
                 "benchmarks.json": [cls.MOVED, cls.STILL],
                 os.path.relpath(rounds.rounds_file(cls.state, good, bad), cls.state): verdict}
        cls.files = []
        for name, doc in files.items():
            os.makedirs(os.path.dirname(os.path.join(cls.state, name)), exist_ok=True)
            with open(os.path.join(cls.state, name), "w") as f:
                json.dump(doc, f, indent=1)
            s = fd.Seed(name, doc)
            s.kind = name
            cls.files.append(s)
        cls.commits = {good, bad}
        from regress import bisect as tool
        res = call(tool.main, ["--resume", "--state", cls.state, "--out", os.path.join(cls.tmp, "report"),
                               "--max-seconds", "0", "--no-evidence"])
        assert res.rc == 0 and "culprit: %s" % bad[:12] in res.out, res

    def test_bisect_state(self):
        kinds = [s.kind for s in self.files]
        cases = st.tuples(st.one_of(*[cases_of(self.files, kinds=(k,), others=self.seeds) for k in kinds]),
                          st.sampled_from(["--resume"] * 3 + ["again"]))

        def prepare(case, folder):
            m, how = case
            state = os.path.join(folder, "state")
            shutil.copytree(self.state, state)
            with open(os.path.join(state, m.seed.name), "wb") as f:
                f.write(m.data)  # the name the state reads, whatever the compression
            start = ["--resume"] if how == "--resume" else self.again
            return start + ["--state", state, "--out", "report", "--max-seconds", "0", "--no-evidence", "--",
                            "--benchmark_min_time=0.01s"], None

        def check(case, folder, ctx, res):
            if res.rc != 0:
                return
            doc = load_json(os.path.join(folder, "report", "report.json"))
            if not isinstance(doc, dict):
                raise Finding(SILENT, "exit 0 without report.json")
            named = {c["commit"] for c in doc.get("culprits", [])}
            if not named <= self.commits:
                raise Finding(SILENT, "culprits %s are not commits of the range" % sorted(named - self.commits))
            names_in([n for c in doc.get("culprits", []) for n in c["benchmarks"]],
                     "\x00".join([self.MOVED, self.STILL]) + "\x00" + strings_of(case[0].data), "the report")

        self.fuzz(cases, prepare, check)

    def resume(self, name=None, text=None, again=False):
        """(Result, state folder, run folder) of the bisection resumed (again: started again with
        GOOD BAD) from a copy of its state, with the file `name` holding `text` (a JSON value, or str)."""
        d = self.folder()
        state = os.path.join(d, "state")
        shutil.copytree(self.state, state)
        if name:
            with open(os.path.join(state, name), "w") as f:
                f.write(text if isinstance(text, str) else json.dumps(text))
        start = self.again if again else ["--resume"]
        return call(self.main(), start + ["--state", state, "--out", "report", "--max-seconds", "0", "--no-evidence",
                                          "--", "--benchmark_min_time=0.01s"], cwd=d), state, d

    def test_finding_a_state_carried_to_another_folder(self):
        """--resume read and wrote the folder the state was first written in (its own "state" key), not the
        --state it was given: a state carried to another machine went on elsewhere, or nowhere."""
        res, state, d = self.resume()
        self.assertEqual((res.rc, res.error), (0, None), res)
        with open(os.path.join(state, "state.json")) as f:
            self.assertEqual(json.load(f)["state"], self.state)  # as written; the copy is what ran
        verdicts = [n for n in self.files if n.name.startswith("rounds")][0].name
        res, state, d = self.resume(verdicts, "{")
        self.refused(res, "%s: not the comparator's verdicts" % os.path.join(state, verdicts))

    def test_finding_a_state_of_wrong_types(self):
        """state.json with "commits": 5, nested 100,000 deep, a repo "\\ud800": TypeError, RecursionError and
        UnicodeEncodeError out of the search."""
        with open(os.path.join(self.state, "state.json")) as f:
            params = json.load(f)
        res, state, _ = self.resume("state.json", dict(params, commits=5))
        self.refused(res, "%s holds no bisection this version can go on with: 'commits' is not a list"
                     % os.path.join(state, "state.json"))
        res, state, _ = self.resume("state.json", "[" * 100000 + "]" * 100000)
        self.refused(res, "state.json cannot be read (nested too deeply)")
        res, state, _ = self.resume("state.json", json.dumps(dict(params, repo="\ud800")))
        self.refused(res, "state.json cannot be read (the string '\\ud800' holds a lone surrogate)")
        res, state, _ = self.resume("state.json", dict(params, bench_args=["--benchmark_filter=\x00"]))
        self.refused(res, "'bench_args' is not a list of strings")

    def test_finding_an_unreadable_state_started_again(self):
        """GOOD BAD on a state whose state.json is a list: AttributeError comparing its parameters."""
        res, _, _ = self.resume("state.json", [], again=True)
        self.refused(res, "holds another bisection")

    def test_finding_build_records_that_are_not_numbers(self):
        """builds.json with "seconds" a list or 10**400: TypeError and OverflowError writing report.md. A
        record it cannot read is no record: the commits compared are known to build."""
        with open(os.path.join(self.state, "builds.json")) as f:
            builds = json.load(f)
        for bad in ([None], 10 ** 400, "1"):
            res, _, d = self.resume("builds.json", {sha: dict(meta, seconds=bad) for sha, meta in builds.items()})
            self.assertEqual((res.rc, res.error), (0, None), res)
            with open(os.path.join(d, "report", "report.md")) as f:
                self.assertIn("0 commits built", f.read())

    def test_finding_verdicts_cut_off(self):
        """A comparison's verdicts cut off (rounds/A-B.json), or a verdict "\\ud800": JSONDecodeError out of
        the search, UnicodeEncodeError writing report.md."""
        name = [n for n in self.files if n.name.startswith("rounds")][0]
        res, state, _ = self.resume(name.name, name.text[:1536])
        self.refused(res, "%s: not the comparator's verdicts (Expecting" % os.path.join(state, name.name))
        doc = json.loads(name.text)
        doc["benchmarks"][0]["verdict"] = "\ud800"
        res, state, _ = self.resume(name.name, json.dumps(doc))
        self.refused(res, "not the comparator's verdicts (the string '\\ud800' holds a lone surrogate)")


# ---------------------------------------------------------- bench's parser

# Text an argument can hold: any character but NUL, a lone surrogate only as
# Python reads a byte that is not UTF-8.
ARGV_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
BENCH_FLAGS = ["--profile=", "--threads=", "--block=", "--scaling=", "--seed=", "--gemm-op=", "--gemm-type=",
               "--gemm-shapes=", "--gemm-tile=", "--gemm-simd=", "--kmeans-shapes=", "--kmeans-dist=",
               "--kmeans-type=", "--kmeans-loops=", "--kmeans-exit=", "--kmeans-gpus=", "--sort-elements=",
               "--sort-length=", "--sort-key=", "--sort-order=", "--sort-dist=", "--sort-payload=", "--sor-field=",
               "--sor-grids=", "--sor-sweeps=", "--sor-omega=", "--sor-steps=", "--sor-blocks=", "--sor-gpus=",
               "--mlp-type=", "--mlp-widths=", "--mlp-act=", "--mlp-batch=", "--scan-type=", "--scan-elements=",
               "--scan-segment="]
BENCH_SWITCHES = ["--oversubscribe", "--flush-l2", "--gpu-idle-start", "--show-unsupported", "--hide-unsupported",
                  "--no-progress", "--allow-errors", "--no-energy", "--list-devices"]
GB_FLAGS = ["--benchmark_filter=", "--benchmark_min_time=", "--benchmark_min_warmup_time=",
            "--benchmark_repetitions=", "--benchmark_enable_random_interleaving=",
            "--benchmark_report_aggregates_only=", "--benchmark_display_aggregates_only=", "--benchmark_format=",
            "--benchmark_out_format=", "--benchmark_color=", "--benchmark_counters_tabular=",
            "--benchmark_context=", "--benchmark_time_unit=", "--v="]
VALUES = ["", "smoke", "default", "full", "1", "2", "0", "-1", "1,2", "cores", "all", "2^10", "2^99", "1e400",
          "NaN", "nan", "inf", "f32", "u32", "AB", "64x64x64", "1000x4x8", "0x0x0", "99999999999999999999",
          "-0", "0.5", "2.0", "1.5s", "x", "\u540d", ",", ",,", "1,", "true", "false", "json", "xml", "csv", "console",
          "ns", "us", "ms", "s", "h", "strong", "weak", "a=b", "=", "^GEMM/OMP", "(", "*", "avx512", "32x8",
          "784-32-10", "uniform", "none", "7", "asc"]
ARG = st.one_of(
    st.tuples(st.sampled_from(BENCH_FLAGS + GB_FLAGS), st.one_of(st.sampled_from(VALUES), ARGV_TEXT)).map(
        "".join),
    st.sampled_from(BENCH_SWITCHES + ["--", "-", "--help=1", "--nope", "--profile", "--benchmark_list_tests=false",
                                      "positional", "--threads", "", "\udcff"]),
    ARGV_TEXT)


class BenchArgs(unittest.TestCase):
    """bench's command line (random arguments, --benchmark_list_tests added):
    exit 0 with a listing, or exit 2 with one line on stderr. A Google
    Benchmark flag with a value it rejects may still (a bench from before it
    checked them) exit 0 or print Google Benchmark's own words: each such
    case is counted and printed, not failed."""

    def test_bench_arguments(self):
        if not BENCH or not os.access(BENCH, os.X_OK):
            self.skipTest("no bench binary given (--bench PATH)")
        lines = []

        @settings(max_examples=BENCH_RUNS[SLOW], deadline=None, database=None, phases=(Phase.generate,),
                  suppress_health_check=list(HealthCheck))
        @seed_of(SEED + 99)
        @given(st.lists(ARG, max_size=4))
        def draw(args):
            # A NUL or a lone surrogate is no argument a process can be given; --help and
            # --list-devices answer before --benchmark_list_tests.
            lines.append([a for a in args if "\x00" not in a and not any("\ud800" <= c <= "\udfff" for c in a)
                          and a != "--list-devices" and not a.startswith("--help")])

        draw()
        # bench's start is most of a listing's time, and mostly waiting: four at once.
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            done = list(pool.map(self.list_tests, lines))
        findings = [d[1:] for d in done if d[0] == "finding"]
        print("\nfuzz: bench: %d command lines, %d findings" % (len(done), len(findings)))
        Fuzz.counts["bench argv"] = len(done)
        self.assertEqual(findings, [], "exit 0 without a listing, or not exit 2 with one line")

    @staticmethod
    def list_tests(argv):
        """("ok",) or (kind, argv, exit status, the first stderr lines)."""
        p = subprocess.run([BENCH] + argv + ["--benchmark_list_tests"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        # Lines as a shell reads them (a control character in an echoed value is no line break).
        err = p.stderr.decode("utf-8", "replace").rstrip("\n").split("\n") if p.stderr else []
        if (p.returncode == 0 and p.stdout.strip()) or (p.returncode == 2 and len(err) == 1):
            return ("ok",)
        return ("finding", argv, p.returncode, err[:3])

    # bench quoted a bad argument as given: one holding a line break made its
    # refusal two lines. It shows control characters escaped now.
    def test_finding_bench_echoes_a_line_break(self):
        if not BENCH or not os.access(BENCH, os.X_OK):
            self.skipTest("no bench binary given (--bench PATH)")
        self.assertEqual(self.list_tests(["x\ny"]), ("ok",))


# ------------------------------------------------------------------ the end

def summary():
    docs = {k: v for k, v in Fuzz.counts.items() if k != "bench argv"}
    kinds = [f[1] for f in Fuzz.findings]
    return ("fuzz: seed %d; %d documents tried (%s), %d bench command lines; tracebacks %d, silent passes %d, "
            "other findings %d" % (SEED, sum(docs.values()), ", ".join("%s %d" % kv for kv in sorted(docs.items())),
                                   Fuzz.counts.get("bench argv", 0), kinds.count(TRACEBACK), kinds.count(SILENT),
                                   len(kinds) - kinds.count(TRACEBACK) - kinds.count(SILENT)))


class ZEnd(unittest.TestCase):
    """Runs last (unittest orders classes by name): the counts, and every finding."""

    def test_no_findings(self):
        print("\n" + summary() + " (--seed %d repeats the run)" % SEED)
        print("fuzz: seconds: %s" % ", ".join("%s %.0f" % kv for kv in sorted(Fuzz.seconds.items())))
        print("fuzz: exit statuses: %s" % "; ".join("%s %s" % (t, ", ".join("%s: %d" % kv for kv in sorted(
            e.items(), key=str))) for t, e in sorted(Fuzz.exits.items())))
        if Fuzz.findings:
            seen, lines = set(), []
            for tool, kind, what, case in Fuzz.findings:
                key = (tool, kind, what.splitlines()[0][:100])
                if key in seen:
                    continue
                seen.add(key)
                lines.append("%s, %s: %s\n    on %s" % (tool, kind, what[:3000], case[:500]))
            self.fail("%d findings, %d distinct:\n%s" % (len(Fuzz.findings), len(lines), "\n".join(lines)))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--slow", action="store_true", help="the slow tier's counts (10,000 documents and more)")
    ap.add_argument("--seed", type=int, default=None, help="repeat a run (default: fixed in the unit tier, a new one "
                    "each slow run; PARBENCH_FUZZ_SEED too)")
    ap.add_argument("--bench", help="bench, whose command line is fuzzed too")
    ap.add_argument("--documents", type=int, help="documents in all (default: the tier's, %d or %d)" % tuple(
        sum(s[i] for s in SHARE.values()) for i in (0, 1)))
    args, rest = ap.parse_known_args()
    SLOW, BENCH = int(args.slow), args.bench
    if args.documents:
        SCALE = args.documents / sum(s[SLOW] for s in SHARE.values())
    SEED = args.seed if args.seed is not None else int(os.environ.get("PARBENCH_FUZZ_SEED") or (
        random.SystemRandom().randrange(10 ** 6) if args.slow else 66))
    start = time.monotonic()
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    print("fuzz: %.0f s" % (time.monotonic() - start))
    sys.exit(not prog.result.wasSuccessful())
