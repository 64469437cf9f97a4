#!/usr/bin/env python3
"""cmake/code_fingerprints.py on tiny objects: what changes an object's code
hash and what must not.

    test_code_fingerprints.py --cxx CXX [--nvcc NVCC]

CXX compiles the host objects (about a second in all: the unit test). A
hand-built .nv_fatbin section stands in for nvcc's device code. With --nvcc
the CUDA cases run too, on a real nvcc (seconds a file: the smoke test): one
.cu file built from two folders, and changed.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "cmake", "code_fingerprints.py")
CXX = None
NVCC = None

BASE = """
static const int table[] = {3, 5, 7, 11};
extern int callee(int);
int f(int x) { return x * 3 + table[x & 3]; }
int h(int x) { return callee(x) + 1; }
const char* message() { return "_GLOBAL__N__12345678_4_t_cu_0badf00d"; }
extern "C" int _GLOBAL__N__12345678_4_t_cu_0badf00d_g();
int k() { return _GLOBAL__N__12345678_4_t_cu_0badf00d_g(); }
"""


def run(*args, cwd=None):
    p = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("%s failed:\n%s%s" % (" ".join(args), p.stdout, p.stderr))
    return p.stdout


def read(path):
    with open(path, "rb") as f:
        return f.read()


def digest(path):
    return run(sys.executable, SCRIPT, "hash", path).split()[0]


def lz4_compress(data):
    """An LZ4 block: zero runs of 8 bytes or more as matches one byte back (an
    overlapping copy), the rest as literals."""
    out = bytearray()

    def length(n):
        while n >= 255:
            out.append(255)
            n -= 255
        out.append(n)

    def sequence(literals, match):
        token = (min(len(literals), 15) << 4) | (min(match - 4, 15) if match else 0)
        out.append(token)
        if len(literals) >= 15:
            length(len(literals) - 15)
        out.extend(literals)
        if match:
            out.extend(b"\x01\x00")  # one byte back
            if match - 4 >= 15:
                length(match - 4 - 15)

    start = i = 0
    while i < len(data):
        if data[i] == 0:
            j = i
            while j < len(data) and data[j] == 0:
                j += 1
            if j - i >= 8 and j < len(data) - 8:
                sequence(data[start:i + 1], j - i - 1)  # the first zero a literal, the rest copied
                start = i = j
                continue
            i = j
        else:
            i += 1
    sequence(data[start:], 0)
    return bytes(out)


def fatbin(entries):
    """A fatbin of (kind, payload, flags, plain size[, arch]) entries; sm_90 unless given."""
    body = b""
    for kind, payload, flags, plain, *arch in entries:
        header = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), len(payload), 0, 0, 0,
                             arch[0] if arch else 90, 0, 0, 0x11 | flags, 0, plain)
        body += header + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


class Host(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="code-fingerprints-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def compile(self, source, name="t.cpp", folder="a", flags=()):
        d = os.path.join(self.tmp, folder)
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, name)
        with open(src, "w") as f:
            f.write(source)
        obj = src + ".o"
        run(CXX, "-O2", "-c", src, "-o", obj, *flags, cwd=d)
        return obj

    def test_code_changes_the_hash(self):
        base = digest(self.compile(BASE))
        self.assertRegex(base, r"^[0-9a-f]{16}$")
        self.assertNotEqual(digest(self.compile(BASE.replace("x * 3", "x * 5"), folder="b")), base)

    def test_a_call_target_changes_the_hash(self):
        # Same bytes (the call's displacement is 0 until linked), another symbol.
        base = digest(self.compile(BASE))
        self.assertNotEqual(digest(self.compile(BASE.replace("callee", "calleE"), folder="b")), base)

    def test_data_changes_the_hash(self):
        base = digest(self.compile(BASE))
        self.assertNotEqual(digest(self.compile(BASE.replace("{3, 5, 7, 11}", "{3, 5, 7, 13}"), folder="b")), base)

    def test_debug_info_path_and_file_name_do_not(self):
        base = digest(self.compile(BASE))
        self.assertEqual(digest(self.compile(BASE, folder="b", flags=["-g"])), base)
        self.assertEqual(digest(self.compile(BASE, name="other_name.cpp", folder="c/d", flags=["-g3"])), base)

    def test_nvcc_anonymous_namespace_hash_does_not(self):
        # The hash of the checkout's path nvcc puts in such names, in a symbol
        # name (a relocation's target) and in data.
        other = BASE.replace("12345678", "9abcdef0")
        self.assertEqual(digest(self.compile(other, folder="b")), digest(self.compile(BASE)))
        self.assertNotEqual(digest(self.compile(BASE.replace("0badf00d", "0badf00e"), folder="c")),
                            digest(self.compile(BASE)))

    def with_fatbin(self, data, folder):
        obj = self.compile(BASE, folder=folder)
        section = os.path.join(self.tmp, folder, "fatbin.bin")
        with open(section, "wb") as f:
            f.write(data)
        run("objcopy", "--add-section", ".nv_fatbin=" + section, "--set-section-flags", ".nv_fatbin=alloc,readonly",
            obj)
        return digest(obj)

    def test_device_code(self):
        cubin = read(self.compile(BASE, folder="cubin"))  # a host object stands in for a cubin
        other = read(self.compile(BASE.replace("x * 3", "x * 5"), folder="cubin2"))
        ptx = b"// Generated by NVIDIA NVVM Compiler\n.version 8.0\n.loc 1 10 3\nadd.s32 %r1, %r2, 3;\n"
        changed = ptx.replace(b"%r2, 3", b"%r2, 4")
        # sm_90's SASS and its PTX, and the PTX of compute_80 (no SASS: a GPU of 8.x runs it).
        plain = self.with_fatbin(fatbin([(1, ptx, 0, 0), (2, cubin, 0, 0), (1, ptx, 0, 0, 80)]), "p0")
        self.assertNotEqual(self.with_fatbin(fatbin([(1, ptx, 0, 0), (2, other, 0, 0), (1, ptx, 0, 0, 80)]), "p1"),
                            plain)
        # LZ4 compression (nvcc --compress-mode=speed) is read through.
        lz4 = lz4_compress(cubin)
        self.assertLess(len(lz4), len(cubin))
        self.assertEqual(self.with_fatbin(fatbin([(1, ptx, 0, 0), (2, lz4, 0x2000, len(cubin)), (1, ptx, 0, 0, 80)]),
                                          "p2"), plain)
        # PTX without SASS: comments and line information are not code; an instruction is.
        moved = ptx.replace(b"NVVM", b"NVVM 99").replace(b".loc 1 10", b".loc 1 12")
        self.assertEqual(self.with_fatbin(fatbin([(1, ptx, 0, 0), (2, cubin, 0, 0), (1, moved, 0, 0, 80)]), "p3"),
                         plain)
        self.assertNotEqual(self.with_fatbin(fatbin([(1, ptx, 0, 0), (2, cubin, 0, 0), (1, changed, 0, 0, 80)]),
                                             "p4"), plain)
        # The PTX of an architecture with SASS is left out (cicc's PTX varies between compiles).
        self.assertEqual(self.with_fatbin(fatbin([(1, changed, 0, 0), (2, cubin, 0, 0), (1, ptx, 0, 0, 80)]), "p5"),
                         plain)
        # A zstd-compressed PTX counts by its uncompressed size.
        zstd = self.with_fatbin(fatbin([(2, cubin, 0, 0), (1, b"\x28\xb5\x2f\xfd..1", 0x8000, 200, 80)]), "p6")
        self.assertEqual(self.with_fatbin(fatbin([(2, cubin, 0, 0), (1, b"\x28\xb5\x2f\xfd..2", 0x8000, 200, 80)]),
                                          "p7"), zstd)
        self.assertNotEqual(self.with_fatbin(fatbin([(2, cubin, 0, 0), (1, b"\x28\xb5\x2f\xfd..1", 0x8000, 201, 80)]),
                                             "p8"), zstd)

    def test_not_an_object(self):
        path = os.path.join(self.tmp, "x.o")
        with open(path, "w") as f:
            f.write("not an object")
        p = subprocess.run([sys.executable, SCRIPT, "hash", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"^code_fingerprints: .*x\.o is not an ELF object")

    def test_table(self):
        # CMake's layout: BUILD/<dir>/CMakeFiles/<target>.dir/<source>.o for SRC/<dir>/<source>.
        src, build = os.path.join(self.tmp, "src"), os.path.join(self.tmp, "build")
        objdir = os.path.join(build, "lib", "CMakeFiles", "lib.dir")
        os.makedirs(os.path.join(src, "lib", "sub"))
        os.makedirs(os.path.join(objdir, "sub"))
        os.makedirs(os.path.join(objdir, "__", "generated"))
        os.makedirs(os.path.join(build, "generated"))
        objects = []
        for rel, path, text in (
                ("a.cpp", os.path.join(src, "lib", "a.cpp"), BASE),
                ("sub/b.cpp", os.path.join(src, "lib", "sub", "b.cpp"), "int callee(int x) { return x; }\n"),
                ("__/generated/stamp.cpp", os.path.join(build, "generated", "stamp.cpp"), "int stamp = 1;\n")):
            with open(path, "w") as f:
                f.write(text)
            obj = os.path.join(objdir, rel + ".o")
            run(CXX, "-O2", "-c", path, "-o", obj)
            objects.append(obj)
        out = os.path.join(build, "generated", "code_table.cpp")
        run(sys.executable, SCRIPT, "table", "--source-dir", src, "--build-dir", build, "--out", out, *objects)
        text = read(out).decode()
        a, b = digest(objects[0]), digest(objects[1])
        self.assertIn('{"lib/a.cpp", "%s", "1"},' % a, text)  # a.cpp calls callee(), in sub/b.cpp
        self.assertIn('{"lib/sub/b.cpp", "%s", ""},' % b, text)
        self.assertNotIn("stamp", text)  # generated in the build folder: not hashed
        # A missing source is an error, not a silent gap.
        os.remove(os.path.join(src, "lib", "sub", "b.cpp"))
        p = subprocess.run([sys.executable, SCRIPT, "table", "--source-dir", src, "--build-dir", build, "--out", out,
                            *objects], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no source", p.stderr)


class Cuda(unittest.TestCase):
    KERNEL = """
