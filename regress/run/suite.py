"""The crash-safe suite runner (ci/run-suite, regress/run_suite.py, is its
command line and says what it does): the instances in groups, each group's
bench processes until every instance has an entry, on GPU lanes and a CPU
track beside them. Standard library only (ci/run-suite runs it with any
python3).
"""
import json
import os
import re
import signal
import subprocess
import threading
import time

from regress.load import results
from regress.run import launch
from regress.run.suite_parts import (LOGGED, _fmt, _save_state, complete_instances, failed_entry, load_parts,
                                     note_device, out_of_space, read_part, run_part, write_merged)

# The key suffix of a group's instances that run on one GPU each, spread
# over the GPU lanes with --gpus.
LANE_MARK = " (GPU lanes)"
# A family's GPU-count flag (--<family>-gpus=LIST).
GPU_COUNT_FLAG = re.compile(r"^--[a-z0-9]+-gpus(=|$)")


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
    instances, where = select_instances(bench, args, cpu_track, exclude, gpus, lane_cores, only)
    groups = group_instances(instances, where, split)
    how = {"split": split, "gpus": gpus, "lane_cores": lane_cores, "only": only}
    suite = Suite(bench, args, workdir, log, timeout, progress_every, instances, groups, how, lane_cpus, cpu_track,
                  where)
    if resume:
        suite.resume()
    suite.start(max_seconds)
    suite.run_tracks()
    if suite.stopped:
        return suite.stop()
    return suite.finish(out, split, timeout, gpus, lane_cores)


def select_instances(bench, args, cpu_track, exclude, gpus, lane_cores, only):
    """(the instances the suite runs, in bench's order; {instance: "cpu" or
    "gpu"} where bench says where they run, {} when nothing asks)."""
    try:
        # The CPU instances' thread axes are those of the cores they run on.
        instances = launch.list_tests(bench, args, cpu_track)
    except launch.Refused as e:
        raise UsageError(str(e))
    if exclude is not None:
        instances = [n for n in instances if not exclude.search(n)]
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
    return instances, where


def group_instances(instances, where, split):
    """[(key, [instance])]: one group per family or Family/Variant, its
    instances on one GPU apart (key + LANE_MARK), in bench's order."""
    by_key = {}
    for name in instances:
        # An instance on one GPU (not a peer copy or a collective over
        # several, which bench lists as gpus:G).
        lane = where.get(name) == "gpu" and gpus_of(name) == 1
        by_key.setdefault(group_key(name, split) + (LANE_MARK if lane else ""), []).append(name)
    return list(by_key.items())


def error_entries(merged):
    """How many of the merged entries are errors (incorrect, out of memory,
    failed; unsupported is none), read through the loader's Entry."""
    entries, _malformed = results.read_entries(merged)
    return sum(1 for e in entries if e.is_error)


