#!/usr/bin/env bash
# Issue 20, CUDA.DMMA's final form (one call, under 8 minutes): build; every
# CUDA k-means registry test (update_step and the early launches are every
# device-update variant's); memcheck on CUDA.DMMA's and CUDA.GEMM's,
# racecheck on CUDA.DMMA's; 100,000 x 100 x 316 (CUDA.DMMA and CUDA.GEMM,
# 10 iterations, 5 repetitions) and 4,000,000 x 16 x 16 (CUDA.OneRead and
# CUDA.AllGPU, 3 repetitions). Re-packs OUT/f.tgz after each step.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-dmma-final.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*CUDA*' \
  > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*DMMA*:Registry/KMeansVariants.*GEMM*' \
  > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
PARBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
  > "$F/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck.log" | tail -1; pack
OUT=$F timeout 90 ci/gpu.sh --no-tests --name kmeans-wide -- --kmeans-shapes=100000x100x316 \
  --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.(DMMA|GEMM)/' \
  --benchmark_repetitions=5 --hide-unsupported > "$F/sh-kmeans-wide.log" 2>&1
echo "bench wide exit $?"; grep -E "_median" "$F/kmeans-wide.txt" | awk '{print $1, $2, $3}'; pack
OUT=$F timeout 90 ci/gpu.sh --no-tests --name kmeans-4m -- --kmeans-shapes=4000000x16x16 \
  --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.(OneRead|AllGPU)/' \
  --benchmark_repetitions=3 --hide-unsupported > "$F/sh-kmeans-4m.log" 2>&1
echo "bench 4M exit $?"; grep -E "_median" "$F/kmeans-4m.txt" | awk '{print $1, $2, $3}'; pack
