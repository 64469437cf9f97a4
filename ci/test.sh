#!/usr/bin/env bash
# Install what is missing, build (CUDA too when nvcc is there), run every test.
# GPU tests report themselves skipped on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/deps.sh
jobs=$(nproc)
cmake --preset default -DPARBENCH_WERROR=ON
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"
