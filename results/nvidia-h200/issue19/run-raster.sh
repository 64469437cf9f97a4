#!/usr/bin/env bash
# Issue 19 on the GPU machine, one call: the grouped tile order of
# CUDA.Pipelined (gemm/raster.hpp, shared with CUDA.DMMA). Build; the GEMM
# GPU tests of both kernels; racecheck on the packing configuration the
# table picks for AB and ABtC (128x128s2p); then Pipelined against cuBLAS in
# f32 at 4096^3 and 8192^3, all ops, medians of 5, for plots/compare.py
# against final-run3 (the same tiles, walked row by row).
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-raster.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-raster.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/build.log" 2>&1  # no bench arguments: build only
echo "build exit $?"
PARBENCH_REQUIRE_GPU=1 timeout 150 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/GemmVariants.*Pipelined*:Registry/GemmVariants.*DMMA*:GemmRaster.*:GemmTuning.*' \
  > "$OUT/gtests.log" 2>&1
echo "GEMM tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gtests.log" | head -20
PARBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter='Registry/GemmVariants.*Pipelined_AB*f32_tile128x128s2p' \
  > "$OUT/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/racecheck.log" | tail -3
RATIO_TO=cuBLAS TABLE_FILTER=GEMM OUT=$OUT timeout 200 ci/gpu.sh --no-tests --name gemm-f32 -- \
  --gemm-shapes=4096,8192 '--benchmark_filter=^GEMM/(CUDA.Pipelined|cuBLAS)/' --precision=f32 \
  --benchmark_min_time=0.2 --benchmark_repetitions=5 --hide-unsupported > "$OUT/gpu-sh.log" 2>&1
echo "bench exit $?"
grep -E "GEMM|ratio" "$OUT/gpu-sh.log" | tail -14
