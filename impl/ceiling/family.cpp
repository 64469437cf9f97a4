// Ceiling family: the limits every other number is read against, measured in
// the same run. Run names: Ceiling/<what>/... with GBps (bandwidth) or GFLOPS.
//   HostTriad        STREAM triad over 3 x 512 MiB, every core
//   OpenBLAS.DGEMM   OpenBLAS at every core, and .SGEMM
//   cuBLAS.SGEMM     plain FP32 (no TF32), and .DGEMM; .TF32 and .BF16 on the
//                    tensor cores (float accumulate; the tf32 / bf16 GEMM types)
//   CUDA.Copy        device-to-device cudaMemcpyAsync of 1 GiB
//   CUDA.P2P         a peer copy from GPU src to GPU dst, every ordered pair
//   NCCL.AllReduce   over 2, 4, ... and all visible GPUs, and NCCL.SendRecv
//                    (interconnect.cu: nccl-tests' algorithm and bus bandwidth)
// Sizes shrink in the smoke profile; the GEMMs grow to 8192 in full. With
// fewer than two GPUs the interconnect entries are registered once each, as
// unsupported entries saying how many GPUs they need.
#include "core/family.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "ceiling/ceiling.hpp"
#include "core/gpu.hpp"
#include "gemm/registry.hpp"

