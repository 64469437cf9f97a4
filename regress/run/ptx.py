"""The PTX of a CMake build's .cu files or of a CUDA binary, snapshot and
compared kernel by kernel (ci/ptx-diff, regress/ptx_diff.py, is its command
line; the bisection's evidence names the kernels a culprit recompiled).
A kernel is its .entry block; comments, the PTX header and file names are
left out of the comparison."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys


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
# becomes _GLOBAL__N_<file> in names and bodies. The length's digits may follow
# digits of the enclosing name (namespace v2: "2v244_GLOBAL..."), so each
# suffix of the digit run is tried, shortest first, until one gives an
# identifier of the expected shape.
ANON = re.compile(r"(\d+)(_GLOBAL__N__)")
ANON_ID = re.compile(r"_GLOBAL__N__[0-9a-f]+_(\d+)_(\w+)_[0-9a-f]{8}(?:_\d+)?")
# An internal-linkage variable (a file's __constant__) is named likewise,
# <length>_INTERNAL_<hash>_<n>_<file>_<hash>, and becomes _INTERNAL_<file>.
INTERNAL = re.compile(r"(\d+)(_INTERNAL_)")
INTERNAL_ID = re.compile(r"_INTERNAL_[0-9a-f]{8}_(\d+)_(\w+)_[0-9a-f]{8}")
SHORT = re.compile(r"(\d+)(_GLOBAL__N_)(?!_)")
SHORT_ID = re.compile(r"_GLOBAL__N_\w*_cu")


def _identifier(text, m, shape):
    """(start of the length digits, identifier) of the mangled identifier whose
    length digits end at m.start(2), or None."""
    digits, at = m.group(1), m.start(2)
    for i in range(len(digits) - 1, -1, -1):
        ident = text[at:at + int(digits[i:])]
        if shape(ident):
            return m.start(1) + i, ident
    return None


def _full_anon(ident):
    m = ANON_ID.fullmatch(ident)
    return m is not None and len(m.group(2)) == int(m.group(1))


def _replace(text, pattern, shape, short):
    out, pos = [], 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue
        found = _identifier(text, m, shape)
        if found is None:
            continue
        begin, ident = found
        new = short(ident)
        out += [text[pos:begin], "%d%s" % (len(new), new)]
        pos = m.start(2) + len(ident)
    return "".join(out) + text[pos:]


def _unhash(text):
    def short(ident):
        m = ANON_ID.fullmatch(ident)
        return "_GLOBAL__N_" + m.group(2)

    def full_internal(ident):
        m = INTERNAL_ID.fullmatch(ident)
        return m is not None and len(m.group(2)) == int(m.group(1))

    def short_internal(ident):
        return "_INTERNAL_" + INTERNAL_ID.fullmatch(ident).group(2)
    text = _replace(text, ANON, _full_anon, short)
    return _replace(text, INTERNAL, full_internal, short_internal)


def _no_file(text):
    """text with each _GLOBAL__N_<file> made _GLOBAL__N_: a kernel whose file
    was renamed, and nothing else, compares equal."""
    return _replace(text, SHORT, lambda ident: SHORT_ID.fullmatch(ident) is not None, lambda ident: "_GLOBAL__N_")


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
    """{(file, kernel name): body}: a kernel of internal linkage defined in a
    header (a static __global__) is in the PTX of every .cu that includes it,
    once per file."""
    found = {}
    for dirpath, _, files in os.walk(d):
        for f in files:
            if f.endswith(".ptx"):
                rel = os.path.relpath(os.path.join(dirpath, f), d)
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    for name, body in kernels(fh.read()).items():
                        found[(rel, name)] = body
    if not found:
        raise Bad("%s holds no PTX kernel (run snapshot first)" % d)
    return found


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    p = subprocess.run(["c++filt"], input="\n".join(names), stdout=subprocess.PIPE, universal_newlines=True)
    return dict(zip(names, p.stdout.splitlines()))


def diff(before, after):
    """{"changed", "gone", "new", "moved"}: lists of (file, kernel) between two
    snapshots, and the kernel counts "before" and "after"."""
    a, b = load(before), load(after)
    changed = sorted(k for k in a if k in b and a[k] != b[k])
    gone = sorted(set(a) - set(b))
    new = sorted(set(b) - set(a))
    # A kernel of an anonymous namespace whose file was renamed: the same code
    # under another file's name.
    arrived = {}
    for k in new:
        arrived.setdefault((_no_file(k[1]), _no_file(b[k])), []).append(k)
    moved = []
    for g in list(gone):
        same = arrived.get((_no_file(g[1]), _no_file(a[g])))
        if same:
            n = same.pop(0)
            moved.append(n)
            gone.remove(g)
            new.remove(n)
    # A kernel whose parameters changed has another mangled name: a gone and a
    # new kernel of one file with the same name and template arguments.
    base = base_names([k[1] for k in gone + new])
    arrived = {}
    for k in new:
        arrived.setdefault((k[0], base[k[1]]), []).append(k)
    signature = []
    for g in list(gone):
        same = arrived.get((g[0], base[g[1]]))
        if same:
            n = same.pop(0)
            signature.append((g, n))
            gone.remove(g)
            new.remove(n)
    return {"before": len(a), "after": len(b), "changed": changed, "signature": signature, "gone": gone,
            "new": new, "moved": moved}


def strip_params(name):
    """A demangled function name without its parameter list."""
    name = name.rstrip()
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                return name[:i]
        if depth == 0:
            break
    return name


def base_names(names):
    """{mangled name: its demangled name without the parameter list}: the
    same kernel across a change of its parameters (where c++filt is there;
    else the mangled name)."""
    pretty = demangle(sorted(set(names)))
    return {n: strip_params(pretty[n]) for n in names}


def report(d):
    """compare's lines for a diff()."""
    keys = d["changed"] + [n for _, n in d["signature"]] + d["gone"] + d["new"] + d["moved"]
    pretty = demangle(sorted({k[1] for k in keys}))
    lines = ["ptx-diff: %d kernels before, %d after; %d changed, %d gone, %d new, %d moved to another file unchanged"
             % (d["before"], d["after"], len(d["changed"]) + len(d["signature"]), len(d["gone"]), len(d["new"]),
                len(d["moved"]))
             + ("; %d of the changed in their parameters too" % len(d["signature"]) if d["signature"] else "")]
    for f, n in d["changed"]:
        lines.append("  %-7s %s  (%s)" % ("changed", pretty[n], f))
    for _, (f, n) in d["signature"]:
        lines.append("  %-7s %s  (%s; its parameters changed)" % ("changed", pretty[n], f))
    for what in ("gone", "new", "moved"):
        for f, n in d[what]:
            lines.append("  %-7s %s  (%s)" % (what, pretty[n], f))
    return lines


