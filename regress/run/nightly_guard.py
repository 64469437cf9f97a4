"""What keeps a night whole when its calls overlap or die (regress/run/nightly.py):

- one night at a time on a history and an output folder: a lock in each
  (hold), which the night's commands inherit, so that it is free only when
  the last process of the night has ended;
- the night's commands end with it: a call killed outright (SIGKILL, the
  out-of-memory killer) cannot stop them itself, so each is started to get
  SIGTERM when the night dies (die_with_parent), and stops its own children
  on it as on any SIGTERM;
- the record of the call in flight, OUT/nightly-call.json (InFlight),
  rewritten at each step: a call that finds one left behind knows the last
  call was killed, and in which step; it then adopts it into the night's
  calls, OUT/nightly-calls.jsonl (start_call, record_call).

Standard library only."""
import ctypes
import ctypes.util
import errno
import fcntl
import json
import os
import signal
import time

LOCK = "nightly.lock"
CALL = "nightly-call.json"
# How long a call waits for the commands of a killed call to end: they get
# SIGTERM when it dies, and the suite runner and the comparator stop their
# bench at once on it; a build takes longer to stop.
WAIT_SECONDS = 60.0
# The locks this process holds: its commands inherit them (nightly_steps.run).
HELD = []
_PR_SET_PDEATHSIG = 1


class Busy(Exception):
    """Another night holds the history or the output folder: one line."""


def _alive(pid):
    """Whether process pid runs (a zombie, which the killed call is until its
    parent reaps it, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _holder(fd):
    """The record the lock's holder wrote in the lock file: {} when none."""
    try:
        doc = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace") or "{}")
        return doc if isinstance(doc, dict) else {}
    except ValueError:
        return {}


