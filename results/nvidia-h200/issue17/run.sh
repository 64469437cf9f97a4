#!/usr/bin/env bash
# Issue 17 on the GPU machine, one call on a warm machine (run 2 onwards):
#  - the SOR bandwidth variants against the device copy ceiling at grids of
#    134 MB to 4.6 GB a field, and the row-split variant on the GPUs visible;
#  - k-means across GPUs (CUDA.NCCL) against CUDA.AllGPU at the issue's
#    N = 4,000,000, D = 16, K = 16 (cfg:peer);
#  - the SOR and k-means registry tests with the GPU required (CUDA.Rows and
#    CUDA.NCCL with one GPU split into 1-4 parts), the SOR GPU tests under
#    compute-sanitizer memcheck, and an instance that runs out of GPU memory on
#    purpose (the test-only fault switch) while the run goes on.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue17/run.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run.sh OUT}
mkdir -p "$OUT"
RATIO_TO=CUDA.Split TABLE_FILTER=SOR OUT=$OUT ci/gpu.sh --no-tests --name sor -- --profile=default \
  --sor-grids=4098x4098,16386x16386,24002x24002 '--benchmark_filter=^SOR/CUDA[.](Split|SplitColumns|Rows)/|^Ceiling/CUDA[.]Copy' \
  --block=128,256 --benchmark_min_time=0.05 --benchmark_repetitions=3 > "$OUT/gpu-sh.log" 2>&1
echo "gpu.sh (build, SOR bandwidth) exit $?"
build/gpu/bench --profile=default '--benchmark_filter=^KMeans/CUDA[.](AllGPU|NCCL)/cfg:peer/' --block=128 \
  --benchmark_min_time=0.2 --benchmark_repetitions=5 --no-progress \
  --benchmark_out="$OUT/kmeans.json" --benchmark_out_format=json > "$OUT/kmeans.txt" 2>&1
echo "k-means bench exit $?"
PARBENCH_REQUIRE_GPU=1 timeout 200 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/SorVariants.*:Registry/KMeansVariants.*:KMeans*' > "$OUT/gtests.log" 2>&1
echo "SOR and k-means tests exit $?"
PARBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  build/gpu/tests/parbench_tests --gtest_filter='Registry/SorVariants.*CUDA*' > "$OUT/sor-memcheck.log" 2>&1
echo "SOR memcheck exit $?"
PARBENCH_TEST_FAULT='gpu-oom:^SOR/CUDA[.]Rows/' timeout 60 build/gpu/bench --sor-grids=1000x1500 \
  '--benchmark_filter=^SOR/CUDA[.](SplitColumns|Rows)/' --block=128 --benchmark_min_time=0.01 --no-progress \
  --benchmark_out="$OUT/sor-oom.json" --benchmark_out_format=json > "$OUT/sor-oom.txt" 2>&1
echo "out-of-memory run exit $? (1: an entry is not passed, as wanted)"
