// GPU probing, the JSON context of the GPU, and the CUDA event timer.
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>

#include "core/cuda/check.cuh"
#include "core/cuda/nvml.hpp"
#include "core/gpu.hpp"

namespace pb {
namespace {

std::string pci_bus_id(int dev) {
  char buf[32] = {};
  if (cudaDeviceGetPCIBusId(buf, sizeof buf, dev) != cudaSuccess) return {};
  return buf;
}

bool idle_start = false;

// Keeps the GPU busy for about `cycles` SM clocks.
__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Events on the job's stream bracket run(). Recorded on an idle GPU, the start
// event is stamped at once and run()'s first kernel only when the host has
// launched it, so the interval holds the host's launch latency, which is a
// large and variable part of a short kernel's time (measured:
// docs/perf/timing.md). So unless --gpu-idle-start, a 30 us spin
// kernel goes first: while it runs the host records the start event and
// launches run()'s work, and the GPU goes from the event straight into it. A
// run() that waits for the host inside is timed as before, waits included.
// An optional memset of twice the L2 size before the start event evicts the
// previous iteration's data (and keeps the GPU busy the same way). The SM
// clock and the clocks-event reasons are sampled while each timed run is still
// executing, so a run slowed by power or heat is visible in its counters.
class CudaTimer final : public Timer {
 public:
  // The events, the spin and the clocks are those of the stream's device (a
  // rank of an MPI x GPU job times its own GPU).
  CudaTimer(void* stream, const TimerOptions& opt) : stream_(static_cast<cudaStream_t>(stream)) {
    PB_CUDA(cudaGetDevice(&home_));
    dev_ = home_;
    if (stream_) PB_CUDA(cudaStreamGetDevice(stream_, &dev_));
    pci_ = pci_bus_id(dev_);
    const OnDevice on(dev_, home_);
    PB_CUDA(cudaEventCreate(&start_));
    PB_CUDA(cudaEventCreate(&stop_));
    if (opt.flush_l2) {
      flush_bytes_ = 2 * std::max<std::size_t>(gpu_status().l2_bytes, 1 << 20);
      PB_CUDA(cudaMalloc(&flush_, flush_bytes_));
    }
    nvml::max_sm_clock(pci_.c_str(), max_mhz_);
    int khz = 0;
    PB_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev_));
    spin_cycles_ = static_cast<long long>(khz) * 30 / 1000;  // 30 us at the rated clock
  }
  ~CudaTimer() override {
    const OnDevice on(dev_, home_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    if (flush_) cudaFree(flush_);
  }

  double time(Job& job) override {
    const OnDevice on(dev_, home_);
    if (flush_) {
      PB_CUDA(cudaMemsetAsync(flush_, ++flush_value_ & 0xff, flush_bytes_, stream_));
    } else if (!idle_start) {
      spin<<<1, 1, 0, stream_>>>(spin_cycles_);
      PB_CUDA(cudaGetLastError());
    }
    PB_CUDA(cudaEventRecord(start_, stream_));
    job.run();
    PB_CUDA(cudaEventRecord(stop_, stream_));
    nvml::Clocks c;
    if (nvml::sample(pci_.c_str(), c)) {
      ++samples_;
      min_mhz_ = std::min(min_mhz_, c.sm_mhz);
      max_seen_mhz_ = std::max(max_seen_mhz_, c.sm_mhz);
      reasons_ |= c.reasons;
    }
    PB_CUDA(cudaEventSynchronize(stop_));
    PB_CUDA(cudaGetLastError());
    float ms = 0.f;
    PB_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

  void add_counters(Counters& out) const override {
    if (samples_ == 0) return;
    out.emplace_back("sm_clock_min_mhz", min_mhz_);
    out.emplace_back("sm_clock_max_mhz", max_seen_mhz_);
    if (max_mhz_) out.emplace_back("sm_clock_limit_mhz", max_mhz_);
    out.emplace_back("clock_event_reasons", static_cast<double>(reasons_));
    out.emplace_back("throttled", (reasons_ & nvml::kSlowdownMask) ? 1.0 : 0.0);
  }
  std::unique_ptr<energy::Meter> energy_meter() const override { return nvml::make_meter({pci_}); }

 private:
  // The timer's device current for a scope, then the one that was: switched
  // only where they differ (one GPU's jobs never switch).
  struct OnDevice {
    OnDevice(int dev, int home) : dev_(dev), home_(home) {
      if (dev_ != home_) PB_CUDA(cudaSetDevice(dev_));
    }
    ~OnDevice() {
      if (dev_ != home_) cudaSetDevice(home_);
    }
    int dev_, home_;
  };
  cudaStream_t stream_;
  int home_ = 0, dev_ = 0;  // the device current when made, and the stream's
  std::string pci_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  int flush_value_ = 0;
  long long spin_cycles_ = 0;
  unsigned max_mhz_ = 0, min_mhz_ = ~0u, max_seen_mhz_ = 0;
  unsigned long long reasons_ = 0;
  long samples_ = 0;
};

}  // namespace

void set_gpu_idle_start(bool idle) { idle_start = idle; }

std::size_t exhaust_gpu_memory() {
  if (!gpu_status().available) return 0;
  std::size_t taken = 0;
  for (std::size_t chunk = std::size_t(1) << 34; chunk >= (std::size_t(1) << 20);) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) == cudaSuccess) {
      taken += chunk;  // kept on purpose: the point is that nothing is left
    } else {
      cudaGetLastError();  // clear the allocation error
      chunk /= 2;
    }
  }
  return taken;
}
bool gpu_idle_start() { return idle_start; }

