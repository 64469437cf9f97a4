#!/usr/bin/env bash
# Ran once, at 08e5e0d (forms9-run); the PARBENCH_DMMA_FLAGS switch it sets is gone since
# c97e1ab (the final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, ninth round (one call). The
# temporary switch PARBENCH_DMMA_FLAGS (a bit each; 0 is the kernel of 87d7977,
# 26 = 2 + 8 + 16 the best of forms8-run):
#   1  L2 prefetch of the next wave's points (as in forms7-run);
#   32 the norms kept as -|c|^2 / 2 and each tile's accumulators start from
#      them, so the MMAs leave x.c - |c|^2 / 2 and the argmin needs no FMA;
#   64 the fused sums' loads of a point's row (4 a lane) before its atomics,
#      not one load and one atomic at a time.
# Build; every CUDA k-means registry test with 122 and 123; the shape under
# each configuration, 5 repetitions, each its own process; memcheck of DMMA's
# tests with 122.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-dmma-forms9.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
for fl in 122 123; do
  PARBENCH_DMMA_FLAGS=$fl PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-flags$fl.log" 2>&1
  echo "tests (flags $fl) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-flags$fl.log" | head
done
pack
for fl in ${CFGS:-26 27 58 90 122 123 0 26 122}; do
  name=kmeans-flags$fl
  [[ -e $F/$name.json ]] && name=$name-b
  PARBENCH_DMMA_FLAGS=$fl OUT=$F timeout 60 ci/gpu.sh --no-tests --name $name -- \
    --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
    '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_repetitions=5 --hide-unsupported \
    > "$F/sh-$name.log" 2>&1
  echo "bench (flags $fl) exit $?"
  grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  pack
done
PARBENCH_DMMA_FLAGS=122 PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
pack
