// bench: every family in one binary. Parses parbench's own flags, registers
// every instance, records the machine and build in the JSON context, then
// hands over to Google Benchmark.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "benchmarks/families.hpp"
#include "core/build_info.hpp"
#include "core/gpu.hpp"
#include "core/options.hpp"
#include "core/status.hpp"
#include "fixtures/fixtures.hpp"

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "unknown";
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void add_context(const pb::Options& opt) {
  const auto& b = pb::build_info();
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("parbench_git_revision", b.git_revision);
  add("parbench_build_type", b.build_type);
  add("parbench_cxx_compiler", b.cxx_compiler);
  add("parbench_cxx_flags", b.cxx_flags);
  add("parbench_cuda_compiler", b.cuda_compiler.empty() ? "none" : b.cuda_compiler);
  add("parbench_cuda_flags", b.cuda_flags);
  add("parbench_cuda_architectures", b.cuda_architectures);
  add("parbench_sanitize", b.sanitize);
  add("parbench_profile", pb::to_string(opt.profile));
  add("parbench_seed", std::to_string(opt.seed));
  add("parbench_fixtures_version", std::to_string(pb::fixtures::kVersion));
  add("parbench_flush_l2", opt.flush_l2 ? "true" : "false");
  add("cpu_model", cpu_model());
  add("cpu_cores", std::to_string(pb::core_count()));
  add("openmp_version", std::to_string(_OPENMP));
  add("omp_max_threads", std::to_string(omp_get_max_threads()));
  add("omp_proc_bind", env_or("OMP_PROC_BIND", "unset"));
  add("omp_places", env_or("OMP_PLACES", "unset"));
  add("openblas_config", openblas_get_config());
  add("openblas_num_threads_at_start", std::to_string(openblas_get_num_threads()));
  for (const auto& [k, v] : pb::gpu_context()) add(k, v);
}

}  // namespace

int main(int argc, char** argv) {
  pb::Options opt;
  try {
    opt = pb::parse_options(argc, argv);
    if (opt.help) {
      std::fputs(pb::usage().c_str(), stdout);
      std::fputs("\nGoogle Benchmark's flags:\n", stdout);
      std::fflush(stdout);
    } else {
      pb::register_ceiling(opt);
      pb::register_gemm(opt);
      pb::register_kmeans(opt);
      pb::register_sort(opt);
    }
  } catch (const pb::UsageError& e) {
    std::fprintf(stderr, "bench: %s\n", e.what());
    return pb::kExitUsage;
  }
  benchmark::Initialize(&argc, argv);  // prints its usage and exits on --help
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return pb::kExitUsage;
  add_context(opt);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
