// K-means axes: configuration x distribution x variant x (threads | block).
// Run names: KMeans/<variant>/cfg:<name>/dist:<d>/N:<n>/D:<d>/K:<k>[/threads:<t>|/block:<b>]
#include <cmath>
#include <thread>

#include "benchmarks/families.hpp"
#include "benchmarks/variant_job.hpp"
#include "core/mpi.hpp"
#include "core/registrar.hpp"
#include "kmeans/case.hpp"
#include "kmeans/registry.hpp"

namespace pb {
namespace {
using namespace kmeans;

struct Config {
  std::string name;
  std::int64_t n, d, k;
  Criteria crit;
};

Criteria fixed(int loops) {
  Criteria c;
  c.fixed = true;
  c.loops = loops;
  return c;
}

// seed 001: N points, D = 100, K = round(sqrt(N)), exit 500 / 0.01 / 0.01.
Config seed001(std::int64_t n) { return {"seed001", n, 100, std::llround(std::sqrt(double(n))), Criteria{}}; }
// seed 000: 256 MB of points of D coordinates, K = 16, 10 fixed loops.
Config seed000(std::int64_t d) { return {"seed000", (std::int64_t(256) << 20) / (d * 8), d, 16, fixed(10)}; }

std::vector<Config> configs(const Options& opt) {
  if (opt.kmeans_shapes) {
    std::vector<Config> out;
    for (const auto& s : *opt.kmeans_shapes) out.push_back({"custom", s.m, s.n, s.k, Criteria{}});
    return out;
  }
  switch (opt.profile) {
    case Profile::Smoke:
      return {{"smoke", 1000, 4, 8, Criteria{}},
              {"smoke", 777, 3, 5, Criteria{}},
              {"smoke", 2048, 2, 16, fixed(3)}};
    case Profile::Default:
      return {seed001(100),    seed001(1000), seed001(10000),
              seed001(100000), seed000(16),   {"peer", 4000000, 16, 16, fixed(10)}};
    case Profile::Full:
      return {seed001(100),
              seed001(1000),
              seed001(10000),
              seed001(100000),
              seed001(250000),
              seed000(2),
              seed000(16),
              {"peer", 4000000, 16, 16, fixed(10)},
              {"wide", 20000, 300, 2000, Criteria{}}};
  }
  return {};
}

// log2 of the largest N*K*D (one assignment step's work) a slow CPU variant runs in
// each profile: Seq, one thread, does ~1-3e9 distance terms a second.
int work_cap_log2(int cost, Profile p) {
  if (cost == 0) return 1023;  // no cap
  const int exp2[2][3] = {{30, 34, 40}, {26, 32, 36}};  // [cost-1][smoke, default, full]
  return exp2[cost - 1][int(p)];
}

class KMeansJob final : public VariantJob<Entry, Variant, Problem, Case, &shared_case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    Result r;
    variant_->result(r);
    iterations_ = r.iterations;
    inertia_ = r.inertia;
    if (entry_.backend != Backend::Mpi) return compare(problem_, case_->reference(), r);
    // Every rank holds the same gathered result (result() broadcasts it):
    // rank 0 alone computes the reference, on every core while the other
    // ranks wait idle, and its verdict goes to all, so they leave or enter the
    // timed loop together. Only rank 0 reports the message.
    Check c;
    if (mpi::rank() == 0) c = compare(problem_, case_->reference(), r);
    if (!mpi::root_says(c.passed) && mpi::rank() != 0) c = Check{false, "rank 0 found the result incorrect", ""};
    return c;
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const auto b = variant_->breakdown();               // of the last timed run
    out.emplace_back("lloyd_iterations", iterations_);  // "iterations" is Google Benchmark's own field
    out.emplace_back("seconds_per_iteration", runs && iterations_ ? seconds / runs / iterations_ : 0.0);
    out.emplace_back("inertia", inertia_);
    // The least any variant moves: every point read once an iteration.
    const double bytes = double(problem_.n) * double(problem_.d) * sizeof(double);
    const double per_iteration = runs && iterations_ ? seconds / runs / iterations_ : 0.0;
    out.emplace_back("bytes_per_iteration", bytes);
    out.emplace_back("GBps", per_iteration > 0 ? bytes / per_iteration * 1e-9 : 0.0);
    out.emplace_back("h2d_s", b.h2d);
    out.emplace_back("kernel_s", b.kernel);
    out.emplace_back("d2h_s", b.d2h);
    // A CPU variant's whole run is host compute.
    out.emplace_back("host_s", entry_.backend != Backend::Cuda && runs ? seconds / runs : b.host);
  }

 private:
  int iterations_ = 0;
  double inertia_ = 0;
};

// Cores of this host, whatever the affinity mpirun gave this rank.
int host_cores() { return std::max(1, int(std::thread::hardware_concurrency())); }