namespace {
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a * 3.0f; }
}  // namespace
void launch(float* x) { scale<<<1, 32>>>(x, 2.0f); }
"""

    def setUp(self):
        if not NVCC:
            self.skipTest("--nvcc not given")
        self.tmp = tempfile.mkdtemp(prefix="code-fingerprints-cuda-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def compile(self, source, folder, seed=True):
        d = os.path.join(self.tmp, folder)
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "k.cu")
        with open(src, "w") as f:
            f.write(source)
        obj = src + ".o"
        flags = ["-frandom-seed=impl/k.cu"] if seed else []
        run(NVCC, "-O3", "--generate-code=arch=compute_90,code=[compute_90,sm_90]", *flags, "-c", src, "-o", obj)
        return digest(obj)

    def test_same_source_two_folders(self):
        # Absolute paths differ, so nvcc's anonymous-namespace hash does.
        self.assertEqual(self.compile(self.KERNEL, "a"), self.compile(self.KERNEL, "b/c"))

    def test_a_comment_is_not_code_a_constant_is(self):
        base = self.compile(self.KERNEL, "a")
        self.assertEqual(self.compile("// a comment\n// and another\n" + self.KERNEL, "b"), base)
        self.assertNotEqual(self.compile(self.KERNEL.replace("3.0f", "4.0f"), "c"), base)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--nvcc")
    args, rest = ap.parse_known_args()
    CXX, NVCC = args.cxx, args.nvcc
    unittest.main(argv=[sys.argv[0]] + rest)
