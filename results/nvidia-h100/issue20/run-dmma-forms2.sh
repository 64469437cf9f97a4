#!/usr/bin/env bash
# Ran once, at bf7efbb (forms2-run); the switches it sets are gone since 9e2bf71 (the
# final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, second round (two calls):
# the assignment kernel's forms TAIL | REGS (5, the best of
# run-dmma-forms.sh), + COPY (13), + EPI (29, the default), and the old
# update with form 0 (the kernel before this session) as the baseline
# (PARBENCH_DMMA_FORM and PARBENCH_KMEANS_OLD_UPDATE are switches that live
# only for these comparisons). Build; every CUDA k-means registry test (the
# update is every device-update variant's) and DMMA's under each form;
# memcheck and racecheck; the shape under each configuration, 3 repetitions,
# each its own process; ncu: every kernel of an iteration at the card's own
# clocks, and the stall reasons of the assignment kernel, old form and new.
# PART=a runs the build, tests and benchmarks only, PART=b (with
# SKIP_BUILD=1 on the warm machine) the ncu steps only.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] [PART=a|b] results/nvidia-h100/issue20/run-dmma-forms2.sh OUT
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
for form in 0 5 13; do
  PARBENCH_DMMA_FORM=$form PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
    > "$F/gtests-form$form.log" 2>&1
  echo "tests form $form exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-form$form.log"
done
PARBENCH_KMEANS_OLD_UPDATE=1 PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter="$t" \
  > "$F/gtests-oldupdate.log" 2>&1
echo "tests old update exit $?"; grep -E "^\[  (PASSED|FAILED) " "$F/gtests-oldupdate.log"; pack
PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter="$t:Registry/KMeansVariants.*GEMM*" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*' \
  > "$F/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" "$F/racecheck.log" | tail -1; pack
for cfg in old:0 upd:5 upd:13 upd:29; do
  u=${cfg%%:*} form=${cfg##*:}
  env PARBENCH_DMMA_FORM=$form $([[ $u == old ]] && echo PARBENCH_KMEANS_OLD_UPDATE=1) OUT=$F timeout 60 \
    ci/gpu.sh --no-tests --name kmeans-$u-form$form -- --kmeans-shapes=100000x100x316 \
    --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/' \
    --benchmark_repetitions=5 --hide-unsupported > "$F/kmeans-sh-$u-form$form.log" 2>&1
  echo "bench ($u form $form) exit $?"
  grep -E "^KMeans.*_median" "$F/kmeans-sh-$u-form$form.log" | awk '{print $1, $2, $3}'
  pack
done
fi
args=(--kmeans-shapes=100000x100x316 --kmeans-dist=uniform --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/'
  --benchmark_min_time=0.01 --no-progress)
[[ $PART == *b* ]] || exit 0
for cfg in old:0 upd:29; do
  u=${cfg%%:*} form=${cfg##*:}
  env PARBENCH_DMMA_FORM=$form $([[ $u == old ]] && echo PARBENCH_KMEANS_OLD_UPDATE=1) timeout 60 ncu \
    --clock-control none --launch-skip 20 --launch-count 12 --metrics gpu__time_duration.sum build/gpu/bench \
    "${args[@]}" > "$F/ncu-times-$u-form$form.txt" 2>&1
  echo "ncu times ($u form $form) exit $?"
  python3 results/ncu-durations.py "$F/ncu-times-$u-form$form.txt" 2>&1 | tail -8
done
pack
for form in 5 13 29; do
  PARBENCH_DMMA_FORM=$form timeout 60 ncu -k regex:dmma_assign --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy \
    --metrics 'smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    build/gpu/bench "${args[@]}" > "$F/ncu-stalls-form$form.txt" 2>&1
  echo "ncu stalls (form $form) exit $?"
  grep -E "Duration|SM Busy|Compute \(SM\)|Warp Cycles Per Issued|inst_executed.sum|wavefronts" "$F/ncu-stalls-form$form.txt"
  grep -E "issue_stalled" "$F/ncu-stalls-form$form.txt" | awk '$NF+0 > 0.2 {print $1, $NF}'
  pack
done
PARBENCH_DMMA_FORM=29 timeout 100 ncu -k regex:dmma_assign --launch-skip 5 --launch-count 1 --section SourceCounters \
  --section WarpStateStats -o "$F/src29" build/gpu/bench "${args[@]}" > "$F/ncu-src29.log" 2>&1
echo "ncu source exit $?"
timeout 60 ncu --import "$F/src29.ncu-rep" --page source --csv --print-source sass > "$F/ncu-src29-sass.csv" 2>&1
echo "ncu source page exit $?"; rm -f "$F/src29.ncu-rep"; head -c 600 "$F/ncu-src29-sass.csv"; echo
pack
