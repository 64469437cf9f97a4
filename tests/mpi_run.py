#!/usr/bin/env python3
"""mpi_run.py RANKS JSON -- mpirun ... bench ...: run bench under mpirun with
RANKS ranks and require what the harness promises there: exit 0, every
KMeans/MPI entry verified (no error entries; each names ranks:RANKS), the
console reporting each instance once (rank 0 alone reports), and the JSON
written once with the MPI context."""
import json
import re
import subprocess
import sys

ranks, path, sep, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
assert sep == "--", __doc__
p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
fail = []
if p.returncode != 0:
    fail.append("exit %d" % p.returncode)
lines = [l for l in p.stdout.splitlines() if re.match(r"(\x1b\[[0-9;]*m)*KMeans/MPI/", l)]
data = json.load(open(path))
entries = [b for b in data["benchmarks"] if b["name"].startswith("KMeans/MPI/")]
if not entries:
    fail.append("no KMeans/MPI entries in %s" % path)
for b in entries:
    if b.get("error_occurred") or b.get("skipped"):
        fail.append("%s: %s" % (b["name"], b.get("error_message") or b.get("skip_message")))
    if "/ranks:%d/" % ranks not in b["name"]:
        fail.append("%s: not ranks:%d" % (b["name"], ranks))
if len(lines) != len(entries):
    fail.append("console shows %d MPI lines for %d instances (only rank 0 may report)" % (len(lines), len(entries)))
if data["context"].get("mpi_ranks") != str(ranks):
    fail.append("context mpi_ranks=%r" % data["context"].get("mpi_ranks"))
if fail:
    print("\n".join(fail))
    print(p.stdout[-3000:], p.stderr[-3000:])
    sys.exit(1)
print("ok: %d ranks, %d instances verified against the sequential reference" % (ranks, len(entries)))
