#!/usr/bin/env bash
# Ran once, at 645ddb1 (forms8-run); the PARBENCH_DMMA_FLAGS switch it sets is gone since
# c97e1ab (the final form is CUDA.DMMA's only one), so it no longer compares anything.
# Issue 20, CUDA.DMMA at 100,000 x 100 x 316, eighth round (one call). The
# temporary switch PARBENCH_DMMA_FLAGS (a bit each; 0 is the kernel of 87d7977):
#   2  a last k step of m16n8k4 when D % 8 is 1 to 4, its fragments read after
#      the k8 steps (forms7-run read them before, holding 6 more registers);
#   8  no block barrier at a tile's end: each warp arrives on the buffer's
#      "empty" mbarrier and warp 0 waits on it before copying tile t + 2 there;
#   16 (with 2, D % 8 == 4) rows unpadded, stride D, so a block's points are
#      one bulk copy and a tile another (not a copy a row).
# Build; every CUDA k-means registry test with 26 and 31; the shape under
# each configuration, 5 repetitions, each its own process; memcheck of DMMA's
# tests with 26; ncu source-level stall samples of the assignment kernel
# with 0 and 26.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-dmma-forms8.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
t='Registry/KMeansVariants.*DMMA*'
for fl in 26 31; do
  PARBENCH_DMMA_FLAGS=$fl PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests-flags$fl.log" 2>&1
  echo "tests (flags $fl) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-flags$fl.log" | head
done
pack
for fl in ${CFGS:-0 2 8 18 26 0 26}; do
  name=kmeans-flags$fl
  [[ -e $F/$name.json ]] && name=$name-b
  PARBENCH_DMMA_FLAGS=$fl OUT=$F timeout 60 ci/gpu.sh --no-tests --name $name -- \
    --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
    '--benchmark_filter=^KMeans/CUDA\.DMMA/' --benchmark_repetitions=5 --hide-unsupported \
    > "$F/sh-$name.log" 2>&1
  echo "bench (flags $fl) exit $?"
  grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  pack
done
PARBENCH_DMMA_FLAGS=26 PARBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
  --print-limit 20 build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$F/memcheck.log" | tail -1
pack
args=(--kmeans-shapes=100000x100x316 --kmeans-dist=uniform --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/'
  --benchmark_min_time=0.01 --no-progress)
for fl in 0 26; do
  PARBENCH_DMMA_FLAGS=$fl timeout 100 ncu -k regex:dmma_assign --launch-skip 5 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight -o "$F/src$fl" \
    build/gpu/bench "${args[@]}" > "$F/ncu-src$fl.log" 2>&1
  echo "ncu source (flags $fl) exit $?"
  grep -E "Duration|Compute \(SM\)|Warp Cycles Per Issued" "$F/ncu-src$fl.log"
  timeout 60 ncu --import "$F/src$fl.ncu-rep" --page source --csv --print-source sass > "$F/ncu-src$fl-sass.csv" 2>&1
  echo "ncu source page exit $?"; rm -f "$F/src$fl.ncu-rep"; gzip -f "$F/ncu-src$fl-sass.csv"
  pack
done
