#!/usr/bin/env bash
# Build, test and benchmark on a GPU host in one call; the nightly job's core.
#
#   ci/gpu.sh [--sanitize] [--no-tests] [--name NAME] [-- bench arguments...]
#
# Configures build/gpu (Release, CUDA on, sm_90 unless CUDA_ARCHS is set),
# builds, runs every test (GPU tests included), optionally the GPU tests under
# compute-sanitizer memcheck, then `bench` with the given arguments, writing
# $OUT/NAME.json (OUT defaults to ./out, NAME to gemm) and printing a table.
# MEMCHECK_FILTER narrows the GPU tests run under memcheck (a gtest filter
# such as Gpu/KMeans*; the default is every GPU test, Gpu*).
# Exit status: 0 when every step passed. A failed test, memcheck or result
# check does not stop the later steps; a failed build or bench run ends it.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
name=gemm sanitize=0 tests=1
while (($#)); do
  case "$1" in
    --sanitize) sanitize=1 ;;
    --no-tests) tests=0 ;;
    --name) name=${2:?--name needs a value}; shift ;;
    --) shift; break ;;
    *) echo "gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
log() { printf '\n== %s [%s]\n' "$*" "$(date +%T)"; }

log "machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
jobs=$(nproc)

log "configure and build"
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARBENCH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" > "$OUT/configure.log"
cmake --build build/gpu -j "$jobs" > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }

# A failing step marks the job failed but the later steps still run, so one
# call yields every result (a failed test and the benchmark's numbers both).
status=0
if ((tests)); then
  log "tests"
  # On a GPU host a GPU test that cannot use the GPU fails instead of skipping
  # (tests/gpu_test.hpp); other tests may still skip (no Chromium here).
  if PARBENCH_REQUIRE_GPU=1 ctest --test-dir build/gpu -j 4 --output-on-failure > "$OUT/tests.log" 2>&1; then
    tail -3 "$OUT/tests.log"
  else
    grep -E "Failed|FAILED" "$OUT/tests.log" | head -40; tail -5 "$OUT/tests.log"; status=1
  fi
fi
if ((sanitize)); then
  log "GPU tests under compute-sanitizer memcheck"
  if PARBENCH_REQUIRE_GPU=1 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
      build/gpu/tests/parbench_tests --gpu-tests ${MEMCHECK_FILTER:+--gtest_filter="$MEMCHECK_FILTER"} > "$OUT/memcheck.log" 2>&1; then
    grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.log" | tail -3
  else
    tail -40 "$OUT/memcheck.log"; status=1
  fi
fi

if (($#)); then
  log "bench $*"
  # bench exits 1 when an entry was incorrect or failed (the JSON is complete:
  # ci/check-run names them) and 2 on a bad command line (nothing ran).
  rc=0
  build/gpu/bench --benchmark_out="$OUT/$name.json" --benchmark_out_format=json --no-progress "$@" \
    > "$OUT/$name.txt" 2>&1 || rc=$?
  if ((rc != 0)); then tail -30 "$OUT/$name.txt"; status=1; fi
  ((rc == 2)) && exit 1
  ci/check-run "$OUT/$name.json" || status=1
  # A file bench left cut off (a crash) is bad input for the table too: one
  # line naming ci/close-truncated, and this script's status stays 1.
  ci/table "$OUT/$name.json" --ratio-to "${RATIO_TO:-cuBLAS}" --filter "${TABLE_FILTER:-.}" || status=1
fi
exit $status
