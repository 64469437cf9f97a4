#!/usr/bin/env bash
# Issue 19 on the GPU machine: what limits CUDA.Pipelined (ncu on its AB and
# AtB kernels at 4096^3, beside cuBLAS SGEMM's), and the tensor-core kernels
# under compute-sanitizer racecheck.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue19/run-ncu.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-ncu.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/build.log" 2>&1
echo "build exit $?"
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
  --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats
  --section InstructionStats)
for op in ${OPS:-AB AtB ABtC}; do
  for v in CUDA.Pipelined cuBLAS; do
    kernel=regex:pipelined_kernel
    [[ $v == cuBLAS ]] && kernel=regex:gemm
    timeout 120 ncu -k "$kernel" --launch-skip 2 --launch-count 1 "${sections[@]}" build/gpu/bench --gemm-shapes=4096 \
      --gemm-op=$op --precision=f32 "--benchmark_filter=^GEMM/$v/" --benchmark_min_time=0.01 --no-progress \
      > "$OUT/ncu-$v-$op.txt" 2>&1
    echo "ncu $v $op exit $?"
  done
done
# Racecheck is slow (about 30-70 s a test): one process per kernel family.
for part in ${RACE:-DMMA WGMMA}; do
  filter='Registry/GemmVariants.*DMMA*f64*'
  [[ $part == WGMMA ]] && filter='Registry/GemmVariants.*WGMMA*'
  PARBENCH_REQUIRE_GPU=1 timeout 290 compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
    build/gpu/tests/parbench_tests --gtest_filter="$filter" > "$OUT/racecheck-$part.log" 2>&1
  echo "racecheck $part exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck-$part.log" | tail -3
done
