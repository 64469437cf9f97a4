#!/usr/bin/env bash
# Issue 20, CUDA.DMMA's persistent form (one block an SM walking point
# blocks, the next block's points copied during this one's argmin and sums)
# against the one-block-a-launch form (one call, under 8 minutes): build;
# CUDA.DMMA's k-means registry tests under both (PARBENCH_DMMA_PERSIST, a
# switch that lives only for this comparison); memcheck and racecheck on the
# persistent form; 100,000 x 100 x 316 (10 iterations, 5 repetitions) under
# each, each its own process; ncu: every kernel's duration in one iteration
# under each. Re-packs OUT/f.tgz after each step.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-dmma-persist.sh OUT
# Ran once, at 1f2fe81 (dmma-persist-run); the persistent form and its switch
# are gone since (slower), so it no longer compares anything.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/gtests-launch.log" 2>&1
echo "tests (launch) exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-launch.log"
PARBENCH_DMMA_PERSIST=1 PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
  > "$F/gtests-persist.log" 2>&1
echo "tests (persist) exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-persist.log"; pack
PARBENCH_DMMA_PERSIST=1 PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck-persist.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck-persist.log" | tail -1
PARBENCH_DMMA_PERSIST=1 PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
  > "$F/racecheck-persist.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck-persist.log" | tail -1; pack
for form in launch persist; do
  env $([[ $form == persist ]] && echo PARBENCH_DMMA_PERSIST=1) OUT=$F timeout 100 ci/gpu.sh --no-tests \
    --name kmeans-$form -- --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
    '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_repetitions=5 --hide-unsupported \
    > "$F/kmeans-sh-$form.log" 2>&1
  echo "bench ($form) exit $?"; grep -E "^KMeans.*_median" "$F/kmeans-sh-$form.log" | awk '{print $1, $2, $3}'
  pack
done
for form in launch persist; do
  env $([[ $form == persist ]] && echo PARBENCH_DMMA_PERSIST=1) timeout 60 ncu --launch-skip 60 --launch-count 30 \
    --metrics gpu__time_duration.sum build/gpu/bench --kmeans-shapes=100000x100x316 --kmeans-dist=uniform \
    --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_min_time=0.01 --no-progress \
    > "$F/ncu-$form.txt" 2>&1
  echo "ncu ($form) exit $?"
  grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" "$F/ncu-$form.txt" | sed -E 's/\(.*//' | awk '{print $1, $2, $NF}' | paste - - | head -30
done
pack
