#!/usr/bin/env bash
# Issue 20, CUDA.DMMA without the half-block epilogue (racecheck) (one
# call): build; every CUDA k-means registry test (a new shape: 8 warps over
# 32-centroid tiles with unpadded rows, D = 124) and the GEMM family's
# CUDA.DMMA and CUDA.WGMMA tests (dmma_ops.cuh gained m16n8k4,
# mbarrier.cuh is shared); memcheck, racecheck and synccheck of CUDA.DMMA's
# k-means tests (named barriers now order a tile buffer's reuse); 100,000 x
# 100 x 316 with CUDA.DMMA and CUDA.GEMM (cuBLAS), 5 repetitions, twice,
# each its own process. Re-packs OUT/f.tgz after each step.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h100/issue20/run-final-check3.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
PARBENCH_REQUIRE_GPU=1 timeout 150 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*CUDA*:Registry/GemmVariants.*CUDA_DMMA_*f64*:*WGMMA*' > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
for i in 1 2; do
  OUT=$F timeout 60 ci/gpu.sh --no-tests --name kmeans-wide$i -- --kmeans-shapes=100000x100x316 \
    --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.(DMMA|GEMM)/' \
    --benchmark_repetitions=5 --hide-unsupported > "$F/sh-kmeans-wide$i.log" 2>&1
  echo "bench $i exit $?"; grep -E "_median" "$F/kmeans-wide$i.txt" | awk '{print $1, $2, $3}'; pack
done
PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1; pack
for tool in racecheck synccheck; do
  PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
    > "$F/$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "SUMMARY" "$F/$tool.log" | tail -1; pack
done
