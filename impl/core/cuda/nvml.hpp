#pragma once
// Just enough of NVML, loaded at run time with dlopen: the driver ships
// libnvidia-ml.so.1, the toolkit does not, and a build host without a driver
// must still start the binary. Every function fails soft (returns false).
#include <memory>
#include <string>
#include <vector>

#include "core/energy.hpp"

namespace pb::nvml {

struct Clocks {
  unsigned sm_mhz = 0;
  unsigned long long reasons = 0;  // clocks-event (throttle) reason bits
};

bool driver_version(std::string& out);
bool max_sm_clock(const char* pci_bus_id, unsigned& mhz);
bool sample(const char* pci_bus_id, Clocks& out);
// Energy since the driver loaded (millijoules); false with NVML's reason.
bool total_energy(const char* pci_bus_id, unsigned long long& mj, std::string& why);
// Power now (milliwatts; the device's own average), and its power limits:
// the one set and the one enforced (milliwatts).
bool power(const char* pci_bus_id, unsigned& mw, std::string& why);
bool power_limits(const char* pci_bus_id, unsigned& limit_mw, unsigned& enforced_mw);

// The meter of the GPUs at `pci_bus_ids` (core/energy.hpp): each one's
// total-energy counter polled every millisecond on a thread while the calls
// run, or where the counter is not supported its power samples, integrated;
// several GPUs' energies summed (energy::sum).
std::unique_ptr<energy::Meter> make_meter(const std::vector<std::string>& pci_bus_ids);

// Reasons that mean the clock was held down by power or heat, not by idleness
// or an application-clock setting: SW power cap, HW slowdown, SW/HW thermal,
// HW power brake.
inline constexpr unsigned long long kSlowdownMask = 0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull;

}  // namespace pb::nvml
