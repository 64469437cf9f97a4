#!/usr/bin/env python3
"""The code fingerprint of every object of the harness's libraries, written as
a C++ table that `bench` links (docs/json.md, "code").

  code_fingerprints.py table --source-dir SRC --build-dir BUILD --out FILE OBJECT...
  code_fingerprints.py hash OBJECT...        one line per object: 16 hex digits, path

`table` maps each object to the source it was compiled from (CMake's layout:
BUILD/<dir>/CMakeFiles/<target>.dir/<source>.o for SRC/<dir>/<source>),
hashes its code, finds which other objects it calls (its undefined symbols
resolved against the others' definitions) and writes FILE only when its
content changes. `hash` is the same hash of single objects, for the tests.

What an object's hash covers, and why:
- Every allocated section (machine code, read-only data, initialised data,
  vtables, exception tables; the size of .bss), with its name, type, flags
  and size, and each of its relocations as (offset, type, the symbol's name
  or the section it points into, addend): a call to another function changes
  the hash though the call instruction's bytes (a zero displacement) do not.
- Not debug information (.debug*, .nv_debug*), unwind tables (.eh_frame:
  derived from the code), the compiler's .comment, the symbol and string
  tables themselves (their order and offsets), nor the STT_FILE symbol's
  name. A build with -g hashes as one without, and the file the object was
  written to does not matter.
- CUDA device code is the .nv_fatbin section, entry by entry: each cubin
  (the SASS) as an object of its own by the rules above, and the PTX of an
  architecture without a cubin as its text without comments and .file/.loc
  lines. The PTX of an architecture with a cubin is left out: the GPU runs
  the SASS, and cicc does not always write the same PTX for one source (two
  compiles of impl/gemm/cuda/pipelined.cu number a kernel's registers
  differently) where ptxas makes the same SASS of both. An entry compressed
  with LZ4 is decompressed first. One compressed with zstd (CUDA 13 stores
  PTX so) cannot be read with the standard library: a zstd PTX counts by its
  uncompressed size, a zstd cubin by its compressed bytes.
- nvcc names an anonymous namespace _GLOBAL__N__<hash of the file's absolute
  path>_<n>_<file>_<hash of the seed>, and a device variable of internal
  linkage _INTERNAL_<the same hashes>: the path's hash is replaced by zeros
  wherever it appears (names and data alike; it is 8 hex digits, so nothing
  moves), so a checkout at another path builds the same fingerprints.
  Without -frandom-seed nvcc appends a number that changes with every
  compile; CMake passes each .cu file its own seed (cmake/CodeFingerprints.cmake).

Exit status: 0 done; 1 an object it cannot read (one line "code_fingerprints: ...").
"""
import argparse
import hashlib
import os
import re
import struct
import sys

# Sections that are not code: debug information, unwind tables, compiler
# identification, link-time bookkeeping.
SKIPPED_PREFIXES = (".debug", ".zdebug", ".nv_debug", ".comment", ".note.GNU-stack", ".eh_frame", ".gnu.lto_",
                    ".llvm_addrsig", ".stab", ".gnu_debuglink")
SHT_NULL, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_GROUP, SHT_SYMTAB_SHNDX = 0, 2, 3, 4, 8, 9, 17, 18
STRUCTURAL = {SHT_NULL, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_REL, SHT_GROUP, SHT_SYMTAB_SHNDX}
SHF_ALLOC = 0x2
STB_LOCAL, STT_SECTION, STT_FILE = 0, 3, 4
SHN_UNDEF, SHN_XINDEX = 0, 0xFFFF
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
FATBIN_MAGIC = 0xBA55ED50
FATBIN_LZ4, FATBIN_ZSTD = 0x2000, 0x8000
FATBIN_ELF = 2  # an entry's kind: 1 is PTX

ANON = re.compile(rb"(_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}_")
ANON_NORMAL = rb"\g<1>00000000_"
# nvcc's intermediate file, named after its process id: the host compiler's
# input, so in names it derives from the file's (a static initialiser's).
TMPXFT = re.compile(r"tmpxft_[0-9a-f]+_[0-9a-f]+[-_]\d+_")


class Bad(Exception):
    pass


def normal_bytes(data):
    return ANON.sub(ANON_NORMAL, data)


def normal_name(name):
    return TMPXFT.sub("tmpxft_", ANON.sub(ANON_NORMAL, name.encode()).decode())


