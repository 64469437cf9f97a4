#!/usr/bin/env python3
"""check_schema.py RUN.json [--complete]: a file bench wrote must be strict JSON (no NaN
or Infinity) and carry schema 1: every counter of every entry declared in
the context with its kind, every entry a "parbench" object with a valid
disposition, role, device and rate (and, when it passed, how it was verified), the
fingerprint of the code it ran (and the version of the library it calls, where it names one), one
baseline variant per family (at most one;
exactly one with --complete, for a run of every variant), and every Ceiling entry a ceiling \
with the rate it measures. Exit 0 or 1."""
import json
import re
import sys

DISPOSITIONS = {"passed", "unsupported", "incorrect", "out_of_memory", "failed"}
KINDS = {"time", "rate", "problem", "knob", "model", "result", "clock", "flag", "share", "energy", "power"}
GB_FIELDS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
             "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
             "aggregate_unit", "error_occurred", "error_message", "skipped", "skip_message", "label", "parbench"}


def reject(token):
    raise ValueError("non-finite number %s" % token)


def main(path, complete):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_constant=reject)
    ctx, fail = doc["context"], []
    if ctx.get("parbench_schema") != 1:
        fail.append("context parbench_schema is %r" % ctx.get("parbench_schema"))
    declared = ctx.get("parbench_counters", {})
    for name, info in declared.items():
        if info.get("kind") not in KINDS:
            fail.append("counter %s has kind %r" % (name, info.get("kind")))
    baselines = {}
    for b in doc["benchmarks"]:
        meta = b.get("parbench")
        if not isinstance(meta, dict):
            fail.append("%s: no parbench object" % b["name"])
            continue
        if meta.get("disposition") not in DISPOSITIONS:
            fail.append("%s: disposition %r" % (b["name"], meta.get("disposition")))
        if meta.get("role") not in ("baseline", "ceiling", "variant") or meta.get("device") not in ("cpu", "gpu"):
            fail.append("%s: role %r device %r" % (b["name"], meta.get("role"), meta.get("device")))
        family, variant = b["name"].split("/")[:2]
        if (family == "Ceiling") != (meta.get("role") == "ceiling"):
            fail.append("%s: role %r" % (b["name"], meta.get("role")))
        if meta.get("role") == "baseline":
            baselines.setdefault(family, set()).add(variant)
        if meta["disposition"] == "passed" and not isinstance(meta.get("verified"), str):
            fail.append("%s: passed without saying how it was verified" % b["name"])
        if not re.fullmatch(r"[0-9a-f]{16}", str(meta.get("code"))):
            fail.append("%s: code %r is not 16 hex digits" % (b["name"], meta.get("code")))
        if "library" in meta and not (isinstance(meta.get("library_version"), str) and meta["library_version"]):
            fail.append("%s: library %r without its library_version" % (b["name"], meta.get("library")))
        rate = meta.get("rate")
        if family == "Ceiling" and not rate:
            fail.append("%s: a ceiling without the rate it measures" % b["name"])
        if rate and meta["disposition"] == "passed" and rate.get("counter") not in b:
            fail.append("%s: rate counter %r not in the entry" % (b["name"], rate.get("counter")))
        for key in b:
            if key not in GB_FIELDS and key not in declared:
                fail.append("%s: counter %s is not declared in parbench_counters" % (b["name"], key))
    families = {b["name"].split("/")[0] for b in doc["benchmarks"]} - {"Ceiling"}
    for family in sorted(families):
        n = len(baselines.get(family, ()))
        if n > 1 or (complete and n != 1):
            fail.append("family %s has baselines %s (want exactly one)" % (family, sorted(baselines.get(family, ()))))
    for line in sorted(set(fail))[:50]:
        print(line)
    print("%s: %d entries, %d problems" % (path, len(doc["benchmarks"]), len(set(fail))))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--complete" in sys.argv[2:]))
