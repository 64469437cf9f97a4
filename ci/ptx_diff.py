#!/usr/bin/env python3
"""Which CUDA kernels did a change recompile differently? Snapshots the PTX of
every .cu file of a CMake build and compares two snapshots kernel by kernel.

  ci/ptx-diff snapshot BUILD_DIR OUT_DIR   PTX of each .cu in BUILD_DIR's
                                           compile_commands.json (configure with
                                           -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
  ci/ptx-diff compare BEFORE_DIR AFTER_DIR the kernels (.entry) whose PTX body
                                           changed, appeared or went away

A refactor that must not move any timing should leave every kernel's PTX as
it was; `compare` lists each kernel that differs (demangled with c++filt when
it is there), so a change of generated code is named and explained, not
guessed. Comments, the PTX header and file names are left out of the
comparison; a kernel is its .entry block.

Exit status: 0 done (compare: no kernel differs); 1 compare: some differ;
2 bad input (one line "ptx-diff: ...").
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plots"))
import pbjson  # noqa: E402

TOOL = "ptx-diff"


class Bad(Exception):
    pass


def ptx_command(entry, out):
    """The entry's nvcc command, made to write PTX to `out` instead of an object."""
    args = entry.get("arguments") or shlex.split(entry["command"])
    res, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-c", "--compile"):
            continue
        if a in ("-o", "--output-file"):
            skip = True
            continue
        if a.startswith("-o") and len(a) > 2 and not a.startswith("-opt"):
            continue
        res.append(a)
    return res + ["-ptx", "-o", out]


def snapshot(build, out):
    db = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db):
        raise Bad("%s is missing: configure %s with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON" % (db, build))
    with open(db) as f:
        entries = [e for e in json.load(f) if e["file"].endswith(".cu")]
    if not entries:
        raise Bad("%s lists no .cu file: not a CUDA build" % db)
    os.makedirs(out, exist_ok=True)
    root = os.path.commonpath([os.path.abspath(e["file"]) for e in entries])
    for i, e in enumerate(entries, 1):
        rel = os.path.relpath(os.path.abspath(e["file"]), root)
        dest = os.path.join(os.path.abspath(out), rel + ".ptx")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        print("ptx-diff: [%d/%d] %s" % (i, len(entries), rel), file=sys.stderr, flush=True)
        p = subprocess.run(ptx_command(e, dest), cwd=e["directory"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if p.returncode != 0:
            raise Bad("nvcc failed on %s: %s" % (rel, (p.stdout.strip().splitlines() or ["?"])[-1]))
    print("ptx-diff: %d files in %s" % (len(entries), out))
    return 0


# A kernel with external linkage is ".visible .entry", a template instance
# ".weak .entry", one in an anonymous namespace (internal linkage) a bare
# ".entry".
ENTRY = re.compile(r"^(?:\.(?:visible|weak)\s+)?\.entry\s+(\S+?)\s*\(", re.M)
# nvcc names an anonymous namespace with hashes of the file and its build, as
# the mangled identifier <length>_GLOBAL__N__<hash>_<n>_<file>_<hash>[_<n>]: the
# same kernel built in another checkout gets other hashes, so that identifier
# becomes _GLOBAL__N_<file> in names and bodies.
ANON = re.compile(r"(\d+)(_GLOBAL__N__)")
ANON_ID = re.compile(r"_GLOBAL__N__[0-9a-f]+_(\d+)_")


def _unhash(text):
    out, pos = [], 0
    for m in ANON.finditer(text):
        if m.start() < pos:
            continue
        ident = text[m.start(2):m.start(2) + int(m.group(1))]
        id_match = ANON_ID.match(ident)
        if not id_match:
            continue
        short = "_GLOBAL__N_" + ident[id_match.end():id_match.end() + int(id_match.group(1))]
        out += [text[pos:m.start()], "%d%s" % (len(short), short)]
        pos = m.start(2) + len(ident)
    return "".join(out) + text[pos:]


FILE_NS = re.compile(r"(\d+)_GLOBAL__N_")


def _no_file(text):
    """text with each _GLOBAL__N_<file> made _GLOBAL__N_: a kernel whose file
    was renamed, and nothing else, compares equal."""
    out, pos = [], 0
    for m in FILE_NS.finditer(text):
        if m.start() < pos:
            continue
        out += [text[pos:m.start()], "11_GLOBAL__N_"]
        pos = m.start() + len(m.group(1)) + int(m.group(1))
    return "".join(out) + text[pos:]


def kernels(text):
    """{kernel name: its .entry block, comments and blank lines removed}."""
    text = _unhash(text)
    lines = [re.sub(r"//.*", "", l).rstrip() for l in text.splitlines()]
    text = "\n".join(l for l in lines if l.strip())
    out = {}
    starts = [(m.start(), m.group(1)) for m in ENTRY.finditer(text)]
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out[name] = text[pos:end]
    return out


def load(d):
    found = {}
    for dirpath, _, files in os.walk(d):
        for f in files:
            if f.endswith(".ptx"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    for name, body in kernels(fh.read()).items():
                        found[name] = (os.path.relpath(os.path.join(dirpath, f), d), body)
    if not found:
        raise Bad("%s holds no PTX kernel (run snapshot first)" % d)
    return found


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    p = subprocess.run(["c++filt"], input="\n".join(names), stdout=subprocess.PIPE, universal_newlines=True)
    return dict(zip(names, p.stdout.splitlines()))


def compare(before, after):
    a, b = load(before), load(after)
    changed = sorted(n for n in a if n in b and a[n][1] != b[n][1])
    gone = sorted(set(a) - set(b))
    new = sorted(set(b) - set(a))
    # A kernel of an anonymous namespace whose file was renamed: the same code
    # under another file's name.
    arrived = {(_no_file(n), _no_file(b[n][1])): n for n in new}
    moved = []
    for g in list(gone):
        n = arrived.get((_no_file(g), _no_file(a[g][1])))
        if n is not None and n in new:
            moved.append(n)
            gone.remove(g)
            new.remove(n)
    pretty = demangle(changed + gone + new + moved)
    print("ptx-diff: %d kernels before, %d after; %d changed, %d gone, %d new, %d moved to another file unchanged"
          % (len(a), len(b), len(changed), len(gone), len(new), len(moved)))
    for what, names, src in (("changed", changed, b), ("gone", gone, a), ("new", new, b), ("moved", moved, b)):
        for n in names:
            print("  %-7s %s  (%s)" % (what, pretty[n], src[n][0]))
    return 1 if changed or gone or new else 0


def main(argv=None):
    p = argparse.ArgumentParser(prog=TOOL, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("build")
    s.add_argument("out")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    try:
        return snapshot(args.build, args.out) if args.cmd == "snapshot" else compare(args.before, args.after)
    except Bad as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    pbjson.run_tool(TOOL, main)
