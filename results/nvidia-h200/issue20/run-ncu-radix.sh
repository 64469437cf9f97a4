#!/usr/bin/env bash
# Issue 20 on the GPU machine, one call: what limits CUDA.Radix. Build; ncu
# on one whole sort of 2^24 u32 keys (histogram, scan, the four scatter
# passes: duration and speed of light each), then the scatter kernel and
# CUB's Onesweep kernel with the warp-state, scheduler, memory and
# occupancy sections, keys only and pairs.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue20/run-ncu-radix.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-ncu-radix.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/gpu-build.log" 2>&1  # no bench arguments: build only (gpu.sh writes build.log)
echo "build exit $?"
sort_args=(--sort-elements=2^24 --sort-key=u32 --sort-order=asc --sort-dist=uniform --benchmark_min_time=0.01
  --no-progress)
# One whole sort: the 6 launches after the first (verified) run's.
timeout 90 ncu -k 'regex:histogram_kernel|scan_kernel|scatter_kernel' --launch-skip 6 --launch-count 6 \
  --section SpeedOfLight build/gpu/bench "${sort_args[@]}" --sort-payload=keys '--benchmark_filter=^Sort/CUDA.Radix/' \
  > "$OUT/ncu-radix-passes.txt" 2>&1
echo "ncu passes exit $?"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats
  --section Occupancy --section LaunchStats --section InstructionStats --section SourceCounters)
for pay in keys pairs; do
  timeout 90 ncu -k regex:scatter_kernel --launch-skip 9 --launch-count 1 "${sections[@]}" build/gpu/bench \
    "${sort_args[@]}" --sort-payload=$pay '--benchmark_filter=^Sort/CUDA.Radix/' > "$OUT/ncu-radix-$pay.txt" 2>&1
  echo "ncu radix $pay exit $?"
  timeout 90 ncu -k regex:Onesweep --launch-skip 9 --launch-count 1 "${sections[@]}" build/gpu/bench \
    "${sort_args[@]}" --sort-payload=$pay '--benchmark_filter=^Sort/CUB.Offset64/' > "$OUT/ncu-cub-$pay.txt" 2>&1
  echo "ncu CUB $pay exit $?"
done
grep -E "histogram_kernel|scan_kernel|scatter_kernel|Duration|Memory Throughput" "$OUT/ncu-radix-passes.txt" | head -40
