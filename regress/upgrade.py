"""Stamp bench JSON files written before schema 1 with what today's harness
writes (README.md, "JSON schema"), in place or to --out.

For a file without context parbench_schema:
  - NaN / Infinity / -Infinity become null (strict JSON);
  - the context gets parbench_schema 1, parbench_counters (the harness's
    table of counter kinds) and parbench_upgraded (saying this tool did it);
  - every entry gets a "parbench" object: disposition and reason from the
    message prefixes, device (the on_gpu counter, else the variant name),
    role (baseline / ceiling / variant) and rate (which counter reads as a
    fraction of which ceiling kind);
  - passed k-means entries get the counter GBps = N*D*8 bytes (the points,
    read once per Lloyd iteration) / seconds_per_iteration * 1e-9; its
    aggregates are the mean / median / stddev / cv of the repetitions' values,
    as Google Benchmark computes them.
A file that already has parbench_schema only gets non-finite values nulled.

The edit is textual: existing keys keep their order, text and indentation, the
new members follow the file's own indentation, so a diff shows only what was
added. The result is checked: it must parse as strict JSON into exactly the
document intended, and load with as many entries as before.

This is a data migration of files written before the harness said these
things itself, so unlike every other tool it knows the variant names of that
time (frozen: the tests exempt this file from the no-variant-name rule).

Exit status: 0 done (or, with --check, nothing to do); 1 with --check when a
file would change; 2 a file could not be read, upgraded or written."""
import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile

from regress import cli
from regress.load import results


TOOL = "upgrade_json"
# The stamp is data in the files it wrote (tests/data): it keeps the tool's old name.
UPGRADED = "stamped by ci/upgrade_json.py from a file written before schema 1"

_TIME = {"kind": "time", "unit": "s", "better": "lower"}
COUNTERS = {
    "GFLOPS": {"kind": "rate", "unit": "GFLOP/s", "better": "higher"},
    "GBps": {"kind": "rate", "unit": "GB/s", "better": "higher"},
    "elements_per_second": {"kind": "rate", "unit": "1/s", "better": "higher"},
    "seconds_per_call": dict(_TIME),
    "seconds_per_iteration": dict(_TIME),
    "h2d_s": dict(_TIME), "kernel_s": dict(_TIME), "d2h_s": dict(_TIME), "host_s": dict(_TIME),
}
COUNTERS.update({k: {"kind": "problem"} for k in ("M", "N", "K", "D", "n", "length", "elements", "bytes")})
COUNTERS.update({k: {"kind": "knob"} for k in ("cpu_threads", "block", "ranks")})
COUNTERS.update({"flops_per_call": {"kind": "model", "unit": "flop"},
                 "bytes_per_call": {"kind": "model", "unit": "B"}})
COUNTERS.update({k: {"kind": "result"} for k in ("lloyd_iterations", "inertia")})
COUNTERS.update({k: {"kind": "clock", "unit": "MHz"}
                 for k in ("sm_clock_min_mhz", "sm_clock_max_mhz", "sm_clock_limit_mhz")})
COUNTERS.update({k: {"kind": "clock"} for k in ("clock_event_reasons", "throttled")})
COUNTERS["on_gpu"] = {"kind": "flag"}

GPU_PREFIXES = ("CUDA", "cuBLAS", "Thrust", "CUB")
BASELINES = {("GEMM", "Naive"), ("KMeans", "Seq"), ("Sort", "Std")}
CEILING_RATES = {
    "HostTriad": ("GBps", "bandwidth"), "CUDA.Copy": ("GBps", "bandwidth"),
    "OpenBLAS.SGEMM": ("GFLOPS", "gemm_f32"), "cuBLAS.SGEMM": ("GFLOPS", "gemm_f32"),
    "OpenBLAS.DGEMM": ("GFLOPS", "gemm_f64"), "cuBLAS.DGEMM": ("GFLOPS", "gemm_f64"),
}


class Failed(Exception):
    pass


# ------------------------------------------------------------ the meaning

