#!/usr/bin/env bash
# Issue 20, fifth session: CUDA.DMMA's delta sums (only the points that
# changed cluster add to the sums, refreshed every 16th iteration) against
# the code before them, at 100,000 x 100 x 316.
#   PART=a: build this tree (build/gpu) and, in the background, the bench of
#           the revision before (BASE_REV, from .base/base.tgz, a git archive
#           carried with the call) in /tmp/base; every CUDA k-means registry
#           test (CUDA.DMMA and CUDA.DMMA.Full with the new 40- and 35-loop
#           shapes); one process of CUDA.DMMA, CUDA.DMMA.Full and CUDA.GEMM,
#           5 repetitions; then the comparator's paired rounds, base against
#           new (ci/compare --run, resumable, stopped by --max-seconds).
#   PART=b: (warm machine) the rest of the paired rounds and their verdict;
#           memcheck, synccheck and racecheck of the DMMA tests.
#   PARBENCH_GIT_REVISION=<rev> BASE_REV=<rev> PART=a|b bash results/nvidia-h100/issue20/run-delta.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../../.."
. results/gpu-call.sh
call_setup "$@"
SHAPE=(--kmeans-shapes=100000x100x316 --kmeans-dist=uniform,blobs --kmeans-loops=10)
W=/tmp/compare-delta  # the rounds, kept on the warm machine between calls
rounds() {
  ci/compare --run /tmp/base/build/bench build/gpu/bench --workdir $W --rounds 8 --max-seconds "$1" \
    --json "$F/compare-delta.json" -- "${SHAPE[@]}" '--benchmark_filter=^KMeans/CUDA\.(DMMA|GEMM)/' \
    --benchmark_repetitions=3 --hide-unsupported > "$F/compare-delta.log" 2>&1
  echo "compare exit $?"; tail -15 "$F/compare-delta.log"; cp "$F/compare-delta.log" "$F/compare-delta.txt"
  cp $W/round-*.json "$F/" 2>/dev/null; pack
}
if [[ ${PART:-a} == a ]]; then
  build_unless_skipped
  mkdir -p /tmp/base && tar xzf .base/base.tgz -C /tmp/base
  (cd /tmp/base && PARBENCH_GIT_REVISION=${BASE_REV:?} cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPARBENCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/base-configure.log 2>&1 &&
    nice cmake --build build -j 16 --target bench > /tmp/base-build.log 2>&1; echo "base build exit $?") &
  base=$!
  PARBENCH_REQUIRE_GPU=1 timeout 200 build/gpu/tests/parbench_tests \
    --gtest_filter='Registry/KMeansVariants.*CUDA*' > "$F/gtests.log" 2>&1
  echo "tests exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$F/gtests.log" | head -20; pack
  wait $base
  tail -3 /tmp/base-build.log
  name=kmeans-delta-1
  OUT=$F timeout 90 ci/gpu.sh --no-tests --name $name -- "${SHAPE[@]}" \
    '--benchmark_filter=^KMeans/CUDA\.(DMMA|DMMA\.Full|GEMM)/' --benchmark_repetitions=5 --hide-unsupported \
    > "$F/sh-$name.log" 2>&1
  echo "bench $name exit $?"; grep -E "_median" "$F/$name.txt" | awk '{print $1, $2, $3}'; pack
  rounds "${MAX_S:-200}"
else
  rounds "${MAX_S:-330}"
  t='Registry/KMeansVariants.TiesAndEmptyClusters/*DMMA*:Registry/KMeansVariants.MatchReference/*DMMA*'
  for tool in memcheck synccheck racecheck; do
    PARBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
      build/gpu/tests/parbench_tests --gtest_filter="$t" > "$F/$tool.log" 2>&1
    echo "$tool exit $?"; grep -E "SUMMARY" "$F/$tool.log" | tail -1; pack
  done
fi
