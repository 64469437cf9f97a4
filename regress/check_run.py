"""Check a bench JSON file: it parses, no entry is incorrect, out_of_memory
or failed, the file was whole (not cut off mid-run, no malformed entry), and
(optionally) given families/variants have passed entries and no entry was
unsupported. Prints one line per problem, then the count of each disposition
(passed, unsupported, incorrect, out_of_memory, failed); load warnings go to
stderr, one line each.

A file cut off mid-run, with a malformed entry or without repetitions is bad
input, refused as every tool refuses it (docs/tools/README.md, "Bad input");
--allow-warnings checks such a file's complete entries instead, each defect
one warning line on stderr.

Exit status: 0 when the check holds; 1 when it does not (an error entry, a
required variant missing, a context key wrong, a context warning); 2 bad input
(missing, a directory, not Google Benchmark JSON, cut off, a malformed entry,
only aggregates) or bad usage, one line "check-run: ..."."""
import argparse

from regress import results

TOOL = "check-run"


def main(argv=None):
    ap = results.ArgumentParser(TOOL, "ci/check-run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--require", action="append", default=[],
                    help="Family/Variant that must have at least one passed entry")
    ap.add_argument("--context", action="append", default=[],
                    help="context KEY that must be present, or KEY=VALUE that must hold")
    ap.add_argument("--no-skips", "--no-unsupported", dest="no_skips", action="store_true",
                    help="an unsupported entry (the variant cannot run it, or the profile excludes it) "
                         "fails the check too")
    ap.add_argument("--allow-warnings", action="store_true",
                    help="check the complete entries of a file cut off mid-run or with malformed entries "
                         "(each defect a warning) instead of refusing it")
    a = ap.parse_args(argv)
    run = results.load_or_exit(a.json, TOOL, strict=not a.allow_warnings)
    ok = not run.warnings or a.allow_warnings
    for e in run.errors():
        print("ERROR %s: %s: %s" % (e.name, e.disposition, e.reason))
        ok = False
    if a.no_skips:
        for e in run.unsupported():
            print("SKIPPED %s: %s: %s" % (e.name, e.disposition, e.reason))
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
    counts = {d: 0 for d in results.DISPOSITIONS}
    for e in run.entries:
        if not e.aggregate:
            counts[e.disposition] += 1
    print("%s: %s%s" % (a.json, ", ".join("%d %s" % (counts[d], d) for d in results.DISPOSITIONS),
                        "; %d warning%s (on stderr)" % (len(run.warnings), "s" * (len(run.warnings) != 1))
                        if run.warnings else ""))
    return results.EXIT_OK if ok else results.EXIT_FAIL


if __name__ == "__main__":
    results.run_tool(TOOL, main)