namespace pb {

#ifdef PARBENCH_WITH_CUDA
// Every ordered pair of the visible GPUs, and the collectives over 2, 4, ...
// GPUs and over all of them.
static void register_interconnect(RegisterOptions ro, std::int64_t bytes) {
  declare_counter("algbw_GBps", CounterKind::Rate, "GB/s");
  declare_counter("busbw_GBps", CounterKind::Rate, "GB/s");
  declare_counter("p2p_access", CounterKind::Flag);
  const int gpus = std::max(2, gpu_status().count);
  ro.backend = Backend::Cuda;
  ro.code = "impl/ceiling/interconnect.cu";
  const std::string b = std::to_string(bytes);
  auto p2p = ro;
  p2p.rate = Rate{"GBps", "p2p"};
  p2p.axes = {{"bytes", double(bytes)}};
  p2p.gpus = 2;
  for (int src = 0; src < gpus; ++src)
    for (int dst = 0; dst < gpus; ++dst)
      if (src != dst)
        register_job(
            RunName{"Ceiling",
                    "CUDA.P2P",
                    {{"src", std::to_string(src)}, {"dst", std::to_string(dst)}, {"bytes", b}}},
            [src, dst, bytes] { return ceiling::make_peer_copy(src, dst, bytes); }, p2p);
  std::vector<int> counts;
  for (int g = 2; g < gpus; g *= 2) counts.push_back(g);
  counts.push_back(gpus);
  for (const auto& [what, name, kind] :
       {std::tuple{ceiling::Link::AllReduce, "NCCL.AllReduce", "nccl_allreduce"},
        std::tuple{ceiling::Link::SendRecv, "NCCL.SendRecv", "nccl_sendrecv"}})
    for (int g : counts) {
      auto r = ro;
      r.rate = Rate{"busbw_GBps", kind};
      r.throughput = Throughput().bytes(Show::Model);  // the rates under nccl-tests' names (report())
      r.axes = {{"bytes", double(bytes)}, {"gpus", double(g)}};
      r.gpus = g;
      const ceiling::Link link = what;
      register_job(
          RunName{"Ceiling", name, {{"gpus", std::to_string(g)}, {"bytes", b}}},
          [link, g, bytes] { return ceiling::make_collective(link, g, bytes); }, r);
    }
}
#endif

static void register_ceiling(const Options& opt) {
  const bool smoke = opt.profile == Profile::Smoke;
  const std::int64_t n = smoke ? 256 : opt.profile == Profile::Full ? 8192 : 4096;
  const std::int64_t triad = smoke ? (std::int64_t(1) << 20) : (std::int64_t(1) << 26);  // doubles per array
  const std::int64_t copy = smoke ? (std::int64_t(8) << 20) : (std::int64_t(1) << 30);   // bytes
  const int cores = core_count();
  const std::uint64_t seed = opt.seed;

  declare_counter("elements", CounterKind::Problem);
  declare_counter("bytes", CounterKind::Problem);

  RegisterOptions ro;
  ro.flush_l2 = opt.flush_l2;
  ro.role = Role::Ceiling;
  ro.ceiling_seconds = smoke ? 0.05 : 0.5;  // runs each call takes its best from (registrar.cpp)
  ro.rate = Rate{"GBps", "bandwidth"};
  ro.throughput = Throughput().bytes(Show::RateAndModel);
  ro.axes = {{"elements", double(triad)}, {"cpu_threads", double(cores)}};
  ro.code = "impl/ceiling/triad.cpp";
  register_job(
      RunName{"Ceiling", "HostTriad", {{"n", std::to_string(triad)}, {"threads", std::to_string(cores)}}},
      [triad, cores, seed] { return ceiling::make_host_triad(triad, cores, seed); }, ro);

  const gemm::Problem p{gemm::Op::AB, n, n, n};
  auto gemm_ro = ro;
  gemm_ro.axes = {{"M", double(n)}, {"N", double(n)}, {"K", double(n)}};
  auto gemm_name = [&](const char* what, bool threads) {
    RunName r{
        "Ceiling", what, {{"M", std::to_string(n)}, {"N", std::to_string(n)}, {"K", std::to_string(n)}}};
    if (threads) r.args.emplace_back("threads", std::to_string(cores));
    return r;
  };
  auto cpu_ro = gemm_ro;
  cpu_ro.axes.emplace_back("cpu_threads", cores);
  auto f64 = [](RegisterOptions r) {
    r.rate = Rate{"GFLOPS", "gemm_f64"};
    return r;
  };
  auto f32 = [](RegisterOptions r) {
    r.rate = Rate{"GFLOPS", "gemm_f32"};
    return r;
  };
  register_gemm_instance(gemm_name("OpenBLAS.DGEMM", true), gemm::Vendor::OpenBLAS, true, {cores, 0}, p, seed,
                         f64(cpu_ro));
  register_gemm_instance(gemm_name("OpenBLAS.SGEMM", true), gemm::Vendor::OpenBLAS, false, {cores, 0}, p,
                         seed, f32(cpu_ro));
#ifdef PARBENCH_WITH_CUDA
  gemm_ro.backend = Backend::Cuda;
  register_gemm_instance(gemm_name("cuBLAS.SGEMM", false), gemm::Vendor::cuBLAS, false, {}, p, seed,
                         f32(gemm_ro));
  register_gemm_instance(gemm_name("cuBLAS.DGEMM", false), gemm::Vendor::cuBLAS, true, {}, p, seed,
                         f64(gemm_ro));
  for (const auto& [what, prec, kind] : {std::tuple{"cuBLAS.TF32", gemm::Precision::TF32, "gemm_tf32"},
                                         std::tuple{"cuBLAS.BF16", gemm::Precision::BF16, "gemm_bf16"}}) {
    auto r = gemm_ro;
    r.rate = Rate{"GFLOPS", kind};
    gemm::Problem q = p;
    q.prec = prec;
    register_gemm_instance(gemm_name(what, false), gemm::Vendor::cuBLAS, false, {}, q, seed, r);
  }
  auto copy_ro = ro;
  copy_ro.backend = Backend::Cuda;
  copy_ro.axes = {{"bytes", double(copy)}};
  copy_ro.code = "impl/ceiling/copy.cu";
  register_job(
      RunName{"Ceiling", "CUDA.Copy", {{"bytes", std::to_string(copy)}}},
      [copy, seed] { return ceiling::make_device_copy(copy, seed); }, copy_ro);
  register_interconnect(ro, smoke ? (std::int64_t(8) << 20) : (std::int64_t(256) << 20));
#else
  (void)copy;
#endif
}

Family ceiling_family() { return {"Ceiling", nullptr, register_ceiling, nullptr}; }

}  // namespace pb
