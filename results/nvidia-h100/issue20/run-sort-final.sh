#!/usr/bin/env bash
# Issue 20, the sorting targets at the session's last revision (one call,
# under 6 minutes): build; the registry tests of CUDA.Radix and CUDA.Bitonic;
# CUDA.Radix against CUB.Offset64, keys and pairs at 2^24 and 2^26, and
# CUDA.Bitonic against CUB at 2^24 (u32 keys), 5 repetitions.
#   PARBENCH_GIT_REVISION=<rev> [SKIP_BUILD=1] results/nvidia-h100/issue20/run-sort-final.sh OUT
# Ran at b441e82 (final-sort-run).
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
build_unless_skipped
PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests \
  --gtest_filter='Registry/SortVariants.*CUDA_Radix*:Registry/SortVariants.*CUDA_Bitonic*' > "$F/gtests.log" 2>&1
echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head; pack
RATIO_TO=CUB.Offset64 TABLE_FILTER=Sort OUT=$F timeout 150 ci/gpu.sh --no-tests --name sort-radix -- \
  --sort-elements=2^24,2^26 --sort-key=u32 --sort-payload=keys,pairs --sort-order=asc --sort-dist=uniform \
  '--benchmark_filter=^Sort/(CUDA.Radix|CUB.Offset64)/' --benchmark_min_time=0.2 --benchmark_repetitions=5 \
  --hide-unsupported > "$F/sort-sh-radix.log" 2>&1
echo "radix bench exit $?"; grep -E "^Sort" "$F/sort-sh-radix.log" | awk '{print $1, $2, $3}'; pack
RATIO_TO=CUB TABLE_FILTER=Sort OUT=$F timeout 90 ci/gpu.sh --no-tests --name sort-bitonic -- \
  --sort-elements=2^24 --sort-key=u32 --sort-payload=keys --sort-order=asc --sort-dist=uniform --block=256 \
  '--benchmark_filter=^Sort/(CUB|CUDA.Bitonic)/' --benchmark_min_time=0.2 --benchmark_repetitions=5 \
  --hide-unsupported > "$F/sort-sh-bitonic.log" 2>&1
echo "bitonic bench exit $?"; grep -E "^Sort" "$F/sort-sh-bitonic.log" | grep -v "length:1024/" | awk '{print $1, $2, $3}'
pack
