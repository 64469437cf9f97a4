#!/usr/bin/env bash
# Issue 20, CUDA.Radix's ranking by shared-memory masks against its ballots,
# and the lane-copy histogram (one call, under 8 minutes): build; CUDA.Radix's
# registry tests under both rankings (PARBENCH_RADIX_OR, a switch that lives
# only for this comparison); memcheck and racecheck on the masks; keys and
# pairs at 2^24 and 2^26 against CUB.Offset64 under each ranking (each its
# own process, CUB.Offset64 timed in both); ncu of one 2^26 keys sort (the
# histogram and 4 scatter passes) under each. Re-packs OUT/f.tgz after each
# step.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-radix-or.sh OUT
# Ran once, at d3d41d3 (radix-or-run); PARBENCH_RADIX_OR is gone since (the
# masks won and are the only ranking), so it no longer compares anything.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/SortVariants.*CUDA_Radix*'
PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/gtests-ballot.log" 2>&1
echo "tests (ballots) exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-ballot.log"
PARBENCH_RADIX_OR=1 PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
  > "$F/gtests-or.log" 2>&1
echo "tests (masks) exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-or.log"; pack
PARBENCH_RADIX_OR=1 PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck-or.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck-or.log" | tail -1
PARBENCH_RADIX_OR=1 PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter='Registry/SortVariants.TileEdges/CUDA_Radix*' \
  > "$F/racecheck-or.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck-or.log" | tail -1; pack
for rank in ballot or; do
  env $([[ $rank == or ]] && echo PARBENCH_RADIX_OR=1) RATIO_TO=CUB.Offset64 TABLE_FILTER=Sort OUT=$F \
    timeout 120 ci/gpu.sh --no-tests --name sort-radix-$rank -- \
    --sort-elements=2^24,2^26 --sort-key=u32 --sort-payload=keys,pairs --sort-order=asc --sort-dist=uniform \
    '--benchmark_filter=^Sort/(CUDA.Radix|CUB.Offset64)/' \
    --benchmark_min_time=0.2 --benchmark_repetitions=3 --hide-unsupported > "$F/sort-sh-$rank.log" 2>&1
  echo "bench ($rank) exit $?"
  grep -E "^Sort.*" "$F/sort-sh-$rank.log" | grep -v "length:1024/" | awk '{print $1, $2, $3, $NF}'
  pack
done
for rank in ballot or; do
  env $([[ $rank == or ]] && echo PARBENCH_RADIX_OR=1) timeout 60 ncu -k 'regex:histogram|scatter' \
    --launch-skip 5 --launch-count 5 --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    build/gpu/bench --sort-elements=2^26 --sort-key=u32 --sort-order=asc --sort-dist=uniform \
    --sort-payload=keys '--benchmark_filter=^Sort/CUDA.Radix/' --benchmark_min_time=0.01 --no-progress \
    > "$F/ncu-$rank.txt" 2>&1
  echo "ncu ($rank) exit $?"
  grep -E "histogram_kernel|scatter_kernel|gpu__time|inst_executed" "$F/ncu-$rank.txt" | awk '{print $1, $NF}' | cut -c1-80
done
pack
