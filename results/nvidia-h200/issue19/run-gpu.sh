#!/usr/bin/env bash
# Issue 19 on the GPU machine, one call: the FP32 kernels (CUDA.RegBlock,
# CUDA.Pipelined) against cuBLAS SGEMM at 4096^3 and 8192^3, all three ops;
# the GEMM registry tests of the new kernel with the GPU required, and under
# compute-sanitizer memcheck and racecheck.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-gpu.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-gpu.sh OUT}
mkdir -p "$OUT"
RATIO_TO=cuBLAS TABLE_FILTER=GEMM OUT=$OUT ci/gpu.sh --no-tests --name gemm-f32 -- --gemm-shapes=4096,8192 \
  '--benchmark_filter=^GEMM/(CUDA.RegBlock|CUDA.Pipelined|cuBLAS)/' --precision=f32 \
  --benchmark_min_time=0.2 --benchmark_repetitions=3 > "$OUT/gpu-sh.log" 2>&1
echo "gpu.sh (build, GEMM f32) exit $?"
PARBENCH_REQUIRE_GPU=1 timeout 300 build/gpu/tests/parbench_tests --gtest_filter='Registry/GemmVariants.*Pipelined*' \
  > "$OUT/gtests.log" 2>&1
echo "GEMM tests exit $?"
for tool in memcheck racecheck; do
  PARBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter='Registry/GemmVariants.*Pipelined_AB_f32*:Registry/GemmVariants.*Pipelined_AtB_f32*:Registry/GemmVariants.*Pipelined_ABtC_f32*' \
    > "$OUT/$tool.log" 2>&1
  echo "$tool exit $?"
done
