#!/usr/bin/env bash
# Ran once, at da2f7d5 (forms10-run); the PARBENCH_DMMA_FLAGS switch it sets is gone since
# c97e1ab (the final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, tenth round (one call). The
# temporary switch PARBENCH_DMMA_FLAGS (a bit each; 0 is the kernel of 87d7977,
# 26 = 2 + 8 + 16 the best of forms8-run; forms9-run's 1, 4, 32, 64 are gone):
#   128 the warps of the block's second 64 points run half a tile behind the
#       first 64's (a named barrier midway through tile 0), so one half's
#       argmin overlaps the other's multiplies; those points are a second
#       bulk copy on their own mbarrier; the last warp issues the copies;
#   256 the argmin's update written as selects.
# Build; every CUDA k-means registry test with 154 and 410; the shape under
# each configuration, 5 repetitions, each its own process; memcheck of DMMA's
# tests with 410.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-dmma-forms10.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
for fl in 154 410; do
  PARBENCH_DMMA_FLAGS=$fl PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-flags$fl.log" 2>&1
  echo "tests (flags $fl) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-flags$fl.log" | head
done
pack
for fl in ${CFGS:-26 154 282 410 0 26 154 410}; do
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
PARBENCH_DMMA_FLAGS=410 PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
pack
