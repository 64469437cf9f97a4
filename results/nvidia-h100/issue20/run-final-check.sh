#!/usr/bin/env bash
# Issue 20, after the review mends (one call, under 5 minutes): build; every
# CUDA k-means registry test (two new shapes: CUDA.DMMA's tile buffers six
# deep, D even and odd); the GEMM family's CUDA.WGMMA tests (its mbarrier
# helpers moved to core/cuda/mbarrier.cuh); 100,000 x 100 x 316 with
# CUDA.DMMA, 5 repetitions. Re-packs OUT/f.tgz after each step.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h100/issue20/run-final-check.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*CUDA*:*WGMMA*' > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
OUT=$F timeout 60 ci/gpu.sh --no-tests --name kmeans-wide -- --kmeans-shapes=100000x100x316 \
  --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/' \
  --benchmark_repetitions=5 --hide-unsupported > "$F/sh-kmeans-wide.log" 2>&1
echo "bench exit $?"; grep -E "_median" "$F/kmeans-wide.txt" | awk '{print $1, $2, $3}'; pack
