#!/usr/bin/env bash
# Issue 16, item 6: the comparator's paired before/after of the refactor on the
# GPU machine. BASE is 463cff0 (before the refactor), NEW the tree this runs in.
#
#   git archive 463cff0 -- . ':!results' | tar x -C build/base-src   # on the host, then carry build/base-src
#   NEW_REV=<rev> results/nvidia-h200/issue16/before-after.sh OUT [MAX_SECONDS]
#
# Resumable: run it again on the same (warm) machine and it goes on where it
# stopped (the binaries are copied once into build/before-after/, so a rebuild
# of the tree between calls does not change what is compared). Exit 4: stopped
# by MAX_SECONDS, run again.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: before-after.sh OUT [MAX_SECONDS]}
MAX=${2:-480}
NEW_REV=${NEW_REV:?set NEW_REV to the revision of this tree}
W=build/before-after
mkdir -p "$OUT" "$W"
log() { printf '== %s [%s]\n' "$*" "$(date +%T)"; }
cmk() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARBENCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90; }

if [ ! -x $W/base-bench ] || [ ! -x $W/new-bench ]; then
  log "build BASE (463cff0) and NEW ($NEW_REV)"
  (PARBENCH_GIT_REVISION=463cff0 cmk build/base-src build/base && cmake --build build/base -j 8 --target bench) \
    > "$OUT/base-build.log" 2>&1 &
  (PARBENCH_GIT_REVISION=$NEW_REV cmk . build/gpu && cmake --build build/gpu -j 8) > "$OUT/new-build.log" 2>&1
  new=$?
  wait $! || { tail -20 "$OUT/base-build.log"; exit 1; }
  ((new == 0)) || { tail -20 "$OUT/new-build.log"; exit 1; }
  cp build/base/bench $W/base-bench && cp build/gpu/bench $W/new-bench
  log "built"
fi

# Every GPU variant of the three families, at the default profile's names:
# GEMM f32 at four sizes (both block sizes where there are two), every k-means
# configuration at block 256 (the nightly suite's), sort of u32 keys and pairs
# at 2^20 and 2^26 (both block sizes of the networks).
FILTER='^((GEMM/(CUDA[.][A-Za-z]+|cuBLAS)/op:AB/type:f32/M:(256|1000|1024|4096)/)'
FILTER+='|(KMeans/CUDA[.][A-Za-z]+/.*/K:[0-9]+/(block:256/)?manual_time)'
FILTER+='|(Sort/(CUDA[.][A-Za-z]+|Thrust|CUB|CUB[.]Offset64)/key:u32/payload:(keys|pairs)/order:asc/dist:uniform/n:(1048576|67108864)/))'

log "compare --run"
plots/with-python plots/compare.py --run $W/base-bench $W/new-bench --workdir $W/rounds --max-seconds "$MAX" \
  --json "$OUT/before-after.json" --markdown "$OUT/before-after.md" --plot "$OUT/before-after.png" \
  -- --profile=default "--benchmark_filter=$FILTER" --benchmark_min_time=0.01 > "$OUT/before-after.txt" 2>&1
rc=$?
tail -4 "$OUT/before-after.txt"
log "compare exit $rc"
exit $rc
