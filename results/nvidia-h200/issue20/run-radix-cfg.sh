#!/usr/bin/env bash
# Issue 20 on the GPU machine, one call: CUDA.Radix's scatter configurations
# (PARBENCH_RADIX_CFG 0: 512 threads x 15 keys, 2 blocks an SM; 1: 384 x 16,
# 3 blocks; 2: 384 x 20, 2 blocks; 3: 384 x 16 with early counts, the look-back
# before the ranking; 4: 384 x 16 with a ranking loop without bounds for
# full tiles; 5: the same with 15 keys a thread), each with the Radix tests and then
# against CUB.Offset64 in the same process, u32 keys, keys and pairs, 2^24
# and 2^26, medians of 3.
#   PARBENCH_GIT_REVISION=<rev> results/nvidia-h200/issue20/run-radix-cfg.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run-radix-cfg.sh OUT}
mkdir -p "$OUT"
OUT=$OUT ci/gpu.sh --no-tests > "$OUT/gpu-build.log" 2>&1  # no bench arguments: build only (gpu.sh writes build.log)
echo "build exit $?"
for cfg in ${CFGS:-0 1 2}; do
  PARBENCH_RADIX_CFG=$cfg PARBENCH_REQUIRE_GPU=1 timeout 100 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/SortVariants.*Radix*' > "$OUT/gtests-cfg$cfg.log" 2>&1
  echo "cfg $cfg tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gtests-cfg$cfg.log" | head -5
  PARBENCH_RADIX_CFG=$cfg timeout 120 build/gpu/bench --sort-elements=2^24,2^26 --sort-key=u32 --sort-payload=keys,pairs \
    --sort-order=asc --sort-dist=uniform '--benchmark_filter=^Sort/(CUDA.Radix|CUB.Offset64)/' \
    --benchmark_min_time=0.2 --benchmark_repetitions=3 --no-progress --benchmark_report_aggregates_only=true \
    --benchmark_out="$OUT/sort-cfg$cfg.json" --benchmark_out_format=json > "$OUT/sort-cfg$cfg.txt" 2>&1
  echo "cfg $cfg bench exit $?"; grep -E "_median" "$OUT/sort-cfg$cfg.txt" | awk '{print $1, $2, $3}'
done
# NCU_CFGS: ncu on one sort of 2^26 keys (each kernel's duration), and the
# scatter kernel's stall reasons at 2^24, per configuration.
stalls=$(printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' barrier long_scoreboard \
  short_scoreboard wait mio_throttle lg_throttle math_pipe_throttle no_instruction not_selected selected \
  branch_resolving dispatch_stall membar drain sleeping)
for cfg in ${NCU_CFGS:-}; do
  PARBENCH_RADIX_CFG=$cfg timeout 100 ncu -k 'regex:histogram_kernel|scan_kernel|scatter_kernel' --launch-skip 6 \
    --launch-count 6 --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second build/gpu/bench \
    --sort-elements=2^26 --sort-key=u32 --sort-order=asc --sort-dist=uniform --sort-payload=keys \
    '--benchmark_filter=^Sort/CUDA.Radix/' --benchmark_min_time=0.01 --no-progress > "$OUT/ncu-passes-cfg$cfg.txt" 2>&1
  echo "cfg $cfg ncu passes exit $?"; grep -E "gpu__time_duration" "$OUT/ncu-passes-cfg$cfg.txt" | awk '{print $NF}' | xargs
  PARBENCH_RADIX_CFG=$cfg timeout 100 ncu -k regex:scatter_kernel --launch-skip 9 --launch-count 1 \
    --metrics "${stalls%,},smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum" build/gpu/bench \
    --sort-elements=2^24 --sort-key=u32 --sort-order=asc --sort-dist=uniform --sort-payload=keys \
    '--benchmark_filter=^Sort/CUDA.Radix/' --benchmark_min_time=0.01 --no-progress > "$OUT/ncu-stalls-cfg$cfg.txt" 2>&1
  echo "cfg $cfg ncu stalls exit $?"; grep -E "stalled|inst_executed|conflicts" "$OUT/ncu-stalls-cfg$cfg.txt" | awk '{print $1, $NF}' | sed 's/smsp__average_warps_issue_stalled_//'
done
