#include "core/cuda/nvml.hpp"

#include <dlfcn.h>

#include <mutex>

namespace pb::nvml {
namespace {
using Device = void*;
using InitFn = int (*)();
using StrFn = int (*)(char*, unsigned);
using ByPciFn = int (*)(const char*, Device*);
using ClockFn = int (*)(Device, int, unsigned*);
using ReasonsFn = int (*)(Device, unsigned long long*);

constexpr int kClockSm = 1;  // NVML_CLOCK_SM

struct Lib {
  bool ok = false;
  StrFn driver = nullptr;
  ByPciFn by_pci = nullptr;
  ClockFn clock = nullptr, max_clock = nullptr;
  ReasonsFn reasons = nullptr;
};

const Lib& lib() {
  static Lib l;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    auto init = reinterpret_cast<InitFn>(dlsym(h, "nvmlInit_v2"));
    l.driver = reinterpret_cast<StrFn>(dlsym(h, "nvmlSystemGetDriverVersion"));
    l.by_pci = reinterpret_cast<ByPciFn>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    l.clock = reinterpret_cast<ClockFn>(dlsym(h, "nvmlDeviceGetClockInfo"));
    l.max_clock = reinterpret_cast<ClockFn>(dlsym(h, "nvmlDeviceGetMaxClockInfo"));
    l.reasons = reinterpret_cast<ReasonsFn>(dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!l.reasons)
      l.reasons = reinterpret_cast<ReasonsFn>(dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    l.ok = init && l.by_pci && l.clock && init() == 0;
  });
  return l;
}

bool handle(const char* pci, Device& d) { return lib().ok && lib().by_pci(pci, &d) == 0; }
}  // namespace

bool driver_version(std::string& out) {
  char buf[96] = {};
  if (!lib().ok || !lib().driver || lib().driver(buf, sizeof buf) != 0) return false;
  out = buf;
  return true;
}

bool max_sm_clock(const char* pci, unsigned& mhz) {
  Device d;
  return handle(pci, d) && lib().max_clock && lib().max_clock(d, kClockSm, &mhz) == 0;
}

bool sample(const char* pci, Clocks& out) {
  Device d;
  if (!handle(pci, d) || lib().clock(d, kClockSm, &out.sm_mhz) != 0) return false;
  if (lib().reasons) lib().reasons(d, &out.reasons);
  return true;
}

}  // namespace pb::nvml
