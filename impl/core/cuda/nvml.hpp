#pragma once
// Just enough of NVML, loaded at run time with dlopen: the driver ships
// libnvidia-ml.so.1, the toolkit does not, and a build host without a driver
// must still start the binary. Every function fails soft (returns false).
#include <string>

namespace pb::nvml {

struct Clocks {
  unsigned sm_mhz = 0;
  unsigned long long reasons = 0;  // clocks-event (throttle) reason bits
};

bool driver_version(std::string& out);
bool max_sm_clock(const char* pci_bus_id, unsigned& mhz);
bool sample(const char* pci_bus_id, Clocks& out);

// Reasons that mean the clock was held down by power or heat, not by idleness
// or an application-clock setting: SW power cap, HW slowdown, SW/HW thermal,
// HW power brake.
inline constexpr unsigned long long kSlowdownMask = 0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull;

}  // namespace pb::nvml