class Elf:
    """The sections, symbols and relocations of a 64-bit little-endian ELF
    relocatable object (an x86-64 or AArch64 host object, or a CUDA cubin)."""

    def __init__(self, data, what):
        if data[:4] != b"\x7fELF":
            raise Bad("%s is not an ELF object" % what)
        if data[4] != 2 or data[5] != 1:
            raise Bad("%s is not a 64-bit little-endian ELF object" % what)
        self.data, self.what = data, what
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        raw = []
        if shoff:
            first = struct.unpack_from("<IIQQQQIIQQ", data, shoff)
            if shnum == 0:  # more than 0xff00 sections: the count is section 0's size
                shnum = first[5]
            if shstrndx == SHN_XINDEX:
                shstrndx = first[6]
            raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = raw[shstrndx][4] if raw else 0
        self.sections = []
        for name, typ, flags, _, offset, size, link, info, _, entsize in raw:
            self.sections.append({"name": self.string(names, name), "type": typ, "flags": flags, "offset": offset,
                                  "size": size, "link": link, "info": info, "entsize": entsize})
        # A key for each section: its name, numbered when several share it.
        seen = {}
        for s in self.sections:
            n = normal_name(s["name"])
            seen[n] = seen.get(n, 0) + 1
            s["key"] = n if seen[n] == 1 else "%s#%d" % (n, seen[n])
        self.symbols = self.read_symbols()

    def string(self, table_offset, index):
        start = table_offset + index
        end = self.data.index(b"\0", start)
        return self.data[start:end].decode("utf-8", "replace")

    def content(self, s):
        if s["type"] == SHT_NOBITS:
            return b""
        return self.data[s["offset"]:s["offset"] + s["size"]]

    def read_symbols(self):
        """[(name, binding, type, section index, value)] of the symbol table."""
        tables = [s for s in self.sections if s["type"] == SHT_SYMTAB]
        if not tables:
            return []
        table = tables[0]
        strings = self.sections[table["link"]]["offset"]
        extended = [s for s in self.sections if s["type"] == SHT_SYMTAB_SHNDX]
        xindex = None
        if extended:
            x = self.content(extended[0])
            xindex = struct.unpack("<%dI" % (len(x) // 4), x)
        out = []
        for i, (name, info, _, shndx, value, _) in enumerate(struct.iter_unpack("<IBBHQQ", self.content(table))):
            if shndx == SHN_XINDEX and xindex is not None:
                shndx = xindex[i]
            out.append((self.string(strings, name), info >> 4, info & 0xF, shndx, value))
        return out

    def symbol_keys(self):
        """What a relocation against each symbol points at, independent of
        the symbol table's order: the symbol's name, or for a section symbol
        (and a nameless one) the section it stands for."""
        keys = []
        for name, _, typ, shndx, value in self.symbols:
            section = self.sections[shndx]["key"] if 0 < shndx < len(self.sections) else str(shndx)
            if typ == STT_SECTION:
                keys.append("[%s]" % section)
            elif name:
                keys.append(normal_name(name))
            else:
                keys.append("[%s]+%d" % (section, value))
        return keys

    def relocations(self):
        """{index of the section relocated: [(offset, type, symbol index, addend)]}."""
        out = {}
        for s in self.sections:
            if s["type"] == SHT_RELA:
                rows = [(o, i & 0xFFFFFFFF, i >> 32, a) for o, i, a in struct.iter_unpack("<QQq", self.content(s))]
            elif s["type"] == SHT_REL:
                rows = [(o, i & 0xFFFFFFFF, i >> 32, 0) for o, i in struct.iter_unpack("<QQ", self.content(s))]
            else:
                continue
            out.setdefault(s["info"], []).extend(rows)
        return out

    def linkage(self):
        """(strong definitions, weak definitions, undefined references): the
        names this object offers to and needs from the others."""
        strong, weak, undefined = set(), set(), set()
        for name, binding, typ, shndx, _ in self.symbols:
            if not name or binding == STB_LOCAL or typ in (STT_SECTION, STT_FILE):
                continue
            if shndx == SHN_UNDEF:
                undefined.add(name)
            elif binding == 2:  # STB_WEAK: inline functions, template instances
                weak.add(name)
            else:
                strong.add(name)
        return strong, weak, undefined


def hashed(section):
    if section["type"] in STRUCTURAL or section["name"].startswith(SKIPPED_PREFIXES):
        return False
    # Allocated sections are what the program loads. A cubin's .nv.info*
    # sections (a kernel's registers, parameter layout, attributes) are not
    # allocated, but are the kernel's code too.
    return bool(section["flags"] & SHF_ALLOC) or section["name"].startswith(".nv")


def elf_digest(data, what):
    elf = Elf(data, what)
    h = hashlib.sha256()
    keys = elf.symbol_keys()
    relocs = elf.relocations()
    for index, s in enumerate(elf.sections):
        if not hashed(s):
            continue
        if s["name"] in FATBIN_SECTIONS:  # its size counts compressed bytes
            h.update(("section %s %d %d\n" % (s["key"], s["type"], s["flags"])).encode())
            h.update(fatbin_digest(elf.content(s), "%s %s" % (what, s["name"])))
        else:
            h.update(("section %s %d %d %d\n" % (s["key"], s["type"], s["flags"], s["size"])).encode())
            h.update(normal_bytes(elf.content(s)))
        rows = relocs.get(index, ())
        h.update(("\n".join("%d %d %s %d" % (o, t, keys[sym] if sym < len(keys) else sym, a)
                            for o, t, sym, a in rows) + "\n").encode())
    return h.digest()


def _lz4_length(src, i, length):
    """A 4-bit LZ4 length of 15 goes on in the bytes after it (each adds its
    value; one below 255 ends it): (the length, the index after it)."""
    if length == 15:
        while True:
            b = src[i]
            i += 1
            length += b
            if b != 255:
                break
    return length, i


def lz4_block(src, size):
    """An LZ4 block (no frame) decompressed to `size` bytes."""
    out = bytearray()
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        i += 1
        literals, i = _lz4_length(src, i, token >> 4)
        out += src[i:i + literals]
        i += literals
        if i >= n:
            break
        distance = src[i] | src[i + 1] << 8
        i += 2
        length, i = _lz4_length(src, i, token & 15)
        length += 4
        if distance == 0 or distance > len(out):
            raise Bad("corrupt LZ4 data")
        start = len(out) - distance
        if distance >= length:
            out += out[start:start + length]
        else:  # the copy overlaps what it writes: the last `distance` bytes repeat
            pattern = bytes(out[start:])
            out += (pattern * (length // distance + 1))[:length]
    if len(out) != size:
        raise Bad("LZ4 data decompressed to %d bytes, not %d" % (len(out), size))
    return bytes(out)


def ptx_digest(text):
    lines = []
    for line in normal_bytes(text).split(b"\n"):
        line = line.split(b"//")[0].strip()
        if line and not line.startswith((b".file", b".loc")):
            lines.append(line)
    return hashlib.sha256(b"\n".join(lines)).digest()


def fatbin_entries(data, what):
    """[(kind, arch, flags, payload, uncompressed size)] of a fatbin section:
    one or more fatbins, each a list of entries (a PTX text or a cubin per
    architecture)."""
    entries = []
    pos = 0
    while pos + 16 <= len(data):
        magic, _, header, size = struct.unpack_from("<IHHQ", data, pos)
        if magic != FATBIN_MAGIC:
            if not any(data[pos:pos + 8]):  # padding between fatbins
                pos += 8
                continue
            raise Bad("%s: no fatbin at offset %d" % (what, pos))
        entry, end = pos + header, pos + header + size
        while entry < end:
            kind, _, entry_header, payload_size = struct.unpack_from("<HHIQ", data, entry)
            compressed, = struct.unpack_from("<I", data, entry + 16)
            arch, = struct.unpack_from("<I", data, entry + 28)
            flags, = struct.unpack_from("<Q", data, entry + 40)
            plain_size = struct.unpack_from("<Q", data, entry + 56)[0] if entry_header >= 64 else 0
            payload = data[entry + entry_header:entry + entry_header + payload_size]
            if flags & FATBIN_LZ4:
                payload, plain_size = lz4_block(payload[:compressed], plain_size), 0
            entries.append((kind, arch, flags, payload, plain_size))
            entry += entry_header + payload_size
        pos = end
    return entries


def fatbin_digest(data, what):
    """The device code of a fatbin section: the SASS of each architecture it
    has a cubin for, and the PTX of any other. The PTX of an architecture
    with SASS is left out: that GPU runs the SASS, and cicc does not always
    write the same PTX for the same source (two compiles of a large kernel
    can number its registers differently) where ptxas makes the same SASS of
    both."""
    h = hashlib.sha256()
    entries = fatbin_entries(data, what)
    sass = {arch for kind, arch, _, _, _ in entries if kind == FATBIN_ELF}
    for kind, arch, flags, payload, plain_size in entries:
        if kind != FATBIN_ELF and arch in sass:
            continue
        h.update(("entry %d %d %d\n" % (kind, arch, flags & ~(FATBIN_LZ4 | FATBIN_ZSTD))).encode())
        if flags & FATBIN_ZSTD:
            h.update(("zstd %d\n" % plain_size).encode())
            if kind == FATBIN_ELF:
                h.update(payload)
        elif kind == FATBIN_ELF:
            h.update(elf_digest(payload, "%s cubin sm_%d" % (what, arch)))
        else:
            h.update(ptx_digest(payload.rstrip(b"\0")))
    return h.digest()


def object_digest(path):
    with open(path, "rb") as f:
        data = f.read()
    return elf_digest(data, path)


def source_of(obj, source_dir, build_dir):
    """(the source path relative to source_dir, or None for a file generated
    in build_dir) of a CMake object file."""
    parts = os.path.abspath(obj).split(os.sep)
    at = max((i for i, p in enumerate(parts[:-2]) if p == "CMakeFiles" and parts[i + 1].endswith(".dir")),
             default=-1)
    if at < 0:
        raise Bad("%s is not in a CMakeFiles/<target>.dir folder" % obj)
    target_dir = os.sep.join(parts[:at])
    # CMake writes a ".." of the source's path as "__".
    rel = os.path.splitext(os.sep.join(".." if p == "__" else p for p in parts[at + 2:]))[0]
    sub = os.path.relpath(target_dir, build_dir)
    in_source = os.path.normpath(os.path.join(source_dir, sub, rel))
    if os.path.isfile(in_source):
        return os.path.relpath(in_source, source_dir).replace(os.sep, "/")
    if os.path.isfile(os.path.normpath(os.path.join(target_dir, rel))):
        return None
    raise Bad("%s: no source %s" % (obj, in_source))


def table(objects, source_dir, build_dir):
    """[(source, 16 hex digits, [indices of the objects it calls])], sorted by source."""
    found = {}
    for obj in objects:
        src = source_of(obj, source_dir, build_dir)
        if src is None:  # generated (the build-info stamp): not code of a variant
            continue
        if src in found and os.path.abspath(found[src]) != os.path.abspath(obj):
            raise Bad("%s is compiled twice (%s and %s)" % (src, found[src], obj))
        found[src] = obj
    sources = sorted(found)
    digests, strong, weak, needs = [], {}, {}, []
    for i, src in enumerate(sources):
        with open(found[src], "rb") as f:
            data = f.read()
        digests.append(elf_digest(data, found[src]).hex()[:16])
        s, w, u = Elf(data, found[src]).linkage()
        for name in s:
            strong.setdefault(name, []).append(i)
        for name in w:
            weak.setdefault(name, []).append(i)
        needs.append(u)
    rows = []
    for i, src in enumerate(sources):
        calls = set()
        for name in needs[i]:
            calls.update(strong.get(name) or weak.get(name) or ())
        calls.discard(i)
        rows.append((src, digests[i], sorted(calls)))
    return rows


def cpp(rows):
    lines = ["// Generated by cmake/code_fingerprints.py at build time; do not edit.",
             "// Each object of the harness's libraries: its source, the hash of its code",
             "// and the objects whose functions it calls (indices into this table).",
             '#include "core/code.hpp"',
             "",
             "namespace {",
             "const pb::CodeObject kObjects[] = {"]
    for src, digest, calls in rows:
        lines.append('    {"%s", "%s", "%s"},' % (src, digest, " ".join(str(c) for c in calls)))
    if not rows:
        lines.append('    {"", "", ""},')
    lines += ["};",
              "const pb::CodeTable kTable(kObjects, %d);" % len(rows),
              "}  // namespace",
              ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="code_fingerprints.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table")
    t.add_argument("--source-dir", required=True)
    t.add_argument("--build-dir", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("objects", nargs="*")
    h = sub.add_parser("hash")
    h.add_argument("objects", nargs="+")
    args = ap.parse_args(argv)
    try:
        if args.command == "hash":
            for obj in args.objects:
                print(object_digest(obj).hex()[:16], obj)
            return 0
        text = cpp(table(args.objects, os.path.abspath(args.source_dir), os.path.abspath(args.build_dir)))
        old = None
        if os.path.exists(args.out):
            with open(args.out, encoding="utf-8") as f:
                old = f.read()
        if old != text:  # unchanged: the table's object is not rebuilt
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(args.out + ".tmp", args.out)
        return 0
    except (Bad, OSError, struct.error, IndexError, ValueError) as e:
        print("code_fingerprints: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
