#!/usr/bin/env python3
"""Tests of regress/load/results.py, the one loader, and of the tools around it: schema 1
metadata and older files' message prefixes, strict JSON, and robustness (a file
cut at every character, wrong types in every field, random bytes: load() gives a
Run, with warnings when it dropped or recovered something, or a LoadError; the
command-line tools one line on stderr and their documented exit code)."""
import copy
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from regress import cli
from regress.load import results

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DATA = os.path.join(HERE, "data")
UPGRADE = ["-m", "regress.upgrade"]
# The command-line tools by file name, and the package that holds each.
PACKAGE = {"check_run.py": "regress", "close_truncated.py": "regress", "table.py": "plots"}


def entry(name, seconds, disposition="passed", reason="", rep=(0, 1), aggregate="", **counters):
    """A schema 1 entry as the harness writes it (Google Benchmark 1.8 layout)."""
    run_name = name
    e = {"name": name + ("_" + aggregate if aggregate else ""), "family_index": 0, "per_family_instance_index": 0,
         "run_name": run_name, "run_type": "aggregate" if aggregate else "iteration", "repetitions": rep[1]}
    if aggregate:
        e.update(threads=1, aggregate_name=aggregate, aggregate_unit="time")
    else:
        e.update(repetition_index=rep[0], threads=1)
    if disposition == "unsupported":
        e.update(skipped=True, skip_message="unsupported: " + reason)
    elif disposition != "passed":
        e.update(error_occurred=True, error_message=disposition.replace("_", " ") + ": " + reason)
    e.update(iterations=1, real_time=seconds * 1e6, cpu_time=seconds * 1e6, time_unit="us")
    e.update(counters)
    pb = {"disposition": disposition}
    if disposition != "passed":
        pb["reason"] = reason
    pb.update(role="variant", device="cpu", rate={"counter": "GFLOPS", "ceiling": "gemm_f32"})
    e["parbench"] = pb
    return e


COUNTERS = {"GFLOPS": {"kind": "rate", "unit": "GFLOP/s", "better": "higher"},
            "seconds_per_call": {"kind": "time", "unit": "s", "better": "lower"},
            "M": {"kind": "problem"}, "on_gpu": {"kind": "flag"}}


def small_doc():
    """A valid schema 1 file: a baseline, an unsupported entry, an instance with
    two repetitions and its aggregates, an out-of-memory entry on the GPU."""
    a = "Fam/Base/type:f32/M:64/manual_time"
    b = "Fam/Other/type:f32/M:64/threads:2/manual_time"
    c = "Fam/Other/type:f32/M:128/threads:2/manual_time"
    d = "Fam/Dev.Kernel/type:f32/M:128/block:32/manual_time"
    bench = [entry(a, 2.0, GFLOPS=1.5, M=64.0, seconds_per_call=2.0),
             entry(b, 0.0, "unsupported", "size excluded by profile 'smoke'"),
             entry(c, 1.0, rep=(0, 2), GFLOPS=4.0, M=128.0, seconds_per_call=1.0),
             entry(c, 1.5, rep=(1, 2), GFLOPS=3.0, M=128.0, seconds_per_call=1.5),
             entry(c, 1.25, rep=(0, 2), aggregate="mean", GFLOPS=3.5, M=128.0),
             entry(c, 1.25, rep=(0, 2), aggregate="median", GFLOPS=3.5, M=128.0),
             entry(d, 0.0, "out_of_memory", "cudaMalloc failed", on_gpu=1.0)]
    bench[0]["parbench"]["role"] = "baseline"
    bench[-1]["parbench"]["device"] = "gpu"
    return {"context": {"date": "2026-11-22T00:00:00+00:00", "host_name": "h", "parbench_schema": 1,
                        "parbench_counters": COUNTERS, "parbench_git_revision": "abc"},
            "benchmarks": bench}


def read(path):
    return results.read_text(path)  # plain or gzip-compressed


def tool(name, *args):
    module = "%s.%s" % (PACKAGE[name], name[:-3])
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=120)


def is_benchmark_json(path):
    """Google Benchmark files, not the other JSON kept under results/ (the
    comparator's verdicts, change lists, summaries)."""
    try:
        doc = json.loads(read(path))
    except ValueError:
        return True  # a broken file must still fail the tests below
    return not isinstance(doc, dict) or ("benchmarks" in doc and "context" in doc) or \
        not any(k in doc for k in ("parbench_compare", "parbench_trends", "parbench_nightly", "parbench_bisect",
                                   "changes", "at_step"))


def committed_json():
    found = sorted(glob.glob(os.path.join(ROOT, "results", "reference", "*", "*.json.gz"))) + \
        sorted(glob.glob(os.path.join(DATA, "*.json")))
    return [p for p in found if is_benchmark_json(p)]


def strip_schema(doc):
    """The document as a harness before schema 1 wrote it (k-means GBps was added by the upgrade)."""
    doc = copy.deepcopy(doc)
    for k in [k for k in doc["context"] if k in ("parbench_schema", "parbench_counters", "parbench_upgraded")]:
        del doc["context"][k]
    for e in doc["benchmarks"]:
        e.pop("parbench", None)
        if e["name"].startswith("KMeans/"):
            e.pop("GBps", None)
    return doc


