set -uo pipefail
O=$1; mkdir -p $O
OUT=$O ci/gpu.sh --no-tests > $O/build.log 2>&1; echo "build $?"
for v in kg4 kg2; do
  if [[ $v == kg2 ]]; then cp alt_pipelined_kg2.cu impl/gemm/cuda/pipelined.cu; cmake --build build/gpu -j 16 > $O/rebuild.log 2>&1; echo "rebuild $?"; fi
  PARBENCH_REQUIRE_GPU=1 timeout 120 build/gpu/tests/parbench_tests --gtest_filter='Registry/GemmVariants.*Pipelined*f32*' > $O/gtests-$v.log 2>&1; echo "tests $v $?"; tail -1 $O/gtests-$v.log
  build/gpu/bench --gemm-shapes=4096,8192 '--benchmark_filter=^GEMM/(CUDA.Pipelined|cuBLAS)/' --precision=f32 --benchmark_min_time=0.2 --benchmark_repetitions=3 --no-progress --benchmark_out=$O/pipelined-$v.json --benchmark_out_format=json > $O/bench-$v.txt 2>&1; echo "bench $v $?"
  plots/with-python plots/table.py $O/pipelined-$v.json --ratio-to cuBLAS --filter GEMM 2>&1 | grep Pipelined
done
