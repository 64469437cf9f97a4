#!/usr/bin/env python3
"""Close a Google Benchmark JSON file that was cut off mid-run (a job killed
by its time limit leaves the "benchmarks" array open).

Keeps every complete entry, drops a trailing instance whose repetitions were
written but whose aggregates were not (its median would be a guess), and
records what was done in the context as "truncated_repair". Writes the result
to OUT (never in place). Exit 2 when INPUT is not such a file."""
import argparse
import json
import re
import sys


def close(text):
    head = text.find('"benchmarks": [')
    if head < 0:
        raise ValueError('no "benchmarks" array')
    try:
        return json.loads(text), 0
    except json.JSONDecodeError:
        pass
    # Try each closing brace from the end back: the first that ends an entry
    # of the array gives a valid document once the array and object close.
    ends = [m.end() for m in re.finditer(r"\}", text[head:])]
    for end in reversed(ends[-10000:]):
        try:
            return json.loads(text[: head + end] + "\n  ]\n}\n"), 1
        except json.JSONDecodeError:
            continue
    raise ValueError("no complete entry")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    try:
        with open(a.input) as f:
            data, cut = close(f.read())
    except (OSError, ValueError) as e:
        print("close_truncated: %s: %s" % (a.input, e), file=sys.stderr)
        return 2
    b = data["benchmarks"]
    dropped = []
    if cut and b:
        last = b[-1].get("run_name", b[-1]["name"])
        reps = b[-1].get("repetitions", 1)
        has_aggr = any(e.get("run_type") == "aggregate" and e.get("run_name") == last for e in b)
        if reps > 1 and not has_aggr:
            dropped.append(last)
            data["benchmarks"] = [e for e in b if e.get("run_name", e["name"]) != last]
    data["context"]["truncated_repair"] = (
        "cut off mid-run; closed after the last complete entry%s" % ("; dropped " + dropped[0] if dropped else "")
        if cut else "complete")
    with open(a.out, "w") as f:
        json.dump(data, f, indent=2)
    print("%s: %d entries kept%s" % (a.out, len(data["benchmarks"]), ", dropped %s" % dropped if dropped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
