"""The one place that starts bench: listing what a command line selects,
and one run of it into a JSON file with an optional time limit.

The suite runner (regress/run_suite.py), the comparator's paired rounds
(regress/compare.py --run) and the nightly job's role survey
(regress/nightly.py) all start bench through here, so a time limit, a
filter and the cleanup after Ctrl-C mean the same thing everywhere.
"""
import os
import re
import signal
import subprocess
import threading
import time


class Refused(Exception):
    """bench refused its command line (exit 2 before running anything)."""


class Stopped(Exception):
    """run() was stopped by stop_all() (the caller is being stopped)."""


# The bench processes run() has running, from any thread, so a runner
# stopped by a signal in its main thread ends those of its other threads too.
_running = set()
_lock = threading.Lock()
_stopping = [False]


def stop_all():
    """Kills every bench process run() has running (its process group),
    waits until they are gone, and makes those run() calls, and any later
    one, raise Stopped."""
    with _lock:
        _stopping[0] = True
        procs = list(_running)
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # Reaped before returning, so a runner that exits right after leaves
    # none of them behind (their run() may still be waiting on another thread;
    # Popen.wait is safe from two).
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass


def _on(cpus):
    """The command prefix that runs a program on `cpus` only (none: anywhere)."""
    return ["taskset", "-c", ",".join(str(c) for c in cpus)] if cpus else []


def list_tests(bench, args, cpus=None):
    """The instances `bench args` selects, in bench's order
    (--benchmark_list_tests); run on `cpus` when given, since the thread axes
    follow the cores bench may use."""
    p = subprocess.run(_on(cpus) + [bench, "--benchmark_list_tests"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        raise Refused("%s refused its arguments: %s" % (bench, last))
    return [line.strip() for line in p.stdout.splitlines() if line.strip()]


def list_devices(bench, args, cpus=None):
    """{instance: "cpu", "gpu" (one GPU) or "gpus:G" (G at once)} of what
    `bench args` selects (bench --list-devices, on `cpus` when given);
    Refused where bench refuses, an older one included."""
    p = subprocess.run(_on(cpus) + [bench, "--list-devices"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        raise Refused("%s refused --list-devices: %s" % (bench, last))
    out = {}
    for line in p.stdout.splitlines():
        where, _, name = line.strip().partition(" ")
        if name:
            out[name] = where
    return out


def cpu_benchmarks(bench, args, cpus=None):
    """The CPU instances (bench --list-devices) `bench args` selects when it
    may use `cpus` only: those whose threads fit in them."""
    return {name for name, where in list_devices(bench, args, cpus).items() if where == "cpu"}


def knows(bench, variable):
    """Whether the binary `bench` names the environment variable `variable`:
    a bench from before a protocol (PARBENCH_DUET, PARBENCH_CALLGRIND) would
    ignore it, and its partner or its counter would wait or count in vain."""
    try:
        with open(bench, "rb") as f:
            return variable.encode() in f.read()
    except OSError:
        return False


# Characters special in both ECMAScript and POSIX extended regular
# expressions (Google Benchmark's filter is one or the other, by build). A
# backslash before any other character, as Python's re.escape puts before '-',
# is an error there ("784\-32\-10 is not a regular expression").
_SPECIAL = re.compile(r"([\\.^$|()\[\]{}*+?])")


def escape(name):
    return _SPECIAL.sub(r"\\\1", name)


def exact_filter(names):
    """A --benchmark_filter that selects exactly these instances."""
    return "^(" + "|".join(escape(n) for n in names) + ")$"


def strip_filter(args):
    """The bench arguments without --benchmark_filter (a caller that sets its
    own filter)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--benchmark_filter":
            skip = True
            continue
        if a.startswith("--benchmark_filter="):
            continue
        out.append(a)
    return out


def run(bench, args, out, log_path, timeout=None, deadline=None, tick=None, env=None, cpus=None):
    """Runs `bench args`, its JSON to `out` and its console to `log_path`.
    Returns (rc, timed_out, stopped, seconds): timed_out when it ran past
    `timeout` seconds, stopped when it was killed at `deadline`
    (time.monotonic()). With tick = (seconds, callback), callback() runs that
    often while bench does. `env`: variables added to this environment;
    `cpus`: the cores bench may run on (taskset), from its start. Any
    exception here (Ctrl-C, SIGTERM) kills the bench process group first: no
    bench is left behind to write into a file a later call reads."""
    cmd = [bench] + list(args) + ["--benchmark_out=" + out, "--benchmark_out_format=json"]
    cmd = _on(cpus) + cmd
    t0 = time.monotonic()
    timed_out = stopped = False
    with open(log_path, "w") as log:
        with _lock:
            if _stopping[0]:
                raise Stopped()
            p = None
            try:
                p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                     env=dict(os.environ, **env) if env else None)
            finally:
                # Registered even when a signal's exception lands right after
                # the start, so stop_all() and the handler below can end it.
                if p is not None:
                    _running.add(p)
        try:
            while True:
                limit, why = None, None
                if timeout is not None:
                    limit, why = t0 + timeout, "timeout"
                if deadline is not None and (limit is None or deadline < limit):
                    limit, why = deadline, "deadline"
                wait = None if limit is None else limit - time.monotonic()
                if tick is not None:
                    wait = tick[0] if wait is None else min(wait, tick[0])
                try:
                    rc = p.wait(timeout=None if wait is None else max(wait, 0.0))
                    break
                except subprocess.TimeoutExpired:
                    if limit is not None and time.monotonic() >= limit:
                        os.killpg(p.pid, signal.SIGKILL)
                        rc = p.wait()
                        timed_out, stopped = why == "timeout", why == "deadline"
                        break
                    if tick is not None:
                        tick[1]()
        except BaseException:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            raise
        finally:
            with _lock:
                _running.discard(p)
    if _stopping[0]:
        raise Stopped()
    return rc, timed_out, stopped, time.monotonic() - t0
