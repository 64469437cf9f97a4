#include "sor/registry.hpp"

namespace pb::sor {

// The variants' factories, each defined in its own file.
std::unique_ptr<Variant> make_seq();  // reference.cpp
std::unique_ptr<Variant> make_omp(int threads);
#ifdef PARBENCH_WITH_CUDA
std::unique_ptr<Variant> make_cuda_global(int bx, int by);
std::unique_ptr<Variant> make_cuda_constant(int bx, int by);
std::unique_ptr<Variant> make_cuda_shared_halo(int bx, int by);
std::unique_ptr<Variant> make_cuda_shared_interior(int bx, int by);
std::unique_ptr<Variant> make_cuda_split(int block);
std::unique_ptr<Variant> make_cuda_split_columns(int block);  // split.cu
std::unique_ptr<Variant> make_cuda_rows(int gpus, int parts, bool over_ranks);
#endif

// The largest M*N*sweeps per profile: the CPU variants stay under about a
// second a run (the reference sweeps about 0.3 G points/s a core), so the
// default profile runs them on 1000x1500 only and `full` up to 8193^2.
constexpr WorkCap kCpu{22, 28, 31};

const std::vector<Entry>& registry() {
  // One line per variant: the list reads as a table.
  // clang-format off
  // name, backend, knob, blocks (empty: the family's), cap, baseline, code (the factory's file), factory
  static const std::vector<Entry> list = {
      {"Seq", Backend::Cpu, Knob::None, {}, kCpu, true, "impl/sor/reference.cpp",
       [](const Knobs&) { return make_seq(); }},
      {"OMP", Backend::Cpu, Knob::Threads, {}, kCpu, false, "impl/sor/cpu/omp.cpp",
       [](const Knobs& k) { return make_omp(k.threads); }},
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Global", Backend::Cuda, Knob::BlockShape, {}, kNoCap, false, "impl/sor/cuda/natural.cu",
       [](const Knobs& k) { return make_cuda_global(k.block, k.block_y); }},
      {"CUDA.Constant", Backend::Cuda, Knob::BlockShape, {}, kNoCap, false, "impl/sor/cuda/natural.cu",
       [](const Knobs& k) { return make_cuda_constant(k.block, k.block_y); }},
      {"CUDA.SharedHalo", Backend::Cuda, Knob::BlockShape, {}, kNoCap, false, "impl/sor/cuda/natural.cu",
       [](const Knobs& k) { return make_cuda_shared_halo(k.block, k.block_y); }},
      {"CUDA.SharedInterior", Backend::Cuda, Knob::BlockShape, {}, kNoCap, false, "impl/sor/cuda/natural.cu",
       [](const Knobs& k) { return make_cuda_shared_interior(k.block, k.block_y); }},
      {"CUDA.Split", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/sor/cuda/split.cu",
       [](const Knobs& k) { return make_cuda_split(k.block); }},
      {"CUDA.SplitColumns", Backend::Cuda, Knob::Block, {}, kNoCap, false, "impl/sor/cuda/split.cu",
       [](const Knobs& k) { return make_cuda_split_columns(k.block); }},
      {"CUDA.Rows", Backend::Cuda, Knob::Gpus, {}, kNoCap, false, "impl/sor/cuda/rows.cu",
       [](const Knobs& k) { return make_cuda_rows(k.gpus, k.parts ? k.parts : k.gpus, false); }},
#endif
#if defined(PARBENCH_WITH_CUDA) && defined(PARBENCH_WITH_NCCL) && defined(PARBENCH_WITH_MPI)
      {"MPI.NCCL", Backend::MpiCuda, Knob::Gpus, {}, kNoCap, false, "impl/sor/cuda/rows.cu",
       [](const Knobs& k) { return make_cuda_rows(k.gpus, k.gpus, true); }, "nccl"},
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::sor
