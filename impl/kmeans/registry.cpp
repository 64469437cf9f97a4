#include "kmeans/registry.hpp"

namespace pb::kmeans {

// The variants' factories, each defined in its own file.
std::unique_ptr<Variant> make_seq();
std::unique_ptr<Variant> make_omp_atomic(int threads);
std::unique_ptr<Variant> make_omp_reduce(int threads);
std::unique_ptr<Variant> make_blas(int threads);
#ifdef PARBENCH_WITH_MPI
std::unique_ptr<Variant> make_mpi(int threads);
#endif
#ifdef PARBENCH_WITH_CUDA
std::unique_ptr<Variant> make_cuda_naive(int block);
std::unique_ptr<Variant> make_cuda_transpose(int block);
std::unique_ptr<Variant> make_cuda_shared(int block);
std::unique_ptr<Variant> make_cuda_allgpu(int block);
std::unique_ptr<Variant> make_cuda_tiled(int block);
std::unique_ptr<Variant> make_cuda_gemm();
std::unique_ptr<Variant> make_cuda_one_read(int block);
std::unique_ptr<Variant> make_cuda_dmma(SumUpdate sums);
std::unique_ptr<Variant> make_cuda_tf32();
#endif
#ifdef PARBENCH_WITH_NCCL
std::unique_ptr<Variant> make_cuda_nccl(int gpus, int parts, int block, Spread spread);
// Where CUDA.NCCL runs CUDA.AllGPU's fused step (nccl.cu), the block that is
// fastest for CUDA.AllGPU at N = 4,000,000, D = 16, K = 16
// (docs/perf/kmeans-cuda.md).
constexpr int kNcclBlock = 128;
#endif

// The largest N*K*D (one assignment step's work) a CPU variant runs per
// profile: one thread does ~1-3e9 distance terms a second.
constexpr WorkCap kOneThread{26, 32, 36};
constexpr WorkCap kCpuParallel{30, 34, 40};

// The variants that run f32 problems (Traits::single).
constexpr Traits kSingle{true};

const std::vector<Entry>& registry() {
  // One line per variant: the list reads as a table.
  // clang-format off
  // Seq is exact on the float-valued inputs of an f32 problem: the
  // assignments a single-precision check compares against.
  using Line = Entry::Line;
  static const std::vector<Entry> list = {
      Line{"Seq"}.role(Role::Baseline).cap(kOneThread).code("impl/kmeans/reference.cpp").traits(kSingle)
          .factory([](const Knobs&) { return make_seq(); }),
      Line{"OMP.Atomic"}.threads().cap(kCpuParallel).code("impl/kmeans/cpu/omp.cpp")
          .factory([](const Knobs& k) { return make_omp_atomic(k.threads); }),
      Line{"OMP.Reduce"}.threads().cap(kCpuParallel).code("impl/kmeans/cpu/omp.cpp")
          .factory([](const Knobs& k) { return make_omp_reduce(k.threads); }),
      Line{"BLAS"}.threads().cap(kCpuParallel).code("impl/kmeans/cpu/blas.cpp").library("openblas")
          .factory([](const Knobs& k) { return make_blas(k.threads); }),
#ifdef PARBENCH_WITH_MPI
      Line{"MPI"}.on(Backend::Mpi).threads().cap(kCpuParallel).code("impl/kmeans/cpu/mpi.cpp")
          .factory([](const Knobs& k) { return make_mpi(k.threads); }),
#endif
#ifdef PARBENCH_WITH_CUDA
      Line{"CUDA.Naive"}.cuda().blocks().code("impl/kmeans/cuda/naive.cu")
          .factory([](const Knobs& k) { return make_cuda_naive(k.block); }),
      Line{"CUDA.Transpose"}.cuda().blocks().code("impl/kmeans/cuda/transpose.cu")
          .factory([](const Knobs& k) { return make_cuda_transpose(k.block); }),
      Line{"CUDA.Shared"}.cuda().blocks().code("impl/kmeans/cuda/shared.cu")
          .factory([](const Knobs& k) { return make_cuda_shared(k.block); }),
      Line{"CUDA.AllGPU"}.cuda().blocks().code("impl/kmeans/cuda/allgpu.cu")
          .factory([](const Knobs& k) { return make_cuda_allgpu(k.block); }),
      Line{"CUDA.Tiled"}.cuda().blocks().code("impl/kmeans/cuda/tiled.cu")
          .factory([](const Knobs& k) { return make_cuda_tiled(k.block); }),
      Line{"CUDA.GEMM"}.cuda().code("impl/kmeans/cuda/gemm.cu").library("cublas")
          .factory([](const Knobs&) { return make_cuda_gemm(); }),
      Line{"CUDA.OneRead"}.cuda().blocks().code("impl/kmeans/cuda/one_read.cu")
          .factory([](const Knobs& k) { return make_cuda_one_read(k.block); }),
      Line{"CUDA.DMMA"}.cuda().code("impl/kmeans/cuda/dmma.cu")
          .factory([](const Knobs&) { return make_cuda_dmma(SumUpdate::Delta); }),
      Line{"CUDA.DMMA.Full"}.cuda().code("impl/kmeans/cuda/dmma.cu")
          .factory([](const Knobs&) { return make_cuda_dmma(SumUpdate::Full); }),
      Line{"CUDA.TF32"}.cuda().code("impl/kmeans/cuda/tf32.cu").traits(kSingle)
          .factory([](const Knobs&) { return make_cuda_tf32(); }),
#endif
#ifdef PARBENCH_WITH_NCCL
      Line{"CUDA.NCCL"}.cuda().knob(Knob::Gpus).code("impl/kmeans/cuda/nccl.cu").library("nccl")
          .factory([](const Knobs& k) {
            return make_cuda_nccl(k.gpus, k.parts ? k.parts : k.gpus, kNcclBlock, Spread::InProcess);
          }),
#endif
#if defined(PARBENCH_WITH_NCCL) && defined(PARBENCH_WITH_MPI)
      Line{"MPI.NCCL"}.on(Backend::MpiCuda).knob(Knob::Gpus).code("impl/kmeans/cuda/nccl.cu")
          .library("nccl")
          .factory([](const Knobs& k) { return make_cuda_nccl(k.gpus, k.gpus, kNcclBlock, Spread::OverRanks); }),
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::kmeans
