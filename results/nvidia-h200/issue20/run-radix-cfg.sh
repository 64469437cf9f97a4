#!/usr/bin/env bash
# Issue 20 on the GPU machine, one call: CUDA.Radix's scatter configurations
# (PARBENCH_RADIX_CFG 0: 512 threads x 15 keys, 2 blocks an SM; 1: 384 x 16,
# 3 blocks; 2: 384 x 20, 2 blocks), each with the Radix tests and then
# against CUB.Offset64 in the same process, u32 keys, keys and pairs, 2^24
# and 2^26, medians of 3.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue20/run-radix-cfg.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-radix-cfg.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests --name none -- --benchmark_filter=NOTHING > "$OUT/build.log" 2>&1
echo "build exit $?"
for cfg in ${CFGS:-0 1 2}; do
  PARBENCH_RADIX_CFG=$cfg PARBENCH_REQUIRE_GPU=1 timeout 100 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/SortVariants.*Radix*' > "$OUT/gtests-cfg$cfg.log" 2>&1
  echo "cfg $cfg tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gtests-cfg$cfg.log" | head -5
  PARBENCH_RADIX_CFG=$cfg timeout 120 build/gpu/bench --sort-elements=2^24,2^26 --sort-key=u32 --sort-payload=keys,pairs \
    --sort-order=asc --sort-dist=uniform '--benchmark_filter=^Sort/(CUDA.Radix|CUB.Offset64)/' \
    --benchmark_min_time=0.2 --benchmark_repetitions=3 --no-progress --benchmark_report_aggregates_only=true \
    --benchmark_out="$OUT/sort-cfg$cfg.json" --benchmark_out_format=json > "$OUT/sort-cfg$cfg.txt" 2>&1
  echo "cfg $cfg bench exit $?"; grep -E "_median" "$OUT/sort-cfg$cfg.txt" | awk '{print $1, $2, $3}'
done