// The MPI variant runs ranks x threads; the ranks on one host share its cores.
void check_mpi_grid(const Options& opt, const std::string& cfg, const Problem& p, const std::vector<int>& threads) {
  const int ranks = mpi::size();
  if (p.n < ranks)
    throw UsageError("KMeans/MPI: more ranks (" + std::to_string(ranks) + ") than points (N=" +
                     std::to_string(p.n) + " in configuration " + cfg + ")");
  // One rank (no mpirun) may oversubscribe like any OpenMP variant.
  if (ranks == 1 || !opt.threads || opt.oversubscribe) return;
  for (int t : threads)
    if (std::int64_t(mpi::local_size()) * t > host_cores())
      throw UsageError("KMeans/MPI: " + std::to_string(mpi::local_size()) + " ranks on this host x " +
                       std::to_string(t) + " threads exceeds its " + std::to_string(host_cores()) +
                       " cores (fewer --threads, or --oversubscribe)");
}

// Default thread axis under MPI: the counts that fit beside this host's ranks.
std::vector<int> mpi_threads(const Options& opt, const std::vector<int>& threads) {
  if (opt.threads || opt.oversubscribe) return threads;
  std::vector<int> out;
  for (int t : threads)
    if (std::int64_t(mpi::local_size()) * t <= host_cores()) out.push_back(t);
  if (out.empty()) out.push_back(1);
  return out;
}

}  // namespace

void register_kmeans(const Options& opt) {
  declare_counter("lloyd_iterations", CounterKind::Result);
  declare_counter("inertia", CounterKind::Result);
  declare_counter("seconds_per_iteration", CounterKind::Time, "s");
  for (const char* part : {"h2d_s", "kernel_s", "d2h_s", "host_s"}) declare_counter(part, CounterKind::Time, "s");
  declare_counter("bytes_per_iteration", CounterKind::Model, "B");
  declare_counter("GBps", CounterKind::Rate, "GB/s");
  for (const char* dim : {"N", "D", "K"}) declare_counter(dim, CounterKind::Problem);
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const std::vector<int> default_blocks = opt.profile == Profile::Smoke ? std::vector<int>{128}
                                          : opt.profile == Profile::Full
                                              ? std::vector<int>{32, 64, 128, 256, 512, 1024}
                                              : std::vector<int>{64, 256, 1024};
  const auto blocks = opt.blocks ? *opt.blocks : default_blocks;
  const auto dists = opt.dists ? *opt.dists : std::vector<std::string>{"uniform"};
  for (const auto& cfg : configs(opt)) {
    for (const auto& dist : dists) {
      Problem p{cfg.n, cfg.d, cfg.k, dist == "blobs" ? Dist::Blobs : Dist::Uniform, cfg.crit};
      if (opt.kmeans_loops) p.crit = fixed(*opt.kmeans_loops);
      if (opt.kmeans_exit) {
        p.crit = Criteria{};
        p.crit.max_iter = int((*opt.kmeans_exit)[0]);
        p.crit.min_changes = (*opt.kmeans_exit)[1];
        p.crit.precision = (*opt.kmeans_exit)[2];
      }
      validate(p);  // UsageError before anything runs
      for (const auto& e : registry()) {
        const bool is_mpi = e.backend == Backend::Mpi;
        if (is_mpi) check_mpi_grid(opt, cfg.name, p, threads);
        const auto knobs = knob_values(e.knob, is_mpi ? mpi_threads(opt, threads) : threads, blocks);
        for (const auto& k : knobs) {
          RunName name{"KMeans",
                       e.name,
                       {{"cfg", cfg.name},
                        {"dist", dist},
                        {"N", std::to_string(p.n)},
                        {"D", std::to_string(p.d)},
                        {"K", std::to_string(p.k)}},
                       "",
                       ""};
          RegisterOptions ro;
          ro.unit = benchmark::kMillisecond;
          ro.flush_l2 = opt.flush_l2;
          ro.axes = {{"N", double(p.n)}, {"D", double(p.d)}, {"K", double(p.k)}};
          if (is_mpi) {
            name.args.emplace_back("ranks", std::to_string(mpi::size()));
            ro.axes.emplace_back("ranks", mpi::size());
            ro.mpi = true;
          }
          add_knob(e.knob, k, name, ro);
          ro.excluded = excluded_by_profile(opt.profile, e.name, "N*K*D", double(p.n) * p.k * p.d,
                                            work_cap_log2(e.cost, opt.profile));
          ro.role = e.name == std::string(kBaseline) ? Role::Baseline : Role::Variant;
          ro.backend = e.backend;
          ro.rate = Rate{"GBps", "bandwidth"};
          ro.library = e.library;
          const Entry* entry = &e;
          const std::uint64_t seed = opt.seed;
          register_job(
              name, [entry, k, p, seed] { return std::make_unique<KMeansJob>(*entry, k, p, seed); }, ro);
        }
      }
    }
  }
}

}  // namespace pb
