#!/usr/bin/env bash
# Issue 19 on the GPU machine, after run-tune.sh on the same (warm) machine:
# the new kernels under compute-sanitizer memcheck and racecheck, then every
# own GPU kernel against cuBLAS in its precision at 4096^3 and 8192^3, all
# three ops, medians of 3, with the committed tile table.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-final.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-final.sh OUT}
mkdir -p "$OUT"
cmake --build build/gpu -j "$(nproc)" > "$OUT/build.log" 2>&1
echo "build exit $?"
# memcheck on every new kernel; racecheck (slow) on CUDA.Pipelined's tiles
# (run-ncu.sh ran it on DMMA and WGMMA).
for tool in memcheck racecheck; do
  filter='Registry/GemmVariants.*DMMA*f64*:Registry/GemmVariants.*WGMMA*:Registry/GemmVariants.*Pipelined*f32*'
  [[ $tool == racecheck ]] && filter='Registry/GemmVariants.*Pipelined*f32*'
  PARBENCH_REQUIRE_GPU=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter="$filter" > "$OUT/$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/$tool.log" | tail -3
done
RATIO_TO=cuBLAS TABLE_FILTER=GEMM OUT=$OUT timeout 360 ci/gpu.sh --no-tests --name gemm-final -- \
  --gemm-shapes=4096,8192 '--benchmark_filter=^GEMM/(CUDA.Pipelined|CUDA.DMMA|CUDA.WGMMA|cuBLAS)/' \
  --precision=f32,f64,tf32,bf16 --benchmark_min_time=0.2 --benchmark_repetitions=3 --hide-unsupported \
  > "$OUT/gpu-sh.log" 2>&1
echo "bench exit $?"
grep -E "GEMM|ratio" "$OUT/gpu-sh.log" | tail -60