def metadata(raw, rn):
    """The "parbench" object of an entry written before schema 1."""
    disposition, _, reason = results.legacy_disposition(raw)
    pb = {"disposition": disposition}
    if disposition != "passed":
        pb["reason"] = reason
    on_gpu = raw.get("on_gpu")
    if isinstance(on_gpu, (int, float)) and not isinstance(on_gpu, bool) and on_gpu in (0, 1):
        gpu = on_gpu == 1
    else:
        gpu = rn.variant.split(".")[0] in GPU_PREFIXES
    if rn.family == "Ceiling":
        pb["role"] = "ceiling"
    elif (rn.family, rn.variant) in BASELINES:
        pb["role"] = "baseline"
    else:
        pb["role"] = "variant"
    pb["device"] = "gpu" if gpu else "cpu"
    rate = None
    if rn.family == "GEMM":
        kind = {"f32": "gemm_f32", "f64": "gemm_f64"}.get(rn.args.get("type"))
        rate = ("GFLOPS", kind) if kind else None
    elif rn.family in ("Sort", "KMeans"):
        rate = ("GBps", "bandwidth")
    elif rn.family == "Ceiling":
        rate = CEILING_RATES.get(rn.variant)
    if rate:
        pb["rate"] = {"counter": rate[0], "ceiling": rate[1]}
    return pb


def _gbps(raw, rn):
    spi = raw.get("seconds_per_iteration")
    try:
        n, d = int(rn.args["N"]), int(rn.args["D"])
    except (KeyError, ValueError):
        return None
    if not isinstance(spi, (int, float)) or isinstance(spi, bool) or not math.isfinite(spi) or spi <= 0:
        return None
    return n * d * 8 / spi * 1e-9


def _aggregate(kind, values):
    """Google Benchmark's statistics of the repetitions (benchmark/src/statistics.cc)."""
    mean = sum(values) / len(values)
    if kind == "mean":
        return mean
    if kind == "median":
        return statistics.median(values)
    if len(values) == 1:
        return 0.0
    avg_squares = sum(v * v for v in values) / len(values)
    stddev = math.sqrt(max(0.0, len(values) / (len(values) - 1.0) * (avg_squares - mean * mean)))
    if kind == "stddev":
        return stddev
    return stddev / mean if mean else None  # cv


def kmeans_gbps(entries, names):
    """{entry index: GBps} for the passed k-means entries that lack it."""
    out, reps = {}, {}
    for i, (raw, rn) in enumerate(zip(entries, names)):
        if rn.family != "KMeans" or "GBps" in raw or raw.get("run_type") == "aggregate":
            continue
        if results.legacy_disposition(raw)[0] != "passed":
            continue
        v = _gbps(raw, rn)
        if v is not None:
            out[i] = v
            reps.setdefault(raw.get("run_name", raw["name"]), []).append(v)
    for i, (raw, rn) in enumerate(zip(entries, names)):
        if rn.family != "KMeans" or "GBps" in raw or raw.get("run_type") != "aggregate":
            continue
        kind = raw.get("aggregate_name") or rn.aggregate
        values = reps.get(raw.get("run_name"))
        if values and kind in results.AGGREGATES:
            v = _aggregate(kind, values)
        elif kind in ("mean", "median"):
            v = _gbps(raw, rn)  # no repetitions in the file: from the aggregate's own time
        else:
            v = None
        if v is not None:
            out[i] = v
    return out


# ------------------------------------------------------------ the text

_NONFINITE = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN')


def null_nonfinite(text):
    return _NONFINITE.sub(lambda m: m.group() if m.group().startswith('"') else "null", text)


def spans(text):
    """(context (start, end), [(start, end) of each benchmark entry]) of a whole document."""
    dec, n = json.JSONDecoder(), len(text)

    def skip(i):
        while i < n and text[i] in " \t\r\n":
            i += 1
        return i

    i = skip(0)
    assert text[i] == "{"
    i = skip(i + 1)
    ctx, entries = None, []
    while text[i] != "}":
        key, i = dec.raw_decode(text, i)
        i = skip(skip(i) + 1)  # the colon
        if key == "benchmarks":
            i = skip(i + 1)
            while text[i] != "]":
                _, end = dec.raw_decode(text, i)
                entries.append((i, end))
                i = skip(end)
                if text[i] == ",":
                    i = skip(i + 1)
            i += 1
        else:
            _, end = dec.raw_decode(text, i)
            if key == "context":
                ctx = (i, end)
            i = end
        i = skip(i)
        if text[i] == ",":
            i = skip(i + 1)
    return ctx, entries


