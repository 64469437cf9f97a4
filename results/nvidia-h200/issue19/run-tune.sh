#!/usr/bin/env bash
# Issue 19 on the GPU machine, the tile tuning (one call): build, the sweep
# (ci/tune-gemm: CUDA.Pipelined f32 and CUDA.DMMA f64, every tile, all ops,
# 1024-8192 cubes, medians of 3), which rewrites impl/gemm/tuned_sm90.inc;
# rebuild with it and run the GEMM GPU registry tests.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-tune.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-tune.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/build.log" 2>&1
echo "build exit $?"
timeout 420 ci/tune-gemm "$OUT/tune" > "$OUT/tune.log" 2>&1
echo "tune exit $?"
cp impl/gemm/tuned_sm90.inc "$OUT/tune/"
cmake --build build/gpu -j "$(nproc)" > "$OUT/rebuild.log" 2>&1
echo "rebuild exit $?"
PARBENCH_REQUIRE_GPU=1 timeout 150 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/GemmVariants.*CUDA*:Registry/GemmVariants.*cuBLAS*:GemmTuning.*' > "$OUT/gtests.log" 2>&1
echo "GEMM tests exit $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gtests.log" | head -20
