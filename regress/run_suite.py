"""Crash-safe suite runner: bench in separate processes, one JSON out.

  ci/run-suite --bench build/gpu/bench --out suite.json [--split family|variant]
               [--timeout S] [--workdir DIR] [--exclude REGEX] -- [bench arguments]
  ci/run-suite --out suite.json --workdir DIR --merge-stopped

The selected instances (bench --benchmark_list_tests with the bench
arguments) are split into groups, one per family (default) or per
Family/Variant, and each group runs as its own bench process with a time
limit. When a process crashes (a signal, an abort, a GPU fault), hangs past
the limit, or ends without writing every instance, the runner keeps what the
process wrote (a file cut off mid-run is closed after its last complete
entry), records the instance that was running as a `failed` entry saying
what happened, and starts a new process for the rest of the group. So a
broken instance costs only itself.

With --gpus N the instances that run on one GPU are spread over GPUs 0 ..
N-1: each GPU is a lane with its own process (CUDA_VISIBLE_DEVICES) and its
own share of the cores, taking the next group of GPU instances when it is
done; the CPU instances, whose times other processes would disturb, and the
multi-GPU ones run after, alone. Each GPU entry records its GPU's model and,
from a lane, its index (`parbench.gpu`, `parbench.gpu_index`).

With --lane-cores K each lane gets K cores only, and the CPU instances run
at the same time as the lanes, on the cores the lanes leave (their thread
axes end at that many cores); the multi-GPU instances run after the lanes, on
the lanes' cores. The suite then takes about as long as the longer of its GPU
and CPU work instead of their sum. `--only cpu` (or `gpu`) runs only the
instances bench says run on the CPU (or on GPUs).

The entries are merged in the order bench lists them into one Google
Benchmark JSON (the first part's context, the union of parbench_counters,
and parbench_suite: the groups, their processes and what ended them).

--merge-stopped runs nothing: it writes OUT from the instances a stopped
suite finished in its workdir (a copy of it from another machine too), with
parbench_suite.stopped giving how many of how many, for a suite that will
not be resumed.

Progress on stderr: group i of n when it starts and every 30 s while it runs
(instances done, elapsed time, an estimate of the time left).
Exit status: 0 every entry passed or is unsupported; 1 an entry is an error
(incorrect, out of memory, failed: including those the runner recorded);
2 bad usage or a bench that refuses its arguments; 4 stopped by --max-seconds
(the state is in the workdir: the same command with --resume goes on);
128+N stopped by signal N (SIGINT, SIGTERM, SIGHUP): the bench process is
killed with the runner, never left running, and --resume goes on too.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from regress.run import launch
from regress import cli
from regress.load import results


TOOL = "run-suite"
# The key suffix of a group's instances that run on one GPU each, spread
# over the GPU lanes with --gpus.
LANE_MARK = " (GPU lanes)"
# A family's GPU-count flag (--<family>-gpus=LIST).
GPU_COUNT_FLAG = re.compile(r"^--[a-z0-9]+-gpus(=|$)")
LOGGED = ("group", "part", "gpu", "track", "instances", "start_s", "seconds", "exit", "timed_out", "end")


class UsageError(Exception):
    pass


def group_key(name, split):
    parts = name.split("/")
    return parts[0] if split == "family" else "/".join(parts[:2])


def describe_end(rc, timed_out, timeout):
    if timed_out:
        return "timed out after %g s (the runner killed the process)" % timeout
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "signal %d" % -rc
        return "the process died of %s" % name
    if rc in (0, 1):
        return "the process ended (exit %d) before reporting it" % rc
    return "the process exited with status %d" % rc


def gpus_of(name):
    """The GPU count in an instance's name (gpus:G), 1 without one."""
    for part in name.split("/"):
        if part.startswith("gpus:") and part[5:].isdigit():
            return int(part[5:])
    return 1


def check_lanes(gpus):
    """UsageError unless this host has `gpus` GPUs, all one model (so every
    entry of the suite ran on the model its context names, and the history
    files it under one machine). Without nvidia-smi nothing is checked: the
    lanes' GPU entries then say what they found."""
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return
    names = [n.strip() for n in p.stdout.splitlines() if n.strip()] if p.returncode == 0 else []
    if not names:
        return
    if len(names) < gpus:
        raise UsageError("--gpus %d: this host has %d GPU%s" % (gpus, len(names), "" if len(names) == 1 else "s"))
    if len(set(names[:gpus])) > 1:
        raise UsageError("--gpus %d: GPUs 0 .. %d are not one model (%s): a suite's entries must be comparable"
                         % (gpus, gpus - 1, ", ".join("%d: %s" % (i, n) for i, n in enumerate(names[:gpus]))))


