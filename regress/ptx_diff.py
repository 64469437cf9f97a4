"""Which CUDA kernels did a change recompile differently? Snapshots the PTX of
every .cu file of a CMake build and compares two snapshots kernel by kernel.

  ci/ptx-diff snapshot BUILD_DIR OUT_DIR   PTX of each .cu in BUILD_DIR's
                                           compile_commands.json (configure with
                                           -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
  ci/ptx-diff snapshot --binary BENCH OUT  the PTX a binary carries (cuobjdump)
  ci/ptx-diff compare BEFORE_DIR AFTER_DIR the kernels (.entry) whose PTX body
                                           changed, appeared or went away
               [--again BEFORE2_DIR]...    less those whose PTX differs between
                                           snapshots of the before build

A refactor that must not move any timing should leave every kernel's PTX as
it was; `compare` lists each kernel that differs (demangled with c++filt when
it is there), so a change of generated code is named and explained, not
guessed. Comments, the PTX header and file names are left out of the
comparison; a kernel is its .entry block.

Exit status: 0 done (compare: no kernel differs); 1 compare: some differ;
2 bad input (one line "ptx-diff: ...").
"""
import argparse
import os
import sys

from regress import cli
from regress.run.ptx import Bad, compare, cuda_tool, snapshot, snapshot_binary

TOOL = "ptx-diff"


def main(argv=None):
    p = argparse.ArgumentParser(prog=TOOL, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("build", help="a CMake build folder, or with --binary a CUDA binary")
    s.add_argument("out")
    s.add_argument("--binary", action="store_true", help="read the PTX the binary carries (cuobjdump -ptx), "
                   "no compile commands or rebuild needed")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--again", metavar="DIR", action="append", default=[],
                   help="another snapshot of the before build (repeatable): kernels whose PTX differs between "
                   "the before snapshots are the compiler's own variation, listed apart (nvcc 13.0 emits some "
                   "kernels differently from one compilation to the next)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "compare":
            return compare(args.before, args.after, args.again)
        if args.binary:
            tool = cuda_tool("cuobjdump")
            if not tool:
                raise Bad("cuobjdump is not installed: --binary needs it")
            if not os.path.isfile(args.build):
                raise Bad("%s is not a file" % args.build)
            n = snapshot_binary(args.build, args.out, tool)
            print("ptx-diff: %d PTX files of %s in %s" % (n, args.build, args.out))
            return 0
        return snapshot(args.build, args.out)
    except Bad as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
