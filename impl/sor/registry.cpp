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
std::unique_ptr<Variant> make_cuda_rows(int gpus, int parts, Spread spread);
#endif

// The largest M*N*sweeps per profile: the CPU variants stay under about a
// second a run (the reference sweeps about 0.3 G points/s a core), so the
// default profile runs them on 1000x1500 only and `full` up to 8193^2.
constexpr WorkCap kCpu{22, 28, 31};

const std::vector<Entry>& registry() {
  // One line per variant: the list reads as a table.
  // clang-format off
  using Line = Entry::Line;
  static const std::vector<Entry> list = {
      Line{"Seq"}.role(Role::Baseline).cap(kCpu).code("impl/sor/reference.cpp")
          .factory([](const Knobs&) { return make_seq(); }),
      Line{"OMP"}.threads().cap(kCpu).code("impl/sor/cpu/omp.cpp")
          .factory([](const Knobs& k) { return make_omp(k.threads); }),
#ifdef PARBENCH_WITH_CUDA
      Line{"CUDA.Global"}.cuda().knob(Knob::BlockShape).code("impl/sor/cuda/natural.cu")
          .factory([](const Knobs& k) { return make_cuda_global(k.block, k.block_y); }),
      Line{"CUDA.Constant"}.cuda().knob(Knob::BlockShape).code("impl/sor/cuda/natural.cu")
          .factory([](const Knobs& k) { return make_cuda_constant(k.block, k.block_y); }),
      Line{"CUDA.SharedHalo"}.cuda().knob(Knob::BlockShape).code("impl/sor/cuda/natural.cu")
          .factory([](const Knobs& k) { return make_cuda_shared_halo(k.block, k.block_y); }),
      Line{"CUDA.SharedInterior"}.cuda().knob(Knob::BlockShape).code("impl/sor/cuda/natural.cu")
          .factory([](const Knobs& k) { return make_cuda_shared_interior(k.block, k.block_y); }),
      Line{"CUDA.Split"}.cuda().blocks().code("impl/sor/cuda/split.cu")
          .factory([](const Knobs& k) { return make_cuda_split(k.block); }),
      Line{"CUDA.SplitColumns"}.cuda().blocks().code("impl/sor/cuda/split.cu")
          .factory([](const Knobs& k) { return make_cuda_split_columns(k.block); }),
      Line{"CUDA.Rows"}.cuda().knob(Knob::Gpus).code("impl/sor/cuda/rows.cu")
          .factory([](const Knobs& k) {
            return make_cuda_rows(k.gpus, k.parts ? k.parts : k.gpus, Spread::InProcess);
          }),
#endif
#if defined(PARBENCH_WITH_CUDA) && defined(PARBENCH_WITH_NCCL) && defined(PARBENCH_WITH_MPI)
      Line{"MPI.NCCL"}.on(Backend::MpiCuda).knob(Knob::Gpus).code("impl/sor/cuda/rows.cu").library("nccl")
          .factory([](const Knobs& k) { return make_cuda_rows(k.gpus, k.gpus, Spread::OverRanks); }),
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::sor