std::string current_gpu_name() {
  int dev = 0;
  cudaDeviceProp p{};
  if (!gpu_status().available || cudaGetDevice(&dev) != cudaSuccess ||
      cudaGetDeviceProperties(&p, dev) != cudaSuccess)
    return "";
  return p.name;
}

const GpuStatus& gpu_status() {
  static GpuStatus s;
  static std::once_flag once;
  std::call_once(once, [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      // The cause in words: no driver at all (a machine without a GPU) and a
      // driver older than the runtime both read cudaErrorInsufficientDriver.
      int driver = 0, runtime = 0;
      cudaDriverGetVersion(&driver);
      cudaRuntimeGetVersion(&runtime);
      auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
      if (e == cudaErrorInsufficientDriver && driver == 0)
        s.reason = "no GPU here: no NVIDIA driver is installed";
      else if (e == cudaErrorInsufficientDriver)
        s.reason = "the NVIDIA driver supports CUDA " + ver(driver) + ", older than this build's CUDA " +
                   ver(runtime) + ": update the driver";
      else if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0))
        s.reason = "no GPU here: the NVIDIA driver sees no CUDA device";
      else
        s.reason =
            std::string("no usable CUDA device (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
      cudaGetLastError();
      return;
    }
    cudaDeviceProp p{};
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) {
      s.reason = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(e);
      return;
    }
    s.available = true;
    s.count = n;
    s.name = p.name;
    s.sm_count = p.multiProcessorCount;
    s.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    s.memory_bytes = p.totalGlobalMem;
    s.shared_optin_bytes = p.sharedMemPerBlockOptin;
  });
  return s;
}

std::unique_ptr<energy::Meter> gpus_energy_meter(int gpus) {
  std::vector<std::string> pcis;
  for (int g = 0; g < gpus; ++g) pcis.push_back(pci_bus_id(g));
  return nvml::make_meter(pcis);
}

std::unique_ptr<Timer> make_cuda_timer(void* stream, const TimerOptions& opt) {
  return std::make_unique<CudaTimer>(stream, opt);
}

std::vector<std::pair<std::string, std::string>> gpu_context() {
  std::vector<std::pair<std::string, std::string>> out;
  const auto& s = gpu_status();
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  out.emplace_back("cuda_runtime", ver(runtime));
  out.emplace_back("cuda_driver_api", driver ? ver(driver) : "none");
  if (!s.available) {
    out.emplace_back("gpu", "none (" + s.reason + ")");
    return out;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return out;
  int sm_khz = 0, mem_khz = 0;
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
  out.emplace_back("gpu", s.name);
  out.emplace_back("gpu_compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor));
  out.emplace_back("gpu_sm_count", std::to_string(s.sm_count));
  out.emplace_back("gpu_sm_clock_max_mhz", std::to_string(sm_khz / 1000));
  out.emplace_back("gpu_memory_clock_mhz", std::to_string(mem_khz / 1000));
  out.emplace_back("gpu_memory_bus_bits", std::to_string(p.memoryBusWidth));
  out.emplace_back("gpu_memory_gib", std::to_string(s.memory_bytes / double(1ull << 30)));
  out.emplace_back("gpu_l2_bytes", std::to_string(s.l2_bytes));
  out.emplace_back("gpu_shared_per_block_optin", std::to_string(p.sharedMemPerBlockOptin));
  out.emplace_back("gpu_pci_bus_id", pci_bus_id(0));
  // How the visible GPUs reach each other: "0-1:p2p" where one can read the
  // other's memory directly (NVLink or PCIe peer to peer), "0-1:host" where
  // copies go through host memory. Multi-GPU results depend on it.
  out.emplace_back("gpu_count", std::to_string(s.count));
  std::string links;
  for (int a = 0; a < s.count; ++a)
    for (int b = a + 1; b < s.count; ++b) {
      int ab = 0, ba = 0;
      if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess ||
          cudaDeviceCanAccessPeer(&ba, b, a) != cudaSuccess)
        cudaGetLastError();
      links += (links.empty() ? "" : ",") + std::to_string(a) + "-" + std::to_string(b) +
               (ab && ba ? ":p2p" : ":host");
    }
  out.emplace_back("gpu_links", links.empty() ? "one GPU" : links);
  std::string drv;
  out.emplace_back("gpu_driver", nvml::driver_version(drv) ? drv : "unknown (NVML not loaded)");
  // The power limits of GPU 0, which energy and power figures depend on:
  // the one set, and the one the driver enforces (the lower of it and
  // others', such as a host's cap).
  unsigned limit = 0, enforced = 0;
  const bool limits = nvml::power_limits(pci_bus_id(0).c_str(), limit, enforced);
  out.emplace_back("gpu_power_limit_w", limits ? std::to_string(limit / 1000) : "unknown");
  out.emplace_back("gpu_power_limit_enforced_w", limits ? std::to_string(enforced / 1000) : "unknown");
  return out;
}

}  // namespace pb
