#include "core/fault.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <thread>

#include "core/gpu.hpp"
#include "core/mpi.hpp"
#include "core/status.hpp"

namespace pb {
namespace {

struct Fault {
  std::string kind;
  std::regex pattern;
  int rank = -1;  // -1: every rank
  bool active = false;
};

const Fault& fault() {
  static const Fault f = [] {
    Fault out;
    const char* v = std::getenv("PARBENCH_TEST_FAULT");
    if (!v || !*v) return out;
    const std::string s(v);
    const auto colon = s.find(':');
    out.kind = s.substr(0, colon);
    if (const auto at = out.kind.find('@'); at != std::string::npos) {
      out.rank = std::atoi(out.kind.c_str() + at + 1);
      out.kind.resize(at);
    }
    if (colon == std::string::npos || (out.kind != "crash" && out.kind != "hang" && out.kind != "gpu-oom" &&
                                       out.kind != "fail" && out.kind != "oom")) {
      std::fprintf(stderr,
                   "bench: PARBENCH_TEST_FAULT=%s is not crash|hang|gpu-oom|fail|oom[@RANK]:REGEX; ignored\n",
                   v);
      return out;
    }
    try {
      out.pattern = std::regex(s.substr(colon + 1));
      out.active = true;
    } catch (const std::regex_error&) {
      std::fprintf(stderr, "bench: PARBENCH_TEST_FAULT: %s is not a regular expression; ignored\n",
                   s.substr(colon + 1).c_str());
    }
    return out;
  }();
  return f;
}

}  // namespace

void inject_test_fault(const std::string& instance_name) {
  const Fault& f = fault();
  if (!f.active || (f.rank >= 0 && f.rank != mpi::rank()) || !std::regex_search(instance_name, f.pattern))
    return;
  std::fprintf(stderr, "bench: PARBENCH_TEST_FAULT: %s in %s\n", f.kind.c_str(), instance_name.c_str());
  std::fflush(stderr);
  if (f.kind == "fail") throw std::runtime_error("injected test fault");
  if (f.kind == "oom") throw OutOfMemory("injected test fault");
  if (f.kind == "crash") std::abort();
  if (f.kind == "hang") {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (f.kind == "gpu-oom") exhaust_gpu_memory();
}

}  // namespace pb
