#!/usr/bin/env python3
"""Tests of the history store (regress/store/, ci/history).

Ingesting runs, listing them, one benchmark's series (order and exact
values), re-ingesting as a no-op, .json.gz input, the index rebuilt from the
archive with the same rows (by the command, and automatically when the index
is corrupt, missing or of the version before contents), corrupt archive
members skipped and kept, refused input (cut off, not JSON, only aggregates, a
malformed entry, a NaN time: the loader's one line) changing nothing, a run's
identity by content (a re-serialised copy is already in the history; an
archive holding two copies indexes one), a time of 0 stored as a failed
point, machines and segments (a driver change is a new segment of the same
machine; another GPU is another machine), a one-point history, and the
command's exit codes and one-line errors.
"""
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import unittest

from regress.store import history

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TOOL = "regress.history"
WRAPPER = os.path.join(ROOT, "ci", "history")

GEMM = "GEMM/cuBLAS/op:AB/type:f32/M:64/N:64/K:64/manual_time"
SORT = "Sort/Std/key:u32/n:1024/manual_time"
BAD = "GEMM/CUDA.Naive/op:AB/type:f32/M:64/N:64/K:64/block:16/manual_time"
NOPE = "GEMM/OpenBLAS/op:AB/type:f32/M:64/N:64/K:64/manual_time"

CONTEXT = {"date": "2026-11-23T08:00:00+01:00", "host_name": "h", "parbench_schema": 1,
           "parbench_git_revision": "abc", "parbench_profile": "smoke", "cpu_model": "Xeon", "num_cpus": 16,
           "gpu": "NVIDIA H200", "gpu_sm_count": "132", "gpu_driver": "580", "cuda_runtime": "13.0",
           "parbench_build_type": "Release", "parbench_fixtures_version": "1", "parbench_seed": "7",
           "parbench_cxx_compiler": "GNU 13", "parbench_cuda_compiler": "NVIDIA 13.0",
           "openblas_config": "OpenBLAS 0.3.26"}


def entry(name, seconds, rep, reps, device="gpu", disposition="passed", **counters):
    """One repetition; seconds in the "s" unit so the stored values are exact."""
    e = {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
         "run_type": "iteration", "repetitions": reps, "repetition_index": rep, "threads": 1,
         "iterations": 10, "real_time": seconds, "cpu_time": seconds, "time_unit": "s"}
    pb = {"disposition": disposition, "role": "variant", "device": device}
    if disposition == "incorrect":
        e.update(error_occurred=True, error_message="incorrect: 3 elements differ")
        pb["reason"] = "3 elements differ"
    elif disposition == "unsupported":
        e.update(skipped=True, skip_message="unsupported: no BLAS")
        pb["reason"] = "no BLAS"
    e.update(counters)
    e["parbench"] = pb
    return e


def aggregates(name, times):
    out = []
    for agg, v in (("mean", statistics.mean(times)), ("median", statistics.median(times)),
                   ("stddev", statistics.pstdev(times))):
        out.append({"name": name + "_" + agg, "run_name": name, "run_type": "aggregate", "aggregate_name": agg,
                    "repetitions": len(times), "threads": 1, "iterations": len(times), "real_time": v,
                    "cpu_time": v, "time_unit": "s", "parbench": {"disposition": "passed"}})
    return out


def benchmark(name, times, **kw):
    return [entry(name, t, i, len(times), GFLOPS=1.0 / t, **kw) for i, t in enumerate(times)] + aggregates(name, times)


def doc(gemm_times, sort_times=(0.5, 0.25, 0.75), **ctx):
    """A run: GEMM and Sort with the given repetition times, an error entry and an unsupported one."""
    c = dict(CONTEXT)
    c.update(ctx)
    b = benchmark(GEMM, gemm_times) + benchmark(SORT, list(sort_times), device="cpu")
    b += [entry(BAD, 0.0, 0, 1, disposition="incorrect"), entry(NOPE, 0.0, 0, 1, device="cpu",
                                                                disposition="unsupported")]
    return {"context": c, "benchmarks": b}


