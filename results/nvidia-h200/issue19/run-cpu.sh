#!/usr/bin/env bash
# Issue 19, the CPU item on the GPU machine's 16 cores: OMP.Blocked against
# OpenBLAS (and the simple OMP where its cap lets it run) at 16 threads, f64
# and f32, 2048^3 and 4096^3, all three ops. Also two MLP checks of issue 18
# on the same host: OMP.Blocked as the MLP's CPU backend, and the OpenBLAS
# backend with OMP_WAIT_POLICY=passive (is the slow OpenBLAS step the two
# thread pools spinning against each other?).
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-cpu.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-cpu.sh OUT}
mkdir -p "$OUT"
RATIO_TO=OpenBLAS TABLE_FILTER=GEMM OUT=$OUT ci/gpu.sh --no-tests --name gemm-cpu -- --gemm-shapes=2048,4096 \
  '--benchmark_filter=^GEMM/(OMP|OMP.Blocked|OpenBLAS)/' --threads=16 --precision=f64,f32 \
  --benchmark_min_time=0.2 --benchmark_repetitions=3 > "$OUT/gpu-sh.log" 2>&1
echo "gpu.sh (build, GEMM CPU) exit $?"
for policy in active passive; do
  OMP_WAIT_POLICY=$policy build/gpu/bench '--benchmark_filter=^MLP/(OpenBLAS|OMP.Blocked|OMP)/' --threads=16 \
    --mlp-widths=784-1024-1024-10 --mlp-batch=64,1024 --mlp-act=relu --mlp-type=f32 --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --no-progress --benchmark_out="$OUT/mlp-cpu-$policy.json" \
    --benchmark_out_format=json > "$OUT/mlp-cpu-$policy.txt" 2>&1
  echo "MLP CPU backends, OMP_WAIT_POLICY=$policy, exit $?"
done
PARBENCH_REQUIRE_GPU=1 timeout 200 build/gpu/tests/parbench_tests --gtest_filter='Registry/KMeansVariants.*NCCL*' \
  > "$OUT/nccl-gtests.log" 2>&1
echo "k-means NCCL tests exit $?"
