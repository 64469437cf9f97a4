#!/usr/bin/env python3
"""The change-point detector on real H200 series, with and without a +5% step
injected into copies of them.

The series: the 48 runs of the queued-start paired A/A sessions of issue 14
(results/nvidia-h200/compare/paired-aa-queued{,-2}-rounds.tar.gz: 2 sessions x
12 rounds x 2 processes of one build, 81 GPU benchmarks each), in the order
they ran, labelled r01 ... r48 (they share one revision; the labels stand in
for nightly commits). Each process is one "night".

  1. as measured: every change the detector reports is a false alarm;
  2. the same files with every benchmark's times x 1.05 from run 30 on: each
     benchmark should get one change, r29..r30, of about +5%.

Run from the repository root: results/nvidia-h200/issue15/inject_demo.py OUT
(writes OUT/{real,injected}/ histories and trend pages, and prints a summary)."""
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
STEP_AT, FACTOR = 30, 1.05


def main(out):
    tmp = tempfile.mkdtemp()
    for n in ("paired-aa-queued", "paired-aa-queued-2"):
        with tarfile.open(os.path.join(ROOT, "results", "nvidia-h200", "compare", n + "-rounds.tar.gz")) as t:
            t.extractall(tmp)
    files = []
    for f in glob.glob(os.path.join(tmp, "*", "round-*.json")):
        with open(f) as fh:
            files.append((json.load(fh)["context"]["date"], f))
    files.sort()
    summary = {}
    for kind in ("real", "injected"):
        hist = os.path.join(out, kind, "history")
        inputs = os.path.join(tmp, kind)
        os.makedirs(inputs, exist_ok=True)
        for i, (_, f) in enumerate(files, 1):
            with open(f) as fh:
                doc = json.load(fh)
            doc["context"]["parbench_git_revision"] = "r%02d" % i
            if kind == "injected" and i >= STEP_AT:
                for e in doc["benchmarks"]:
                    for k in ("real_time", "cpu_time", "seconds_per_call"):
                        if isinstance(e.get(k), (int, float)):
                            e[k] *= FACTOR
                    for k in ("GFLOPS", "elements_per_second", "GBps"):
                        if isinstance(e.get(k), (int, float)):
                            e[k] /= FACTOR
            path = os.path.join(inputs, "r%02d.json" % i)
            with open(path, "w") as fh:
                json.dump(doc, fh)
            subprocess.run([os.path.join(ROOT, "ci", "history"), "--history", hist, "ingest", path],
                           check=True, stdout=subprocess.DEVNULL)
        p = subprocess.run([os.path.join(ROOT, "ci", "trends"), "--history", hist, "--out",
                            os.path.join(out, kind, "trends")], stdout=subprocess.PIPE, universal_newlines=True)
        with open(os.path.join(out, kind, "trends", "changes.json")) as fh:
            changes = json.load(fh)
        summary[kind] = {"exit": p.returncode, "changes": changes}
    real = summary["real"]["changes"]["changes"]
    inj = summary["injected"]["changes"]["changes"]
    names = {c["name"] for c in inj}
    at = [c for c in inj if c["revision_before"] == "r%02d" % (STEP_AT - 1) and c["revision_after"] == "r%02d" % STEP_AT]
    print("runs: %d; benchmarks: 81" % len(files))
    print("as measured: %d changes (%d confirmed), exit %d" % (
        len(real), sum(c["status"] == "confirmed" for c in real), summary["real"]["exit"]))
    print("x%.2f from r%02d: %d of 81 benchmarks with a change; %d changes at r%02d..r%02d; steps %s; exit %d" % (
        FACTOR, STEP_AT, len(names), len(at), STEP_AT - 1, STEP_AT,
        "%.1f%% ... %.1f%%" % (100 * min(c["step"] for c in at), 100 * max(c["step"] for c in at)) if at else "-",
        summary["injected"]["exit"]))
    other = [c for c in inj if c not in at]
    for c in other:
        print("  other: %s %s..%s %+.1f%% %s" % (c["name"], c["revision_before"], c["revision_after"],
                                                 100 * c["step"], c["status"]))
    for c in real:
        print("  false (as measured): %s %s..%s %+.1f%% %s" % (c["name"], c["revision_before"], c["revision_after"],
                                                               100 * c["step"], c["status"]))
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump({"runs": len(files), "step_at": STEP_AT, "factor": FACTOR,
                   "real": summary["real"]["changes"]["summary"], "injected": summary["injected"]["changes"]["summary"],
                   "at_step": len(at), "benchmarks_with_a_change": len(names)}, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
