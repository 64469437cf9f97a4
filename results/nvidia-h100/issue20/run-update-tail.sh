#!/usr/bin/env bash
# Ran once, at ff795dd (tail-run); its temporary switch is gone since d970ab8,
# so it no longer compares anything.
# Issue 20: the device update's tail in fixed runs (one call). update_step
# ends, in a fixed run, with one thread counting the iteration (no largest
# move, no atomicMax, fence or ticket a block); PARBENCH_KMEANS_FULL_TAIL=1
# (temporary) keeps the old tail. Build; every CUDA k-means registry test
# both ways; 100,000 x 100 x 316 with CUDA.DMMA and CUDA.GEMM, and
# 4,000,000 x 16 x 16 with CUDA.OneRead, alternating, 5 repetitions, each
# its own process; memcheck of DMMA's tests.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] bash results/nvidia-h100/issue20/run-update-tail.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
for tail in lean full; do
  env=(); [[ $tail == full ]] && env=(PARBENCH_KMEANS_FULL_TAIL=1)
  env "${env[@]}" PARBENCH_REQUIRE_GPU=1 timeout 100 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-$tail.log" 2>&1
  echo "tests ($tail) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-$tail.log" | head
done
pack
bench() {  # name tail args...
  local name=$1 tail=$2; shift 2
  [[ -e $F/$name.json ]] && name=$name-b
  local env=(); [[ $tail == full ]] && env=(PARBENCH_KMEANS_FULL_TAIL=1)
  env "${env[@]}" OUT=$F timeout 60 ci/gpu.sh --no-tests --name $name -- --kmeans-loops=10 \
    --benchmark_repetitions=5 --hide-unsupported "$@" > "$F/sh-$name.log" 2>&1
  echo "bench $name exit $?"; grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  rm -f "$F/sh-$name.log"; pack
}
for tail in ${CFGS:-lean full lean full lean full}; do
  bench kmeans-wide-$tail $tail --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs \
    '--benchmark_filter=^KMeans/CUDA\.(DMMA|GEMM)/'
done
for tail in lean full; do
  bench kmeans-long-$tail $tail --kmeans-shapes=4000000x16x16 --kmeans-dist=uniform,blobs \
    '--benchmark_filter=^KMeans/CUDA\.OneRead/'
done
PARBENCH_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*DMMA*' > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1; pack
