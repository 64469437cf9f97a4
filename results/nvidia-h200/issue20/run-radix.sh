#!/usr/bin/env bash
# Issue 20, CUDA.Radix and CUDA.Bitonic on the GPU machine, one call: build,
# their sort registry tests with the GPU required, the same under
# compute-sanitizer memcheck, and racecheck (Bitonic on a 2^16 tile and the
# batches: racecheck takes minutes on its 2^20-2^21 cases), then CUDA.Radix against
# CUB.Offset64 and CUB, and the networks, on u32 keys, keys only and pairs,
# 2^24 and 2^26, medians of 3.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue20/run-radix.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-radix.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/gpu-build.log" 2>&1  # no bench arguments: build only (gpu.sh writes build.log)
echo "build exit $?"
filter=${RADIX_TESTS:-'Registry/SortVariants.*Radix*:Registry/SortVariants.*Bitonic*'}
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests --gtest_filter="$filter" > "$OUT/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure|round" "$OUT/gtests.log" | head -20
for tool in ${SANITIZERS-memcheck racecheck}; do
  f=$filter
  [[ $tool == racecheck ]] && f='Registry/SortVariants.*CUDA_Radix:Registry/SortVariants.Batches*CUDA_Bitonic*:Registry/SortVariants.PowerOfTwo*CUDA_Bitonic_block1024'
  PARBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter="$f" > "$OUT/$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/$tool.log" | tail -3
done
RATIO_TO=CUB.Offset64 TABLE_FILTER=Sort OUT=$OUT timeout 240 ci/gpu.sh --no-tests --name sort-radix -- \
  --sort-elements=2^24,2^26 --sort-key=u32 --sort-payload=keys,pairs --sort-order=asc --sort-dist=uniform \
  '--benchmark_filter=^Sort/(CUDA.Radix|CUB.Offset64|CUB|CUDA.Bitonic|CUDA.OddEvenMerge)/' \
  --benchmark_min_time=0.2 --benchmark_repetitions=3 --hide-unsupported > "$OUT/gpu-sh.log" 2>&1
echo "bench exit $?"
grep -E "^Sort" "$OUT/gpu-sh.log" | grep -v -E "length:1024/|OddEven" | awk '{print $1, $2, $3}'
# NCU_BITONIC=1: each kernel's duration in one CUDA.Bitonic sort of 2^24 u32
# keys (in place: the tile sort, then per stage the global passes and a tile
# merge: 29 launches).
if [[ -n ${NCU_BITONIC:-} ]]; then
  timeout 120 ncu -k regex:bitonic --launch-skip 33 --launch-count 33 --metrics gpu__time_duration.sum \
    build/gpu/bench --sort-elements=2^24 --sort-key=u32 --sort-order=asc --sort-dist=uniform --sort-payload=keys \
    --block=256 '--benchmark_filter=^Sort/CUDA.Bitonic/' --benchmark_min_time=0.01 --no-progress \
    > "$OUT/ncu-bitonic.txt" 2>&1
  echo "ncu bitonic exit $?"
  python3 results/ncu-durations.py "$OUT/ncu-bitonic.txt"
fi
