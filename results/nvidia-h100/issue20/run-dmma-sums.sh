#!/usr/bin/env bash
# Ran once, at 14ede45 (sums-run); its temporary switch is gone since d970ab8,
# so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316: the fused sums (one call). The
# temporary switch PARBENCH_DMMA_SUMS = copies of the sums (1-4; 0 or unset:
# 2, the landed form) | 256 (the block's points of one cluster summed in
# registers first, one atomic a coordinate a cluster a block) | 512 (the
# named barriers' bar.arrive turned into bar.sync, same threads and counts:
# for racecheck only).
# Build; every CUDA k-means registry test with 2 and 258, the GEMM family's
# CUDA.DMMA f64 and WGMMA tests; the shape under each setting, 5 repetitions,
# each its own process; racecheck with 514 and 2, memcheck and synccheck
# with 258.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] bash results/nvidia-h100/issue20/run-dmma-sums.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*'
for fl in 258 2; do
  extra=; [[ $fl == 2 ]] && extra=':Registry/GemmVariants.*CUDA_DMMA_*f64*:*WGMMA*'
  PARBENCH_DMMA_SUMS=$fl PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
    --gtest_filter="Registry/KMeansVariants.*CUDA*$extra" > "$F/gtests-sums$fl.log" 2>&1
  echo "tests (sums $fl) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-sums$fl.log" | head
done
pack
for fl in ${CFGS:-2 258 1 257 4 260 2 258}; do
  name=kmeans-sums$fl
  [[ -e $F/$name.json ]] && name=$name-b
  PARBENCH_DMMA_SUMS=$fl OUT=$F timeout 60 ci/gpu.sh --no-tests --name $name -- \
    --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
    '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_repetitions=5 --hide-unsupported \
    > "$F/sh-$name.log" 2>&1
  echo "bench (sums $fl) exit $?"
  grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  rm -f "$F/sh-$name.log"
  pack
done
for run in racecheck:514 racecheck:2 memcheck:258 synccheck:258; do
  tool=${run%:*} fl=${run#*:}
  PARBENCH_DMMA_SUMS=$fl PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 \
    --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/$tool-sums$fl.log" 2>&1
  echo "$tool (sums $fl) exit $?"; grep -E "SUMMARY" "$F/$tool-sums$fl.log" | tail -1; pack
done
