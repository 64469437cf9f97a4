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
std::unique_ptr<Variant> make_cuda_dmma(bool delta);
std::unique_ptr<Variant> make_cuda_tf32();
#endif
#ifdef PARBENCH_WITH_NCCL
std::unique_ptr<Variant> make_cuda_nccl(int gpus, int parts, int block, bool over_ranks);
// Where CUDA.NCCL runs CUDA.AllGPU's fused step (nccl.cu), the block that is
// fastest for CUDA.AllGPU at N = 4,000,000, D = 16, K = 16
// (docs/perf/kmeans-cuda.md).
constexpr int kNcclBlock = 128;
#endif

// The largest N*K*D (one assignment step's work) a CPU variant runs per
// profile: one thread does ~1-3e9 distance terms a second.
constexpr WorkCap kOneThread{26, 32, 36};
constexpr WorkCap kCpuParallel{30, 34, 40};

const std::vector<Entry>& registry() {
  // One line per variant: the list reads as a table.
  // clang-format off
  // name, backend, knob, blocks (empty: the family's), cap, baseline, code (the factory's file), factory[, library,
  // traits]. Seq is exact on the float-valued inputs of an f32 problem: the assignments a single-precision
  // check compares against.
  static const std::vector<Entry> list = {
      {"Seq", Backend::Cpu, Knob::None, {}, kOneThread, true, "impl/kmeans/reference.cpp",
       [](const Knobs&) { return make_seq(); }, "", {true}},
      {"OMP.Atomic", Backend::Cpu, Knob::Threads, {}, kCpuParallel, false, "impl/kmeans/cpu/omp.cpp",
       [](const Knobs& k) { return make_omp_atomic(k.threads); }},
      {"OMP.Reduce", Backend::Cpu, Knob::Threads, {}, kCpuParallel, false, "impl/kmeans/cpu/omp.cpp",
       [](const Knobs& k) { return make_omp_reduce(k.threads); }},
      {"BLAS", Backend::Cpu, Knob::Threads, {}, kCpuParallel, false, "impl/kmeans/cpu/blas.cpp",
       [](const Knobs& k) { return make_blas(k.threads); }, "openblas"},
#ifdef PARBENCH_WITH_MPI
      {"MPI", Backend::Mpi, Knob::Threads, {}, kCpuParallel, false, "impl/kmeans/cpu/mpi.cpp",
       [](const Knobs& k) { return make_mpi(k.threads); }},
#endif
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Naive", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/kmeans/cuda/naive.cu",
       [](const Knobs& k) { return make_cuda_naive(k.block); }},
      {"CUDA.Transpose", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/kmeans/cuda/transpose.cu",
       [](const Knobs& k) { return make_cuda_transpose(k.block); }},
      {"CUDA.Shared", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/kmeans/cuda/shared.cu",
       [](const Knobs& k) { return make_cuda_shared(k.block); }},
      {"CUDA.AllGPU", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/kmeans/cuda/allgpu.cu",
       [](const Knobs& k) { return make_cuda_allgpu(k.block); }},
      {"CUDA.Tiled", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/kmeans/cuda/tiled.cu",
       [](const Knobs& k) { return make_cuda_tiled(k.block); }},
      {"CUDA.GEMM", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/kmeans/cuda/gemm.cu",
       [](const Knobs&) { return make_cuda_gemm(); }, "cublas"},
      {"CUDA.OneRead", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/kmeans/cuda/one_read.cu",
       [](const Knobs& k) { return make_cuda_one_read(k.block); }},
      {"CUDA.DMMA", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/kmeans/cuda/dmma.cu",
       [](const Knobs&) { return make_cuda_dmma(true); }},
      {"CUDA.DMMA.Full", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/kmeans/cuda/dmma.cu",
       [](const Knobs&) { return make_cuda_dmma(false); }},
      {"CUDA.TF32", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/kmeans/cuda/tf32.cu",
       [](const Knobs&) { return make_cuda_tf32(); }, "", {true}},
#endif
#ifdef PARBENCH_WITH_NCCL
      {"CUDA.NCCL", Backend::Cuda, Knob::Gpus, {}, kNoCap, false, "impl/kmeans/cuda/nccl.cu",
       [](const Knobs& k) { return make_cuda_nccl(k.gpus, k.parts ? k.parts : k.gpus, kNcclBlock, false); }, "nccl"},
#endif
#if defined(PARBENCH_WITH_NCCL) && defined(PARBENCH_WITH_MPI)
      {"MPI.NCCL", Backend::MpiCuda, Knob::Gpus, {}, kNoCap, false, "impl/kmeans/cuda/nccl.cu",
       [](const Knobs& k) { return make_cuda_nccl(k.gpus, k.gpus, kNcclBlock, true); }, "nccl"},
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::kmeans
