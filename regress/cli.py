"""What every command-line tool of regress/ shares: the exit status, the
argument parser whose usage error is one line and exit 2, the main wrapper
that turns a signal or a bug into one line (never a traceback), and strict
JSON for what a tool writes. Only the Python standard library: the --stdlib
tools import it too. Imports nothing else of regress."""
import argparse
import json
import math
import signal
import sys
import time

# Exit status shared by every tool (docs/tools/README.md, "Exit status").
EXIT_OK = 0           # done, nothing failed
EXIT_FAIL = 1         # the tool's own check failed: a regression, an error entry, a gate
EXIT_INPUT = 2        # bad input or usage, or an internal error: one line "TOOL: ..."
EXIT_INCOMPARABLE = 3  # two readable inputs that must not be compared (another machine or build)
EXIT_STOPPED = 4      # stopped by --max-seconds; the same command with --resume goes on


# ------------------------------------------------------------ strict JSON

def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def strict_loads(text):
    """json.loads that rejects NaN, Infinity and -Infinity, and a document
    nested deeper than the parser goes (ValueError, as for any text that is
    not JSON: every caller refuses it in one line)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested too deeply")


def finite(obj):
    """A copy of obj with every float that is not finite replaced by None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(doc):
    """Strict JSON text (non-finite floats as null, indent 2, ending in a newline)."""
    return json.dumps(finite(doc), indent=2, allow_nan=False) + "\n"


def dump(doc, file):
    """Write doc to the open text file as strict JSON (see dumps): every tool that writes JSON uses this."""
    file.write(dumps(doc))


# ------------------------------------------------------------ tool mains

def log(line):
    """A tool's progress or error line: standard error, at once."""
    print(line, file=sys.stderr, flush=True)


def deadline(max_seconds):
    """The monotonic time --max-seconds ends at, or None without it."""
    return None if max_seconds is None else time.monotonic() + max_seconds


def split_at_dashes(argv=None):
    """(the tool's arguments, those after the first "--", for bench)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1:]


def text(value):
    """The argparse type of an argument that names something a store keeps
    (a machine, a benchmark) or goes into one (a reason, a name): UTF-8 text.
    An argument holding a byte that is not UTF-8 (Python reads it as a lone
    surrogate) is a usage error, not text a database can take."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError("%s is not UTF-8 text" % ascii(value))
    return value


class ArgumentParser(argparse.ArgumentParser):
    """argparse for a tool: a usage error is one line on stderr, "TOOL: MESSAGE
    (see COMMAND --help)", and exit status EXIT_INPUT, as a bad file is."""

    def __init__(self, tool, command, **kw):
        kw.setdefault("prog", command)
        super().__init__(**kw)
        self.tool, self.command = tool, command

    def error(self, message):
        print("%s: %s (see %s --help)" % (self.tool, message, self.command), file=sys.stderr)
        sys.exit(EXIT_INPUT)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP reached a tool run by run_tool (a CI step's time
    limit, `timeout`). A KeyboardInterrupt, so every `finally` and cleanup
    that handles Ctrl-C (killing a child process) handles it too."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum, _frame):
    raise Stopped(signum)


def run_tool(tool, main, on_stop=""):
    """sys.exit(main()) for a command-line tool: Ctrl-C, SIGTERM and SIGHUP
    stop it with one line ("TOOL: stopped by SIGTERM" and on_stop) and exit
    128+N, a closed pipe is exit 0, and an unexpected exception (a bug) one
    line "TOOL: internal error ..." and exit 2, never a traceback, and never
    exit 1, which gates read as a regression or an error entry."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop)
    try:
        code = main()
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        print("%s: stopped by %s%s" % (tool, signal.Signals(signum).name, on_stop), file=sys.stderr)
        code = 128 + int(signum)
    except BrokenPipeError:
        code = 0
    except Exception as e:  # noqa: BLE001 (a bug: one line)
        print("%s: internal error (please report): %s: %s" % (tool, type(e).__name__, e), file=sys.stderr)
        code = 2
    sys.exit(code)
