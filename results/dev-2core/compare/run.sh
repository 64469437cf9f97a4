set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-out}; mkdir -p "$OUT" /tmp/aa; B=/tmp/aa/bench; cp build/cpu/bench $B
ARGS=(--benchmark_filter='^GEMM/(OpenBLAS|OMP)/op:AB/' --sizes=256,512,1000x1500x777 --threads=1,2 --benchmark_min_time=0.05)
for s in 1 2; do $B "${ARGS[@]}" --benchmark_repetitions=10 --no-progress --benchmark_out=$OUT/files-$s.json --benchmark_out_format=json > $OUT/files-$s.txt 2>&1; echo files-$s $?; done
cp $B /tmp/aa/bench-b
ci/compare --run $B /tmp/aa/bench-b --workdir $OUT/paired --json $OUT/paired.json -- "${ARGS[@]}" > $OUT/paired.txt 2> $OUT/paired.err; echo paired $?
