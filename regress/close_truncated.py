"""Repair a Google Benchmark JSON file that every tool refuses for a defect it
can mend: one cut off mid-run (a job killed by its time limit leaves the
"benchmarks" array open) or one with malformed entries.

Keeps every complete, well-formed entry, drops a trailing instance whose
repetitions were written but whose aggregates were not (its median would be a
guess) and every malformed entry, and records what was done in the context as
"truncated_repair" (a file already repaired keeps its record). Writes the
result to OUT (never in place) as strict JSON (a value that is not finite
becomes null). The recovery is the one the loader (regress/load/results.py)
applies when it reads such a file tolerantly.

A file it cannot mend is refused with the line every tool gives it
(docs/tools/README.md, "Bad input"): missing, not JSON, not Google Benchmark
JSON, cut off before its first entry, nothing but aggregates.

Exit status: 0 written; 2 INPUT cannot be read or mended, OUT cannot be
written, or bad usage (one line "close-truncated: ...")."""
import argparse
import os
import sys

from regress import cli
from regress.load import results

TOOL = "close-truncated"


def close(text):
    """(document, cut) for the text of a file: cut is None when it was whole,
    else a results.Cut. Raises results.DocumentError (a ValueError)."""
    return results.parse_document(text)


def repair(data, cut):
    """Drop data's malformed entries; returns the context's truncated_repair
    text (what was done), or None when the file needed nothing."""
    entries, malformed = results.read_entries(data["benchmarks"])
    done = [cut.describe()] if cut else []
    if malformed:
        bad = {i for i, _, _ in malformed}
        data["benchmarks"] = [raw for i, raw in enumerate(data["benchmarks"]) if i not in bad]
        i, name, reason = malformed[0]
        done.append("dropped %d malformed entr%s (first: %s: %s)" % (
            len(malformed), "y" if len(malformed) == 1 else "ies", results.entry_label(i, name), reason))
    if not any(not e.aggregate for e in entries):
        what = "only aggregates, no repetitions (run without --benchmark_report_aggregates_only)" \
            if entries else "no well-formed benchmark entries"
        raise results.DocumentError(what)
    return "; ".join(done) or None


def main(argv=None):
    ap = cli.ArgumentParser(TOOL, "ci/close-truncated", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    try:
        data, cut = close(results.read_text(a.input))
        done = repair(data, cut)
    except results.DocumentError as e:
        print("%s: %s" % (TOOL, results.BadInput(a.input, str(e))), file=sys.stderr)
        return cli.EXIT_INPUT
    ctx = data["context"]
    if done or "truncated_repair" not in ctx:
        ctx["truncated_repair"] = "; ".join(x for x in (ctx.get("truncated_repair") if done else None, done)
                                            if isinstance(x, str)) or "complete"
    if os.path.isdir(a.out):
        print("%s: %s: is a directory (OUT is the file to write)" % (TOOL, a.out), file=sys.stderr)
        return cli.EXIT_INPUT
    try:
        text = cli.dumps(data)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print("%s: %s: cannot write: %s" % (TOOL, a.out, e.strerror or e), file=sys.stderr)
        return cli.EXIT_INPUT
    kept = len(data["benchmarks"])
    print("%s: %d entries kept%s" % (a.out, kept, "; " + done if done else ""))
    return cli.EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
