#!/usr/bin/env bash
# Ran once, at 6a47c8f (forms5-run); the switches it sets are gone since 9e2bf71 (the
# final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, fifth round (two calls):
# two 8-warp blocks an SM with one tile buffer each (PARBENCH_DMMA_SHAPE=
# pair) against the 16-warp block, the sums in 1, 2 or 4 copies
# (PARBENCH_DMMA_REPS), update_step in 64-thread blocks; the old update
# with form 0 (the kernel before this session) as the baseline (the
# PARBENCH_DMMA_* and PARBENCH_KMEANS_OLD_UPDATE switches live only for
# these comparisons). Build; every CUDA k-means registry test (the
# update is every device-update variant's) and DMMA's under each form;
# memcheck and racecheck; the shape under each configuration, 3 repetitions,
# each its own process; ncu: every kernel of an iteration at the card's own
# clocks, and the stall reasons of the assignment kernel, old form and new.
# PART=a runs the build, tests and benchmarks only, PART=b (with
# SKIP_BUILD=1 on the warm machine) the ncu steps only.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] [PART=a|b] results/nvidia-h100/issue20/run-dmma-forms5.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
PART=${PART:-ab}
if [[ $PART == *a* ]]; then
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*CUDA*' \
  > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head
for reps in 1 4; do
  PARBENCH_DMMA_SHAPE=pair PARBENCH_DMMA_REPS=$reps PARBENCH_REQUIRE_GPU=1 timeout 60 \
    build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/gtests-pair-reps$reps.log" 2>&1
  echo "tests pair reps $reps exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-pair-reps$reps.log"
done
PARBENCH_KMEANS_OLD_UPDATE=1 PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
  > "$F/gtests-oldupdate.log" 2>&1
echo "tests old update exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-oldupdate.log"; pack
PARBENCH_DMMA_SHAPE=pair PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter="$t:Registry/KMeansVariants.*GEMM*" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
PARBENCH_DMMA_SHAPE=pair PARBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
  > "$F/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck.log" | tail -1; pack
for cfg in old:0:w16:1 upd:61:w16:1 upd:61:w16:2 upd:61:pair:1 upd:61:pair:2 upd:61:pair:4; do
  IFS=: read -r u form shape reps <<< "$cfg"
  name=kmeans-$u-form$form-$shape-reps$reps
  env PARBENCH_DMMA_FORM=$form PARBENCH_DMMA_SHAPE=$shape PARBENCH_DMMA_REPS=$reps \
    $([[ $u == old ]] && echo PARBENCH_KMEANS_OLD_UPDATE=1) OUT=$F timeout 60 ci/gpu.sh --no-tests --name $name -- \
    --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
    '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_repetitions=5 --hide-unsupported \
    > "$F/sh-$name.log" 2>&1
  echo "bench ($cfg) exit $?"
  grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  pack
done
fi
args=(--kmeans-shapes=100000x100x316 --kmeans-dist=uniform --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/'
  --benchmark_min_time=0.01 --no-progress)
[[ $PART == *b* ]] || exit 0
for dist in uniform blobs; do
  for cfg in w16:1 pair:2; do
    IFS=: read -r shape reps <<< "$cfg"
    PARBENCH_DMMA_SHAPE=$shape PARBENCH_DMMA_REPS=$reps timeout 60 ncu --clock-control none --launch-skip 20 \
      --launch-count 12 --metrics gpu__time_duration.sum build/gpu/bench --kmeans-shapes=100000x100x316 \
      --kmeans-dist=$dist --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_min_time=0.01 \
      --no-progress > "$F/ncu-times-$dist-$shape-reps$reps.txt" 2>&1
    echo "ncu times ($dist $cfg) exit $?"
    python3 results/ncu-durations.py "$F/ncu-times-$dist-$shape-reps$reps.txt" 2>&1 | grep -v spin
  done
done
pack
