#!/usr/bin/env bash
# Issue 20, k-means at the floor on the GPU machine, one call: build, the
# k-means registry tests of CUDA.OneRead and CUDA.DMMA (and the GEMM
# family's CUDA.DMMA, whose helpers it shares) with the GPU required, the
# k-means ones under compute-sanitizer memcheck and racecheck, then the two
# shapes of the issue (N=4,000,000 D=16 K=16 and N=100,000 D=100 K=316,
# uniform and blobs, 10 fixed iterations) with CUDA.OneRead and CUDA.DMMA
# beside CUDA.AllGPU and CUDA.GEMM, medians of 3.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue20/run-kmeans.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-kmeans.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/gpu-build.log" 2>&1  # no bench arguments: build only (gpu.sh writes build.log)
echo "build exit $?"
filter=${KMEANS_TESTS:-'Registry/KMeansVariants.*OneRead*:Registry/KMeansVariants.*DMMA*'}
PARBENCH_REQUIRE_GPU=1 timeout 150 build/gpu/tests/parbench_tests \
  --gtest_filter="$filter:Registry/GemmVariants.*CUDA_DMMA*" > "$OUT/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$OUT/gtests.log" | head -20
for tool in ${SANITIZERS-memcheck racecheck}; do
  # racecheck is slow on the 300,000-point and converging cases: the ties
  # test (every kernel, one block and a partial grid) at both block sizes.
  f=$filter
  [[ $tool == racecheck ]] && f='Registry/KMeansVariants.TiesAndEmptyClusters/*OneRead*:Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*'
  PARBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter="$f" > "$OUT/$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/$tool.log" | tail -3
done
OUT=$OUT timeout 300 ci/gpu.sh --no-tests --name kmeans-floor -- \
  --kmeans-shapes=4000000x16x16,100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
  --block=${KMEANS_BLOCKS:-128,256,512} '--benchmark_filter=^KMeans/CUDA\.(OneRead|DMMA|AllGPU|GEMM)/' \
  --benchmark_repetitions=3 --hide-unsupported > "$OUT/gpu-sh.log" 2>&1
echo "bench exit $?"
grep -E "^KMeans" "$OUT/gpu-sh.log" | awk '{print $1, $2, $3}'
