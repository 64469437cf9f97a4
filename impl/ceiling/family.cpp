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
  // A vendor's GEMM at its best: on the CPU with every core, which the run
  // name and the counters say (threads, cpu_threads); GFLOPS read as the
  // ceiling of `kind`.
  const std::vector<std::pair<std::string, std::string>> mnk{
      {"M", std::to_string(n)}, {"N", std::to_string(n)}, {"K", std::to_string(n)}};
  auto add_gemm = [&](RunName name, gemm::Vendor vendor, gemm::Scalar scalar, gemm::Precision prec,
                      Backend backend, const char* kind) {
    RegisterOptions r = gemm_ro;
    r.backend = backend;
    r.rate = Rate{"GFLOPS", kind};
    Knobs k;
    if (backend == Backend::Cpu) {
      name.args.emplace_back("threads", std::to_string(cores));
      r.axes.emplace_back("cpu_threads", cores);
      k.threads = cores;
    }
    gemm::Problem q = p;
    q.prec = prec;
    register_gemm_instance(name, vendor, scalar, k, q, seed, r);
  };
  using gemm::Precision;
  using gemm::Scalar;
  using gemm::Vendor;
  add_gemm(RunName{"Ceiling", "OpenBLAS.DGEMM", mnk}, Vendor::OpenBLAS, Scalar::F64, Precision::Native,
           Backend::Cpu, "gemm_f64");
  add_gemm(RunName{"Ceiling", "OpenBLAS.SGEMM", mnk}, Vendor::OpenBLAS, Scalar::F32, Precision::Native,
           Backend::Cpu, "gemm_f32");
#ifdef PARBENCH_WITH_CUDA
  add_gemm(RunName{"Ceiling", "cuBLAS.SGEMM", mnk}, Vendor::cuBLAS, Scalar::F32, Precision::Native,
           Backend::Cuda, "gemm_f32");
  add_gemm(RunName{"Ceiling", "cuBLAS.DGEMM", mnk}, Vendor::cuBLAS, Scalar::F64, Precision::Native,
           Backend::Cuda, "gemm_f64");
  add_gemm(RunName{"Ceiling", "cuBLAS.TF32", mnk}, Vendor::cuBLAS, Scalar::F32, Precision::TF32,
           Backend::Cuda, "gemm_tf32");
  add_gemm(RunName{"Ceiling", "cuBLAS.BF16", mnk}, Vendor::cuBLAS, Scalar::F32, Precision::BF16,
           Backend::Cuda, "gemm_bf16");
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
