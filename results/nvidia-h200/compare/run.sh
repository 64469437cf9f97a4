#!/usr/bin/env bash
# The comparator's measurements on the GPU machine (README.md in this folder).
# From the repository root, with the sources of the revisions under .revs/NAME
# (git archive REV | tar -x -C .revs/NAME; .revs/NAME/REV holds the revision):
#
#   run.sh paired-aa NAME   A/A: one build of $SRC (default .revs/head) run as both sides, paired
#                           rounds of the default GEMM f32 A*B and Sort u32
#                           keys GPU benchmarks (2^16, 2^20, 2^24 elements)
#   run.sh files-aa NAME    the same selection, one run with 10 repetitions
#   run.sh change PAIR      paired CUDA.Naive A*B at two revisions: PAIR is
#                           unroll (019b97c^ vs 019b97c: the k-loop unroll
#                           dropped) or refactor (019b97c vs b148c42: kernels
#                           only refactored)
#
# Rounds are kept in /tmp/compare-rounds/NAME, so a call stopped by
# MAX_SECONDS resumes where it stopped when run again on the same machine.
set -uo pipefail
OUT=${OUT:-$PWD/out}
COMPARE=${COMPARE:-ci/compare}
mkdir -p "$OUT"

build() {  # build SRC_DIR BUILD_DIR: bench only, Release, sm_90
  local src=$1 dir=$2
  [ -x "$dir/bench" ] && return 0
  # The revision is read at build time (cmake/BuildInfo.cmake); .revs/ sits
  # inside another checkout, whose git would answer otherwise.
  PARBENCH_GIT_REVISION=$(tail -1 "$src/REV") cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPARBENCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DPARBENCH_TESTS=OFF > "$dir.configure.log" 2>&1 &&
    PARBENCH_GIT_REVISION=$(tail -1 "$src/REV") cmake --build "$dir" -j "$(nproc)" --target bench \
      > "$dir.build.log" 2>&1 ||
    { tail -30 "$dir.configure.log" "$dir.build.log"; exit 2; }
}

AA_FILTER='^(GEMM/(CUDA[.][A-Za-z]+|cuBLAS)/op:AB/type:f32/|Sort/(CUDA[.][A-Za-z]+|CUB|CUB[.]Offset64|Thrust)/key:u32/payload:keys/order:asc/dist:uniform/)'
AA_ARGS=(--benchmark_filter="$AA_FILTER" --elements=2^16,2^20,2^24 --benchmark_min_time=0.02s)

paired() {  # paired NAME BASE_BENCH NEW_BENCH bench-args...
  local name=$1 a=$2 b=$3; shift 3
  mkdir -p /tmp/compare-rounds
  "$COMPARE" --run "$a" "$b" --workdir "/tmp/compare-rounds/$name" --max-seconds "${MAX_SECONDS:-460}" \
    --json "$OUT/$name.json" --markdown "$OUT/$name.md" -- "$@" > "$OUT/$name.txt"
  local rc=$?
  tar -czf "$OUT/$name-rounds.tar.gz" -C /tmp/compare-rounds "$name"
  tail -1 "$OUT/$name.txt"
  echo "compare exit $rc"
  return $rc
}

case ${1:-} in
  paired-aa)
    # SRC: the sources to build (default .revs/head; .revs/queued: with the
    # spin kernel before the start event).
    src=${SRC:-.revs/head}
    build "$src" "/tmp/pb-$(basename "$src")"
    mkdir -p /tmp/aa && cp "/tmp/pb-$(basename "$src")/bench" /tmp/aa/bench-a &&
      cp "/tmp/pb-$(basename "$src")/bench" /tmp/aa/bench-b
    paired "$2" /tmp/aa/bench-a /tmp/aa/bench-b "${AA_ARGS[@]}" ;;
  files-aa)
    build "${SRC:-.revs/head}" "/tmp/pb-$(basename "${SRC:-.revs/head}")"
    "/tmp/pb-$(basename "${SRC:-.revs/head}")/bench" "${AA_ARGS[@]}" --benchmark_repetitions=10 --no-progress \
      --benchmark_out="$OUT/$2.json" --benchmark_out_format=json > "$OUT/$2.txt" 2>&1
    echo "bench exit $?" ;;
  change)
    case ${2:-} in
      unroll) a=with-unroll b=no-unroll ;;
      refactor) a=no-unroll b=refactored ;;
      *) echo "run.sh change unroll|refactor" >&2; exit 2 ;;
    esac
    build ".revs/$a" "/tmp/pb-$a"; build ".revs/$b" "/tmp/pb-$b"
    paired "change-$2" "/tmp/pb-$a/bench" "/tmp/pb-$b/bench" --benchmark_filter='^GEMM/CUDA[.]Naive/op:AB/' \
      --benchmark_min_time=0.02s ;;
  *) echo "usage: run.sh paired-aa NAME | files-aa NAME | change unroll|refactor" >&2; exit 2 ;;
esac
