#include "core/fault.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <thread>

#include "core/gpu.hpp"

namespace pb {
namespace {

struct Fault {
  std::string kind;
  std::regex pattern;
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
    if (colon == std::string::npos || (out.kind != "crash" && out.kind != "hang" && out.kind != "gpu-oom")) {
      std::fprintf(stderr, "bench: PARBENCH_TEST_FAULT=%s is not crash|hang|gpu-oom:REGEX; ignored\n", v);
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
  if (!f.active || !std::regex_search(instance_name, f.pattern)) return;
  std::fprintf(stderr, "bench: PARBENCH_TEST_FAULT: %s in %s\n", f.kind.c_str(), instance_name.c_str());
  std::fflush(stderr);
  if (f.kind == "crash") std::abort();
  if (f.kind == "hang") {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (f.kind == "gpu-oom") exhaust_gpu_memory();
}

}  // namespace pb