def members_text(text, span, members):
    """(position, text) that appends `members` (key, value pairs) to the object
    at `span`, in its own indentation."""
    start, end = span
    close = end - 1
    q = close - 1
    while text[q] in " \t\r\n":
        q -= 1
    empty = text[q] == "{"
    body = text[start + 1:close]
    first = re.search(r'\S', body)
    lead = body[:first.start()] if first else ""
    line_start = text.rfind("\n", 0, close) + 1
    outer = text[line_start:close] if not text[line_start:close].strip() else ""
    if "\n" in lead or (empty and "\n" in text[start:end]):
        inner = lead[lead.rfind("\n") + 1:] if "\n" in lead else outer + "  "
        unit = inner[len(outer):] if inner.startswith(outer) and len(inner) > len(outer) else "  "
        parts = ["\n" + inner + json.dumps(k) + ": " + json.dumps(v, indent=unit).replace("\n", "\n" + inner)
                 for k, v in members]
        out = ",".join(parts)
        if empty:
            return q + 1, out + "\n" + outer
        return q + 1, "," + out
    out = ", ".join(json.dumps(k) + ": " + json.dumps(v) for k, v in members)
    return q + 1, (out if empty else ", " + out)


def upgrade_text(text):
    """(new text, what was done) for the text of a whole file; raises Failed."""
    fixed = null_nonfinite(text)
    try:
        doc = cli.strict_loads(fixed)
        results._check_shape(doc)  # noqa: SLF001 (the loader's own check)
    except (ValueError, RecursionError) as e:
        raise Failed("not a whole Google Benchmark JSON file (%s); close a cut file with "
                     "ci/close-truncated first" % e)
    nulled = len(re.findall(r"\bnull\b", fixed)) - len(re.findall(r"\bnull\b", text))
    if "parbench_schema" in doc["context"]:
        return fixed, ("already schema %s" % doc["context"]["parbench_schema"]) + (
            "; %d non-finite values nulled" % nulled if nulled else "")
    entries = doc["benchmarks"]
    names = []
    for i, raw in enumerate(entries):
        try:
            names.append(results.Entry(raw).run)
        except ValueError as e:
            raise Failed("entry %d: %s" % (i, e))
    gbps = kmeans_gbps(entries, names)
    ctx_span, entry_spans = spans(fixed)
    assert len(entry_spans) == len(entries)
    ctx_add = [("parbench_schema", 1), ("parbench_counters", COUNTERS), ("parbench_upgraded", UPGRADED)]
    edits = [members_text(fixed, ctx_span, ctx_add)]
    expected = json.loads(json.dumps(doc))
    expected["context"].update(ctx_add)
    for i, (raw, rn) in enumerate(zip(entries, names)):
        add = []
        if i in gbps:
            add.append(("GBps", gbps[i]))
        if "parbench" not in raw:
            add.append(("parbench", metadata(raw, rn)))
        if add:
            edits.append(members_text(fixed, entry_spans[i], add))
            expected["benchmarks"][i].update(add)
    out = fixed
    for pos, ins in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:pos] + ins + out[pos:]
    try:
        got = cli.strict_loads(out)
    except ValueError as e:
        raise Failed("internal error: the upgraded text is not JSON (%s)" % e)
    if json.dumps(got) != json.dumps(expected):
        raise Failed("internal error: the upgraded text does not read as intended")
    return out, "stamped schema 1: %d entries, %d k-means GBps added, %d non-finite values nulled" % (
        len(entries), len(gbps), nulled)


def write(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".upgrade-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    ap = cli.ArgumentParser(TOOL, "ci/upgrade-json", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--out", help="write here instead of in place: a file (one FILE) or an existing folder")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    a = ap.parse_args(argv)
    if a.out and len(a.files) > 1 and not os.path.isdir(a.out):
        print("%s: --out %s: with several files, --out must be an existing folder" % (TOOL, a.out), file=sys.stderr)
        return 2
    status = 0
    for path in a.files:
        try:
            results.load_strict(path)
            try:
                text = results.read_text(path)
            except results.DocumentError as e:
                raise Failed(str(e))
            new, what = upgrade_text(text)
            before = results.load(path)
            if a.check:
                if new != text:
                    print("%s: would change: %s" % (path, what))
                    status = max(status, 1)
                continue
            dest = a.out or path
            if a.out and os.path.isdir(a.out):
                dest = os.path.join(a.out, os.path.basename(path))
            if new != text or dest != path:
                try:
                    write(dest, new)
                except OSError as e:
                    raise Failed("cannot write %s: %s" % (dest, e.strerror or e))
            after = results.load(dest)
            if len(after.entries) != len(before.entries) or after.warnings != before.warnings:
                raise Failed("%s loads with %d entries (was %d)" % (dest, len(after.entries), len(before.entries)))
            print("%s: %s" % (dest, what if new != text else "unchanged (%s)" % what))
        except results.LoadError as e:
            print("%s: %s" % (TOOL, e), file=sys.stderr)
            status = 2
        except Failed as e:
            print("%s: %s: %s" % (TOOL, path, e), file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
