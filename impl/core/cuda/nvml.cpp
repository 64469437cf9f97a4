#include "core/cuda/nvml.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace pb::nvml {
namespace {
using Device = void*;
using InitFn = int (*)();
using StrFn = int (*)(char*, unsigned);
using ByPciFn = int (*)(const char*, Device*);
using ClockFn = int (*)(Device, int, unsigned*);
using ReasonsFn = int (*)(Device, unsigned long long*);
using EnergyFn = int (*)(Device, unsigned long long*);
using UintFn = int (*)(Device, unsigned*);
using ErrorFn = const char* (*)(int);

constexpr int kClockSm = 1;  // NVML_CLOCK_SM

struct Lib {
  bool ok = false;
  StrFn driver = nullptr;
  ByPciFn by_pci = nullptr;
  ClockFn clock = nullptr, max_clock = nullptr;
  ReasonsFn reasons = nullptr;
  EnergyFn energy = nullptr;
  UintFn power = nullptr, limit = nullptr, enforced = nullptr;
  ErrorFn error = nullptr;
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
    l.energy = reinterpret_cast<EnergyFn>(dlsym(h, "nvmlDeviceGetTotalEnergyConsumption"));
    l.power = reinterpret_cast<UintFn>(dlsym(h, "nvmlDeviceGetPowerUsage"));
    l.limit = reinterpret_cast<UintFn>(dlsym(h, "nvmlDeviceGetPowerManagementLimit"));
    l.enforced = reinterpret_cast<UintFn>(dlsym(h, "nvmlDeviceGetEnforcedPowerLimit"));
    l.error = reinterpret_cast<ErrorFn>(dlsym(h, "nvmlErrorString"));
    l.ok = init && l.by_pci && l.clock && init() == 0;
  });
  return l;
}

bool handle(const char* pci, Device& d) { return lib().ok && lib().by_pci(pci, &d) == 0; }

// NVML's words for a return code.
std::string error_of(int rc) {
  const char* s = lib().error ? lib().error(rc) : nullptr;
  return "NVML: " + std::string(s ? s : "error " + std::to_string(rc));
}
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

namespace {
// One reading of device d by NVML function `fn` (named `name`), or false with why.
template <class T>
bool read_one(Device d, int (*fn)(Device, T*), const char* name, T& out, std::string& why) {
  if (!fn) return why = std::string("NVML has no ") + name, false;
  const int rc = fn(d, &out);
  return rc == 0 || (why = error_of(rc), false);
}
// The same of the GPU at `pci`.
template <class T>
bool read_one(const char* pci, int (*fn)(Device, T*), const char* name, T& out, std::string& why) {
  Device d;
  if (!handle(pci, d)) return why = "NVML is not loaded or does not know this GPU", false;
  return read_one(d, fn, name, out, why);
}
}  // namespace

bool total_energy(const char* pci, unsigned long long& mj, std::string& why) {
  return read_one(pci, lib().energy, "nvmlDeviceGetTotalEnergyConsumption", mj, why);
}

bool power(const char* pci, unsigned& mw, std::string& why) {
  return read_one(pci, lib().power, "nvmlDeviceGetPowerUsage", mw, why);
}

bool power_limits(const char* pci, unsigned& limit_mw, unsigned& enforced_mw) {
  Device d;
  return handle(pci, d) && lib().limit && lib().enforced && lib().limit(d, &limit_mw) == 0 &&
         lib().enforced(d, &enforced_mw) == 0;
}

namespace {

// Polls each device's reading on a thread of its own, a read and then a
// millisecond's sleep, from begin() to end(): few enough reads to leave the
// timed calls alone, and each end of an energy window known to about a read
// and a millisecond. A thread per device, since one thread reading several
// GPUs in turn widens every GPU's gaps by the others' reads; each device is
// windowed on its own steps, then summed.
class PolledMeter final : public energy::Meter {
 public:
  explicit PolledMeter(std::vector<std::string> pcis) : pcis_(std::move(pcis)) {}
  ~PolledMeter() override { stop(); }
  void begin() override {
    stop();
    calls_.clear();
    why_.clear();
    devices_.assign(pcis_.size(), nullptr);
    samples_.assign(pcis_.size(), {});
    counter_ = true;
    for (std::size_t i = 0; i < pcis_.size() && why_.empty(); ++i) {
      unsigned long long mj = 0;
      unsigned mw = 0;
      std::string no_energy, no_power;
      if (!handle(pcis_[i].c_str(), devices_[i])) {
        why_ = "NVML is not loaded or does not know this GPU";
      } else if (counter_ &&
                 read_one(devices_[i], lib().energy, "nvmlDeviceGetTotalEnergyConsumption", mj, no_energy)) {
      } else if (read_one(devices_[i], lib().power, "nvmlDeviceGetPowerUsage", mw, no_power)) {
        counter_ = false;  // one device without the counter: all integrate power, alike
      } else {
        why_ = "no energy counter (" + no_energy + ") and no power reading (" + no_power + ")";
      }
      if (!why_.empty() && pcis_.size() > 1) why_ = "GPU " + std::to_string(i) + ": " + why_;
    }
    if (!why_.empty()) return;
    running_ = true;
    for (std::size_t i = 0; i < devices_.size(); ++i)
      pollers_.emplace_back([this, i] {
        const auto period = std::chrono::milliseconds(1);
        while (running_) {
          read(i);
          std::this_thread::sleep_for(period);
        }
        read(i);
      });
  }
  energy::Result end() override {
    stop();
    if (!why_.empty()) {
      energy::Result r;
      r.reason = why_;
      return r;
    }
    std::vector<energy::Result> parts;
    for (const auto& s : samples_) {
      parts.push_back(counter_ ? energy::stepped_window(s, calls_) : energy::integrated_power(s, calls_));
      parts.back().source = counter_ ? "NVML total energy" : "NVML power samples";
    }
    return energy::sum(parts);
  }

 private:
  // One reading of device i into its samples, with how long the read took.
  void read(std::size_t i) {
    std::string why;
    const double before = energy::now();
    if (counter_) {
      unsigned long long mj = 0;
      if (read_one(devices_[i], lib().energy, "", mj, why)) {
        const double t = energy::now();
        samples_[i].push_back({t, double(mj) * 1e-3, t - before});
      }
    } else {
      unsigned mw = 0;
      if (read_one(devices_[i], lib().power, "", mw, why)) {
        const double t = energy::now();
        samples_[i].push_back({t, double(mw) * 1e-3, t - before});
      }
    }
  }
  void stop() {
    running_ = false;
    for (auto& p : pollers_)
      if (p.joinable()) p.join();
    pollers_.clear();
  }
  std::vector<std::string> pcis_;
  std::vector<Device> devices_;  // looked up once a window, not at every poll
  std::string why_;
  bool counter_ = true;
  std::atomic<bool> running_{false};
  std::vector<std::thread> pollers_;
  std::vector<std::vector<energy::Sample>> samples_;  // [i] is poller i's alone until it is joined
};

}  // namespace

std::unique_ptr<energy::Meter> make_meter(const std::vector<std::string>& pci_bus_ids) {
  return std::make_unique<PolledMeter>(pci_bus_ids);
}

}  // namespace pb::nvml
