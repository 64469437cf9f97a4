"""Close a Google Benchmark JSON file that was cut off mid-run (a job killed
by its time limit leaves the "benchmarks" array open).

Keeps every complete entry, drops a trailing instance whose repetitions were
written but whose aggregates were not (its median would be a guess), and
records what was done in the context as "truncated_repair". Writes the result
to OUT (never in place) as strict JSON (a value that is not finite becomes
null). The recovery is the one the loader (regress/results.py) applies when
it reads a cut file.

Exit status: 0 written; 2 INPUT cannot be read or is not such a file, or OUT
cannot be written."""
import argparse
import os
import sys

from regress import results

TOOL = "close_truncated"


def close(text):
    """(document, cut) for the text of a file: cut is None when it was whole,
    else a results.Cut. Raises results.DocumentError (a ValueError)."""
    return results.parse_document(text)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="close_truncated.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    try:
        data, cut = close(results.read_text(a.input))
    except results.DocumentError as e:
        print("%s: %s: %s" % (TOOL, a.input, e), file=sys.stderr)
        return 2
    data["context"]["truncated_repair"] = cut.describe() if cut else "complete"
    if os.path.isdir(a.out):
        print("%s: %s: is a directory (OUT is the file to write)" % (TOOL, a.out), file=sys.stderr)
        return 2
    try:
        text = results.dumps(data)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print("%s: %s: cannot write: %s" % (TOOL, a.out, e.strerror or e), file=sys.stderr)
        return 2
    kept = len(data["benchmarks"])
    print("%s: %d entries kept%s"
          % (a.out, kept, ", dropped %s" % cut.dropped_name if cut and cut.dropped_name else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
