#!/usr/bin/env bash
# Ran once, at d970ab8 (check-run4); its temporary switch is gone since fec5330,
# so it no longer compares anything.
# Issue 20, the final call of the fourth session of 2026-11-25: build; every
# CUDA k-means registry test and the GEMM family's CUDA.DMMA f64 and WGMMA
# tests, and the k-means ones again with PARBENCH_COUNTS_ONE=1 (temporary:
# one copy of the counts, as before); 100,000 x 100 x 316 with CUDA.DMMA and
# CUDA.GEMM (cuBLAS, the card's yardstick), 5 repetitions a process,
# alternating two copies of the counts (the default) and one, three
# processes each; memcheck, synccheck and racecheck of CUDA.DMMA's tests.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] bash results/nvidia-h100/issue20/run-final-check4.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*CUDA*:Registry/GemmVariants.*CUDA_DMMA_*f64*:*WGMMA*' > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head
PARBENCH_COUNTS_ONE=1 PARBENCH_REQUIRE_GPU=1 timeout 100 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-counts1.log" 2>&1
echo "tests (one copy of the counts) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-counts1.log" | head
pack
i=0
for counts in ${CFGS:-2 1 2 1 2 1}; do
  i=$((i + 1)); name=kmeans-counts$counts-$i
  env=(); [[ $counts == 1 ]] && env=(PARBENCH_COUNTS_ONE=1)
  env "${env[@]}" OUT=$F timeout 60 ci/gpu.sh --no-tests --name $name -- --kmeans-shapes=100000x100x316 \
    --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.(DMMA|GEMM)/' \
    --benchmark_repetitions=5 --hide-unsupported > "$F/sh-$name.log" 2>&1
  echo "bench $name exit $?"; grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  rm -f "$F/sh-$name.log"; pack
done
t='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*'
for tool in memcheck synccheck racecheck; do
  PARBENCH_REQUIRE_GPU=1 timeout 80 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/$tool.log" 2>&1
  echo "$tool exit $?"; grep -E "SUMMARY" "$F/$tool.log" | tail -1; pack
done
