// The interconnect ceilings through the Job contract (core/job.hpp), as the
// registrar drives them: on a host of two GPUs or more every peer copy and
// collective verifies element by element, and a check before any run fails
// (the destination holds zeros, which the inputs never are); on one GPU each
// says how many GPUs it needs. GPU tests: the suite's name starts with Gpu.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ceiling/ceiling.hpp"
#include "core/gpu.hpp"
#include "gemm/registry.hpp"
#include "tests/gpu_test.hpp"

namespace pb {
namespace {

// The Ceiling's GEMM rates name GEMM's vendor variants by type: each name
// they stand for is a registry entry in both precisions (cuBLAS where built).
TEST(Ceiling, VendorGemmsAreRegistryEntries) {
  std::vector<gemm::Vendor> vendors{gemm::Vendor::OpenBLAS};
#ifdef PARBENCH_WITH_CUDA
  vendors.push_back(gemm::Vendor::cuBLAS);
#endif
  for (const auto v : vendors) {
    EXPECT_NE(find_entry(gemm::registry<float>(), gemm::variant_of(v)), nullptr) << gemm::variant_of(v);
    EXPECT_NE(find_entry(gemm::registry<double>(), gemm::variant_of(v)), nullptr) << gemm::variant_of(v);
  }
}

#ifdef PARBENCH_WITH_CUDA
struct Made {
  std::string what;
  std::unique_ptr<Job> job;
  const char* rate;  // the counter its entry is read by
};

std::vector<Made> interconnect_jobs(std::int64_t bytes) {
  std::vector<Made> out;
  out.push_back({"P2P 0 to 1", ceiling::make_peer_copy(0, 1, bytes), "GBps"});
  out.push_back({"P2P 1 to 0", ceiling::make_peer_copy(1, 0, bytes), "GBps"});
  out.push_back(
      {"all-reduce over 2", ceiling::make_collective(ceiling::Link::AllReduce, 2, bytes), "busbw_GBps"});
  out.push_back(
      {"send/receive over 2", ceiling::make_collective(ceiling::Link::SendRecv, 2, bytes), "busbw_GBps"});
  return out;
}

TEST(GpuCeiling, InterconnectVerifiesOrSaysHowManyGpusItNeeds) {
  PB_SKIP_WITHOUT_GPU();
  const int visible = gpu_status().count;
  for (auto& m : interconnect_jobs(std::int64_t(1) << 20)) {
    SCOPED_TRACE(m.what);
    const Support s = m.job->supports();
    if (visible < 2) {
      EXPECT_FALSE(s.ok());
      EXPECT_TRUE(s.reason.find("needs 2 GPUs, 1 visible") != std::string::npos ||
                  s.reason.find("built without NCCL") != std::string::npos)
          << s.reason;
      continue;
    }
    if (s.reason.find("built without NCCL") != std::string::npos) continue;
    ASSERT_TRUE(s.ok()) << s.reason;
    m.job->prepare();
    m.job->reset();
    EXPECT_FALSE(m.job->check().passed);  // nothing copied yet: zeros where the inputs never are
    const auto timer = make_cuda_timer(m.job->cuda_stream(), TimerOptions{});
    EXPECT_GT(timer->time(*m.job), 0.0);
    const Check c = m.job->check();
    EXPECT_TRUE(c.passed) << c.message;
    EXPECT_EQ(c.method, "full");
    Counters out;
    m.job->report(out, 1e-3, 1);  // 1 MiB in 1 ms
    const std::map<std::string, double> got(out.begin(), out.end());
    ASSERT_EQ(got.count(m.rate), 1u);
    EXPECT_DOUBLE_EQ(got.at("bytes_per_call"), double(1 << 20));
    EXPECT_GT(got.at(m.rate), 0.0);
  }
}
#endif

}  // namespace
}  // namespace pb