def sha_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="history-test-")
        self.hist = os.path.join(self.dir, "hist")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, content, compress=False):
        path = os.path.join(self.dir, name)
        text = content if isinstance(content, str) else json.dumps(content, indent=1)
        if compress:
            with gzip.open(path, "wt") as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)
        return path

    def run_tool(self, *args, tool=TOOL):
        cmd = ([tool] if tool == WRAPPER else [sys.executable, "-m", tool]) + ["--history", self.hist] + list(args)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=self.dir)
        self.assertNotIn("Traceback", p.stderr)
        for line in p.stderr.splitlines():
            self.assertTrue(line.startswith("history: "), line)
        return p

    def ok(self, *args):
        p = self.run_tool(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def fails(self, *args, match=None):
        p = self.run_tool(*args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        if match:
            self.assertIn(match, p.stderr)
        return p

    def dump(self):
        """Every row of the index, sorted: what a rebuild must reproduce."""
        con = sqlite3.connect(os.path.join(self.hist, "index.sqlite"))
        try:
            return (sorted(con.execute("SELECT * FROM runs").fetchall()),
                    sorted(con.execute("SELECT * FROM entries").fetchall()),
                    con.execute("PRAGMA user_version").fetchone()[0])
        finally:
            con.close()

    def archive(self):
        d = os.path.join(self.hist, "archive")
        out = {}
        for n in sorted(os.listdir(d)):
            with open(os.path.join(d, n), "rb") as f:
                out[n] = f.read()
        return out

    def two_runs(self):
        a = self.write("a.json", doc([0.003, 0.001, 0.002, 0.004, 0.0025]))
        b = self.write("b.json", doc([0.006, 0.005, 0.007], date="2026-11-22T12:00:00+00:00",
                                     parbench_git_revision="def"))
        p = self.ok("ingest", a, b)
        return a, b, p


class Ingest(Base):
    def test_two_runs_list_and_series(self):
        a, b, p = self.two_runs()
        self.assertEqual(p.stdout.splitlines()[0].split(" (")[0], "%s: added as run 1" % a)
        self.assertEqual(p.stdout.splitlines()[1].split(" (")[0], "%s: added as run 2" % b)
        listing = self.ok("list").stdout.splitlines()
        self.assertEqual(len(listing), 3)
        # Date order: b (Nov 22) before a (Nov 23, 08:00+01:00 = 07:00 UTC).
        self.assertTrue(listing[1].split()[0] == "2" and listing[2].split()[0] == "1", listing)
        self.assertIn("2026-11-23T07:00:00+00:00", listing[2])
        self.assertIn("2/1", listing[2])  # passed / errors
        self.assertIn("NVIDIA H200", listing[1])

        with history.History(self.hist) as h:
            m = h.machines()
            self.assertEqual(len(m), 1)
            self.assertEqual(m[0]["runs"], 2)
            self.assertEqual(m[0]["segments"], 1)
            machine = m[0]["machine"]
            self.assertEqual(h.names(machine), sorted([GEMM, SORT, BAD, NOPE]))
            pts = h.series(GEMM, machine)
            self.assertEqual([p["run_id"] for p in pts], [2, 1])
            self.assertEqual([p["revision"] for p in pts], ["def", "abc"])
            self.assertEqual((pts[0]["median"], pts[0]["low"], pts[0]["high"]), (0.006, 0.005, 0.007))
            self.assertEqual((pts[1]["median"], pts[1]["low"], pts[1]["high"]), (0.0025, 0.001, 0.004))
            self.assertEqual(pts[1]["times"], [0.003, 0.001, 0.002, 0.004, 0.0025])
            self.assertEqual(pts[1]["repetitions"], 5)  # aggregates are not repetitions
            logs = [math.log(t) for t in pts[1]["times"]]
            mad = 1.4826 * statistics.median(abs(x - statistics.median(logs)) for x in logs)
            self.assertAlmostEqual(pts[1]["mad"], mad, places=12)
            self.assertEqual(pts[1]["counters"]["GFLOPS"], 400.0)  # median of 1/t
            self.assertFalse(any(p["new_segment"] for p in pts))
            bad = h.series(BAD, machine)
            self.assertEqual([(p["disposition"], p["reason"], p["median"], p["times"]) for p in bad],
                             [("incorrect", "3 elements differ", None, [])] * 2)
            nope = h.series(NOPE, machine)
            self.assertEqual(nope[0]["disposition"], "unsupported")
            self.assertEqual(nope[0]["reason"], "no BLAS")
            runs = h.runs()
            self.assertEqual([r["id"] for r in runs], [2, 1])
            self.assertEqual(runs[0]["context"]["parbench_git_revision"], "def")
            self.assertEqual(runs[1]["source"], a)

        out = self.ok("series", SORT).stdout
        self.assertIn("500 ms", out)
        self.assertIn("250 ms - 750 ms", out)
        self.assertNotIn("one point", out)
        out = self.ok("series", BAD).stdout
        self.assertIn("incorrect: 3 elements differ", out)
        self.assertIn(machine, self.ok("machines").stdout)

    def test_reingest_is_a_noop(self):
        a, b, _ = self.two_runs()
        before, files = self.dump(), self.archive()
        p = self.ok("ingest", b, a)
        self.assertEqual(p.stdout.splitlines(), ["%s: already in the history (run 2)" % b,
                                                 "%s: already in the history (run 1)" % a])
        self.assertEqual(self.dump(), before)
        self.assertEqual(self.archive(), files)
        self.assertEqual(len(before[0]), 2)
        self.assertEqual(len(before[1]), 8)

    def test_gzip_input_and_archive_holds_the_bytes(self):
        d = doc([0.001, 0.002, 0.003])
        gz = self.write("r.json.gz", d, compress=True)
        p = self.ok("ingest", gz)
        self.assertIn("added as run 1", p.stdout)
        # The same JSON uncompressed: the same bytes, the same run.
        plain = self.write("r.json", d)
        self.assertIn("already in the history (run 1)", self.ok("ingest", plain).stdout)
        (name, raw), = self.archive().items()
        with open(plain, "rb") as f:
            data = f.read()
        self.assertEqual(gzip.decompress(raw), data)
        self.assertEqual(name, hashlib.sha256(data).hexdigest() + ".json.gz")

    def test_refused_input_changes_nothing(self):
        self.two_runs()
        before, files = self.dump(), self.archive()
        text = json.dumps(doc([0.001, 0.002, 0.003], date="2026-11-24T00:00:00+00:00"), indent=1)
        cut = self.write("cut.json", text[: text.index(SORT) + 200])
        p = self.fails("ingest", cut, match="ci/close-truncated")
        self.assertIn("cut off mid-run", p.stderr)
        self.fails("ingest", self.write("junk.json", "not json at all"), match="junk.json")
        self.fails("ingest", os.path.join(self.dir, "missing.json"), match="no such file")
        only_aggr = doc([0.001])
        only_aggr["benchmarks"] = [e for e in only_aggr["benchmarks"] if e.get("run_type") == "aggregate"]
        self.fails("ingest", self.write("aggr.json", only_aggr), match="only aggregates")
        self.assertEqual(self.dump(), before)
        self.assertEqual(self.archive(), files)
        # A refused file among good ones: the others are ingested, exit 2.
        good = self.write("c.json", doc([0.001, 0.002, 0.003], date="2026-11-24T00:00:00+00:00"))
        p = self.run_tool("ingest", cut, good)
        self.assertEqual(p.returncode, 2)
        self.assertIn("added as run 3", p.stdout)
        self.assertEqual(len(p.stderr.splitlines()), 1)

    def test_entries_on_another_gpu_model_are_refused(self):
        # A suite spread over a host's GPUs names each entry's model; one that
        # is not the context's would join this machine's series: refused,
        # nothing stored. Entries of the context's model ingest as before.
        self.two_runs()
        before = self.dump()
        d = doc([0.001, 0.002, 0.003], date="2026-11-24T00:00:00+00:00")
        model = d["context"]["gpu"]
        for e in d["benchmarks"]:
            e["parbench"]["gpu"] = model
        d["benchmarks"][0]["parbench"]["gpu"] = "Another GPU"
        self.fails("ingest", self.write("mixed.json", d), match="entries ran on Another GPU, not the context's GPU")
        self.assertEqual(self.dump(), before)
        d["benchmarks"][0]["parbench"]["gpu"] = model
        self.assertIn("added as run 3", self.ok("ingest", self.write("same.json", d)).stdout)

    def test_refused_defects_are_the_loaders_line(self):
        self.two_runs()
        before, files = self.dump(), self.archive()
        for case, change in (("text", "fast"), ("nan", float("nan")), ("null", None)):
            d = doc([0.001, 0.002, 0.003], date="2026-11-24T00:00:00+00:00")
            d["benchmarks"][1]["real_time"] = change
            path = self.write("%s.json" % case, d)
            p = self.fails("ingest", path)
            self.assertRegex(p.stderr, r"^history: %s: malformed entry: 'real_time' is (a string|not finite|null) "
                                       r"\(entry 1 '%s'\); ci/close-truncated %s FIXED.json writes a copy without it\n$"
                             % (path, re.escape(GEMM), path))
        self.assertEqual(self.dump(), before)
        self.assertEqual(self.archive(), files)

    def test_refused_before_any_history(self):
        cut = self.write("cut.json", json.dumps(doc([0.001]))[:300])
        self.fails("ingest", cut)
        self.assertEqual(os.listdir(os.path.join(self.hist, "archive")), [])


class Identity(Base):
    """A run is its content: context and entries, not the file's bytes."""

    def test_a_reserialised_copy_is_already_in_the_history(self):
        a, b, _ = self.two_runs()
        before, files = self.dump(), self.archive()
        with open(a) as f:
            d = json.load(f)
        copies = [self.write("sorted.json", json.dumps(d, sort_keys=True, separators=(",", ":"))),
                  self.write("indent.json", json.dumps(d, indent=4)),
                  self.write("gz.json.gz", json.dumps(d), compress=True)]
        # Keys in another order, numbers spelled otherwise (1 for 1.0).
        shuffled = {"benchmarks": [dict(reversed(list(e.items()))) for e in d["benchmarks"]],
                    "context": dict(reversed(list(d["context"].items())))}
        shuffled["benchmarks"][-1]["iterations"] = float(shuffled["benchmarks"][-1]["iterations"])
        copies.append(self.write("shuffled.json", shuffled))
        for path in copies:
            self.assertNotEqual(sha_of(path), sha_of(a))
            p = self.ok("ingest", path)
            self.assertEqual(p.stdout, "%s: already in the history (run 1)\n" % path)
            self.assertEqual(p.stderr, "")
        self.assertEqual(self.dump(), before)
        self.assertEqual(self.archive(), files)
        # One value changed: another run.
        d["benchmarks"][0]["real_time"] = 0.0031
        self.assertIn("added as run 3", self.ok("ingest", self.write("changed.json", d)).stdout)

    def test_an_old_index_with_a_duplicate_is_rebuilt_with_one_run_per_content(self):
        a, b, _ = self.two_runs()
        # A history written before contents: index version 1, and a
        # re-serialised copy of a ingested as run 3, archived beside it.
        with open(a) as f:
            d = json.load(f)
        data = json.dumps(d, indent=3).encode()
        sha = hashlib.sha256(data).hexdigest()
        member = os.path.join(self.hist, "archive", sha + ".json.gz")
        with open(member, "wb") as f:
            f.write(history.gzip_with_comment(data, json.dumps({"parbench_history": 1, "ingest": 3,
                                                                "source": "copy.json"})))
        con = sqlite3.connect(os.path.join(self.hist, "index.sqlite"))
        con.execute("PRAGMA user_version = 1")
        con.close()
        p = self.ok("list")
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 2, p.stderr)
        self.assertIn("%s.json.gz: skipped (the same content as run 1, %s.json.gz); left in place"
                      % (sha, sha_of(a)), lines[0])
        self.assertIn("has version 1, not %d: rebuilt from the archive (2 runs, 1 archive members skipped"
                      % history.INDEX_VERSION, lines[1])
        self.assertEqual(len(p.stdout.splitlines()), 3)
        self.assertTrue(os.path.exists(member))
        self.assertEqual(self.ok("ingest", self.write("again.json", data.decode())).stdout.split(" (")[0],
                         "%s: already in the history" % os.path.join(self.dir, "again.json"))

    def test_an_archived_member_with_a_malformed_entry_still_indexes(self):
        # Ingested before the contract refused it: load() dropped the entry then,
        # and a rebuild indexes the run as it was.
        d = doc([0.001, 0.002, 0.003])
        d["benchmarks"][0]["real_time"] = "fast"
        data = json.dumps(d).encode()
        os.makedirs(os.path.join(self.hist, "archive"))
        with open(os.path.join(self.hist, "archive", hashlib.sha256(data).hexdigest() + ".json.gz"), "wb") as f:
            f.write(history.gzip_with_comment(data, json.dumps({"parbench_history": 1, "ingest": 1})))
        p = self.ok("series", GEMM)
        self.assertIn("is missing: rebuilt from the archive (1 runs)", p.stderr)
        self.assertIn("   2 ", p.stdout)  # two repetitions left
        # Ingested today, the same file is refused, like any other bad input.
        before = self.dump()
        self.fails("ingest", self.write("d.json", d), match="malformed entry: 'real_time' is a string (entry 0")
        self.assertEqual(self.dump(), before)

    def test_a_lost_member_comes_back_from_a_reserialised_copy(self):
        a, _, _ = self.two_runs()
        os.remove(os.path.join(self.hist, "archive", sha_of(a) + ".json.gz"))
        with open(a) as f:
            copy_ = self.write("copy.json", json.dumps(json.load(f), indent=5))
        p = self.ok("ingest", copy_)
        self.assertIn("already in the history (run 1)", p.stdout)
        self.assertIn("written again from this copy (the same content), as archive/%s.json.gz" % sha_of(copy_),
                      p.stderr)
        before = self.dump()
        self.ok("rebuild")
        self.assertEqual(self.dump(), before)


class BadSeries(Base):
    def test_a_zero_time_is_a_failed_point(self):
        self.two_runs()
        d = doc([0.001, 0.002, 0.003], date="2026-11-24T00:00:00+00:00")
        d["benchmarks"][1]["real_time"] = 0.0
        p = self.ok("ingest", self.write("z.json", d))
        self.assertIn("added as run 3", p.stdout)
        self.assertEqual(p.stderr, "")
        with history.History(self.hist) as h:
            pts = h.series(GEMM, h.machines()[0]["machine"])
        self.assertEqual([(x["disposition"], x["median"]) for x in pts][-1], ("failed", None))
        self.assertEqual(pts[-1]["reason"], "passed with a time per iteration of 0.0: not a measurement")
        self.assertIn("failed: passed with a time per iteration of 0.0: not a measurement",
                      self.ok("series", GEMM).stdout)

    def test_a_series_of_another_machine(self):
        self.two_runs()
        self.ok("ingest", self.write("h100.json", doc([0.001, 0.002, 0.003], gpu="NVIDIA H100")))
        with history.History(self.hist) as h:
            ms = [m["machine"] for m in h.machines()]
        p = self.fails("series", SORT, "--machine", "f00f", match="no machine f00f in the history (it has: ")
        for m in ms:
            self.assertIn(m, p.stderr)


class Rebuild(Base):
    def test_rebuild_reproduces_the_rows(self):
        self.two_runs()
        # Same date twice: ingest order decides, and must survive the rebuild.
        self.ok("ingest", self.write("c.json", doc([0.1, 0.2, 0.3], date="2026-11-22T12:00:00+00:00",
                                                   parbench_git_revision="ghi")))
        before = self.dump()
        p = self.ok("rebuild")
        self.assertIn("3 runs", p.stdout)
        self.assertEqual(p.stderr, "")
        self.assertEqual(self.dump(), before)
        with history.History(self.hist) as h:
            machine = h.machines()[0]["machine"]
            self.assertEqual([x["revision"] for x in h.series(GEMM, machine)], ["def", "ghi", "abc"])

    def test_corrupt_index_is_rebuilt_automatically(self):
        self.two_runs()
        before = self.dump()
        with open(os.path.join(self.hist, "index.sqlite"), "wb") as f:
            f.write(b"garbage, not SQLite " * 500)
        p = self.ok("list")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("corrupt", p.stderr)
        self.assertIn("rebuilt from the archive (2 runs", p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), 3)
        self.assertEqual(self.dump(), before)
        self.assertTrue(os.path.exists(os.path.join(self.hist, "index.sqlite.bad")))
        self.assertEqual(self.ok("list").stderr, "")  # once only

    def test_missing_or_old_index_is_rebuilt(self):
        self.two_runs()
        before = self.dump()
        os.remove(os.path.join(self.hist, "index.sqlite"))
        p = self.ok("series", GEMM)
        self.assertIn("is missing", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1)
        self.assertEqual(self.dump(), before)
        con = sqlite3.connect(os.path.join(self.hist, "index.sqlite"))
        con.execute("PRAGMA user_version = 0")
        con.close()
        p = self.ok("machines")
        self.assertIn("has version 0", p.stderr)
        self.assertEqual(self.dump(), before)

    def test_index_corrupted_while_open_is_rebuilt(self):
        self.two_runs()
        before = self.dump()
        lines = []
        h = history.History(self.hist, log=lines.append)
        size = os.path.getsize(os.path.join(self.hist, "index.sqlite"))
        with open(os.path.join(self.hist, "index.sqlite"), "r+b") as f:  # every page but the first
            f.seek(4096)
            f.write(b"\x07" * (size - 4096))
        machine = h.machines()[0]["machine"]
        self.assertEqual([p["revision"] for p in h.series(GEMM, machine)], ["def", "abc"])
        h.close()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("corrupt", lines[0])
        self.assertEqual(self.dump(), before)

    def test_lost_member_of_an_indexed_run_is_written_again(self):
        a, _, _ = self.two_runs()
        member = os.path.join(self.hist, "archive", sha_of(a) + ".json.gz")
        with open(member, "rb") as f:
            kept = f.read()
        os.remove(member)
        p = self.ok("ingest", a)
        self.assertIn("already in the history (run 1)", p.stdout)
        self.assertIn("written again", p.stderr)
        with open(member, "rb") as f:
            self.assertEqual(f.read(), kept)

    def test_corrupt_archive_member_is_skipped_and_kept(self):
        a, b, _ = self.two_runs()
        files = self.archive()
        victim = sorted(files)[0]
        path = os.path.join(self.hist, "archive", victim)
        with open(path, "wb") as f:
            f.write(files[victim][: len(files[victim]) // 2])  # cut-off gzip
        p = self.ok("rebuild")
        self.assertIn(victim, p.stderr)
        self.assertIn("skipped", p.stderr)
        self.assertIn("left in place", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1)
        self.assertIn("1 runs", p.stdout)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), files[victim][: len(files[victim]) // 2])
        self.assertEqual(len(self.dump()[0]), 1)
        # Not gzip at all, and JSON that is not a run: skipped too.
        with open(path, "wb") as f:
            f.write(b"{}")
        p = self.ok("rebuild")
        self.assertIn("not gzip", p.stderr)
        # Ingesting the lost run again writes its member anew.
        lost = next(f for f in (a, b) if sha_of(f) + ".json.gz" == victim)
        self.assertIn("added as run", self.ok("ingest", lost).stdout)
        with open(lost, "rb") as f:
            self.assertEqual(gzip.decompress(self.archive()[victim]), f.read())
        self.assertEqual(len(self.dump()[0]), 2)


class Machines(Base):
    def test_driver_change_is_a_new_segment(self):
        self.ok("ingest", self.write("a.json", doc([0.001, 0.002, 0.003], date="2026-11-20T00:00:00+00:00")))
        self.ok("ingest", self.write("b.json", doc([0.001, 0.002, 0.003], date="2026-11-21T00:00:00+00:00",
                                                   gpu_driver="590")))
        with history.History(self.hist) as h:
            m = h.machines()
            self.assertEqual(len(m), 1)
            self.assertEqual(m[0]["segments"], 2)
            pts = h.series(GEMM, m[0]["machine"])
            self.assertNotEqual(pts[0]["segment"], pts[1]["segment"])
            self.assertEqual([p["new_segment"] for p in pts], [False, True])
            self.assertEqual(pts[1]["segment_change"], [["gpu_driver", "580", "590"]])
        out = self.ok("series", GEMM).stdout
        self.assertIn("new segment: gpu_driver 580 -> 590", out)
        self.assertIn("* " + pts[1]["segment"], out)

    def test_another_gpu_is_another_machine(self):
        self.ok("ingest", self.write("a.json", doc([0.001, 0.002, 0.003])))
        self.ok("ingest", self.write("b.json", doc([0.001, 0.002, 0.003], gpu="NVIDIA H100", gpu_sm_count="132")))
        with history.History(self.hist) as h:
            ms = h.machines()
            self.assertEqual(len(ms), 2)
            ids = [m["machine"] for m in ms]
        p = self.fails("series", GEMM, match="--machine")
        for i in ids:
            self.assertIn(i, p.stderr)
        out = self.ok("series", GEMM, "--machine", ids[1][:6]).stdout
        self.assertIn("NVIDIA H100", out)
        self.assertIn("one point: no trend yet", out)
        listing = self.ok("list", "--machine", ids[0]).stdout.splitlines()
        self.assertEqual(len(listing), 2)
        self.fails("series", GEMM, "--machine", "ffffffffffff", match="no machine ffffffffffff")
        self.fails("list", "--machine", "zz", match="no machine zz")

    def test_run_without_hardware_in_its_context(self):
        d = doc([0.001, 0.002, 0.003])
        for k in history.MACHINE_KEYS:
            del d["context"][k]
        p = self.ok("ingest", self.write("a.json", d))
        self.assertIn("added as run 1", p.stdout)
        self.assertIn("names no CPU or GPU", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1)
        self.assertIn("unknown hardware", self.ok("list").stdout)

    def test_a_machine_without_a_gpu_is_named_by_its_cpu(self):
        # bench writes why there is no GPU in the gpu key; the CPU names the machine.
        d = doc([0.001, 0.002, 0.003], gpu="none (no GPU here: no NVIDIA driver is installed)")
        del d["context"]["gpu_sm_count"]
        self.ok("ingest", self.write("a.json", d))
        out = self.ok("list").stdout
        self.assertIn("Xeon", out)
        self.assertNotIn("driver", out)
        with history.History(self.hist) as h:
            self.assertEqual((h.machines()[0]["gpu"], h.machines()[0]["cpu"]), (None, "Xeon"))
            self.assertIsNone(h.runs()[0]["gpu"])
        self.assertNotIn("no NVIDIA driver", self.ok("machines").stdout)
        self.assertEqual(history.gpu_name("NVIDIA H200"), "NVIDIA H200")
        self.assertIsNone(history.gpu_name("none (built without CUDA)"))

    def test_one_point(self):
        self.ok("ingest", self.write("a.json", doc([0.001, 0.002, 0.003])))
        out = self.ok("series", GEMM).stdout.splitlines()
        self.assertEqual(len(out), 4)
        self.assertIn("2 ms", out[2])
        self.assertEqual(out[3], "one point: no trend yet")

    def test_keys_cover_the_comparators_fingerprint(self):
        try:
            from regress.verdict import checks as compare
        except ImportError as e:  # numpy missing: nothing to check against
            self.skipTest("compare.py cannot be imported: %s" % e)
        hard = {k for keys in compare.HARD.values() for k in keys}
        soft = {k for keys in compare.SOFT.values() for k in keys}
        self.assertEqual(hard - set(history.MACHINE_KEYS) - set(history.SEGMENT_KEYS), set())
        self.assertEqual(set(history.MACHINE_KEYS) & set(history.SEGMENT_KEYS), set())
        # Every key names a fingerprint key the comparator knows, once.
        self.assertEqual(set(history.MACHINE_KEYS) - hard, set())
        self.assertEqual(set(history.SEGMENT_KEYS) - hard - soft, set())
        self.assertEqual(len(set(history.SEGMENT_KEYS)), len(history.SEGMENT_KEYS))


# The documented shapes: Bencher's BMF JSON schema (benchmark -> measure ->
# {value, lower_value, upper_value}, value required), and the input of
# github-action-benchmark's customSmallerIsBetter tool (a list of {name,
# unit, value} with optional range and extra, all strings but value).
BMF_SCHEMA = {"type": "object", "patternProperties": {".+": {
    "type": "object", "patternProperties": {".+": {
        "type": "object", "required": ["value"],
        "properties": {"value": {"type": "number"}, "lower_value": {"type": "number"},
                       "upper_value": {"type": "number"}}}}}}}
GAB_SCHEMA = {"type": "array", "items": {
    "type": "object", "required": ["name", "unit", "value"],
    "properties": {"name": {"type": "string"}, "unit": {"type": "string"}, "value": {"type": "number"},
                   "range": {"type": "string"}, "extra": {"type": "string"}}}}


class Export(Base):
    def test_bmf_and_github_action_benchmark(self):
        import jsonschema
        self.two_runs()
        out = os.path.join(self.dir, "bmf.json")
        p = self.ok("export", "bmf", "--out", out)
        # The latest run by date: run 1 (23 Nov; run 2 is dated the 22nd).
        self.assertEqual(p.stderr.strip(), "history: run 1 (2026-11-23T07:00:00+00:00), 2 benchmarks, as bmf in %s"
                         % out)
        with open(out) as f:
            bmf = json.load(f)
        jsonschema.validate(bmf, BMF_SCHEMA)
        # Run 1's GEMM: repetitions 3, 1, 2, 4, 2.5 ms: median 2.5 ms, range 1..4, in ns.
        self.assertEqual(bmf[GEMM], {"latency": {"value": 2.5e6, "lower_value": 1e6, "upper_value": 4e6}})
        self.assertEqual(sorted(bmf), sorted([GEMM, SORT]))
        p = self.ok("export", "github-action-benchmark", "--run", "2")
        gab = json.loads(p.stdout)
        jsonschema.validate(gab, GAB_SCHEMA)
        g = next(x for x in gab if x["name"] == GEMM)
        # Run 2: 6, 5, 7 ms: median 6 ms, half the 5..7 ms span.
        self.assertEqual((g["unit"], g["value"], g["range"]), ("ns", 6e6, "\u00b1 1e+06"))
        self.assertIn("median of 3 repetitions; revision def", g["extra"])
        # A wrong document fails the schemas the tests hold, so they check something.
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate({GEMM: {"latency": {"value": "6"}}}, BMF_SCHEMA)
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate([{"name": GEMM, "value": 1.0}], GAB_SCHEMA)

    def test_export_bad_input(self):
        self.fails("export", "bmf", match="no history there")
        self.two_runs()
        self.fails("export", "csv", match="invalid choice: 'csv'")
        self.fails("export", "bmf", "--run", "9", match="no run 9")
        self.fails("export", "bmf", "--out", os.path.join(self.dir, "no", "such", "dir.json"), match="cannot write")
        other = self.write("c.json", doc([0.001, 0.002, 0.003], gpu="NVIDIA H100 80GB HBM3"))
        self.ok("ingest", other)
        self.fails("export", "bmf", match="name one with --machine")


class Command(Base):
    def test_errors_are_one_line(self):
        self.fails("list", match="no history there")
        self.fails("series", GEMM, match="no history there")
        self.fails(match="give a command")
        self.fails("frobnicate", match="invalid choice")
        self.fails("ingest", match="the following arguments are required")
        self.ok("ingest", self.write("a.json", doc([0.001, 0.002, 0.003])))
        self.fails("series", GEMM.replace("M:64", "M:65"), match="did you mean " + GEMM)
        self.fails("series", "Nothing/Like/This", match="no benchmark Nothing/Like/This")

    def test_empty_history(self):
        os.makedirs(self.hist)
        self.assertIn("no runs", self.ok("list").stdout)
        self.fails("series", GEMM, match="holds no runs")

    def test_wrapper(self):
        a = self.write("a.json", doc([0.001, 0.002, 0.003]))
        p = self.run_tool("ingest", a, tool=WRAPPER)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("added as run 1", p.stdout)


if __name__ == "__main__":
    unittest.main()
