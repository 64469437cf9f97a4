#!/usr/bin/env python3
"""Tests of plots/report_html.py: the summary's counts, per-family columns chosen
by counter kind (and, for files before schema 1, by what repeats an argument),
row numbers equal to the medians of the JSON entries, unsupported entries in the
toggle and not in the tables, a source column with two sources, context as text,
HTML and Markdown escaping, and the real H200 files rendering without error."""
import html.parser
import json
import os
import re
import statistics
import tempfile
import unittest

from regress.load import derived
from regress.load import fmt, results
from plots import report_format
from plots import report_html
from plots.report_draw import Dropped

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DATA = os.path.join(HERE, "data")
H200 = os.path.join(ROOT, "results", "reference", "nvidia-h200")

EVIL = "<script>alert(1)</script> & a|b"

KINDS = {
    "GFLOPS": {"kind": "rate", "unit": "GFLOP/s", "better": "higher"},
    "seconds_per_call": {"kind": "time", "unit": "s", "better": "lower"},
    "seconds_per_iteration": {"kind": "time", "unit": "s", "better": "lower"},
    "M": {"kind": "problem"}, "N": {"kind": "problem"}, "K": {"kind": "problem"}, "D": {"kind": "problem"},
    "cpu_threads": {"kind": "knob"}, "block": {"kind": "knob"},
    "flops_per_call": {"kind": "model", "unit": "flop"},
    "lloyd_iterations": {"kind": "result"}, "inertia": {"kind": "result"},
    "throttled": {"kind": "clock"}, "sm_clock_min_mhz": {"kind": "clock", "unit": "MHz"},
    "on_gpu": {"kind": "flag"},
}

CONTEXT = {
    "date": "2026-11-22T00:06:54+00:00", "host_name": "vm", "num_cpus": 16, "cpu_model": "TestCPU",
    "cpu_cores": "16", "gpu": "NVIDIA H200", "gpu_driver": "580.159.04", "parbench_git_revision": "abc123",
    "parbench_profile": "default",
    "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 1},
               {"type": "Unified", "level": 2, "size": 2097152, "num_sharing": 2},
               {"type": "Unified", "level": 3, "size": 314572800, "num_sharing": 16}],
    "load_avg": [0.21, 0.27, 0.12],
}

PREFIX = {"unsupported": "unsupported: ", "incorrect": "incorrect: ", "failed": "failed: ",
          "out_of_memory": "out of memory: "}


def entry(name, seconds, disposition="passed", reason="", rep=0, reps=1, device="cpu", **counters):
    """One Google Benchmark iteration entry, with the schema-1 parbench object and,
    for the older loader, the message prefixes."""
    e = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
         "repetitions": reps, "repetition_index": rep, "threads": 1, "iterations": 1,
         "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us"}
    pb = {"disposition": disposition, "role": "variant", "device": device}
    if disposition != "passed":
        e["error_occurred"] = True
        e["error_message"] = PREFIX[disposition] + reason
        e["real_time"] = e["cpu_time"] = 0
        pb["reason"] = reason
    else:
        e.update(counters)
        e["seconds_per_call"] = seconds
    e["parbench"] = pb
    return e


def median_entry(name, seconds, **counters):
    e = entry(name, seconds, **counters)
    e.update(name=name + "/manual_time_median", run_type="aggregate", aggregate_name="median")
    return e


NAIVE = "GEMM/Naive/op:AB/type:f32/M:64/N:64/K:64"
OMP = "GEMM/OMP/op:AB/type:f32/M:64/N:64/K:64/threads:2"
TILED = "GEMM/CUDA.Tiled/op:AB/type:f32/M:64/N:64/K:64/block:16"
SHARED = "GEMM/CUDA.Shared/op:AB/type:f32/M:64/N:64/K:64/block:32"
CUBLAS = "GEMM/cuBLAS/op:AB/type:f32/M:64/N:64/K:64"
CUBLAS_BIG = "GEMM/cuBLAS/op:AB/type:f32/M:200000/N:200000/K:1"
REGBLOCK = "GEMM/CUDA.RegBlock/op:AB/type:f32/M:64/N:64/K:64"
SEQ = "KMeans/Seq/cfg:x/dist:uniform/N:100/D:2/K:4"