def compare(before, after, again=()):
    """Prints the diff; with `again` (more snapshots of the before build), a
    changed kernel whose PTX also differs between the before snapshots is
    the compiler's own variation: listed apart, not counted as changed."""
    d = diff(before, after)
    unstable = []
    if again:
        a = load(before)
        varies = set()
        for other in again:
            b = load(other)
            varies |= {k for k in a if k in b and a[k] != b[k]}
        unstable = [k for k in d["changed"] if k in varies]
        d["changed"] = [k for k in d["changed"] if k not in varies]
    lines = report(d)
    if again:
        lines[0] += "; %d more vary between compilations of the before code" % len(unstable)
        pretty = demangle(sorted({n for _, n in unstable}))
        lines += ["  %-7s %s  (%s; nvcc's own variation)" % ("varies", pretty[n], f) for f, n in unstable]
    print("\n".join(lines))
    return 1 if d["changed"] or d["signature"] or d["gone"] or d["new"] else 0


# cuobjdump -ptx prints each PTX of a fatbin after a header of "key = value"
# lines ("arch = sm_90", "identifier = dmma.cu" where the toolkit records the
# source file); the PTX starts at its first line that is not one of them.
FATBIN_PTX = re.compile(r"^Fatbin ptx code:\s*$", re.M)


def split_cuobjdump_ptx(text):
    """[(identifier or None, ptx text)] of `cuobjdump -ptx`'s output."""
    parts = FATBIN_PTX.split(text)[1:]
    out = []
    for part in parts:
        lines = part.splitlines()
        ident, i = None, 0
        while i < len(lines) and (not lines[i].strip() or set(lines[i].strip()) == {"="}
                                  or re.match(r"^[a-z_ ]+=", lines[i]) or lines[i].strip() == "compressed"):
            m = re.match(r"^identifier\s*=\s*(\S+)", lines[i])
            if m:
                ident = m.group(1)
            i += 1
        out.append((ident, "\n".join(lines[i:]) + "\n"))
    return out


def cuda_tool(name):
    """A CUDA tool on the PATH or in /usr/local/cuda/bin, or None."""
    there = os.path.join("/usr/local/cuda/bin", name)
    return shutil.which(name) or (there if os.path.exists(there) else None)


def snapshot_binary(binary, out, cuobjdump="cuobjdump"):
    """The PTX a binary carries (CMake's default architectures embed it beside
    the SASS), written to OUT without rebuilding: a file per source file when
    cuobjdump names them, else one file, which compare reads by kernel name."""
    p = subprocess.run([cuobjdump, "-ptx", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise Bad("cuobjdump -ptx %s: %s" % (binary, (p.stderr.strip().splitlines() or ["failed"])[-1]))
    parts = [(i, t) for i, t in split_cuobjdump_ptx(p.stdout) if ENTRY.search(t)]
    if not parts:
        raise Bad("%s carries no PTX kernel (built without a compute_XX target)" % binary)
    os.makedirs(out, exist_ok=True)
    named = all(i for i, _ in parts) and len({os.path.basename(i) for i, _ in parts}) == len(parts)
    if named:
        for i, t in parts:
            with open(os.path.join(out, os.path.basename(i) + ".ptx"), "w") as f:
                f.write(t)
    else:
        with open(os.path.join(out, "binary.ptx"), "w") as f:
            f.write("\n".join(t for _, t in parts))
    return len(parts)