def split_cores(lanes, lane_cores=None):
    """(each GPU lane's cores, the CPU track's cores or None): this
    process's cores in `lanes` runs of consecutive ones, so the lanes' host
    work never shares a core; with lane_cores, K cores a lane and the rest
    for the CPU instances beside them (UsageError when none is left)."""
    cores = sorted(os.sched_getaffinity(0))
    if lane_cores is None:
        return [cores[len(cores) * i // lanes:len(cores) * (i + 1) // lanes] or cores[:1]
                for i in range(lanes)], None
    if lanes * lane_cores >= len(cores):
        raise UsageError("--lane-cores %d: %d lane%s of %d cores leave none of this process's %d cores for the "
                         "CPU instances" % (lane_cores, lanes, "" if lanes == 1 else "s", lane_cores, len(cores)))
    return [cores[i * lane_cores:(i + 1) * lane_cores] for i in range(lanes)], cores[lanes * lane_cores:]


def core_text(cores):
    """Cores as taskset writes a list: runs of consecutive ones as A-B."""
    runs = []
    for c in cores:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in runs)


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
    with open(path + ".part", "w") as f:
        json.dump(state, f, indent=1, sort_keys=True)
    os.replace(path + ".part", path)


def _stop(state_path, state, started, got, instances, log):
    _save_state(state_path, state)
    log("run-suite: stopped after %s (--max-seconds) with %d of %d instances done; run the same "
        "command with --resume to go on" % (_fmt(time.monotonic() - started), len(got), len(instances)))
    return 4


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


