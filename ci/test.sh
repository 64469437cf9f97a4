#!/usr/bin/env bash
# The README's test command: install what is missing, build (CUDA too when
# nvcc is there), run the tests.
#
#   ci/test.sh          the fast tiers: unit, smoke, gpu (docs/testing.md)
#   ci/test.sh --full   every test, the slow tier included (what CI runs)
#
# GPU tests run as one process that a machine without a GPU reports skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=default
case "${1:-}" in
  "") ;;
  --full) preset=full ;;
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "ci/test.sh: unknown option $1 (use --full for every test)" >&2; exit 2 ;;
esac
ci/deps.sh
jobs=$(nproc)
cmake --preset default -DPARBENCH_WERROR=ON
cmake --build --preset default -j "$jobs"
start=$(date +%s)
ctest --preset "$preset" -j "$jobs"
echo "ci/test.sh: ctest --preset $preset took $(($(date +%s) - start)) s on $jobs cores"
