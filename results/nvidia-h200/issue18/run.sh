#!/usr/bin/env bash
# Issue 18 on the GPU machine, one call: the MLP family's GPU backends (every
# CUDA GEMM variant, and the fused cuBLAS step in a CUDA Graph) and the CPU
# ones at 16 threads, float, 784-1024-1024-10, ReLU, batch 64 and 1024; the
# same step in PyTorch as the peer (peers/mlp_torch.py); the MLP and GEMM
# registry tests with the GPU required.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue18/run.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run.sh OUT}
mkdir -p "$OUT"
RATIO_TO=cuBLAS.Graph TABLE_FILTER=MLP OUT=$OUT ci/gpu.sh --no-tests --name mlp -- --mlp-widths=784-1024-1024-10 \
  --mlp-batch=64,1024 --mlp-act=relu --mlp-type=f32 '--benchmark_filter=^MLP/' --threads=16 \
  --benchmark_min_time=0.1 --benchmark_repetitions=5 > "$OUT/gpu-sh.log" 2>&1
echo "gpu.sh (build, MLP) exit $?"
python3 peers/mlp_torch.py --widths=784-1024-1024-10 --batch=64,1024 --type=f32 --act=relu --mode=eager,graph \
  --out="$OUT/mlp-torch.json" > "$OUT/mlp-torch.txt" 2>&1
echo "PyTorch peer exit $?"
PARBENCH_REQUIRE_GPU=1 timeout 300 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/MlpVariants.*:Mlp*:Registry/GemmVariants.*' > "$OUT/gtests.log" 2>&1
echo "MLP and GEMM tests exit $?"
