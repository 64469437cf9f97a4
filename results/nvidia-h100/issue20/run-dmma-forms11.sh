#!/usr/bin/env bash
# Ran once, at 1ff3d40 (forms11-run); the PARBENCH_DMMA_FLAGS switch it sets is gone since
# c97e1ab (the final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, eleventh round (one call). The
# temporary switch PARBENCH_DMMA_FLAGS (a bit each; 0 is the kernel of 87d7977,
# 154 = 2 + 8 + 16 + 128 the best of forms10-run; its 256 is gone):
#   512 (with 128) each half of the block settles its own 64 points (argmin
#       across column halves, counts) and adds their sums behind its own
#       named barrier, the first half while the second still multiplies.
# Build; every CUDA k-means registry test with 666; the shape under each
# configuration, 5 repetitions, each its own process; memcheck and racecheck
# of DMMA's tests with 666.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-dmma-forms11.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
for fl in 666; do
  PARBENCH_DMMA_FLAGS=$fl PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-flags$fl.log" 2>&1
  echo "tests (flags $fl) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-flags$fl.log" | head
done
pack
for fl in ${CFGS:-154 666 0 26 154 666}; do
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
PARBENCH_DMMA_FLAGS=666 PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
pack
PARBENCH_DMMA_FLAGS=666 PARBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
  > "$F/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck.log" | tail -1
pack
