#!/usr/bin/env bash
# Ran once, at 78f1b34 (w16-run), where CUDA.DMMA.W16 was a preview entry;
# since ee98581 the 16 warps are CUDA.DMMA's own shape and W16 is gone, so
# at later revisions this script's W16 filters match nothing.
# Issue 20: CUDA.DMMA.W16 (preview: the k-means distance kernel in 16 warps
# of 16 x 32, BM = 128 points and 64-centroid tiles as CUDA.DMMA's 8 warps of
# 32 x 32) beside CUDA.DMMA, one call: build, their registry tests, memcheck
# and racecheck (the ties test), and 100,000 x 100 x 316 (10 fixed
# iterations, medians of 5). Packs OUT/w.tgz after each step.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h100/issue20/run-w16.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-w16.sh OUT}
F=$OUT/w
mkdir -p "$F"
export PARBENCH_PREVIEW=1
pack() { tar czf "$OUT/w.tgz" -C "$OUT" w; }
OUT=$F ci/gpu.sh --no-tests > "$F/gpu-build.log" 2>&1
echo "build exit $?"; pack
PARBENCH_REQUIRE_GPU=1 timeout 60 build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*DMMA*' \
  > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
PARBENCH_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*DMMA_W16' > "$F/memcheck.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$F/memcheck.log" | tail -2; pack
PARBENCH_REQUIRE_GPU=1 timeout 40 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA_W16' \
  > "$F/racecheck.log" 2>&1
echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$F/racecheck.log" | tail -2; pack
OUT=$F timeout 60 ci/gpu.sh --no-tests --name kmeans-w16 -- \
  --kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10 \
  '--benchmark_filter=^KMeans/CUDA\.DMMA(\.W16)?/' --benchmark_repetitions=5 --hide-unsupported \
  > "$F/kmeans-sh.log" 2>&1
echo "bench exit $?"; grep -E "^KMeans" "$F/kmeans-sh.log" | awk '{print $1, $2, $3}'
pack
