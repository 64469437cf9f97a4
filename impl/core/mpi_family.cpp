#include "core/mpi_family.hpp"

#include <algorithm>
#include <thread>

#include "core/gpu.hpp"
#include "core/mpi.hpp"

namespace pb::mpi {
namespace {
// Cores of this host, whatever the affinity mpirun gave this rank.
int host_cores() { return std::max(1, int(std::thread::hardware_concurrency())); }
}  // namespace

Check root_verdict(const std::function<Check()>& check) {
  Check c;
  if (rank() == 0) c = check();
  if (!root_says(c.passed) && rank() != 0) c = Check{false, "rank 0 found the result incorrect", ""};
  return c;
}

std::vector<int> thread_axis(const Options& opt, const std::vector<int>& threads) {
  if (opt.threads || opt.oversubscribe) return threads;
  std::vector<int> out;
  for (int t : threads)
    if (std::int64_t(local_size()) * t <= host_cores()) out.push_back(t);
  if (out.empty()) out.push_back(1);
  return out;
}

void check_grid(const Options& opt, const std::string& who, std::int64_t items, const std::string& items_text,
                const std::vector<int>& threads) {
  const int ranks = size();
  if (items < ranks)
    throw UsageError(who + ": more ranks (" + std::to_string(ranks) + ") than " + items_text);
  // One rank (no mpirun) may oversubscribe like any OpenMP variant.
  if (ranks == 1 || !opt.threads || opt.oversubscribe) return;
  for (int t : threads)
    if (std::int64_t(local_size()) * t > host_cores())
      throw UsageError(who + ": " + std::to_string(local_size()) + " ranks on this host x " +
                       std::to_string(t) + " threads exceeds its " + std::to_string(host_cores()) +
                       " cores (fewer --threads, or --oversubscribe)");
}

std::vector<int> team_gpu_axis(const std::vector<int>* given) {
  if (given) return *given;
  std::vector<int> out;
  const int per_rank = std::max(1, gpu_status().count / std::max(1, local_size()));
  for (int g = 1; g <= per_rank; ++g) out.push_back(g * size());
  return out;
}

void add_ranks(RunName& name, RegisterOptions& ro) {
  name.args.emplace_back("ranks", std::to_string(size()));
  ro.axes.emplace_back("ranks", size());
  ro.mpi = true;
}

}  // namespace pb::mpi