class Tmp(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, content):
        path = os.path.join(self.tmp, name)
        with open(path, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
        return path

    def load_robust(self, path):
        """load(): a Run or LoadError("PATH: ..."), never another exception."""
        try:
            return results.load(path)
        except results.LoadError as e:
            self.assertTrue(str(e).startswith(path + ": "), str(e))
            self.assertNotIn("\n", str(e))
            return None


class Fuzz(Tmp):
    def test_cut_at_every_character(self):
        text = cli.dumps(small_doc())
        full = json.loads(text)["benchmarks"]
        path = os.path.join(self.tmp, "cut.json")
        recovered = errors = 0
        for at in range(len(text) + 1):
            with open(path, "w") as f:
                f.write(text[:at])
            run = self.load_robust(path)
            if run is None:
                errors += 1
                continue
            got = [e.raw for e in run.entries]
            self.assertEqual(got, full[:len(got)], "cut at %d" % at)
            if text[:at].rstrip() != text.rstrip():
                recovered += 1
                self.assertEqual(len(run.warnings), 1, "cut at %d" % at)
                self.assertRegex(run.warnings[0], r"^cut off mid-run after \d+ complete entries; ci/close-truncated "
                                 r"%s FIXED.json writes a closed copy$" % re.escape(path))
                self.assertEqual(results.refusal(run), ("cut", run.warnings[0]))
                # Repetitions without their aggregates are dropped: never one repetition of c alone.
                self.assertNotEqual(len(got), 3)
                self.assertNotEqual(len(got), 4)
            else:
                self.assertEqual(run.warnings, [])
                self.assertEqual(len(got), len(full))
                self.assertIsNone(results.refusal(run))
        self.assertGreater(recovered, len(text) // 3)
        self.assertGreater(errors, 100)

    def test_random_bytes_and_mutations(self):
        rng = random.Random(20261122)
        text = cli.dumps(small_doc())
        for i in range(300):
            n = rng.choice((1, 2, 10, 100, 1000))
            data = bytes(rng.randrange(256) for _ in range(n))
            if i % 3 == 0:
                data = text.encode()[: rng.randrange(len(text))] + data
            run = self.load_robust(self.write("g.json", data))
            if run is not None:
                self.assertTrue(run.warnings)
        chars = '{}[]:,"0123456789.eE-+ \nnulltrueNaNx\\'
        for i in range(1500):
            t = list(text)
            for _ in range(rng.randrange(1, 4)):
                at = rng.randrange(len(t))
                op = rng.randrange(3)
                if op == 0:
                    t[at] = rng.choice(chars)
                elif op == 1:
                    del t[at]
                else:
                    t.insert(at, rng.choice(chars))
            self.load_robust(self.write("m.json", "".join(t)))

    def test_cut_inside_context_and_before_first_entry(self):
        text = cli.dumps(small_doc())
        for at, why in ((text.index('"host_name"') + 3, "truncated inside 'context'"),
                        (text.index('"benchmarks"') + 15, "truncated before its first complete entry"),
                        (text.index('"run_name"') + 3, "truncated before its first complete entry")):
            with self.assertRaises(results.LoadError) as cm:
                results.load(self.write("c.json", text[:at]))
            self.assertIn(why, str(cm.exception))

    def test_big_cut_file_is_recovered_quickly(self):
        big = os.path.join(ROOT, "results", "reference", "nvidia-h200", "gemm-default.json.gz")
        text = read(big)
        path = self.write("big.json", text[: len(text) - 5000])
        run = results.load(path)
        whole = results.load(big)
        self.assertGreater(len(run.entries), len(whole.entries) - 20)
        self.assertEqual([e.name for e in run.entries], [e.name for e in whole.entries[: len(run.entries)]])
        self.assertTrue(run.warnings[0].startswith("cut off mid-run"))

    def test_corruption_in_the_middle_is_not_a_cut(self):
        text = cli.dumps(small_doc())
        at = text.index('"Fam/Other/type:f32/M:128')
        with self.assertRaises(results.LoadError) as cm:
            results.load(self.write("mid.json", text[:at] + "@@" + text[at:]))
        self.assertIn("not valid JSON", str(cm.exception))

    def values_of_wrong_type(self, v):
        out = ["text", [], {}, True, 1.5, None, [1, 2], {"a": 1}]
        return [w for w in out if type(w) is not type(v) and not (isinstance(v, float) and w is None)]

    def test_wrong_types_and_missing_fields_of_entries(self):
        doc = small_doc()
        for i, e in enumerate(doc["benchmarks"]):
            fields = list(e) + ["parbench.%s" % k for k in e["parbench"]]
            for field in fields:
                for bad in self.values_of_wrong_type(self.get(e, field)) + ["missing"]:
                    d = copy.deepcopy(doc)
                    self.set(d["benchmarks"][i], field, bad)
                    run = self.load_robust(self.write("e.json", json.dumps(d)))
                    self.assertIsNotNone(run)
                    n = len(run.entries)
                    self.assertIn(n, (len(doc["benchmarks"]), len(doc["benchmarks"]) - 1), (field, bad))
                    if n < len(doc["benchmarks"]):
                        self.assertEqual(len(run.warnings), 1)
                        self.assertRegex(run.warnings[0], r"^malformed entry: .* \(entry %d[ ,]" % i)
                        self.assertEqual(results.refusal(run), ("malformed", run.warnings[0]))

    @staticmethod
    def get(e, field):
        if field.startswith("parbench."):
            return e["parbench"][field[9:]]
        return e[field]

    @staticmethod
    def set(e, field, value):
        target, key = (e["parbench"], field[9:]) if field.startswith("parbench.") else (e, field)
        if value == "missing":
            target.pop(key, None)
        else:
            target[key] = value

    def test_what_is_dropped_and_said(self):
        doc = small_doc()
        b = doc["benchmarks"]
        b[0]["real_time"] = "12.5"
        b[2]["GFLOPS"] = "fast"
        b[3]["time_unit"] = "fortnights"
        b.append([1, 2])
        b.append({"run_name": "Fam/X/manual_time"})
        b.append(dict(b[2], name="NoSlash", run_name="NoSlash"))
        b.append(dict(b[2], parbench={"disposition": "skipped"}))
        b.append(dict(b[2], parbench="passed"))
        b.append(dict(b[2], parbench=dict(b[2]["parbench"], role="boss")))
        b.append(dict(b[2], parbench=dict(b[2]["parbench"], rate="GFLOPS")))
        run = results.load(self.write("w.json", json.dumps(doc)))
        self.assertEqual(len(run.entries), 4)
        path = os.path.join(self.tmp, "w.json")
        self.assertEqual(run.warnings, ["10 malformed entries, first: 'real_time' is a string (entry 0 "
                                        "'Fam/Base/type:f32/M:64/manual_time'); ci/close-truncated %s FIXED.json "
                                        "writes a copy without them" % path])
        other = "Fam/Other/type:f32/M:128/threads:2/manual_time"
        self.assertEqual([(i, n) for i, n, _ in run.malformed],
                         [(0, "Fam/Base/type:f32/M:64/manual_time"), (2, other), (3, other), (7, None), (8, None),
                          (9, "NoSlash")] + [(i, other) for i in range(10, 14)])

    def test_nan_in_a_passed_time_drops_the_entry_but_not_in_a_counter(self):
        doc = small_doc()
        doc["benchmarks"][2]["GFLOPS"] = float("nan")
        doc["benchmarks"][4]["real_time"] = float("inf")  # an aggregate: kept
        doc["benchmarks"][0]["real_time"] = float("nan")
        run = results.load(self.write("n.json", json.dumps(doc)))
        self.assertEqual(len(run.entries), 6)
        self.assertIn("'real_time' is not finite", run.warnings[0])
        self.assertIsNone(run.entries[1].counter("GFLOPS"))
        self.assertEqual(run.entries[1].counter("GFLOPS", -1), -1)
        self.assertIsNone(run.entries[3].seconds())

    def test_document_shapes(self):
        cases = {"list.json": "[1, 2]", "str.json": '"x"', "ctxlist.json": '{"context": [], "benchmarks": []}',
                 "ctxnull.json": '{"context": null, "benchmarks": []}',
                 "benchdict.json": '{"context": {}, "benchmarks": {}}', "nobench.json": '{"context": {}}',
                 "foreign.json": '{"hello": [1, 2]}', "empty.json": "", "spaces.json": "  \n",
                 "deep.json": "[" * 100000, "deepctx.json": '{"context": ' + "[" * 100000,
                 "bom.json": "\ufeff" + "[]", "trailing.json": '{"context": {}, "benchmarks": []} x'}
        for name, text in cases.items():
            with self.assertRaises(results.LoadError, msg=name):
                results.load(self.write(name, text))
        run = results.load(self.write("ok.json", '{"context": {}, "benchmarks": []}'))
        self.assertEqual((run.entries, run.warnings, run.schema, run.counter_kinds), ([], [], 0, {}))

    def test_context_metadata_of_wrong_type_warns(self):
        for schema, counters, n in (("1", COUNTERS, 1), (1, [1], 1), (True, {"GFLOPS": "rate", "M": {}}, 2),
                                    (2, COUNTERS, 1)):
            doc = small_doc()
            doc["context"].update(parbench_schema=schema, parbench_counters=counters)
            run = self.load_robust(self.write("c.json", json.dumps(doc)))
            self.assertEqual(len(run.entries), 7)
            self.assertEqual(len(run.warnings), n, run.warnings)

    def test_paths_that_are_not_files(self):
        with self.assertRaises(results.LoadError) as cm:
            results.load(self.tmp)
        self.assertEqual(str(cm.exception), self.tmp + ": is a directory")
        missing = os.path.join(self.tmp, "missing.json")
        with self.assertRaises(results.LoadError) as cm:
            results.load(missing)
        self.assertEqual(str(cm.exception), missing + ": no such file")
        under_file = os.path.join(self.write("f.json", "{}"), "x.json")
        with self.assertRaises(results.LoadError) as cm:
            results.load(under_file)
        self.assertIn("cannot read", str(cm.exception))

    def test_gzip_files(self):
        import gzip
        text = json.dumps(small_doc())
        run = results.load(self.write("a.json.gz", gzip.compress(text.encode())))
        self.assertEqual(len(run.entries), len(small_doc()["benchmarks"]))
        self.assertEqual(run.warnings, [])
        cut = self.write("cut.json.gz", gzip.compress(text.encode())[:-12])
        with self.assertRaises(results.LoadError) as cm:
            results.load(cut)
        self.assertIn("not a whole gzip file", str(cm.exception))


class Dispositions(Tmp):
    def test_schema_1_reads_the_parbench_object(self):
        run = results.load(self.write("s.json", cli.dumps(small_doc())), label="mine")
        self.assertEqual(run.schema, 1)
        self.assertEqual(run.label, "mine")
        self.assertEqual(run.kind_of("GFLOPS"), "rate")
        self.assertEqual(run.kind_of("M"), "problem")
        self.assertIsNone(run.kind_of("inertia"))
        e = run.entries
        self.assertEqual([x.disposition for x in e],
                         ["passed", "unsupported", "passed", "passed", "passed", "passed", "out_of_memory"])
        self.assertEqual([x.role for x in e][:2], ["baseline", "variant"])
        self.assertEqual(e[0].rate, ("GFLOPS", "gemm_f32"))
        self.assertEqual((e[0].device, e[-1].device), ("cpu", "gpu"))
        self.assertEqual(e[1].reason, "size excluded by profile 'smoke'")
        self.assertEqual(e[1].message, "unsupported: size excluded by profile 'smoke'")
        self.assertEqual(e[-1].reason, "cudaMalloc failed")
        self.assertTrue(e[-1].is_error and not e[1].is_error)
        self.assertEqual({x.source for x in e}, {"mine"})
        self.assertEqual(len(run.passed()), 3)
        self.assertEqual(run.skipped(), [e[1]])
        self.assertEqual(run.unsupported(), [e[1]])
        self.assertEqual(run.errors(), [e[-1]])
        self.assertEqual((e[4].aggregate, e[4].run.base()), ("mean", "Fam/Other/type:f32/M:128/threads:2"))
        self.assertAlmostEqual(e[2].seconds(), 1.0)
        self.assertEqual(results.load(self.write("s.json", cli.dumps(small_doc()))).label, "s")

    def test_parbench_disposition_wins_over_the_message(self):
        doc = small_doc()
        e = doc["benchmarks"][1]
        del e["skipped"], e["skip_message"]  # Google Benchmark 1.7: an unsupported entry is an error
        e.update(error_occurred=True, error_message="unsupported: no device")
        e["parbench"]["reason"] = "no device"
        doc["benchmarks"][6]["parbench"]["disposition"] = "incorrect"
        run = results.load(self.write("d.json", json.dumps(doc)))
        self.assertEqual(run.entries[1].disposition, "unsupported")
        self.assertEqual(run.entries[1].reason, "no device")
        self.assertEqual(run.entries[6].disposition, "incorrect")

    def test_older_files_from_the_prefixes(self):
        for name, layout in (("gb171.json", "error_occurred"), ("gb183.json", "skipped")):
            new = results.load(os.path.join(DATA, name))
            self.assertEqual(new.schema, 1)
            old_doc = strip_schema(json.loads(read(os.path.join(DATA, name))))
            old = results.load(self.write(name, json.dumps(old_doc)))
            self.assertEqual((old.schema, old.counter_kinds, old.warnings), (0, {}, []))
            self.assertEqual([e.name for e in old.entries], [e.name for e in new.entries])
            self.assertEqual([e.disposition for e in old.entries], [e.disposition for e in new.entries])
            self.assertEqual([e.reason for e in old.entries], [e.reason for e in new.entries])
            self.assertTrue(all(e.role is None and e.rate is None and e.device is None for e in old.entries))
            self.assertTrue(all(e.role and e.device for e in new.entries))
            unsupported = old.unsupported()
            self.assertTrue(unsupported)
            self.assertTrue(all(e.raw.get(layout) and e.message.startswith("unsupported: ") for e in unsupported))
            self.assertTrue(all(not e.message.startswith(e.reason) or not e.reason for e in unsupported))

    def test_older_prefixes_and_the_on_gpu_counter(self):
        doc = strip_schema(small_doc())
        b = doc["benchmarks"]
        b.append(dict(b[6], error_message="incorrect: C[3] = 2, expected 1", on_gpu=0.0))
        b.append(dict(b[6], error_message="failed: threw std::bad_alloc"))
        b.append(dict(b[6], error_message="something else"))
        b.append(dict(b[1], skip_message="why not"))
        run = results.load(self.write("o.json", json.dumps(doc)))
        got = [(e.disposition, e.reason, e.device) for e in run.entries[6:]]
        self.assertEqual(got, [("out_of_memory", "cudaMalloc failed", "gpu"),
                               ("incorrect", "C[3] = 2, expected 1", "cpu"),
                               ("failed", "threw std::bad_alloc", "gpu"),
                               ("failed", "something else", "gpu"),
                               ("unsupported", "why not", None)])
        self.assertIsNone(run.entries[0].device)
        self.assertIsNone(run.entries[0].on_gpu)

    def test_committed_results_load(self):
        for path in committed_json():
            run = results.load(path)
            self.assertEqual(run.warnings, [], path)
            self.assertEqual(run.schema, 1, path)
            self.assertTrue(run.entries, path)
            for e in run.entries:
                self.assertIn(e.role, results.ROLES)
                self.assertIn(e.device, results.DEVICES)

    def test_no_variant_names_in_the_loader_and_tools(self):
        # Tools read meaning (roles, devices, rates) from the JSON, never a
        # variant's name; the upgrader of files older than schema 1 is the
        # one module that must know the old names.
        import glob
        import re
        names = re.compile(r"\b(Naive|OMP|OpenBLAS|cuBLAS|Seq|BLAS|Std|Thrust|CUB|HostTriad|ParallelMode|MPI)\b|CUDA\.")
        paths = glob.glob(os.path.join(ROOT, "regress", "**", "*.py"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "plots", "*.py"))
        self.assertGreater(len(paths), 30)
        for path in paths:
            if os.path.basename(path) == "upgrade.py":
                continue
            for n, line in enumerate(read(path).splitlines(), 1):
                self.assertIsNone(names.search(line), "%s:%d: %s" % (path, n, line))


class StrictJson(Tmp):
    def test_committed_files_are_strict(self):
        files = committed_json()
        self.assertGreater(len(files), 20)
        for path in files:
            cli.strict_loads(read(path))

    def test_strict_loads_and_dump(self):
        for bad in ('{"a": NaN}', '[Infinity]', '[-Infinity]'):
            with self.assertRaises(ValueError):
                cli.strict_loads(bad)
        path = os.path.join(self.tmp, "d.json")
        with open(path, "w") as f:
            cli.dump({"a": float("nan"), "b": [float("inf"), 1.5, {"c": -float("inf")}]}, f)
        text = read(path)
        self.assertEqual(cli.strict_loads(text), {"a": None, "b": [None, 1.5, {"c": None}]})
        self.assertIn('\n  "a": null', text)

    def test_close_truncated_writes_strict_json(self):
        doc = small_doc()
        doc["benchmarks"][2]["GFLOPS"] = float("nan")
        text = json.dumps(doc, indent=2)
        cut = self.write("cut.json", text[: text.index('"Fam/Other/type:f32/M:128') + 40])
        out = os.path.join(self.tmp, "out.json")
        p = tool("close_truncated.py", cut, out)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = cli.strict_loads(read(out))
        self.assertEqual([e["name"] for e in got["benchmarks"]], [e["name"] for e in doc["benchmarks"][:2]])
        self.assertIn("cut off mid-run", got["context"]["truncated_repair"])
        # A cut after the repetitions, before their aggregates: those are dropped.
        at = text.index('"aggregate_name"')
        at = text.rindex("},", 0, at) + 1
        p = tool("close_truncated.py", self.write("cut2.json", text[:at]), out)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = cli.strict_loads(read(out))
        self.assertEqual(len(got["benchmarks"]), 2)
        self.assertIn("dropped Fam/Other/type:f32/M:128/threads:2/manual_time (2 repetitions",
                      got["context"]["truncated_repair"])


class Tools(Tmp):
    def check_fails(self, p, code, tool_name):
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(tool_name + ": "), p.stderr)

    def test_bad_inputs(self):
        garbage = self.write("garbage.json", bytes(range(256)) * 4)
        text = self.write("text.json", "not json at all")
        missing = os.path.join(self.tmp, "missing.json")
        for path in (self.tmp, garbage, text, missing):
            self.check_fails(tool("check_run.py", path), 2, "check-run")
            self.check_fails(tool("table.py", path), 2, "table")
            self.check_fails(tool("close_truncated.py", path, os.path.join(self.tmp, "o.json")), 2, "close-truncated")
        good = self.write("good.json", cli.dumps(small_doc()))
        self.check_fails(tool("table.py", good, "--filter", "(unclosed"), 2, "table")

    def test_outputs_that_cannot_be_written(self):
        good = self.write("good.json", cli.dumps(small_doc()))
        for out in (self.tmp, os.path.join(self.tmp, "no", "such", "dir.json"), os.path.join(good, "x.json"),
                    "/dev/full"):
            if out == "/dev/full" and not os.path.exists(out):
                continue
            self.check_fails(tool("close_truncated.py", good, out), 2, "close-truncated")
        p = tool("close_truncated.py", good, os.path.join(self.tmp, "fine.json"))
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_check_run_counts_dispositions_and_warns(self):
        doc = small_doc()
        good = self.write("good.json", cli.dumps(doc))
        p = tool("check_run.py", good)
        self.assertEqual(p.returncode, 1)  # the out_of_memory entry
        self.assertIn("ERROR Fam/Dev.Kernel/type:f32/M:128/block:32/manual_time: out_of_memory: cudaMalloc failed",
                      p.stdout)
        self.assertIn("3 passed, 1 unsupported, 0 incorrect, 1 out_of_memory, 0 failed", p.stdout)
        doc["benchmarks"].pop()
        text = cli.dumps(doc)
        self.assertEqual(tool("check_run.py", self.write("ok.json", text)).returncode, 0)
        p = tool("check_run.py", self.write("ok.json", text), "--no-unsupported")
        self.assertEqual(p.returncode, 1)
        self.assertIn("SKIPPED Fam/Other/type:f32/M:64/threads:2/manual_time: unsupported: size excluded", p.stdout)
        cut = self.write("cut.json", text[: text.index('"Fam/Other/type:f32/M:128') + 40])
        # A cut file is bad input (exit 2, one line) unless --allow-warnings
        # asks for its complete entries to be checked.
        p = tool("check_run.py", cut)
        self.check_fails(p, 2, "check-run")
        self.assertRegex(p.stderr, r"^check-run: .*cut.json: cut off mid-run after 2 complete entries; "
                                   r"ci/close-truncated .*cut.json FIXED.json writes a closed copy$")
        p = tool("check_run.py", cut, "--allow-warnings")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"^check-run: .*cut.json: warning: cut off mid-run after 2 complete entries")
        self.assertIn("1 passed, 1 unsupported", p.stdout)
        self.check_fails(tool("table.py", cut, "--counter", "GFLOPS"), 2, "table")
        # A repetition timed at 0 is an error entry: the gate fails on it.
        zero = copy.deepcopy(doc)
        zero["benchmarks"][0]["real_time"] = 0.0
        p = tool("check_run.py", self.write("zero.json", cli.dumps(zero)))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("ERROR Fam/Base/type:f32/M:64/manual_time: failed: passed with a time per iteration of 0.0: "
                      "not a measurement", p.stdout)

    def test_check_run_requires_every_listed_variant(self):
        # A stand-in bench that lists instances as bench --list-devices does
        # (for the profile it is asked for): the gate requires a passed entry
        # of every Family/Variant listed on the devices asked for.
        doc = small_doc()
        doc["benchmarks"].pop()  # the out_of_memory entry
        doc["context"]["parbench_profile"] = "smoke"
        good = self.write("ok.json", cli.dumps(doc))
        fake = self.write("bench", "#!/bin/sh\n[ \"$1\" = --profile=smoke ] || exit 3\n"
                                   "echo 'cpu Fam/Base/type:f32/M:64/manual_time'\n"
                                   "echo 'gpu Fam/Dev.Kernel/type:f32/M:128/block:32/manual_time'\n")
        os.chmod(fake, 0o755)
        p = tool("check_run.py", good, "--require-every", fake)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = tool("check_run.py", good, "--require-every", fake, "--devices", "cpu,gpu")
        self.assertEqual(p.returncode, 1)
        self.assertIn("MISSING no passed entry for Fam/Dev.Kernel", p.stdout)
        self.assertNotIn("MISSING no passed entry for Fam/Base", p.stdout)
        # A binary that cannot list: one line, exit 2.
        self.check_fails(tool("check_run.py", good, "--require-every", os.path.join(self.tmp, "none")), 2,
                         "check-run")
        broken = self.write("broken", "#!/bin/sh\necho 'no such profile' >&2\nexit 2\n")
        os.chmod(broken, 0o755)
        p = tool("check_run.py", good, "--require-every", broken)
        self.check_fails(p, 2, "check-run")
        self.assertIn("--list-devices failed: no such profile", p.stderr)


