#!/usr/bin/env bash
# Issue 20, every speed target at the last revision, on one card (fifth
# session). PART=a (a fresh machine): build; the CUDA k-means registry tests;
# 100,000 x 100 x 316 with CUDA.DMMA, CUDA.DMMA.Full and CUDA.GEMM and
# 4,000,000 x 16 x 16 with CUDA.OneRead (block 256) and CUDA.AllGPU (block
# 128), 5 repetitions; bench's BLAS variant at 16 threads on both shapes and
# the peers (scikit-learn's Lloyd, PyTorch's GEMM form) on bench's inputs, 3
# repetitions. PART=b (warm): the sorting targets (run-sort-final.sh's
# benchmarks, its build and tests skipped).
#   PARBENCH_GIT_REVISION=<rev> PART=a|b bash results/nvidia-h100/issue20/run-targets.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
if [[ ${PART:-a} == b ]]; then
  SKIP_BUILD=1 bash results/nvidia-h100/issue20/run-sort-final.sh "$OUT" 2>&1 | grep -v "^tests exit"
  exit 0
fi
build_unless_skipped
PARBENCH_REQUIRE_GPU=1 timeout 200 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
OUT=$F timeout 120 ci/gpu.sh --no-tests --name kmeans-wide -- --kmeans-shapes=100000x100x316 \
  --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.(DMMA|DMMA\.Full|GEMM)/' \
  --benchmark_repetitions=5 --hide-unsupported > "$F/sh-kmeans-wide.log" 2>&1
echo "bench kmeans-wide exit $?"; grep -E "_median" "$F/kmeans-wide.txt" | awk '{print $1, $2, $3}'; pack
OUT=$F timeout 120 ci/gpu.sh --no-tests --name kmeans-tall -- --kmeans-shapes=4000000x16x16 \
  --kmeans-dist=uniform,blobs --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.(OneRead/.*block:256|AllGPU/.*block:128)/' \
  --block=128,256 --benchmark_repetitions=5 --hide-unsupported > "$F/sh-kmeans-tall.log" 2>&1
echo "bench kmeans-tall exit $?"; grep -E "_median" "$F/kmeans-tall.txt" | awk '{print $1, $2, $3}'; pack
OUT=$F timeout 150 ci/gpu.sh --no-tests --name kmeans-cpu -- --kmeans-shapes=4000000x16x16,100000x100x316 \
  --kmeans-loops=10 '--benchmark_filter=^KMeans/BLAS/' --threads=16 --benchmark_min_time=0.1 \
  --benchmark_repetitions=3 > "$F/sh-kmeans-cpu.log" 2>&1
echo "bench kmeans-cpu exit $?"; grep -E "_median" "$F/kmeans-cpu.txt" | awk '{print $1, $2, $3}'; pack
for shape in 4000000x16x16 100000x100x316; do
  build/gpu/kmeans-inputs --shape=$shape --out="/tmp/in-$shape" || echo "kmeans-inputs $shape failed"
  timeout 150 python3 peers/kmeans_peers.py "/tmp/in-$shape" --iterations=10 --repetitions=3 \
    --out="$F/peers-$shape.json" > "$F/peers-$shape.txt" 2>&1
  echo "peers $shape exit $?"; tail -4 "$F/peers-$shape.txt"
  rm -rf "/tmp/in-$shape"; pack
done