class Suite:
    """One call of the suite: its groups, the entries they got, the state
    kept after every part (so --resume goes on after an interrupted or
    --max-seconds run: a GPU machine's calls are limited in time), and the
    tracks that run the groups: the GPU lanes, the CPU track beside them,
    the rest after."""

    def __init__(self, bench, args, workdir, log, timeout, progress_every, instances, groups, how, lane_cpus,
                 cpu_track, where):
        self.bench, self.base_args, self.workdir, self.log = bench, launch.strip_filter(args), workdir, log
        self.timeout, self.progress_every = timeout, progress_every
        self.instances, self.groups = instances, groups
        self.lane_cpus, self.cpu_track = lane_cpus, cpu_track
        self.lane_list = list(range(how["gpus"]))
        self.beside = set()  # the groups of the CPU track, run beside the lanes
        if cpu_track is not None:
            self.beside = {key for key, names in groups if all(where.get(n) == "cpu" for n in names)}
        os.makedirs(workdir, exist_ok=True)
        self.got = {}           # instance -> list of entries (repetitions, aggregates)
        self.kinds, self.parts_log = {}, []
        self.context, self.failure = None, None
        self.stopped = []       # a track --max-seconds stopped, when not empty
        self.lock = threading.Lock()
        self.state_path = os.path.join(workdir, "state.json")
        self.state = dict(args=args, instances=instances, parts=[], **how)
        self.started = self.deadline = None
        self.done_before = 0

    def resume(self):
        """Takes up the parts an earlier call of the same suite left in the workdir."""
        if not os.path.exists(self.state_path):
            return
        try:
            with open(self.state_path) as f:
                old = json.load(f)
        except ValueError:
            old = None
        if not old or any(old.get(k, 1 if k == "gpus" else None) != self.state[k]
                          for k in ("args", "split", "gpus", "lane_cores", "only", "instances")):
            raise UsageError("%s holds another suite's state (other arguments or instances); use another --workdir"
                             % self.workdir)
        self.context, self.parts_log = load_parts(old["parts"], self.got, self.kinds, self.workdir)
        self.state["parts"] = old["parts"]
        self.log("run-suite: resuming: %d of %d instances done earlier" % (len(self.got), len(self.instances)))

    def start(self, max_seconds):
        self.started = time.monotonic()
        self.deadline = None if max_seconds is None else self.started + max_seconds
        self.done_before = len(self.got)  # the estimate of time left counts only this call's work

    def left_text(self, done_now):
        ran = done_now - self.done_before
        if ran < 10:
            return ""
        rest = len(self.instances) - done_now
        return "; about %s left (by instance count)" % _fmt((time.monotonic() - self.started) / ran * rest)

    def run_group(self, gi, key, names, lane=None, cores=None):
        """Runs the group until every instance has an entry; on GPU lane
        `lane` (its own GPU and cores) when given, else on `cores` when
        given. Returns True when --max-seconds stopped it."""
        with self.lock:
            todo = [n for n in names if n not in self.got]
        if not todo:
            return False
        self.log("run-suite: group %d of %d: %s (%d instances)%s; %s elapsed%s"
                 % (gi + 1, len(self.groups), key, len(names),
                    " on GPU %d" % lane if lane is not None else " beside the lanes" if key in self.beside else "",
                    _fmt(time.monotonic() - self.started), self.left_text(len(self.got))))
        env, cpus, args = None, cores, self.base_args
        if lane is not None:
            env, cpus = {"CUDA_VISIBLE_DEVICES": str(lane)}, self.lane_cpus[self.lane_list.index(lane)]
            # A process that sees one GPU refuses GPU counts above 1; its
            # instances use one GPU, so those flags say nothing to it.
            args = [a for a in self.base_args if not GPU_COUNT_FLAG.match(a)]
        with self.lock:
            part = max([r["part"] for r in self.state["parts"] if r["group"] == key] + [0])
        while todo:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return True
            part += 1
            path = os.path.join(self.workdir, "%02d-%s-%d.json" % (gi + 1, re.sub(r"[^A-Za-z0-9_.-]", "_", key), part))
            base = len(self.got)

            def tick(k, gi=gi, key=key, todo=todo, base=base):
                self.log("run-suite: group %d of %d: %s: %d of %d instances done; %s elapsed%s"
                         % (gi + 1, len(self.groups), key, len(names) - len(todo) + k, len(names),
                            _fmt(time.monotonic() - self.started), self.left_text(base + k)))
            begun = time.monotonic() - self.started
            rc, timed_out, stopped, secs = run_part(self.bench, args, todo, path, self.timeout, self.deadline,
                                                    (self.progress_every, tick), env, cpus)
            ctx, entries = read_part(path)
            if rc == 2 and not entries:
                with open(path + ".log") as f:
                    tail = (f.read().strip().splitlines() or ["(no output)"])[-1]
                raise UsageError("%s refused its arguments: %s" % (self.bench, tail))
            rec = {"group": key, "part": part, "instances": len(todo), "start_s": round(begun, 3),
                   "seconds": round(secs, 3), "exit": rc, "timed_out": timed_out, "path": path}
            if lane is not None:
                rec["gpu"] = lane
            elif key in self.beside:
                rec["track"] = "cpu"
            todo = self.keep_part(rec, todo, ctx, entries, lane, stopped)
            if todo is None:
                return True
        return False

    def keep_part(self, rec, todo, ctx, entries, lane, stopped):
        """Keeps what a part wrote and records it (`rec`) in the state: the
        instances of `todo` still to run, None when --max-seconds stopped the
        part. An instance the part was in when it died gets its failed entry."""
        whole = complete_instances(entries)
        with self.lock:
            if ctx and self.context is None:
                self.context = ctx
            if isinstance(ctx.get("parbench_counters"), dict):
                self.kinds.update(ctx["parbench_counters"])
            seen = []
            for e in entries:
                n = e.get("run_name", e.get("name"))
                if n not in whole:
                    continue
                if n in todo and n not in seen:
                    seen.append(n)
                note_device(e, ctx, lane)
                self.got.setdefault(n, []).append(e)
            # Google Benchmark reports an instance when all its repetitions are
            # done, and a file cut off inside one is closed before it
            # (results.parse_document): what was read is whole.
            rest = [n for n in todo if n not in seen]
            if stopped:
                # --max-seconds ran out inside this process: what it finished
                # is kept, the rest (the instance it was in included) runs on
                # --resume; nothing is charged to that instance.
                rec.update(timed_out=False, end="stopped (--max-seconds)")
                self.parts_log.append({k: rec[k] for k in LOGGED if k in rec})
                self.state["parts"].append(rec)
                return None
            full = out_of_space(self.workdir) if rest else None
            if full is not None:
                # Not recorded: the part runs again on --resume, once there is space.
                raise full
            rec["end"] = "ok" if not rest else describe_end(rec["exit"], rec["timed_out"], self.timeout)
            self.parts_log.append({k: rec[k] for k in LOGGED if k in rec})
            if rest:
                victim = rest[0]
                reason = "%s while running this instance" % rec["end"]
                self.log("run-suite:   %s: %s" % (victim, reason))
                self.got[victim] = [failed_entry(victim, reason)]
                rest = rest[1:]
                rec.update(victim=victim, victim_reason=reason)
            self.state["parts"].append(rec)
            _save_state(self.state_path, self.state)
        return rest

    def guarded(self, work, *a):
        """Runs work(*a) on a thread: a stop is noted in `stopped`, an
        exception handed to the main thread."""
        try:
            if work(*a):
                with self.lock:
                    self.stopped.append(True)
        except BaseException as e:  # noqa: B902 - handed to the main thread
            with self.lock:
                if self.failure is None:
                    self.failure = e
            # The first failure ends the other threads' processes too.
            launch.stop_all()

    def lane_worker(self, lane, queue):
        """A GPU lane: takes the next group of the queue until none is left."""
        while True:
            with self.lock:
                if not queue or self.failure is not None:
                    return False
                gi, key, names = queue.pop(0)
            if self.run_group(gi, key, names, lane):
                return True

    def cpu_worker(self):
        """The CPU track: its groups, one after the other, beside the lanes."""
        for gi, (key, names) in enumerate(self.groups):
            if key in self.beside:
                with self.lock:
                    if self.failure is not None:
                        return False
                if self.run_group(gi, key, names, cores=self.cpu_track):
                    return True
        return False

    def run_tracks(self):
        """Groups on one GPU each run on the GPU lanes at once, each lane
        pulling the next group when it is done. The rest (CPU instances, whose
        times the other processes would disturb, and multi-GPU ones) run alone
        after them; with lane_cores the CPU groups run beside the lanes instead,
        on their own cores, and the multi-GPU ones after the lanes on theirs."""
        queue = [(gi, key, names) for gi, (key, names) in enumerate(self.groups) if key.endswith(LANE_MARK)]
        cpu_thread = None
        if self.beside:
            cpu_thread = threading.Thread(target=self.guarded, args=(self.cpu_worker,))
            cpu_thread.start()
        try:
            if queue:
                threads = [threading.Thread(target=self.guarded, args=(self.lane_worker, lane, queue))
                           for lane in self.lane_list]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            if self.failure is None and not self.stopped:
                self.run_after_lanes()
            if cpu_thread is not None:
                cpu_thread.join()
        except BaseException as e:
            # Stopped here (a signal, a failure): the other threads' bench
            # processes end with this one, never left running. A process of
            # this thread ended by another thread's failure reports that failure.
            launch.stop_all()
            if cpu_thread is not None:
                cpu_thread.join()
            if isinstance(e, launch.Stopped) and self.failure is not None:
                raise self.failure
            raise
        if self.failure is not None:
            raise self.failure

    def run_after_lanes(self):
        """The groups neither on the lanes nor beside them, one after the
        other (with a CPU track, on the lanes' cores)."""
        after = sorted(set(c for cs in self.lane_cpus for c in cs)) if self.cpu_track is not None else None
        for gi, (key, names) in enumerate(self.groups):
            if key.endswith(LANE_MARK) or key in self.beside:
                continue
            if self.run_group(gi, key, names, cores=after):
                self.stopped.append(True)
                break

    def stop(self):
        """Keeps the state for --resume; exit 4."""
        _save_state(self.state_path, self.state)
        self.log("run-suite: stopped after %s (--max-seconds) with %d of %d instances done; run the same "
                 "command with --resume to go on" % (_fmt(time.monotonic() - self.started), len(self.got),
                                                     len(self.instances)))
        return 4

    def finish(self, out, split, timeout, gpus, lane_cores):
        """Writes OUT, the entries in bench's order; 1 when one is an error, else 0."""
        suite = {"split": split, "timeout_s": timeout, "gpus": gpus, "groups": len(self.groups),
                 "parts": self.parts_log}
        if self.cpu_track is not None:
            suite.update(lane_cores=lane_cores, cpu_cores=core_text(self.cpu_track))
        merged = write_merged(out, self.instances, self.got, self.context, self.kinds, suite)
        errors = error_entries(merged)
        self.log("run-suite: %d instances in %d groups in %s; %d error entries; wrote %s"
                 % (len(self.instances), len(self.groups), _fmt(time.monotonic() - self.started), errors, out))
        return 1 if errors else 0