def hold(directory, log, out, wait=WAIT_SECONDS):
    """Takes DIRECTORY/nightly.lock for this call; Busy when a live night
    holds it. A lock whose holder is dead is held by the commands of a
    killed call, which are ending: it is waited for, up to `wait` seconds."""
    os.makedirs(directory, exist_ok=True)
    fd = os.open(os.path.join(directory, LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    deadline, said = time.monotonic() + wait, False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = _holder(fd)
            pid = holder.get("pid")
            if isinstance(pid, int) and _alive(pid):
                os.close(fd)
                raise Busy("%s is in use by another night (pid %d since %s, --out %s): one night at a time on a "
                           "history and an output folder; run this one when it has ended"
                           % (directory, pid, holder.get("started", "?"), holder.get("out", "?")))
            if time.monotonic() > deadline:
                os.close(fd)
                raise Busy("%s is still held by the commands of a killed call (pid %s) after %.0f s; end them "
                           "(they are not this call's) and run it again" % (directory, pid, wait))
            if not said and time.monotonic() > deadline - wait + 2:
                log("the commands of a killed call (pid %s) still hold %s; waiting up to %.0f s for them to end"
                    % (pid, directory, wait))
                said = True
            time.sleep(0.1)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": _now(), "out": out}).encode(), 0)
    except OSError:
        pass  # the lock holds without its record (a full disk): a later call waits for it instead of refusing
    HELD.append(fd)
    return fd


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _prctl():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None   # not Linux: a killed night's commands run on to their end


_PRCTL = _prctl()


def die_with_parent():
    """A preexec_fn for the night's commands: SIGTERM when this process dies
    (Linux's parent-death signal); None where there is none. A command whose
    parent died before it was set is ended at once."""
    if _PRCTL is None:
        return None
    parent = os.getpid()

    def setup():
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
    return setup


class InFlight:
    """OUT/nightly-call.json: this call's pid, start, steps so far and the
    step it is in, rewritten at each step; removed when the call records
    itself in OUT/nightly-calls.jsonl. Best effort: a write the disk refuses
    is said once, and the night goes on without it."""

    def __init__(self, out, started, log):
        self.path, self.log = os.path.join(out, CALL), log
        self.doc = {"pid": os.getpid(), "started": started, "steps": [], "step": None}
        self.broken = False

    def update(self, steps, step):
        self.doc.update(steps=list(steps), step=step)
        try:
            with open(self.path + ".part", "w") as f:
                json.dump(self.doc, f, sort_keys=True)
            os.replace(self.path + ".part", self.path)
        except OSError as e:
            if not self.broken:
                self.log("cannot keep this call's record %s (%s): a kill would go unrecorded"
                         % (self.path, e.strerror or e))
                self.broken = True

    def done(self):
        try:
            os.remove(self.path)
        except OSError:
            pass


def killed_call(out):
    """The record a killed call left in OUT (a dict), or None; the file is
    taken away, so that the call is adopted once."""
    path = os.path.join(out, CALL)
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        doc = {}   # cut off by the kill: what the call did is unknown
    try:
        os.remove(path)
    except OSError as e:
        if e.errno != errno.ENOENT:
            raise
    return doc if isinstance(doc, dict) else {}


# ------------------------------------------------------- the night's calls

def _when(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def start_call(args, t0, log):
    """This call's start: the night's locks (Busy when another
    night holds OUT or HISTORY), the record a killed call left adopted into
    OUT/nightly-calls.jsonl with one line saying so, and this call's record
    in flight (InFlight)."""
    hold(args.out, log, args.out)
    # A timed suite alone writes no history; a history that is the output folder is held already.
    if not args.suite_only and os.path.realpath(args.history) != os.path.realpath(args.out):
        hold(args.history, log, args.out)
    killed = killed_call(args.out)
    if killed is not None:
        steps = [s for s in killed.get("steps", []) if isinstance(s, dict) and "step" in s]
        step = killed.get("step")
        where = ("in its %s step" % step if step else
                 "after its %s step" % steps[-1]["step"] if steps else "before its first step")
        if step:
            steps.append({"step": step, "seconds": 0.0, "status": "killed"})
        record = {"started": killed.get("started"), "pid": killed.get("pid"), "steps": steps, "exit": None,
                  "killed": True}
        if not any(c.get("started") == record["started"] and c.get("pid") == record["pid"]
                   for c in _calls(args.out)):
            _append_call(args.out, record)
        log("the call of %s (pid %s) was killed %s and left no record; %s"
            % (record["started"] or "an unknown time", record["pid"] or "?", where,
               "this call goes on with the night" if args.resume else "this call starts the night again "
               "(--resume would go on with it)"))
    inflight = InFlight(args.out, _when(t0), log)
    inflight.update([], None)
    return inflight


def read_jsonl(path):
    """The records of a JSON-lines file ([] when there is none); a line cut
    off by a killed writer is passed over."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue
                if isinstance(doc, dict):
                    out.append(doc)
    except FileNotFoundError:
        pass
    return out


def _calls(out):
    return read_jsonl(os.path.join(out, "nightly-calls.jsonl"))


def _append_call(out, record):
    with open(os.path.join(out, "nightly-calls.jsonl"), "a") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def record_call(args, summary, t0, code, inflight, log):
    """Keeps this call's steps in OUT/nightly-calls.jsonl (a night run in
    several calls has one line per call, stopped and killed ones included)
    and writes OUT/nightly.json: this call's steps, every call, and each
    step's seconds summed over the night's calls (what the night cost,
    rebuilds on a fresh machine and A/A rounds cut short included). A disk
    that refuses them is said in one line; the exit status stays the
    night's."""
    try:
        _append_call(args.out, {"started": _when(t0), "pid": os.getpid(), "seconds": round(time.time() - t0, 1),
                                "steps": summary, "exit": code})
        calls = _calls(args.out)
        totals = {}
        for c in calls:
            for s in c.get("steps", []):
                totals[s["step"]] = round(totals.get(s["step"], 0.0) + s["seconds"], 1)
        with open(os.path.join(args.out, "nightly.json"), "w") as f:
            json.dump({"parbench_nightly": 1, "suite": args.suite, "steps": summary, "exit": code, "calls": calls,
                       "night_step_seconds": totals, "night_seconds": round(sum(totals.values()), 1)},
                      f, indent=1, sort_keys=True)
    except OSError as e:
        log("cannot record this call in %s (%s)" % (args.out, e.strerror or e))
        return
    finally:
        if inflight is not None:
            inflight.done()   # recorded, or said not to be: no killed call to adopt
    if len(calls) > 1:
        log("the night so far, %d calls: %s; %.0f s" % (
            len(calls), ", ".join("%s %.0f s" % kv for kv in totals.items()), sum(totals.values())))
