"""The parts a suite's bench processes write: each run on its instances,
read back whole (a file cut off mid-run closed after its last complete
entry), the failed entry of an instance a process died in, and the merged
file. Standard library only."""
import errno
import json
import os

from regress import cli
from regress.load import results
from regress.run import launch

# Below this much free space on the workdir's device, a part's lost
# instances are the full disk's doing, not their own: bench ends with exit 0
# when it cannot write its output, as when it ends early.
SPACE_FLOOR = 1 << 20
LOGGED = ("group", "part", "gpu", "track", "instances", "start_s", "seconds", "exit", "timed_out", "end")


def note_device(entry, ctx, lane):
    """Writes into a GPU entry the GPU it ran on: the model (the context's
    `gpu`) and, on a lane, the device's index on the host."""
    meta = entry.get("parbench")
    if not isinstance(meta, dict) or meta.get("device") != "gpu" or entry.get("error_occurred") or \
            entry.get("skipped"):
        return
    if ctx.get("gpu"):
        meta["gpu"] = ctx["gpu"]
    if lane is not None:
        meta["gpu_index"] = lane


def _done_in_log(path, names):
    """The instances of `names` the console log at path shows finished (a
    line per repetition, starting with the run name)."""
    want, seen = set(names), set()
    try:
        with open(path, errors="replace") as f:
            for line in f:
                word = line.split(" ", 1)[0]
                if word in want:
                    seen.add(word)
    except OSError:
        pass
    return len(seen)


def run_part(bench, args, names, path, timeout, deadline=None, tick=None, env=None, cpus=None):
    """Runs bench on exactly `names` (regress/run/launch.py); returns (rc,
    timed_out, stopped, seconds). Every `tick[0]` seconds it calls
    tick[1](instances finished so far)."""
    every = None
    if tick is not None:
        every = (tick[0], lambda: tick[1](_done_in_log(path + ".log", names)))
    return launch.run(bench, args + ["--benchmark_filter=" + launch.exact_filter(names)], path, path + ".log",
                      timeout, deadline, every, env, cpus)


def complete_instances(entries):
    """The run names whose every repetition is in `entries` (or that ended in
    an error entry). A process killed mid-write may leave an instance with only
    some of its repetitions on disk; that instance runs again."""
    reps, count, error = {}, {}, set()
    for e in entries:
        n = e.get("run_name", e.get("name"))
        if e.get("error_occurred"):
            error.add(n)
        if e.get("run_type", "iteration") == "iteration":
            count[n] = count.get(n, 0) + 1
            reps[n] = int(e.get("repetitions", 1) or 1)
    return {n for n in count if n in error or count[n] >= reps[n]} | error


def read_part(path):
    """(context, entries) a part wrote, a cut-off file closed after its last
    complete entry; ({}, []) when it wrote nothing usable."""
    try:
        doc, _cut = results.parse_document(results.read_text(path))
    except results.DocumentError:
        return {}, []
    return doc.get("context", {}), [e for e in doc.get("benchmarks", []) if isinstance(e, dict)]


def failed_entry(name, reason):
    """An error entry in the harness's own layout (schema 1) for an instance
    the runner saw die."""
    run_name = name
    return {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": run_name,
            "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
            "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns",
            "error_occurred": True, "error_message": "failed: " + reason,
            "parbench": {"disposition": "failed", "reason": reason}}


def _fmt(seconds):
    seconds = int(round(seconds))
    return "%dm%02ds" % divmod(seconds, 60) if seconds >= 60 else "%ds" % seconds


def _save_state(path, state):
    try:
        with open(path + ".part", "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
        os.replace(path + ".part", path)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path)


def out_of_space(path):
    """An OSError (ENOSPC) to raise when the device of `path` is full, else None."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    # root writes into the blocks kept for it, others stop before them
    free = (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize
    return None if free >= SPACE_FLOOR else OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


def load_parts(parts, got, kinds, workdir):
    """Reads the parts a state lists: their whole instances into `got`, the
    instance a crash ended as its failed entry, the counters' kinds into
    `kinds`; returns (the first part's context, the parts' log lines). A
    part is looked for in `workdir` too, for a workdir copied from the
    machine that ran it."""
    context, log_lines = None, []
    for rec in parts:
        path = rec["path"]
        if not os.path.exists(path):
            path = os.path.join(workdir, os.path.basename(path))
        ctx, entries = read_part(path)
        whole = complete_instances(entries)
        entries = [e for e in entries if e.get("run_name", e.get("name")) in whole]
        if ctx and context is None:
            context = ctx
        if isinstance(ctx.get("parbench_counters"), dict):
            kinds.update(ctx["parbench_counters"])
        for e in entries:
            note_device(e, ctx, rec.get("gpu"))
            got.setdefault(e.get("run_name", e.get("name")), []).append(e)
        if rec.get("victim"):
            got[rec["victim"]] = [failed_entry(rec["victim"], rec["victim_reason"])]
        log_lines.append({k: rec[k] for k in LOGGED if k in rec})
    return context, log_lines


def write_merged(out, instances, got, context, kinds, suite):
    """OUT: the entries of `instances` in got, in their order, under the
    context with the counters' kinds and parbench_suite = suite."""
    merged = []
    for n in instances:
        merged.extend(got.get(n, []))
    context = dict(context or {})
    if kinds:
        context["parbench_counters"] = kinds
    context["parbench_suite"] = suite
    with open(out + ".part", "w") as f:
        cli.dump({"context": context, "benchmarks": merged}, f)
    os.replace(out + ".part", out)
    return merged
