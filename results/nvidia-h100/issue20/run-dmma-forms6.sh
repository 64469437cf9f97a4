#!/usr/bin/env bash
# Ran once, at fdc910c (forms6-run); the switches it sets are gone since 9e2bf71 (the
# final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, sixth round (one call):
# programmatic dependent launch of the assignment kernel and update_step
# (PARBENCH_KMEANS_PDL=0 turns it off) with the sums in 2 copies (the
# default now) and 1; the old update with form 0 (the kernel before this
# session) as the baseline (the PARBENCH_DMMA_*, PARBENCH_KMEANS_PDL and
# PARBENCH_KMEANS_OLD_UPDATE switches live only for these comparisons). Build; every CUDA k-means registry test (the
# update is every device-update variant's) and DMMA's under each form;
# memcheck and racecheck; the shape under each configuration, 3 repetitions,
# each its own process; ncu: every kernel of an iteration at the card's own
# clocks, and the stall reasons of the assignment kernel, old form and new.
# PART=a runs the build, tests and benchmarks only, PART=b (with
# SKIP_BUILD=1 on the warm machine) the ncu steps only.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] [PART=a|b] results/nvidia-h100/issue20/run-dmma-forms6.sh OUT
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
PARBENCH_KMEANS_PDL=0 PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-nopdl.log" 2>&1
echo "tests without PDL exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-nopdl.log"
PARBENCH_KMEANS_OLD_UPDATE=1 PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
  > "$F/gtests-oldupdate.log" 2>&1
echo "tests old update exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-oldupdate.log"; pack
PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter="$t:Registry/KMeansVariants.*GEMM*" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
PARBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
  > "$F/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck.log" | tail -1; pack
for cfg in old:0:1:0 upd:61:2:0 upd:61:2:1 upd:61:1:1; do
  IFS=: read -r u form reps pdl <<< "$cfg"
  name=kmeans-$u-form$form-reps$reps-pdl$pdl
  env PARBENCH_DMMA_FORM=$form PARBENCH_DMMA_REPS=$reps PARBENCH_KMEANS_PDL=$pdl \
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
for pdl in 0 1; do
  PARBENCH_KMEANS_PDL=$pdl timeout 60 ncu --clock-control none --launch-skip 20 --launch-count 12 \
    --metrics gpu__time_duration.sum build/gpu/bench "${args[@]}" > "$F/ncu-times-pdl$pdl.txt" 2>&1
  echo "ncu times (PDL $pdl) exit $?"
  python3 results/ncu-durations.py "$F/ncu-times-pdl$pdl.txt" 2>&1 | grep -v spin
done
pack
