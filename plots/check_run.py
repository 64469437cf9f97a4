#!/usr/bin/env python3
"""Check a bench JSON file: it parses, no entry is incorrect or failed, and
(optionally) given families/variants have passed entries and no entry was
skipped. Exit 0 when it holds, 1 when it does not, 2 when the file cannot be
read."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbjson  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("json")
    ap.add_argument("--require", action="append", default=[],
                    help="Family/Variant that must have at least one passed entry")
    ap.add_argument("--context", action="append", default=[],
                    help="context KEY that must be present, or KEY=VALUE that must hold")
    ap.add_argument("--no-skips", action="store_true",
                    help="a skipped entry (unsupported, excluded by the profile) fails the check too")
    a = ap.parse_args()
    run = pbjson.load_or_exit(a.json, "check_run")
    ok = True
    for e in run.errors():
        print("ERROR %s: %s" % (e.name, e.message))
        ok = False
    if a.no_skips:
        for e in run.skipped():
            print("SKIPPED %s: %s" % (e.name, e.message))
            ok = False
    for req in a.require:
        fam, _, var = req.partition("/")
        if not any(e.run.family == fam and (not var or e.run.variant == var) for e in run.passed()):
            print("MISSING no passed entry for %s" % req)
            ok = False
    for item in a.context:
        key, has_value, value = item.partition("=")
        if key not in run.context:
            print("MISSING context key %s" % key)
            ok = False
        elif has_value and str(run.context[key]) != value:
            print("MISMATCH context %s=%s, expected %s" % (key, run.context[key], value))
            ok = False
    print("%s: %d passed, %d skipped, %d errors" % (a.json, len(run.passed()), len(run.skipped()),
                                                    len(run.errors())))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
