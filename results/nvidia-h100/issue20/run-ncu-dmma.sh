#!/usr/bin/env bash
# Issue 20, what limits CUDA.DMMA's assignment kernel at 100,000 x 100 x 316
# (one call): build; ncu's speed-of-light, warp-state, compute and memory
# sections on one launch of the fused kernel; then that kernel's duration
# with the sums left to the separate passes (PARBENCH_DMMA_UNFUSED, a switch
# that lives only for this profile), so the difference is the fused
# atomics' cost.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-ncu-dmma.sh OUT
# Ran once, at d6641a0 (ncu-dmma-run); the switch is gone since, so its
# unfused step now times the fused kernel again.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
args=(--kmeans-shapes=100000x100x316 --kmeans-dist=uniform --kmeans-loops=10 '--benchmark_filter=^KMeans/CUDA\.DMMA/'
  --benchmark_min_time=0.01 --no-progress)
timeout 200 ncu -k regex:dmma_assign --launch-skip 5 --launch-count 1 --section SpeedOfLight \
  --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section LaunchStats --section Occupancy --metrics smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.sum \
  build/gpu/bench "${args[@]}" > "$F/ncu-dmma-fused.txt" 2>&1
echo "ncu fused exit $?"; pack
PARBENCH_DMMA_UNFUSED=1 timeout 60 ncu -k regex:dmma_assign --launch-skip 5 --launch-count 3 \
  --metrics gpu__time_duration.sum build/gpu/bench "${args[@]}" > "$F/ncu-dmma-unfused.txt" 2>&1
echo "ncu unfused exit $?"
timeout 60 ncu -k regex:dmma_assign --launch-skip 5 --launch-count 3 \
  --metrics gpu__time_duration.sum build/gpu/bench "${args[@]}" > "$F/ncu-dmma-fused-time.txt" 2>&1
echo "ncu fused time exit $?"
grep -E "gpu__time_duration" "$F"/ncu-dmma-unfused.txt "$F"/ncu-dmma-fused-time.txt
grep -E "Duration|Throughput|Pipe|Warp Cycles|Issued|Eligible|Active Warps|Theoretical Occ|Achieved Occ|Stall|shared|fp64|inst_executed|Bank" "$F/ncu-dmma-fused.txt" | head -60
pack
