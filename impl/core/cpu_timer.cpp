#include <chrono>
#include <utility>

#include "core/job.hpp"
#include "core/mpi.hpp"

namespace pb {
namespace {
// Wall clock: a parallel CPU variant's cost is elapsed time, not the CPU time
// of the calling thread (which is all Google Benchmark's CPU timer sees).
class CpuTimer final : public Timer {
 public:
  double time(Job& job) override {
    auto t0 = std::chrono::steady_clock::now();
    job.run();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
  }
  std::unique_ptr<energy::Meter> energy_meter() const override { return energy::make_rapl_meter(); }
};
// Ranks may share a host's RAPL zones or not: no figure until the ranks'
// hosts are told apart.
std::unique_ptr<energy::Meter> mpi_meter() {
  return energy::make_unavailable_meter("MPI runs are not metered (ranks may share a host's counters)");
}
class MpiTimer final : public Timer {
 public:
  double time(Job& job) override {
    mpi::barrier();
    auto t0 = std::chrono::steady_clock::now();
    job.run();
    auto t1 = std::chrono::steady_clock::now();
    return mpi::max(std::chrono::duration<double>(t1 - t0).count());
  }
  std::unique_ptr<energy::Meter> energy_meter() const override { return mpi_meter(); }
};
class MpiOf final : public Timer {
 public:
  explicit MpiOf(std::unique_ptr<Timer> inner) : inner_(std::move(inner)) {}
  double time(Job& job) override {
    mpi::barrier();
    return mpi::max(inner_->time(job));
  }
  void add_counters(Counters& out) const override { inner_->add_counters(out); }
  std::unique_ptr<energy::Meter> energy_meter() const override { return mpi_meter(); }

 private:
  std::unique_ptr<Timer> inner_;
};
}  // namespace

std::unique_ptr<Timer> make_mpi_timer(std::unique_ptr<Timer> inner) {
  return std::make_unique<MpiOf>(std::move(inner));
}
std::unique_ptr<Timer> make_mpi_timer() { return std::make_unique<MpiTimer>(); }
std::unique_ptr<Timer> make_cpu_timer() { return std::make_unique<CpuTimer>(); }

}  // namespace pb
