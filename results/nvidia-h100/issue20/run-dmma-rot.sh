#!/usr/bin/env bash
# Ran once, at 748a935 (rot-run); its temporary switch is gone since fec5330,
# so it no longer compares anything.
# Issue 20, CUDA.DMMA's fused sums with each point's atomics starting at a
# rotated column (PARBENCH_DMMA_ROT=1, temporary) against the plain order,
# at 100,000 x 100 x 316: build; DMMA's k-means tests with the rotation;
# 5 repetitions a process, alternating, two processes each. Short (the
# session's last device minutes).
#   PARBENCH_GIT_REVISION=<rev> bash results/nvidia-h100/issue20/run-dmma-rot.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
PARBENCH_DMMA_ROT=1 PARBENCH_REQUIRE_GPU=1 timeout 40 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*DMMA*' > "$F/gtests-rot.log" 2>&1
echo "tests (rot) exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests-rot.log" | head; pack
i=0
for rot in ${CFGS:-1 0 1 0}; do
  i=$((i + 1)); name=kmeans-rot$rot-$i
  env=(); [[ $rot == 1 ]] && env=(PARBENCH_DMMA_ROT=1)
  env "${env[@]}" OUT=$F timeout 30 ci/gpu.sh --no-tests --name $name -- --kmeans-shapes=100000x100x316 \
    --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/' \
    --benchmark_repetitions=5 --hide-unsupported > "$F/sh-$name.log" 2>&1
  echo "bench $name exit $?"; grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'
  rm -f "$F/sh-$name.log"; pack
done
