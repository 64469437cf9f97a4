#!/usr/bin/env bash
# The default job: install what is missing, build, and run the GEMM sweep of
# the default profile with the machine's ceilings, writing out/gemm.json
# (Google Benchmark JSON).
# Extra arguments go to bench, e.g. ci/default-job.sh --profile=smoke
set -euo pipefail
cd "$(dirname "$0")/.."
ci/deps.sh
cmake --preset default
cmake --build --preset default -j "$(nproc)"
mkdir -p out
# Anchored: the GEMM family and the machine's ceilings it is read against
# (not KMeans/CUDA.GEMM). bench exits 1 when an entry was incorrect or failed;
# ci/check-run still names them.
rc=0
./build/default/bench --benchmark_filter='^(GEMM|Ceiling)/' --benchmark_min_time=0.1 \
  --benchmark_out=out/gemm.json --benchmark_out_format=json "$@" || rc=$?
((rc == 2)) && exit 2
ci/check-run out/gemm.json
exit "$rc"
