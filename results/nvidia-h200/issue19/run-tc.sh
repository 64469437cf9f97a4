#!/usr/bin/env bash
# Issue 19, the tensor-core steps on the GPU machine: build, the GEMM registry
# tests of CUDA.DMMA, CUDA.WGMMA and the TF32 / BF16 cuBLAS with the GPU
# required, then the kernels against cuBLAS in the same precision at 4096^3
# and 8192^3, all three ops, medians of 3.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-tc.sh OUT [tests|bench|all]
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-tc.sh OUT [tests|bench|all]}
what=${2:-all}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/build.log" 2>&1
echo "build exit $?"
if [[ $what == tests || $what == all ]]; then
  PARBENCH_REQUIRE_GPU=1 timeout 300 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/GemmVariants.*DMMA*:Registry/GemmVariants.*WGMMA*:Registry/GemmVariants.*tf32*:Registry/GemmVariants.*bf16*' \
    > "$OUT/gtests.log" 2>&1
  echo "GEMM tests exit $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/gtests.log" | sort | uniq -c | head -40
fi
if [[ $what == bench || $what == all ]]; then
  RATIO_TO=cuBLAS TABLE_FILTER=GEMM OUT=$OUT timeout 500 ci/gpu.sh --no-tests --name gemm-tc -- \
    --gemm-shapes=${SHAPES:-4096,8192} '--benchmark_filter=^GEMM/(CUDA.DMMA|CUDA.WGMMA|cuBLAS)/' \
    --precision=f64,tf32,bf16 --benchmark_min_time=0.2 --benchmark_repetitions=${REPS:-3} > "$OUT/gpu-sh.log" 2>&1
  echo "bench exit $?"
  grep -E "GEMM|ratio" "$OUT/gpu-sh.log" | tail -60
fi
