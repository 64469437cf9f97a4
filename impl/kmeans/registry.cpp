#include "kmeans/registry.hpp"

#include "kmeans/cpu/cpu_variants.hpp"
#include "kmeans/reference.hpp"
#ifdef PARBENCH_WITH_CUDA
#include "kmeans/cuda/factories.hpp"
#endif

namespace pb::kmeans {

const std::vector<Entry>& registry() {
  static const std::vector<Entry> list = {
      {"Seq", Backend::Cpu, Knob::None, 2, [](const Knobs&) { return make_seq(); }},
      {"OMP.Atomic", Backend::Cpu, Knob::Threads, 1,
       [](const Knobs& k) { return make_omp_atomic(k.threads); }},
      {"OMP.Reduce", Backend::Cpu, Knob::Threads, 1,
       [](const Knobs& k) { return make_omp_reduce(k.threads); }},
      {"BLAS", Backend::Cpu, Knob::Threads, 1, [](const Knobs& k) { return make_blas(k.threads); },
       "openblas"},
#ifdef PARBENCH_WITH_MPI
      {"MPI", Backend::Mpi, Knob::Threads, 1, [](const Knobs& k) { return make_mpi(k.threads); }},
#endif
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Naive", Backend::Cuda, Knob::Block, 0, [](const Knobs& k) { return make_cuda_naive(k.block); }},
      {"CUDA.Transpose", Backend::Cuda, Knob::Block, 0,
       [](const Knobs& k) { return make_cuda_transpose(k.block); }},
      {"CUDA.Shared", Backend::Cuda, Knob::Block, 0,
       [](const Knobs& k) { return make_cuda_shared(k.block); }},
      {"CUDA.AllGPU", Backend::Cuda, Knob::Block, 0,
       [](const Knobs& k) { return make_cuda_allgpu(k.block); }},
      {"CUDA.Tiled", Backend::Cuda, Knob::Block, 0, [](const Knobs& k) { return make_cuda_tiled(k.block); }},
      {"CUDA.GEMM", Backend::Cuda, Knob::None, 0, [](const Knobs&) { return make_cuda_gemm(); }, "cublas"},
#endif
  };
  return list;
}

}  // namespace pb::kmeans
