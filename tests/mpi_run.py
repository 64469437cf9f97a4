#!/usr/bin/env python3
"""mpi_run.py RANKS JSON [--fault-on-last-rank REGEX] -- mpirun ... bench ...:
run bench under mpirun with RANKS ranks and require what the harness
promises there: exit 0, every KMeans/MPI entry verified (no error entries;
each names ranks:RANKS), the console reporting each instance once (rank 0
alone reports), and the JSON written once with the MPI context.

--variants REGEX checks those instances instead of KMeans/MPI's;
--unsupported-ok accepts unsupported entries that say why (the MPI x GPU
variants on a machine without the GPUs: every rank must agree on it).

With --fault-on-last-rank, the instances matching REGEX fail on the last rank
alone (PARBENCH_TEST_FAULT=fail@R, or oom@R with --fault-kind oom): the run
must still end (exit 1, no hang), each of those entries an error naming that
rank (failed, or out of memory), every other entry verified."""
import json
import os
import re
import subprocess
import sys

args = sys.argv[1:]
fault, fault_kind, variants, unsupported_ok = None, "fail", "KMeans/MPI/", False
while len(args) > 2 and args[2].startswith("--") and args[2] != "--":
    if args[2] == "--fault-on-last-rank":
        fault = args[3]
        del args[2:4]
    elif args[2] == "--fault-kind":  # fail (default) or oom: the disposition every rank must record
        fault_kind = args[3]
        del args[2:4]
    elif args[2] == "--variants":  # the instances to check: a regular expression matched at the name's start
        variants = args[3]
        del args[2:4]
    elif args[2] == "--unsupported-ok":  # a machine without the GPUs: unsupported entries, each with its reason
        unsupported_ok = True
        del args[2]
    else:
        sys.exit("mpi_run.py: unknown option %s" % args[2])
ranks, path, sep, cmd = int(args[0]), args[1], args[2], args[3:]
assert sep == "--", __doc__
env = dict(os.environ)
if fault:
    env["PARBENCH_TEST_FAULT"] = "%s@%d:%s" % (fault_kind, ranks - 1, fault)
p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
fail = []
if p.returncode != (1 if fault else 0):
    fail.append("exit %d" % p.returncode)
lines = [l for l in p.stdout.splitlines() if re.match(r"(\x1b\[[0-9;]*m)*(%s)" % variants, l)]
data = json.load(open(path))
entries = [b for b in data["benchmarks"] if re.match(variants, b["name"])]
if not entries:
    fail.append("no %s entries in %s" % (variants, path))
faulted = [b for b in entries if fault and re.search(fault, b["name"])]
if fault and (not faulted or len(faulted) == len(entries)):
    fail.append("the fault matched %d of %d instances (want some, not all)" % (len(faulted), len(entries)))
for b in faulted:
    want = "rank %d: injected test fault" % (ranks - 1)
    if not b.get("error_occurred") or want not in (b.get("error_message") or ""):
        fail.append("%s: not an error naming %r: %s" % (b["name"], want, b.get("error_message")))
    disposition = (b.get("parbench") or {}).get("disposition")
    if disposition != ("out_of_memory" if fault_kind == "oom" else "failed"):
        fail.append("%s: disposition %r after an injected %s" % (b["name"], disposition, fault_kind))
for b in entries:
    if "/ranks:%d/" % ranks not in b["name"]:
        fail.append("%s: not ranks:%d" % (b["name"], ranks))
    if b in faulted:
        continue
    unsupported = (b.get("parbench") or {}).get("disposition") == "unsupported"
    if unsupported and unsupported_ok and (b.get("parbench") or {}).get("reason"):
        continue
    if b.get("error_occurred") or b.get("skipped"):
        fail.append("%s: %s" % (b["name"], b.get("error_message") or b.get("skip_message")))
if len(lines) != len(entries):
    fail.append("console shows %d MPI lines for %d instances (only rank 0 may report)" % (len(lines), len(entries)))
if data["context"].get("mpi_ranks") != str(ranks):
    fail.append("context mpi_ranks=%r" % data["context"].get("mpi_ranks"))
if fail:
    print("\n".join(fail))
    print(p.stdout[-3000:], p.stderr[-3000:])
    sys.exit(1)
skipped = sum(1 for b in entries if (b.get("parbench") or {}).get("disposition") == "unsupported")
print("ok: %d ranks, %d instances verified against the sequential reference, %d unsupported, %d failed on rank %d "
      "as injected" % (ranks, len(entries) - len(faulted) - skipped, skipped, len(faulted), ranks - 1))
