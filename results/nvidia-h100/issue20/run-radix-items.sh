#!/usr/bin/env bash
# Issue 20, CUDA.Radix's scatter at 16 and 18 keys a thread (mask ranking,
# staging over the masks' shared memory; one call, under 8 minutes): build;
# CUDA.Radix's registry tests at both (PARBENCH_RADIX_ITEMS, a switch that
# lives only for this comparison); memcheck and racecheck at 18; keys and
# pairs at 2^24 and 2^26 against CUB.Offset64 at each (each its own process,
# CUB.Offset64 timed in both, 5 repetitions); ncu of one 2^26 keys sort (the
# histogram and 4 scatter passes) at each. Re-packs OUT/f.tgz after each
# step.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-radix-items.sh OUT
# Ran once, at f2fb64e (radix-items-run); PARBENCH_RADIX_ITEMS is gone since
# (18 won and is the only shape).
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/SortVariants.*CUDA_Radix*'
PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/gtests-16.log" 2>&1
echo "tests (16) exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-16.log"
PARBENCH_RADIX_ITEMS=18 PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
  > "$F/gtests-18.log" 2>&1
echo "tests (18) exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-18.log"; pack
PARBENCH_RADIX_ITEMS=18 PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck-18.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck-18.log" | tail -1
PARBENCH_RADIX_ITEMS=18 PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter='Registry/SortVariants.TileEdges/CUDA_Radix*' \
  > "$F/racecheck-18.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck-18.log" | tail -1; pack
for items in 16 18; do
  env $([[ $items == 18 ]] && echo PARBENCH_RADIX_ITEMS=18) RATIO_TO=CUB.Offset64 TABLE_FILTER=Sort OUT=$F \
    timeout 120 ci/gpu.sh --no-tests --name sort-radix-$items -- \
    --sort-elements=2^24,2^26 --sort-key=u32 --sort-payload=keys,pairs --sort-order=asc --sort-dist=uniform \
    '--benchmark_filter=^Sort/(CUDA.Radix|CUB.Offset64)/' \
    --benchmark_min_time=0.2 --benchmark_repetitions=5 --hide-unsupported > "$F/sort-sh-$items.log" 2>&1
  echo "bench ($items) exit $?"
  grep -E "^Sort.*" "$F/sort-sh-$items.log" | grep -v "length:1024/" | awk '{print $1, $2, $3, $NF}'
  pack
done
for items in 16 18; do
  env $([[ $items == 18 ]] && echo PARBENCH_RADIX_ITEMS=18) timeout 60 ncu -k 'regex:histogram|scatter' \
    --launch-skip 5 --launch-count 5 --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    build/gpu/bench --sort-elements=2^26 --sort-key=u32 --sort-order=asc --sort-dist=uniform \
    --sort-payload=keys '--benchmark_filter=^Sort/CUDA.Radix/' --benchmark_min_time=0.01 --no-progress \
    > "$F/ncu-$items.txt" 2>&1
  echo "ncu ($items) exit $?"
  grep -E "histogram_kernel|scatter_kernel|gpu__time|inst_executed" "$F/ncu-$items.txt" | awk '{print $1, $NF}' | cut -c1-80
done
pack
