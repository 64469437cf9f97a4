#!/usr/bin/env bash
# Issue 20, CUDA.Bitonic's layout design (one call, under 8 minutes): build;
# the registry tests of both sorting networks; memcheck on Bitonic's tests at
# block 1024 and racecheck on its tile kernels (batches, the in-place path,
# tile edges); the 2^24 u32 sort against CUB and CUB.Offset64; then, with
# NCU=1, each Bitonic kernel's duration in one sort. Re-packs OUT/f.tgz after
# each step, so a cut-off call still returns what ran.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] [SANITIZERS=0] [NCU=1] \
#     results/nvidia-h100/issue20/run-bitonic.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/SortVariants.*CUDA_Bitonic*:Registry/SortVariants.*CUDA_OddEven*' \
  > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
if [[ ${SANITIZERS:-1} != 0 ]]; then
  PARBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter='Registry/SortVariants.*CUDA_Bitonic_block1024' \
    > "$F/memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$F/memcheck.log" | tail -2; pack
  rc='Registry/SortVariants.Batches/CUDA_Bitonic*:Registry/SortVariants.PowerOfTwo*/CUDA_Bitonic_block1024'
  rc="$rc:Registry/SortVariants.TileEdges/CUDA_Bitonic_block1024"
  PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter="$rc" > "$F/racecheck.log" 2>&1
  echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$F/racecheck.log" | tail -2; pack
fi
RATIO_TO=CUB TABLE_FILTER=Sort OUT=$F timeout 90 ci/gpu.sh --no-tests --name sort-bitonic -- \
  --sort-elements=2^24 --sort-key=u32 --sort-payload=keys --sort-order=asc --sort-dist=uniform --block=256 \
  '--benchmark_filter=^Sort/(CUB|CUB.Offset64|CUDA.Bitonic|CUDA.Radix)/' --benchmark_min_time=0.2 \
  --benchmark_repetitions=3 --hide-unsupported > "$F/sort-sh.log" 2>&1
echo "sort bench exit $?"; grep -E "^Sort.*_median" "$F/sort-sh.log" | grep -v "length:1024/" | awk '{print $1, $2, $3}'
pack
# One in-place 2^24 u32 sort is 26 launches: skip the first sort (warm-up).
if [[ -n ${NCU:-} ]]; then
  timeout 120 ncu -k regex:bitonic --launch-skip 26 --launch-count 26 --metrics gpu__time_duration.sum \
    build/gpu/bench --sort-elements=2^24 --sort-key=u32 --sort-order=asc --sort-dist=uniform --sort-payload=keys \
    --block=256 '--benchmark_filter=^Sort/CUDA.Bitonic/' --benchmark_min_time=0.01 --no-progress \
    > "$F/ncu-bitonic.txt" 2>&1
  echo "ncu exit $?"
  python3 results/ncu-durations.py "$F/ncu-bitonic.txt"
  pack
fi