class Table(Tmp):
    def test_ratio_to_a_variant_with_the_same_knobs(self):
        # The reference runs at 1 and 2 threads: each row divides by the one of
        # its own thread count; a reference without threads serves every row.
        names = {("Lib", 1): 10.0, ("Lib", 2): 20.0, ("Mine", 1): 8.0, ("Mine", 2): 14.0}
        bench = [entry("Fam/%s/M:64/threads:%d/manual_time" % k, 1.0, GFLOPS=v, M=64.0) for k, v in names.items()]
        bench.append(entry("Fam/Loop/M:64/manual_time", 1.0, GFLOPS=2.0, M=64.0))
        doc = {"context": {"parbench_schema": 1, "parbench_counters": COUNTERS}, "benchmarks": bench}
        path = self.write("t.json", cli.dumps(doc))

        def ratios(ref):
            out = tool("table.py", path, "--ratio-to", ref).stdout.splitlines()[1:]
            return {line.split()[0]: line.split()[-1] for line in out}
        self.assertEqual(ratios("Lib")["Fam/Mine/M:64/threads:1"], "0.800")
        self.assertEqual(ratios("Lib")["Fam/Mine/M:64/threads:2"], "0.700")
        self.assertEqual(ratios("Loop")["Fam/Mine/M:64/threads:2"], "7.000")


