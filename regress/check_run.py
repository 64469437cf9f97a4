"""Check a bench JSON file: it parses, no entry is incorrect, out_of_memory
or failed, the file was whole (not cut off mid-run, no malformed entry), and
(optionally) given families/variants, or every variant a bench binary
lists on the given devices, have passed entries and no entry was
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
import subprocess
import sys

from regress import cli
from regress.load import results

TOOL = "check-run"


def main(argv=None):
    ap = cli.ArgumentParser(TOOL, "ci/check-run", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--require", action="append", default=[],
                    help="Family/Variant that must have at least one passed entry")
    ap.add_argument("--require-every", metavar="BENCH",
                    help="every Family/Variant that BENCH lists for the run's profile (bench --list-devices) "
                         "on --devices must have at least one passed entry: the registries say what must run")
    ap.add_argument("--devices", default="cpu", metavar="LIST",
                    help="device kinds for --require-every: cpu, gpu, gpus (default %(default)s)")
    ap.add_argument("--context", action="append", default=[],
                    help="context KEY that must be present, or KEY=VALUE that must hold")
    ap.add_argument("--no-skips", "--no-unsupported", dest="no_skips", action="store_true",
                    help="an unsupported entry (the variant cannot run it, or the profile excludes it) "
                         "fails the check too")
    ap.add_argument("--allow-warnings", action="store_true",
                    help="check the complete entries of a file cut off mid-run or with malformed entries "
                         "(each defect a warning) instead of refusing it")
    a = ap.parse_args(argv)
    devices = set(a.devices.split(","))
    if not devices <= {"cpu", "gpu", "gpus"}:
        ap.error("--devices: unknown kind in '%s' (allowed: cpu, gpu, gpus)" % a.devices)
    run = results.load_or_exit(a.json, TOOL, strict=not a.allow_warnings)
    required = list(a.require)
    if a.require_every:
        try:
            required += listed_variants(a.require_every, run.context.get("parbench_profile", "default"), devices)
        except OSError as e:
            print("%s: %s" % (TOOL, e), file=sys.stderr)
            return cli.EXIT_INPUT
    ok = not run.warnings or a.allow_warnings
    for e in run.errors():
        print("ERROR %s: %s: %s" % (e.name, e.disposition, e.reason))
        ok = False
    if a.no_skips:
        for e in run.unsupported():
            print("SKIPPED %s: %s: %s" % (e.name, e.disposition, e.reason))
            ok = False
    for req in required:
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
    return cli.EXIT_OK if ok else cli.EXIT_FAIL


def listed_variants(bench, profile, devices):
    """Family/Variant of each instance `bench --profile=PROFILE --list-devices`
    lists on one of `devices` ("gpus:G" counts as gpus), in listing order;
    OSError with one line where the binary cannot say."""
    try:
        p = subprocess.run([bench, "--profile=" + profile, "--list-devices"], capture_output=True, text=True,
                           timeout=300)
    except subprocess.TimeoutExpired:
        raise OSError("--require-every: %s --list-devices took over 300 s" % bench)
    except OSError as e:
        raise OSError("--require-every: cannot run %s: %s" % (bench, e.strerror or e))
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        raise OSError("--require-every: %s --list-devices failed: %s" % (bench, last))
    out = []
    for line in p.stdout.splitlines():
        kind, _, name = line.partition(" ")
        variant = "/".join(name.split("/")[:2])
        if kind.split(":")[0] in devices and variant.count("/") == 1 and variant not in out:
            out.append(variant)
    return out


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
