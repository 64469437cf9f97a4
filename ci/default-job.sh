#!/usr/bin/env bash
# The default job: install what is missing, build, and run the GEMM sweep of
# the default profile, writing results/local/gemm.json (Google Benchmark JSON).
# Extra arguments go to bench, e.g. ci/default-job.sh --profile=smoke
set -euo pipefail
cd "$(dirname "$0")/.."
ci/deps.sh
cmake --preset default
cmake --build --preset default -j "$(nproc)"
mkdir -p results/local
./build/default/bench --benchmark_filter=GEMM --benchmark_min_time=0.1 \
  --benchmark_out=results/local/gemm.json --benchmark_out_format=json "$@"
python3 plots/check_run.py results/local/gemm.json