def synthetic(schema=True):
    g = dict(M=64, N=64, K=64, flops_per_call=524288)
    b = []
    for i, (s, gf) in enumerate(((1.0, 3.0), (2.0, 2.0), (4.0, 1.0))):  # median 2 s, GFLOPS 2; CV above 5%
        b.append(entry(NAIVE, s, rep=i, reps=3, GFLOPS=gf, **g))
    b.append(median_entry(NAIVE, 2.0, GFLOPS=2.0, **g))
    b.append(entry(OMP, 0.5, GFLOPS=8.0, cpu_threads=2, **g))
    b.append(entry(TILED, 0, "incorrect", "max error 1 > 1e-3 " + EVIL, device="gpu"))
    b.append(entry(SHARED, 0, "unsupported", "needs 300000 bytes of shared memory", device="gpu"))
    for i, s in enumerate((0.010, 0.010)):
        b.append(entry(CUBLAS, s, rep=i, reps=2, device="gpu", GFLOPS=50.0, throttled=1 if i else 0,
                       sm_clock_min_mhz=1700 if i else 1980, **g))
    b.append(entry(CUBLAS_BIG, 0, "out_of_memory", "cudaMalloc: out of memory", device="gpu"))
    b.append(entry(REGBLOCK, 0, "failed", "launch failed", device="gpu"))
    b.append(entry(SEQ, 6.0, seconds_per_iteration=0.6, lloyd_iterations=10, inertia=12.5, N=100, D=2, K=4))
    ctx = dict(CONTEXT)
    if schema:
        ctx["parbench_schema"] = 1
        ctx["parbench_counters"] = KINDS
    else:
        for e in b:
            del e["parbench"]
    return {"context": ctx, "benchmarks": b}


def clean():
    b = [entry("Sort/Std/key:u32/n:1024/length:1024", 0.001, elements_per_second=1.024e6)]
    return {"context": dict(CONTEXT, parbench_schema=1, parbench_counters={
        "elements_per_second": {"kind": "rate", "unit": "1/s", "better": "higher"}}), "benchmarks": b}