def merge_stopped(out, workdir, log):
    """Writes OUT from what a stopped suite's workdir holds, running nothing:
    the instances done, in the suite's order, and parbench_suite.stopped
    (how many of how many). For a suite that will not be resumed, such as
    one a GPU machine's time ran out on."""
    state_path = os.path.join(workdir, "state.json")
    try:
        with open(state_path) as f:
            state = json.load(f)
        instances, parts = state["instances"], state["parts"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError("%s holds no suite's state (%s)" % (workdir, getattr(e, "strerror", None) or e))
    got, kinds = {}, {}
    context, parts_log = load_parts(parts, got, kinds, workdir)
    if not got:
        raise UsageError("%s holds no finished instance to merge" % workdir)
    suite = {"split": state.get("split"), "gpus": state.get("gpus", 1), "parts": parts_log,
             "stopped": {"instances_done": len(got), "instances": len(instances)}}
    write_merged(out, instances, got, context, kinds, suite)
    log("run-suite: %d of %d instances merged from %s (a stopped suite); wrote %s"
        % (len(got), len(instances), workdir, out))
    return 0


def run_suite(bench, args, out, split, timeout, workdir, log, resume=False, max_seconds=None,
              progress_every=30.0, exclude=None, gpus=1, lane_cores=None, only=None):
    """Runs the suite; returns the exit status (4: stopped by max_seconds,
    the state kept in workdir for resume). max_seconds is a hard limit: a
    process still running then is killed and its unfinished instances run
    again on resume. With gpus > 1 (or lane_cores) the instances on one GPU
    run on that many GPU lanes at once; with lane_cores the CPU instances
    run beside them on the cores the lanes leave. `only`: "cpu" or "gpu",
    the instances that run there."""
    lane_cpus, cpu_track = split_cores(gpus, lane_cores)
    try:
        # The CPU instances' thread axes are those of the cores they run on.
        instances = launch.list_tests(bench, args, cpu_track)
    except launch.Refused as e:
        raise UsageError(str(e))
    if exclude is not None:
        instances = [n for n in instances if not exclude.search(n)]
    base_args = launch.strip_filter(args)
    where = {}
    if gpus > 1 or lane_cores is not None or only is not None:
        if gpus > 1 or lane_cores is not None:
            check_lanes(gpus)
        try:
            where = launch.list_devices(bench, args, cpu_track)
        except launch.Refused as e:
            raise UsageError("%s (--gpus, --lane-cores and --only need a bench that says where its instances run)"
                             % e)
    if only is not None:
        instances = [n for n in instances if (where.get(n) == "cpu") == (only == "cpu")]
    if not instances:
        raise UsageError("the bench arguments select no instance" + (" on the %s" % only.upper() if only else ""))
    by_key = {}
    for name in instances:
        # An instance on one GPU (not a peer copy or a collective over
        # several, which bench lists as gpus:G).
        lane = where.get(name) == "gpu" and gpus_of(name) == 1
        by_key.setdefault(group_key(name, split) + (LANE_MARK if lane else ""), []).append(name)
    groups = list(by_key.items())
    beside = set()  # the groups of the CPU track, run beside the lanes
    if cpu_track is not None:
        beside = {key for key, names in groups if all(where.get(n) == "cpu" for n in names)}
    os.makedirs(workdir, exist_ok=True)
    got = {}           # instance -> list of entries (repetitions, aggregates)
    context, kinds = None, {}
    parts_log = []
    # The state after every part, so --resume goes on after an interrupted or
    # --max-seconds run (a GPU machine's calls are limited in time).
    state_path = os.path.join(workdir, "state.json")
    state = {"args": args, "split": split, "gpus": gpus, "lane_cores": lane_cores, "only": only,
             "instances": instances, "parts": []}
    if resume and os.path.exists(state_path):
        try:
            with open(state_path) as f:
                old = json.load(f)
        except ValueError:
            old = None
        if not old or any(old.get(k, 1 if k == "gpus" else None) != state[k]
                          for k in ("args", "split", "gpus", "lane_cores", "only", "instances")):
            raise UsageError("%s holds another suite's state (other arguments or instances); use another --workdir"
                             % workdir)
        context, parts_log = load_parts(old["parts"], got, kinds, workdir)
        state["parts"] = old["parts"]
        log("run-suite: resuming: %d of %d instances done earlier" % (len(got), len(instances)))
    started = time.monotonic()
    deadline = None if max_seconds is None else started + max_seconds
    done_before = len(got)  # the estimate of time left counts only this call's work

    def left_text(done_now):
        ran = done_now - done_before
        if ran < 10:
            return ""
        rest = len(instances) - done_now
        return "; about %s left (by instance count)" % _fmt((time.monotonic() - started) / ran * rest)

    lock = threading.Lock()
    shared = {"context": context, "failure": None}

    def run_group(gi, key, names, lane=None, cores=None):
        """Runs the group until every instance has an entry; on GPU lane
        `lane` (its own GPU and cores) when given, else on `cores` when
        given. Returns True when --max-seconds stopped it."""
        with lock:
            todo = [n for n in names if n not in got]
        if not todo:
            return False
        log("run-suite: group %d of %d: %s (%d instances)%s; %s elapsed%s"
            % (gi + 1, len(groups), key, len(names),
               " on GPU %d" % lane if lane is not None else " beside the lanes" if key in beside else "",
               _fmt(time.monotonic() - started), left_text(len(got))))
        env, cpus = None, cores
        args = base_args
        if lane is not None:
            env, cpus = {"CUDA_VISIBLE_DEVICES": str(lane)}, lane_cpus[lane_list.index(lane)]
            # A process that sees one GPU refuses GPU counts above 1; its
            # instances use one GPU, so those flags say nothing to it.
            args = [a for a in base_args if not GPU_COUNT_FLAG.match(a)]
        with lock:
            part = max([r["part"] for r in state["parts"] if r["group"] == key] + [0])
        while todo:
            if deadline is not None and time.monotonic() >= deadline:
                return True
            part += 1
            path = os.path.join(workdir, "%02d-%s-%d.json" % (gi + 1, re.sub(r"[^A-Za-z0-9_.-]", "_", key), part))
            base = len(got)

            def tick(k, gi=gi, key=key, todo=todo, base=base):
                log("run-suite: group %d of %d: %s: %d of %d instances done; %s elapsed%s"
                    % (gi + 1, len(groups), key, len(names) - len(todo) + k, len(names),
                       _fmt(time.monotonic() - started), left_text(base + k)))
            begun = time.monotonic() - started
            rc, timed_out, stopped, secs = run_part(bench, args, todo, path, timeout, deadline,
                                                    (progress_every, tick), env, cpus)
            ctx, entries = read_part(path)
            if rc == 2 and not entries:
                with open(path + ".log") as f:
                    tail = (f.read().strip().splitlines() or ["(no output)"])[-1]
                raise UsageError("%s refused its arguments: %s" % (bench, tail))
            whole = complete_instances(entries)
            with lock:
                if ctx and shared["context"] is None:
                    shared["context"] = ctx
                if isinstance(ctx.get("parbench_counters"), dict):
                    kinds.update(ctx["parbench_counters"])
                seen = []
                for e in entries:
                    n = e.get("run_name", e.get("name"))
                    if n not in whole:
                        continue
                    if n in todo and n not in seen:
                        seen.append(n)
                    note_device(e, ctx, lane)
                    got.setdefault(n, []).append(e)
                # Google Benchmark reports an instance when all its repetitions are
                # done, and a file cut off inside one is closed before it
                # (results.parse_document): what was read is whole.
                rest = [n for n in todo if n not in seen]
                rec = {"group": key, "part": part, "instances": len(todo), "start_s": round(begun, 3),
                       "seconds": round(secs, 3), "exit": rc, "timed_out": timed_out, "path": path}
                if lane is not None:
                    rec["gpu"] = lane
                elif key in beside:
                    rec["track"] = "cpu"
                if stopped:
                    # --max-seconds ran out inside this process: what it finished
                    # is kept, the rest (the instance it was in included) runs on
                    # --resume; nothing is charged to that instance.
                    rec.update(timed_out=False, end="stopped (--max-seconds)")
                    parts_log.append({k: rec[k] for k in LOGGED if k in rec})
                    state["parts"].append(rec)
                    return True
                rec["end"] = "ok" if not rest else describe_end(rc, timed_out, timeout)
                parts_log.append({k: rec[k] for k in LOGGED if k in rec})
                if rest:
                    victim = rest[0]
                    reason = "%s while running this instance" % rec["end"]
                    log("run-suite:   %s: %s" % (victim, reason))
                    got[victim] = [failed_entry(victim, reason)]
                    rest = rest[1:]
                    rec.update(victim=victim, victim_reason=reason)
                state["parts"].append(rec)
                _save_state(state_path, state)
            todo = rest
        return False

    # Groups on one GPU each run on the GPU lanes at once, each lane pulling
    # the next group when it is done. The rest (CPU instances, whose times
    # the other processes would disturb, and multi-GPU ones) run alone after
    # them; with lane_cores the CPU groups run beside the lanes instead, on
    # their own cores, and the multi-GPU ones after the lanes on theirs.
    lane_list = list(range(gpus))
    queue = [(gi, key, names) for gi, (key, names) in enumerate(groups) if key.endswith(LANE_MARK)]
    stopped = []  # a track --max-seconds stopped, when not empty

    def guarded(work, *a):
        """Runs work(*a) on a thread: a stop is noted in `stopped`, an
        exception handed to the main thread."""
        try:
            if work(*a):
                with lock:
                    stopped.append(True)
        except BaseException as e:  # noqa: B902 - handed to the main thread
            with lock:
                if shared["failure"] is None:
                    shared["failure"] = e
            # The first failure ends the other threads' processes too.
            launch.stop_all()

    def lane_worker(lane):
        while True:
            with lock:
                if not queue or shared["failure"] is not None:
                    return False
                gi, key, names = queue.pop(0)
            if run_group(gi, key, names, lane):
                return True

    def cpu_worker():
        for gi, (key, names) in enumerate(groups):
            if key in beside:
                with lock:
                    if shared["failure"] is not None:
                        return False
                if run_group(gi, key, names, cores=cpu_track):
                    return True
        return False

    cpu_thread = None
    if beside:
        cpu_thread = threading.Thread(target=guarded, args=(cpu_worker,))
        cpu_thread.start()

    try:
        if queue:
            threads = [threading.Thread(target=guarded, args=(lane_worker, lane)) for lane in lane_list]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if shared["failure"] is None and not stopped:
            after = sorted(set(c for cs in lane_cpus for c in cs)) if cpu_track is not None else None
            for gi, (key, names) in enumerate(groups):
                if key.endswith(LANE_MARK) or key in beside:
                    continue
                if run_group(gi, key, names, cores=after):
                    stopped.append(True)
                    break
        if cpu_thread is not None:
            cpu_thread.join()
    except BaseException as e:
        # Stopped here (a signal, a failure): the other threads' bench
        # processes end with this one, never left running. A process of
        # this thread ended by another thread's failure reports that failure.
        launch.stop_all()
        if cpu_thread is not None:
            cpu_thread.join()
        if isinstance(e, launch.Stopped) and shared["failure"] is not None:
            raise shared["failure"]
        raise
    if shared["failure"] is not None:
        raise shared["failure"]
    if stopped:
        return _stop(state_path, state, started, got, instances, log)
    context = shared["context"]
    merged = write_merged(out, instances, got, context, kinds,
                          dict({"split": split, "timeout_s": timeout, "gpus": gpus, "groups": len(groups),
                                "parts": parts_log},
                               **({} if cpu_track is None else
                                  {"lane_cores": lane_cores, "cpu_cores": core_text(cpu_track)})))
    errors = sum(1 for e in merged if e.get("error_occurred") and not
                 str(e.get("error_message", "")).startswith("unsupported: ") and
                 (e.get("parbench") or {}).get("disposition", "failed") != "unsupported")
    log("run-suite: %d instances in %d groups in %s; %d error entries; wrote %s"
        % (len(instances), len(groups), _fmt(time.monotonic() - started), errors, out))
    return 1 if errors else 0


def main(argv=None):
    argv, bench_args = cli.split_at_dashes(argv)
    p = argparse.ArgumentParser(prog="run-suite", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", help="the bench binary (not with --merge-stopped)")
    p.add_argument("--out", required=True, help="the merged JSON")
    p.add_argument("--split", choices=("family", "variant"), default="family",
                   help="one process per family (default) or per Family/Variant")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds one process may run (default 1800)")
    p.add_argument("--workdir", help="where the parts and their logs go (default OUT.parts/)")
    p.add_argument("--resume", action="store_true", help="go on from the parts an earlier run of the same "
                   "suite left in --workdir")
    p.add_argument("--max-seconds", type=float, help="stop after this many seconds, killing the process that "
                   "is running then (its finished instances are kept): exit 4, the state kept for --resume")
    p.add_argument("--gpus", type=int, default=1, metavar="N",
                   help="run the instances on one GPU on N GPUs at once (GPUs 0 .. N-1, each its own process "
                   "and share of the cores); CPU and multi-GPU instances still run alone (default 1)")
    p.add_argument("--lane-cores", type=int, metavar="K", help="give each GPU lane K cores and run the CPU "
                   "instances at the same time, on the cores the lanes leave (their thread axes end there); "
                   "the multi-GPU instances run after the lanes, on the lanes' cores")
    p.add_argument("--only", choices=("cpu", "gpu"), help="only the instances that run on the CPU (or on GPUs), "
                   "as bench --list-devices says")
    p.add_argument("--merge-stopped", action="store_true", help="run nothing: write OUT from the instances a "
                   "stopped suite finished in --workdir (parbench_suite.stopped says how many of how many)")
    p.add_argument("--exclude", metavar="REGEX", help="leave out the instances whose name this Python regular "
                   "expression matches (after bench's own --benchmark_filter)")
    args = p.parse_args(argv)
    say = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.merge_stopped:
        try:
            return merge_stopped(args.out, args.workdir or args.out + ".parts", say)
        except (UsageError, OSError) as e:
            print("%s: %s" % (TOOL, e), file=sys.stderr)
            return 2
    if args.bench is None:
        print("%s: --bench is required (the bench binary)" % TOOL, file=sys.stderr)
        return 2
    try:
        exclude = re.compile(args.exclude) if args.exclude is not None else None
    except re.error as e:
        print("%s: --exclude is not a regular expression: %s" % (TOOL, e), file=sys.stderr)
        return 2
    for a in bench_args:
        if a.startswith("--benchmark_out") or a == "--benchmark_list_tests":
            print("%s: %s: the runner writes the JSON itself (--out)" % (TOOL, a), file=sys.stderr)
            return 2
    if not (os.path.isfile(args.bench) and os.access(args.bench, os.X_OK)):
        print("%s: %s is not an executable file" % (TOOL, args.bench), file=sys.stderr)
        return 2
    if not args.timeout > 0:
        print("%s: --timeout must be positive" % TOOL, file=sys.stderr)
        return 2
    if args.gpus < 1:
        print("%s: --gpus must be at least 1" % TOOL, file=sys.stderr)
        return 2
    if args.lane_cores is not None and args.lane_cores < 1:
        print("%s: --lane-cores must be at least 1" % TOOL, file=sys.stderr)
        return 2
    try:
        return run_suite(os.path.abspath(args.bench), bench_args, args.out, args.split, args.timeout,
                         args.workdir or args.out + ".parts", say, args.resume, args.max_seconds,
                         exclude=exclude, gpus=args.gpus, lane_cores=args.lane_cores, only=args.only)
    except UsageError as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return 2
    except OSError as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    cli.run_tool(TOOL, main, "; the bench process it ran was killed; the same command with --resume goes on")
