#!/usr/bin/env bash
# Issue 20, item 4 on the GPU machine, one call: the k-means peers
# (scikit-learn's Lloyd on the 16 host cores, PyTorch's GEMM-form iteration
# on the GPU) from bench's own inputs (kmeans-inputs), and bench's BLAS (16
# threads), AllGPU and GEMM variants on the same two problems, 10 iterations.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue20/run-peers.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-peers.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests --name kmeans -- --kmeans-shapes=4000000x16x16,100000x100x316 --kmeans-loops=10 \
  '--benchmark_filter=^KMeans/(BLAS|CUDA.AllGPU|CUDA.GEMM)/' --threads=16 --block=128 \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 > "$OUT/gpu-sh.log" 2>&1
echo "gpu.sh (build, k-means) exit $?"
for shape in 4000000x16x16 100000x100x316; do
  build/gpu/kmeans-inputs --shape=$shape --out="$OUT/in-$shape" || echo "kmeans-inputs $shape failed"
  python3 peers/kmeans_peers.py "$OUT/in-$shape" --iterations=10 --repetitions=3 \
    --out="$OUT/peers-$shape.json" > "$OUT/peers-$shape.txt" 2>&1
  echo "peers $shape exit $?"
  rm -rf "$OUT/in-$shape"
done
