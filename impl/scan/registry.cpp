#include "scan/registry.hpp"

namespace pb::scan {

// The variants' factories, each defined in its own file.
std::unique_ptr<Variant> make_seq();
std::unique_ptr<Variant> make_omp(int threads);
#ifdef PARBENCH_WITH_CUDA
std::unique_ptr<Variant> make_hillis_steele();
std::unique_ptr<Variant> make_blelloch();
std::unique_ptr<Variant> make_look_back();
std::unique_ptr<Variant> make_cub();
std::unique_ptr<Variant> make_thrust();
#endif

// The largest n per profile: the CPU stops at 2^26 (a second a call) but in
// the full profile.
constexpr WorkCap kCpu{20, 26, 30};
constexpr WorkCap kGpu{20, 30, 30};

const std::vector<Entry>& registry() {
  // One line per variant: the list reads as a table. Each line names the
  // file that defines its factory (code).
  // clang-format off
  using Line = Entry::Line;
  static const std::vector<Entry> list = {
      Line{"Seq"}.role(Role::Baseline).cap(kCpu).code("impl/scan/cpu/scan.cpp")
          .factory([](const Knobs&) { return make_seq(); }),
      Line{"OMP"}.threads().cap(kCpu).code("impl/scan/cpu/scan.cpp")
          .factory([](const Knobs& k) { return make_omp(k.threads); }),
#ifdef PARBENCH_WITH_CUDA
      Line{"CUDA.HillisSteele"}.cuda().cap(kGpu).code("impl/scan/cuda/scan.cu")
          .factory([](const Knobs&) { return make_hillis_steele(); }),
      Line{"CUDA.Blelloch"}.cuda().cap(kGpu).code("impl/scan/cuda/scan.cu")
          .factory([](const Knobs&) { return make_blelloch(); }),
      Line{"CUDA.LookBack"}.cuda().cap(kGpu).code("impl/scan/cuda/scan.cu")
          .factory([](const Knobs&) { return make_look_back(); }),
      Line{"CUB"}.cuda().cap(kGpu).code("impl/scan/cuda/libs.cu").library("cub")
          .factory([](const Knobs&) { return make_cub(); }),
      Line{"Thrust"}.cuda().cap(kGpu).code("impl/scan/cuda/libs.cu").library("thrust")
          .factory([](const Knobs&) { return make_thrust(); }),
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::scan