class Upgrade(Tmp):
    def test_committed_files_are_upgraded_and_it_is_idempotent(self):
        p = subprocess.run([sys.executable, *UPGRADE, "--check", *committed_json()], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_upgrade_reproduces_the_committed_stamp(self):
        for name in ("gb171.json", "gb183.json"):
            committed = json.loads(read(os.path.join(DATA, name)))
            old = strip_schema(committed)
            old["benchmarks"][0]["throttled"] = float("nan")
            path = self.write(name, json.dumps(old, indent=2))
            p = subprocess.run([sys.executable, *UPGRADE, path], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            text = read(path)
            got = cli.strict_loads(text)
            committed["benchmarks"][0]["throttled"] = None
            self.assertEqual(got, committed)
            p = subprocess.run([sys.executable, *UPGRADE, path], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(read(path), text)  # idempotent
            gbps = [e for e in got["benchmarks"] if e["name"].startswith("KMeans/") and "GBps" in e
                    and not e.get("aggregate_name")]
            self.assertTrue(gbps)
            for e in gbps:
                rn = results.parse_run_name(e["name"])
                want = int(rn.args["N"]) * int(rn.args["D"]) * 8 / e["seconds_per_iteration"] * 1e-9
                self.assertAlmostEqual(e["GBps"], want)
                self.assertEqual(e["parbench"]["rate"], {"counter": "GBps", "ceiling": "bandwidth"})

    def test_upgrade_refuses_a_cut_file(self):
        text = read(os.path.join(DATA, "gb171.json"))
        path = self.write("cut.json", text[:20000])
        p = subprocess.run([sys.executable, *UPGRADE, path], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("close-truncated", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(read(path), text[:20000])


# ---------------------------------------------------------------- the contract

def clean_doc():
    """small_doc without its error entry: a file every gate passes."""
    doc = small_doc()
    doc["benchmarks"].pop()
    doc["context"].update(cpu_model="Test CPU", num_cpus=2)
    return doc


def bad_inputs(folder):
    """{case: path} of the contract's bad inputs (docs/tools/README.md, "Bad
    input"), each a defect of the good file; "good" and "zero" (a repetition
    timed at 0: an error entry, not bad input) beside them."""
    def put(name, content):
        path = os.path.join(folder, name + ".json")
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content, indent=2))
        return path

    good = clean_doc()
    text = json.dumps(good, indent=2)
    out = {"good": put("good", good), "missing": os.path.join(folder, "missing.json"), "directory": folder,
           "empty": put("empty", ""), "not_json": put("not_json", "not json at all\n"),
           "not_benchmark_json": put("not_benchmark_json", {"hello": [1, 2]}),
           "cut": put("cut", text[: text.index('"Fam/Other/type:f32/M:128') + 40])}
    aggr = clean_doc()
    aggr["benchmarks"] = [e for e in aggr["benchmarks"] if e.get("run_type") == "aggregate"]
    out["only_aggregates"] = put("only_aggregates", aggr)
    for case, change in (("real_time_text", lambda e: e.update(real_time="fast")),
                         ("no_name", lambda e: e.pop("name")),
                         ("nan_time", lambda e: e.update(real_time=float("nan"))),
                         ("zero", lambda e: e.update(real_time=0.0))):
        d = clean_doc()
        change(d["benchmarks"][2])  # one repetition among good entries
        out[case] = put(case, d)
    return out


BAD = ("missing", "directory", "empty", "not_json", "not_benchmark_json", "cut", "only_aggregates",
       "real_time_text", "no_name", "nan_time")
# What ci/close-truncated mends (its purpose): exit 0 and a copy every tool reads.
MENDED = ("cut", "real_time_text", "no_name", "nan_time")


def call(main, argv):
    """(exit status, stderr lines, stdout) of a tool's main(argv) run in this
    process. Standard output is caught at its file descriptor too: a tool may
    hold the stream it had at import (a default argument)."""
    import contextlib
    import io
    err, out = io.StringIO(), io.StringIO()
    streams = (sys.stdout, sys.__stdout__)
    for f in streams:
        f.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+") as fd_out:
        os.dup2(fd_out.fileno(), 1)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                try:
                    rc = main(argv)
                except SystemExit as e:
                    rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        finally:
            for f in streams:
                f.flush()
            os.dup2(saved, 1)
            os.close(saved)
        fd_out.seek(0)
        return rc, err.getvalue().splitlines(), out.getvalue() + fd_out.read()


def contract_tools(tmp):
    """{tool: (prefix, role, run(path, usage=False) -> (rc, stderr lines, stdout))}: every tool
    that reads a bench JSON file, called as its ci/ entry point calls it."""
    from regress import check_run, close_truncated, compare, gemm_tune, history, nightly, upgrade
    from plots import report, table
    counter = iter(range(10 ** 6))

    def fresh(name):
        return os.path.join(tmp, "%s-%d" % (name, next(counter)))

    good = os.path.join(tmp, "good.json")
    runs = {
        "compare": ("compare", "NEW", lambda p, u: call(compare.main, [p] if u else [good, p])),
        "history": ("history", None, lambda p, u: call(history.main, ["--history", fresh("h")] + (
            ["frobnicate"] if u else ["ingest", p]))),
        "nightly": ("nightly", None, lambda p, u: call(nightly.main, ["--frob"] if u else [
            "--accept-baseline", p, "--history", fresh("h")])),
        "check-run": ("check-run", None, lambda p, u: call(check_run.main, [] if u else [p])),
        "table": ("table", None, lambda p, u: call(table.main, [] if u else [p])),
        "close-truncated": ("close-truncated", None, lambda p, u: call(close_truncated.main, [p] if u else [
            p, fresh("closed") + ".json"])),
        "upgrade-json": ("upgrade_json", None, lambda p, u: call(upgrade.main, [] if u else ["--check", p])),
        "tune-gemm": ("gemm_tune", None, lambda p, u: call(gemm_tune.main, [] if u else [
            p, "--out", fresh("tuned") + ".inc"])),
        "plot": ("plot", None, lambda p, u: call(report.main, [p] if u else [p, "--out", fresh("report")])),
    }
    return runs


# Tools whose owners have yet to call results.load_strict (and a one-line
# argument parser): the guard reports their divergences as skipped, and fails
# as soon as one conforms, so that it is taken off this list and held to it.
PENDING = {}


class Contract(Tmp):
    """One contract for bad input (docs/tools/README.md, "Bad input"): the
    same defect gives every tool the same exit status and the same line,
    "TOOL: [ROLE: ]PATH: DEFECT", DEFECT in the loader's words."""

    def test_load_strict_refuses_what_load_recovers(self):
        paths = bad_inputs(self.tmp)
        kinds = {"cut": "cut", "only_aggregates": "no_repetitions", "real_time_text": "malformed",
                 "no_name": "malformed", "nan_time": "malformed"}
        for case in BAD:
            with self.assertRaises(results.BadInput, msg=case) as cm:
                results.load_strict(paths[case], "NEW")
            e = cm.exception
            self.assertEqual((e.kind, e.path, e.what), (kinds.get(case, "unreadable"), paths[case], "NEW"), case)
            self.assertEqual(str(e), "NEW: %s: %s" % (paths[case], e.defect))
            self.assertNotIn("\n", str(e))
            self.assertIsInstance(e, results.LoadError)  # what `except results.LoadError` already catches
        self.assertRegex(str(self.refused(paths["real_time_text"])),
                         r": malformed entry: 'real_time' is a string \(entry 2 'Fam/Other/type:f32/M:128/threads:2/"
                         r"manual_time'\); ci/close-truncated .* FIXED.json writes a copy without it$")
        self.assertIn("malformed entry: no 'name' (entry 2, no name)", str(self.refused(paths["no_name"])))
        self.assertIn("'real_time' is not finite (entry 2", str(self.refused(paths["nan_time"])))
        run = results.load_strict(paths["good"])
        self.assertEqual((run.warnings, run.malformed, run.cut), ([], [], None))

    @staticmethod
    def refused(path):
        try:
            results.load_strict(path)
        except results.BadInput as e:
            return e
        raise AssertionError("%s was not refused" % path)

    def test_a_zero_time_is_a_failed_entry_in_every_tool(self):
        run = results.load_strict(bad_inputs(self.tmp)["zero"])
        e = run.entries[2]
        self.assertEqual((e.disposition, e.reason),
                         ("failed", "passed with a time per iteration of 0.0: not a measurement"))
        self.assertEqual(run.errors(), [e])
        self.assertEqual(run.warnings, [])
        # An aggregate of 0 (a stddev) is a value, not a time.
        doc = clean_doc()
        doc["benchmarks"][4]["real_time"] = 0.0
        self.assertEqual(results.load_strict(self.write("agg0.json", json.dumps(doc))).errors(), [])
        # A time that is 0 once in seconds (5e-324 ns underflows): failed
        # too, so no tool gets a passed entry without a time (ci/history
        # ingest took its None for a time).
        doc = clean_doc()
        doc["benchmarks"][0].update(real_time=5e-324, time_unit="ns")
        e = results.load_strict(self.write("denormal.json", json.dumps(doc))).entries[0]
        self.assertEqual((e.disposition, e.reason),
                         ("failed", "passed with a time per iteration of 5e-324: not a measurement"))

    def test_content_identity(self):
        import gzip
        doc = clean_doc()
        doc["context"]["num_cpus"] = 8
        doc["benchmarks"][0]["GFLOPS"] = float("nan")
        base = results.load(self.write("a.json", json.dumps(doc, indent=2))).content_sha256()
        copy_ = json.loads(json.dumps(doc))
        copy_["context"]["num_cpus"] = 8.0                    # another number spelling
        copy_["benchmarks"][0]["GFLOPS"] = None               # NaN as strict writers write it
        copy_["context"]["truncated_repair"] = "complete"     # closed by ci/close-truncated: the same run
        same = [json.dumps(copy_, sort_keys=True, separators=(",", ":")), cli.dumps(copy_),
                "{\n" + json.dumps(copy_, indent=7)[1:]]
        for i, text in enumerate(same):
            self.assertEqual(results.load(self.write("b%d.json" % i, text)).content_sha256(), base, i)
        self.assertEqual(results.load(self.write("c.json.gz", gzip.compress(same[0].encode()))).content_sha256(),
                         base)
        other = copy.deepcopy(doc)
        other["benchmarks"][2]["real_time"] *= 1.0000001
        swapped = copy.deepcopy(doc)
        swapped["benchmarks"][2], swapped["benchmarks"][3] = swapped["benchmarks"][3], swapped["benchmarks"][2]
        ctx = copy.deepcopy(doc)
        ctx["context"]["date"] = "2026-11-23T00:00:00+00:00"
        for i, d in enumerate((other, swapped, ctx)):
            self.assertNotEqual(results.load(self.write("d%d.json" % i, json.dumps(d))).content_sha256(), base, i)

    def test_close_truncated_mends_and_keeps_its_record(self):
        paths = bad_inputs(self.tmp)
        out = os.path.join(self.tmp, "fixed.json")
        from regress import close_truncated
        rc, err, stdout = call(close_truncated.main, [paths["real_time_text"], out])
        self.assertEqual((rc, err), (0, []))
        self.assertIn("dropped 1 malformed entry (first: entry 2 'Fam/Other", stdout)
        run = results.load_strict(out)
        self.assertEqual(len(run.entries), len(clean_doc()["benchmarks"]) - 1)
        record = run.context["truncated_repair"]
        self.assertIn("'real_time' is a string", record)
        # Closing the mended copy again keeps the record of what was done.
        again = os.path.join(self.tmp, "again.json")
        self.assertEqual(call(close_truncated.main, [out, again])[0], 0)
        self.assertEqual(results.load_strict(again).context["truncated_repair"], record)
        self.assertEqual(results.load(again).content_sha256(), run.content_sha256())

    def test_every_tool_gives_the_same_line(self):
        """The guard: every tool that reads bench JSON, on every bad input, exit 2
        and exactly the line TOOL: [ROLE: ]PATH: DEFECT (DEFECT from
        results.load_strict); bad usage exit 2 and one line TOOL: ...; a zero time
        an error entry (the gates exit 1); another machine's run not comparable
        (exit 3). It fails when a tool diverges."""
        try:
            tools = contract_tools(self.tmp)
        except ImportError as e:  # numpy or matplotlib missing: ci/python provides them
            self.skipTest("a tool cannot be imported: %s" % e)
        paths = bad_inputs(self.tmp)
        defect = {case: self.refused(paths[case]).defect for case in BAD}
        diverged = {}

        def expect(tool, case, ok, got, want):
            if ok:
                return
            if tool in PENDING:
                diverged.setdefault(tool, []).append(case)
                return
            self.fail("%s on %s: got %r, want %r" % (tool, case, got, want))

        for tool, (prefix, role, run) in sorted(tools.items()):
            for case in BAD:
                rc, err, _ = run(paths[case], False)
                if tool == "close-truncated" and case in MENDED:
                    self.assertEqual((rc, err), (0, []), case)
                    continue
                line = "%s: %s%s: %s" % (prefix, role + ": " if role else "", paths[case], defect[case])
                expect(tool, case, (rc, err) == (2, [line]), (rc, err), (2, [line]))
            rc, err, _ = run(None, True)
            expect(tool, "usage", rc == 2 and len(err) == 1 and err[0].startswith(prefix + ": "), (rc, err),
                   "exit 2, one line %s: ..." % prefix)
        # Not bad input: a repetition timed at 0 is an error entry; the gates fail on it.
        for tool, want in (("compare", 1), ("check-run", 1), ("history", 0), ("table", 0)):
            rc, err, stdout = tools[tool][2](paths["zero"], False)
            self.assertEqual(rc, want, (tool, err))
            if tool != "history":  # history stores it as a failed point (tests/test_history.py)
                self.assertIn("not a measurement", stdout, tool)
        from plots import report
        rc, err, _ = call(report.main, [paths["zero"], "--out", os.path.join(self.tmp, "zero-report")])
        self.assertEqual((rc, err), (0, []))
        self.assertIn("not a measurement", read(os.path.join(self.tmp, "zero-report", "report.md")))
        other = clean_doc()
        other["context"]["cpu_model"] = "Another CPU"
        rc, err, _ = tools["compare"][2](self.write("other.json", json.dumps(other)), False)
        self.assertEqual(rc, 3, err)
        for tool in sorted(set(PENDING) - set(diverged)):
            self.fail("%s conforms to the contract now: take it off PENDING" % tool)
        if diverged:
            self.skipTest("pending their owners (%s)" % "; ".join(
                "%s on %s: %s" % (t, ", ".join(c), PENDING[t]) for t, c in sorted(diverged.items())))

    def test_the_entry_points_reach_the_same_mains(self):
        """Each ci/ and plots/ command (run in parallel) says what its main says
        in-process, on a malformed entry (a file ci/close-truncated mends: for it,
        nothing but aggregates)."""
        try:
            tools = contract_tools(self.tmp)
        except ImportError as e:
            self.skipTest("a tool cannot be imported: %s" % e)
        paths = bad_inputs(self.tmp)
        tune = os.path.join(self.tmp, "tune")
        os.makedirs(tune)
        shutil.copy(paths["real_time_text"], os.path.join(tune, "sweep.json"))
        bad, h = paths["real_time_text"], os.path.join(self.tmp, "h-cmd")
        commands = {"compare": (["ci/compare", paths["good"], bad], bad),
                    "history": (["ci/history", "--history", h, "ingest", bad], bad),
                    "nightly": (["ci/nightly", "--accept-baseline", bad, "--history", h], bad),
                    "check-run": (["ci/check-run", bad], bad), "table": (["ci/table", bad], bad),
                    "close-truncated": (["ci/close-truncated", paths["only_aggregates"],
                                         os.path.join(self.tmp, "x.json")], paths["only_aggregates"]),
                    "upgrade-json": (["ci/upgrade-json", "--check", bad], bad),
                    "tune-gemm": (["ci/tune-gemm", tune], os.path.join(tune, "sweep.json")),
                    "plot": (["plots/plot", bad, "--out", os.path.join(self.tmp, "r")], bad)}
        self.assertEqual(sorted(commands), sorted(tools))
        procs = {t: subprocess.Popen([os.path.join(ROOT, c[0])] + c[1:], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, universal_newlines=True, cwd=self.tmp)
                 for t, (c, _) in commands.items()}
        for t, p in sorted(procs.items()):
            _, err = p.communicate(timeout=120)
            rc, lines, _ = tools[t][2](commands[t][1], False)
            self.assertEqual((p.returncode, err.splitlines()), (rc, lines), t)


if __name__ == "__main__":
    unittest.main(verbosity=2)
