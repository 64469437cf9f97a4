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
  // clang-format off
  // name, backend, knob, blocks, cap, baseline, code (the factory's file), factory, library
  static const std::vector<Entry> list = {
      {"Seq", Backend::Cpu, Knob::None, {}, kCpu, true, "impl/scan/cpu/scan.cpp",
       [](const Knobs&) { return make_seq(); }},
      {"OMP", Backend::Cpu, Knob::Threads, {}, kCpu, false, "impl/scan/cpu/scan.cpp",
       [](const Knobs& k) { return make_omp(k.threads); }},
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.HillisSteele", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/scan/cuda/scan.cu",
       [](const Knobs&) { return make_hillis_steele(); }},
      {"CUDA.Blelloch", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/scan/cuda/scan.cu",
       [](const Knobs&) { return make_blelloch(); }},
      {"CUDA.LookBack", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/scan/cuda/scan.cu",
       [](const Knobs&) { return make_look_back(); }},
      {"CUB", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/scan/cuda/libs.cu",
       [](const Knobs&) { return make_cub(); }, "cub"},
      {"Thrust", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/scan/cuda/libs.cu",
       [](const Knobs&) { return make_thrust(); }, "thrust"},
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::scan