class Tables(html.parser.HTMLParser):
    """Every <table id=...>: header texts and rows of (data-v, text, class), row classes."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.cur, self.cell, self.in_th = {}, None, None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id"):
            self.cur = self.tables[a["id"]] = {"head": [], "rows": [], "row_class": []}
        elif self.cur is None:
            return
        elif tag == "tr":
            self.row = []
            self.row_class = a.get("class", "")
        elif tag in ("td", "th"):
            self.cell = [a.get("data-v"), "", a.get("class", "")]
            self.in_th = tag == "th" and self.row is not None

    def handle_endtag(self, tag):
        if self.cur is None:
            return
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(tuple(self.cell))
            self.cell = None
        elif tag == "tr":
            if self.row and all(c[0] is None and c[2] == "" for c in self.row) and not self.cur["head"] \
                    and not self.cur["rows"]:
                self.cur["head"] = [c[1] for c in self.row]
            else:
                self.cur["rows"].append(self.row)
                self.cur["row_class"].append(self.row_class)
            self.row = None
        elif tag == "table":
            self.cur = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data

    row = None


def save(tmp, name, doc):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory()
        self.tmp = self.tmpdir.name

    def tearDown(self):
        self.tmpdir.cleanup()

    def render(self, runs, charts=(), missing=(), findings=()):
        out = os.path.join(self.tmp, "out")
        os.makedirs(out, exist_ok=True)
        for name, _, _ in charts:
            for ext in ("png", "svg"):
                open(os.path.join(out, "%s.%s" % (name, ext)), "w").close()
        wrote = report_html.write_report(out, list(runs), list(charts), list(missing), list(findings))
        self.assertEqual(wrote[:2], ["index.html", "report.md"])
        self.pages = {}
        for name in [wrote[0]] + wrote[2:]:
            with open(os.path.join(out, name), encoding="utf-8") as f:
                self.pages[name] = f.read()
        # The summary, then each family's page: the tables and charts are there.
        page = "\n".join(self.pages.values())
        with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
            md = f.read()
        return page, md, Tables(page)

    def load(self, name, doc):
        return results.load(save(self.tmp, name, doc))

    @staticmethod
    def column(table, title):
        return table["head"].index(title)

    def row(self, table, variant, **args):
        hits = []
        for r in table["rows"]:
            cells = dict(zip(table["head"], r))
            if cells["variant"][1] == variant and all(cells[k][1] == v for k, v in args.items()):
                hits.append(cells)
        self.assertEqual(len(hits), 1, (variant, args, table["rows"]))
        return hits[0]


class Summary(ReportTest):
    def test_counts_by_family_and_disposition(self):
        page, md, t = self.render([self.load("a", synthetic())])
        counts = {r[0][1]: [c[1] for c in r[1:]] for r in t.tables["what-ran"]["rows"]}
        self.assertEqual(t.tables["what-ran"]["head"],
                         ["family", "variants", "instances", "passed", "unsupported", "incorrect", "out of memory",
                          "failed"])
        # GEMM: Naive, OMP, CUDA.Tiled, CUDA.Shared, cuBLAS (2 instances), CUDA.RegBlock
        self.assertEqual(counts["GEMM"], ["6", "7", "3", "1", "1", "1", "1"])
        self.assertEqual(counts["KMeans"], ["1", "1", "1", "0", "0", "0", "0"])
        self.assertEqual(counts["all families"], ["7", "8", "4", "1", "1", "1", "1"])
        self.assertIn("| GEMM | 6 | 7 | 3 | 1 | 1 | 1 | 1 |", md)

    def test_machine_per_source(self):
        a = synthetic()
        b = synthetic()
        b["context"]["parbench_git_revision"] = "def456"
        a["context"]["cpu_simd"] = "avx2"
        b["context"]["cpu_simd"] = "avx512"
        page, md, t = self.render([self.load("a", a), self.load("b", b)])
        rows = {r[0][1]: [c[1] for c in r[1:]] for r in t.tables["on-what"]["rows"]}
        self.assertEqual(rows["CPU"], ["TestCPU"])  # equal: shown once
        self.assertEqual(rows["GPU"], ["NVIDIA H200"])
        self.assertEqual(rows["GPU driver"], ["580.159.04"])
        self.assertEqual(rows["cores"], ["16"])
        self.assertEqual(rows["git revision"], ["abc123", "def456"])
        self.assertEqual(rows["CPU kernels"], ["avx2", "avx512"])  # the instruction set OMP.Blocked ran
        self.assertEqual(rows["profile"], ["default"])
        counts = [[c[1] for c in r] for r in t.tables["what-ran"]["rows"]]
        self.assertIn(["a", "GEMM", "6", "7", "3", "1", "1", "1", "1"], counts)
        self.assertIn(["b", "KMeans", "1", "1", "1", "0", "0", "0", "0"], counts)

    def test_suspicious_lists_everything(self):
        run = self.load("a", synthetic())
        run.warnings = ["a loader warning <w>"]
        page, md, t = self.render([run], findings=[("warning", "fraction 1.2 of ceiling"),
                                                   ("info", "superlinear efficiency 1.3")])
        sus = page[page.index("id='suspicious'"):page.index("<h2", page.index("id='suspicious'"))]
        self.assertIn("fraction 1.2 of ceiling", sus)
        self.assertIn("superlinear efficiency 1.3", sus)
        self.assertIn("a loader warning &lt;w&gt;", sus)
        self.assertIn("incorrect %s: max error 1" % TILED, sus)
        self.assertIn("out of memory %s: cudaMalloc: out of memory" % CUBLAS_BIG, sus)
        self.assertIn("failed %s: launch failed" % REGBLOCK, sus)
        want_cv = derived.cv([1.0, 2.0, 4.0])
        self.assertGreater(want_cv, derived.HIGH_CV)
        self.assertIn("%s: CV %s over 3 repetitions" % (NAIVE, fmt.pct(want_cv, digits=3, missing="", sig=True)), sus)
        self.assertIn("%s: GPU throttled in 1 of 2 repetitions; SM clock down to 1700 MHz" % CUBLAS, sus)
        self.assertNotIn(SHARED, sus)  # unsupported is not suspicious
        self.assertNotIn("Nothing suspicious", page)
        self.assertIn("- a loader warning &lt;w&gt;", md)

    def test_suspicious_grouped_machine_first(self):
        # 46 low-efficiency lines on a loaded machine: the load comes first,
        # open; the efficiency findings are one collapsed line with counts by
        # variant and a pointer to the load.
        a = synthetic()
        a["context"]["load_avg"] = [2.0, 1.9, 1.5]
        a["context"]["num_cpus"] = 2
        findings = [("warning", "GEMM OMP M:%d: efficiency 0.05 at 2 threads" % i, "low-efficiency", "OMP")
                    for i in range(40)]
        findings += [("warning", "GEMM OMP.Blocked M:%d: efficiency 0.1 at 2 threads" % i, "low-efficiency",
                      "OMP.Blocked") for i in range(6)]
        findings += [("info", "an old-style finding")]
        page, md, t = self.render([self.load("a", a)], findings=findings)
        sus = page[page.index("id='suspicious'"):page.index("<h2", page.index("id='suspicious'"))]
        heads = re.findall(r"<summary><b>([^<]*)</b>", sus)
        self.assertTrue(heads[0].startswith("Machine load: 1"), heads)
        self.assertEqual(heads.index("Slower with more threads than one thread would be: 46 (by variant: OMP 40, "
                                     "OMP.Blocked 6)"), heads.index("Entries that did not pass: 3 (by variant: "
                                                                    "CUDA.RegBlock 1, CUDA.Tiled 1, cuBLAS 1)") + 1)
        self.assertEqual(heads[-1], "Other findings of the charts: 1")
        self.assertIn("<details class='sus-group info' open><summary><b>Machine load: 1", sus)
        self.assertIn("load average 2.0 on 2 CPUs", sus)
        self.assertIn("The machine-wide causes above may explain these.", sus)
        self.assertEqual(sus.count("efficiency 0.05 at 2 threads"), 40)   # every item still there, folded
        self.assertIn("**Slower with more threads than one thread would be: 46 (by variant: OMP 40, OMP.Blocked 6)**",
                      md)
        # A long machine-wide group is folded too: one line, like the others.
        throttled = [("warning", "GEMM CUDA.X M:%d: GPU throttled" % i, "throttled", "CUDA.X") for i in range(4)]
        page, md, t = self.render([self.load("a", a)], findings=throttled)
        self.assertIn("<details class='sus-group warning'><summary><b>GPU clocks throttled: 5 (", page)
        self.assertIn("<details class='sus-group info' open><summary><b>Machine load: 1", page)

    def test_nothing_suspicious(self):
        page, md, t = self.render([self.load("clean", clean())])
        self.assertIn("Nothing suspicious", page)
        self.assertIn("Nothing suspicious", md)
        self.assertNotIn("Nothing was measured", page)

    def test_a_report_of_nothing_says_so(self):
        # Only unsupported entries: no reassuring "Nothing suspicious".
        doc = clean()
        doc["benchmarks"] = [entry("Sort/CUDA.Bitonic/key:u32/n:%d/length:1024" % n, 0.0, "unsupported",
                                   "unsupported: no GPU here: no NVIDIA driver is installed", device="gpu")
                             for n in (1024, 2048)]
        page, md, t = self.render([self.load("none", doc)])
        self.assertIn("Nothing was measured: 2 entries, none passed (2 unsupported). No chart was drawn.", page)
        self.assertIn("**Nothing was measured: 2 entries, none passed (2 unsupported). No chart was drawn.**", md)
        self.assertIn("Nothing to judge: no entry passed.", page)
        self.assertNotIn("Nothing suspicious", page)


class FamilyTables(ReportTest):
    def test_columns_by_counter_kind(self):
        page, md, t = self.render([self.load("a", synthetic())])
        self.assertEqual(t.tables["table-gemm"]["head"],
                         ["variant", "op", "type", "M", "N", "K", "threads", "block", "median time", "reps", "CV",
                          "GFLOPS", "status"])
        self.assertEqual(t.tables["table-kmeans"]["head"],
                         ["variant", "cfg", "dist", "N", "D", "K", "median time", "reps", "seconds_per_iteration",
                          "inertia", "lloyd_iterations"])

    def test_columns_without_counter_kinds(self):
        page, md, t = self.render([self.load("a", synthetic(schema=False))])
        # M, N, K repeat arguments, cpu_threads repeats threads:2, seconds_per_call the time
        self.assertEqual(t.tables["table-gemm"]["head"],
                         ["variant", "op", "type", "M", "N", "K", "threads", "block", "median time", "reps", "CV",
                          "GFLOPS", "flops_per_call", "sm_clock_min_mhz", "throttled", "status"])
        self.assertIn("no counter kinds (written before schema 1)", page)

    def test_row_numbers_are_medians_of_the_entries(self):
        doc = synthetic()
        page, md, t = self.render([self.load("a", doc)])
        reps = [e for e in doc["benchmarks"] if e["run_name"].startswith(NAIVE + "/") and e["run_type"] == "iteration"]
        want_s = statistics.median(e["real_time"] * 1e-6 for e in reps)
        want_g = statistics.median(e["GFLOPS"] for e in reps)
        row = self.row(t.tables["table-gemm"], "Naive")
        self.assertEqual(float(row["median time"][0]), want_s)
        self.assertEqual(row["median time"][1], "2 s")
        self.assertEqual(float(row["GFLOPS"][0]), want_g)
        self.assertEqual(row["reps"][1], "3")
        self.assertEqual(row["CV"][1], "%.3g%%" % (100 * derived.cv([1.0, 2.0, 4.0])))
        self.assertIn("hicv", row["CV"][2])
        omp = self.row(t.tables["table-gemm"], "OMP")
        self.assertEqual(omp["threads"][1], "2")
        self.assertEqual(omp["median time"][1], "500 ms")
        self.assertEqual(omp["CV"][1], "")
        seq = self.row(t.tables["table-kmeans"], "Seq")
        self.assertEqual(seq["seconds_per_iteration"][1], "600 ms")
        self.assertEqual(seq["inertia"][1], "12.5")
        mdrow = [l for l in md.splitlines() if l.startswith("| Naive |")]
        self.assertEqual(len(mdrow), 1)
        self.assertEqual([c.strip() for c in mdrow[0].strip("|").split("|")][8:12], ["2 s", "3", row["CV"][1], "2"])

    def test_aggregates_are_not_rows_and_errors_are(self):
        page, md, t = self.render([self.load("a", synthetic())])
        gemm = t.tables["table-gemm"]
        variants = sorted(r[0][1] for r in gemm["rows"])
        self.assertEqual(variants, ["CUDA.RegBlock", "CUDA.Tiled", "Naive", "OMP", "cuBLAS", "cuBLAS"])
        tiled = self.row(gemm, "CUDA.Tiled")
        self.assertTrue(tiled["status"][1].startswith("incorrect: max error 1 > 1e-3"))
        self.assertEqual(tiled["median time"][1], "")
        classes = dict(zip([r[0][1] + r[3][1] for r in gemm["rows"]], gemm["row_class"]))
        self.assertEqual(classes["CUDA.Tiled64"], "err")
        self.assertEqual(classes["Naive64"], "")
        self.assertEqual(self.row(gemm, "cuBLAS", M="200000")["status"][1],
                         "out of memory: cudaMalloc: out of memory")

    def test_unsupported_in_the_toggle_not_in_the_table(self):
        page, md, t = self.render([self.load("a", synthetic())])
        self.assertNotIn("CUDA.Shared", [r[0][1] for r in t.tables["table-gemm"]["rows"]])
        start = page.index("<details class='unsupported' id='unsupported-gemm'>")
        toggle = page[start:page.index("</details>", start)]
        self.assertIn("<summary>1 unsupported entry</summary>", toggle)
        self.assertIn("%s: needs 300000 bytes of shared memory" % SHARED, toggle)
        self.assertNotIn("unsupported-kmeans", page)
        self.assertIn("1 unsupported entry:\n\n- %s: needs 300000 bytes of shared memory" % SHARED, md)

    def test_unsupported_grouped_by_reason(self):
        doc = clean()
        for b in (32, 64, 128):
            doc["benchmarks"].append(entry("Sort/CUDA.X/key:u32/n:1024/length:1024/block:%d" % b, 0, "unsupported",
                                           "a %d-point tile needs %d bytes, more than 100" % (b, 8 * b)))
        for v in ("A", "B"):
            doc["benchmarks"].append(entry("Sort/CUDA.%s/key:u32/n:1024/length:1024" % v, 0, "unsupported", "no GPU"))
        page, md, t = self.render([self.load("s", doc)])
        self.assertIn("<summary>5 unsupported entries</summary>", page)
        self.assertIn("<p class='why'>a \u2026-point tile needs \u2026 bytes, more than 100 (3 entries)</p>", page)
        self.assertIn("<li>Sort/CUDA.X/key:u32/n:1024/length:1024/block:64 (64, 512)</li>", page)
        self.assertIn("<p class='why'>no GPU (2 entries)</p>", page)

    def test_source_column_with_two_sources(self):
        page, md, t = self.render([self.load("a", synthetic()), self.load("b", synthetic())])
        gemm = t.tables["table-gemm"]
        self.assertEqual(gemm["head"][:2], ["source", "variant"])
        self.assertEqual(sorted(r[0][1] for r in gemm["rows"] if r[1][1] == "Naive"), ["a", "b"])
        page1, _, t1 = self.render([self.load("a", synthetic())])
        self.assertNotIn("source", t1.tables["table-gemm"]["head"])

    def test_sortable_and_load_handler(self):
        page, md, t = self.render([self.load("a", synthetic())], charts=[("gflops", "GFLOP/s <x>", "GEMM"),
                                                                         ("strong", "strong scaling", "Scaling")])
        self.assertEqual(sorted(self.pages), ["gemm.html", "index.html", "kmeans.html", "scaling.html"])
        index, gemm, scaling = self.pages["index.html"], self.pages["gemm.html"], self.pages["scaling.html"]
        self.assertIn("<h1>parbench report</h1>", index)
        for p in self.pages.values():
            self.assertIn("document.body.dataset.imagesTotal", p)
            self.assertIn("document.body.dataset.imagesLoaded", p)
            self.assertNotIn("http", p.replace("https://", "http://").split("<script>")[0].split("<style>")[0])
        self.assertIn("table.sortable", gemm)
        # The title is in the picture; no caption repeats it.
        self.assertIn("<a href='gflops.svg'><img src='gflops.png' alt='GFLOP/s &lt;x&gt;'></a>", gemm)
        self.assertNotIn("<figcaption>", gemm)
        # the GEMM chart sits on the GEMM page, before its table; Scaling has its own page
        self.assertLess(gemm.index("id='gemm'"), gemm.index("gflops.png"))
        self.assertLess(gemm.index("gflops.png"), gemm.index("id='table-gemm'"))
        self.assertIn("strong.png", scaling)
        self.assertNotIn("strong.png", gemm)
        # The summary links every page (a card with the page's first chart) and keeps its own sections.
        for anchor in ("#summary", "gemm.html", "kmeans.html", "scaling.html", "#charts-not-drawn",
                       "#machine-and-build"):
            self.assertIn("<a href='%s'>" % anchor, index)
        for anchor in ("summary", "charts-not-drawn", "machine-and-build"):
            self.assertIn("id='%s'" % anchor, index)
        self.assertIn("<a class='family' href='gemm.html'><b>GEMM</b><span>1 chart, ", index)
        self.assertIn("<img src='gflops.png'", index)
        self.assertNotIn("id='table-gemm'", index)
        for p in ("gemm.html", "kmeans.html", "scaling.html"):  # each page leads back, and to the others
            self.assertIn("<a href='index.html'>", self.pages[p])
        self.assertIn("[![GFLOP/s &lt;x&gt;](gflops.png)](gflops.svg)", md)


class ContextAndEscaping(ReportTest):
    def test_context_lists_render_as_text(self):
        page, md, t = self.render([self.load("a", synthetic())])
        ctx = {r[0][1]: r[1][1] for r in t.tables["context"]["rows"]}
        self.assertEqual(ctx["caches"], "L1 Data 48 KiB (x16), L2 Unified 2 MiB (x8), L3 Unified 300 MiB (x1)")
        self.assertEqual(ctx["load_avg"], "0.21, 0.27, 0.12")
        self.assertNotIn("parbench_counters", ctx)
        for v in ctx.values():
            self.assertFalse(v.startswith(("[", "{")) or "': " in v, v)
        self.assertIn("| caches | L1 Data 48 KiB (x16), L2 Unified 2 MiB (x8), L3 Unified 300 MiB (x1) |", md)
        self.assertIn("GFLOPS (GFLOP/s, higher)", page)  # the declared counters, as a small table

    def test_value_formatting(self):
        f = report_format.fmt_value
        self.assertEqual(f([1, "a", True, None]), "1, a, true, null")
        self.assertEqual(f({"x": [1, 2], "y": {"z": 1.5}}), "x: 1, 2; y: z: 1.5")
        self.assertEqual(report_format.fmt_num(1234.5678), "1235")
        self.assertEqual(report_format.fmt_num(42181.3), "42180")
        self.assertEqual(report_format.fmt_num(137438953472.0), "137.4G")
        self.assertEqual(report_format.fmt_num(0.000123456), "0.0001235")
        self.assertEqual(report_format.fmt_time(0.0027), "2.7 ms")
        self.assertEqual(report_format.fmt_time(9.0718e-5), "90.72 \u00b5s")
        self.assertEqual(report_format.fmt_time(2.5e-8), "25 ns")

    def test_special_characters_escaped(self):
        doc = synthetic()
        doc["context"]["cpu_model"] = "CPU <b>&|"
        page, md, t = self.render([self.load("a", doc)], missing=[("heatmap", "no MPI <runs> & | x")],
                                  findings=[("warning", "a < b & c")])
        self.assertNotIn("<script>alert", page)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt; &amp; a|b", page)
        self.assertIn("CPU &lt;b&gt;&amp;|", page)
        self.assertIn("no MPI &lt;runs&gt; &amp; | x", page)
        self.assertIn("a &lt; b &amp; c", page)
        self.assertNotIn("<script>alert", md)
        row = [l for l in md.splitlines() if l.startswith("| CUDA.Tiled |")]
        self.assertEqual(len(row), 1)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt; &amp; a\\|b |", row[0])
        self.assertIn("| CPU | CPU &lt;b&gt;&amp;\\| |", md)

    def test_families_in_the_order_the_input_registered_them(self):
        doc = synthetic()
        doc["benchmarks"].sort(key=lambda e: not e["name"].startswith("KMeans/"))  # KMeans registered first
        page, md, t = self.render([self.load("a", doc)])
        fams = [r[0][1] for r in t.tables["what-ran"]["rows"]]
        self.assertEqual(fams[:2], ["KMeans", "GEMM"])
        self.assertLess(md.index("## KMeans"), md.index("## GEMM"))

    def test_problems_left_out_are_one_line_per_reason(self):
        many = tuple(("GEMM" if i % 3 else "Scan", "M=%d" % i) for i in range(42))
        missing = [("heatmap", "no runs with both ranks and threads"),
                   Dropped("speedup", "problems beyond the 6 a family draws", many),
                   Dropped("strong", "problems beyond the 6 a family draws", many[:12]),
                   Dropped("roofline", "rooflines without a ceiling", (("GEMM", "on cpu"),))]
        page, md, t = self.render([self.load("a", synthetic())], missing=missing)
        section = md.split("## Charts not drawn")[1].split("## Machine and build")[0]
        lines = [l for l in section.splitlines() if l.startswith("- ")]
        self.assertEqual(lines, [
            "- **heatmap**: no runs with both ranks and threads",
            "- **speedup, strong**: 54 problems beyond the 6 a family draws (speedup 42, strong 12; by family: "
            "GEMM 36, Scan 18)",
            "- **roofline**: 1 roofline without a ceiling (by family: GEMM 1)"])
        index = self.pages["index.html"]
        listed = index.split("id='charts-not-drawn'")[1].split("id='machine-and-build'")[0]
        self.assertEqual(listed.count("<details"), 2)  # the names folded, one fold a reason
        self.assertIn("M=41", listed)


class RealFiles(ReportTest):
    def test_test_data_and_h200_files(self):
        paths = [os.path.join(DATA, "gb171.json"), os.path.join(DATA, "gb183.json")]
        paths += [os.path.join(H200, f)
                  for f in ("gemm-4096.json.gz", "kmeans-cpu.json.gz", "sort-gpu.json.gz")]
        runs = [results.load(p) for p in paths]  # a missing reference file is a failure, not a skip
        page, md, t = self.render(runs)
        self.assertIn("table-gemm", t.tables)
        self.assertIn("source", t.tables["table-gemm"]["head"])
        # gb183: GFLOPS shown; M/N/K (problem, and arguments), seconds_per_call (the time),
        # flops_per_call (model) and cpu_threads (knob) not
        head = self.render([results.load(paths[1])])[2].tables["table-gemm"]["head"]
        self.assertTrue(any(h.startswith("GFLOPS") for h in head), head)
        for c in ("seconds_per_call", "flops_per_call", "cpu_threads"):
            self.assertNotIn(c, head)
        self.assertEqual(head.count("M"), 1)


if __name__ == "__main__":
    unittest.main()
