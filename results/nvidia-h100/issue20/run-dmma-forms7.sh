#!/usr/bin/env bash
# Ran once, at a72249c (forms7-run); the PARBENCH_DMMA_FLAGS switch it sets is gone since
# c97e1ab (the final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, seventh round (one call): three
# changes behind the temporary switch PARBENCH_DMMA_FLAGS (a bit each; 7, all
# on, is the default while it lives, 0 is the kernel of 87d7977):
#   1  each block prefetches into L2 the points of the block that will take
#      its place (cp.async.bulk.prefetch.L2), so the next wave's first copy
#      comes from L2, not HBM;
#   2  a last k step of m16n8k4 when D % 8 is 1 to 4 (D = 100: 12 k8 steps
#      and one k4, not 13 k8 over zero padding);
#   4  the fused sums by the copy engine: one cp.reduce.async.bulk .add.f64
#      a point (its row from shared memory onto its cluster's), not a warp's
#      atomics a coordinate.
# Build; every CUDA k-means registry test with all on and with all off;
# the shape under each configuration, 5 repetitions, each its own process;
# memcheck of DMMA's tests with all on.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] [CFGS="0 7 ..."] results/nvidia-h100/issue20/run-dmma-forms7.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
if [[ -z ${SKIP_TESTS:-} ]]; then
for fl in 7 0; do
  PARBENCH_DMMA_FLAGS=$fl PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-flags$fl.log" 2>&1
  echo "tests (flags $fl) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-flags$fl.log" | head
done
pack
fi
for fl in ${CFGS:-0 7 1 2 4 0 7}; do
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
if [[ -z ${SKIP_TESTS:-} ]]; then
PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
pack
fi
