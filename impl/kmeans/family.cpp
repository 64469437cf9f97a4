// K-means axes, declared as data: shape x distribution, then variant x (threads | block | gpus).
// Run names: KMeans/<variant>/cfg:<name>/dist:<d>/N:<n>/D:<d>/K:<k>[/threads:<t>|/block:<b>|/gpus:<g>]
#include "core/family.hpp"

#include <cmath>

#include "core/axes.hpp"
#include "core/mpi_family.hpp"
#include "core/registrar.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"
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

// cfg:converge (seed 001's problems): N points, D = 100, K = round(sqrt(N)),
// run until converged (at most 500 iterations, 1% changed, 0.01 moved).
Config converge(std::int64_t n) {
  return {"converge", n, 100, std::llround(std::sqrt(double(n))), Criteria{}};
}
// cfg:256MB (seed 000's problems): 256 MB of points of D coordinates, K = 16,
// exactly 10 iterations.
Config points_256mb(std::int64_t d) {
  return {"256MB", (std::int64_t(256) << 20) / (d * 8), d, 16, fixed(10)};
}

// k-means problems: each exactly NxDxK (points x dimensions x clusters), K <= N.
std::vector<Config> parse_shapes(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<Config> out;
  for (const auto& item : split(text, ',')) {
    const std::int64_t big = std::int64_t(1) << 31;
    const auto dims =
        parse_dims(flag, item, 3, 1, big, "NxDxK (points x dimensions x clusters, e.g. 100000x100x316)");
    Config c{"custom", dims[0], dims[1], dims[2], Criteria{}};
    if (c.k > c.n)
      throw UsageError(flag + ": K=" + std::to_string(c.k) + " exceeds N=" + std::to_string(c.n) + " in " +
                       item);
    out.push_back(c);
  }
  return out;
}

// "maxIterations,minChangesFraction,precision" as exit criteria.
Criteria parse_exit(const std::string& flag, const std::string& text) {
  auto parts = split(text, ',');
  if (parts.size() != 3) throw UsageError(flag + ": want maxIterations,minChangesFraction,precision");
  Criteria c;
  c.max_iter = int(parse_int(flag + " max iterations", parts[0], 1, 1000000000));
  for (int i = 1; i < 3; ++i) {
    const double v = parse_number(flag, parts[i]);
    if (!(v >= 0) || v > 1e300) throw UsageError(flag + ": '" + parts[i] + "' is not a finite number >= 0");
    if (i == 1 && v > 1) throw UsageError(flag + ": min changes fraction " + parts[i] + " is above 1");
    (i == 1 ? c.min_changes : c.precision) = v;
  }
  return c;
}

int parse_loops(const std::string& flag, const std::string& text) {
  return int(parse_int(flag, text, 1, 1000000));
}

// The profile's named configurations.
std::vector<Config> configs(Profile profile) {
  switch (profile) {
    case Profile::Smoke:
      return {{"smoke", 1000, 4, 8, Criteria{}},
              {"smoke", 777, 3, 5, Criteria{}},
              {"smoke", 2048, 2, 16, fixed(3)}};
    case Profile::Default:
      return {converge(100),    converge(1000),   converge(10000),
              converge(100000), points_256mb(16), {"peer", 4000000, 16, 16, fixed(10)}};
    case Profile::Full:
      return {converge(100),
              converge(1000),
              converge(10000),
              converge(100000),
              converge(250000),
              points_256mb(2),
              points_256mb(16),
              {"peer", 4000000, 16, 16, fixed(10)},
              {"wide", 20000, 300, 2000, Criteria{}}};
  }
  return {};
}

std::string shape_of(const Config& c) {
  return std::to_string(c.n) + "x" + std::to_string(c.d) + "x" + std::to_string(c.k);
}

// The axes, declared once (core/axes.hpp): shape outermost, then data, then
// the element type. A shape is a Config: a default one is its profile's
// named configuration, a given one is custom (run until converged). Run
// names read cfg (the configuration's name, a label of the shape), type
// where it is f32 (f64, the default, is left out so the names of double
// runs stay as they were), dist, then the shape's N, D and K.
const AxisSet& axes() {
  static const AxisSet a{
      "KMeans",
      {Axis::of<Config>(
           "shapes",
           [](const std::string& flag, const std::string& item) { return parse_shapes(flag, item).at(0); },
           shape_of)
           .key("shape")
           .help("k-means problems, each exactly NxDxK (points x dimensions x clusters), e.g. 100000x100x316")
           .typed_values(configs(Profile::Smoke), configs(Profile::Default), configs(Profile::Full))
           .label<Config>("cfg", [](const Config& c) { return c.name; })
           .name_args<Config>([](const Config& c) -> NameArgs {
             return {{"N", std::to_string(c.n)}, {"D", std::to_string(c.d)}, {"K", std::to_string(c.k)}};
           })
           .counters<Config>({"N", "D", "K"},
                             [](const Config& c) {
                               return std::vector<double>{double(c.n), double(c.d), double(c.k)};
                             }),
       Axis::choice<Dist>("dist", {{"uniform", Dist::Uniform}, {"blobs", Dist::Blobs}})
           .help("k-means data: uniform, blobs (well-separated clusters)")
           .values({"uniform"}, {"uniform"}, {"uniform"})
           .old("--dist"),
       Axis::choice<Type>("type", {{"f64", Type::F64}, {"f32", Type::F32}})
           .help(
               "element type: f64, or f32 (points rounded to float; variants that compute in TF32; problems "
               "with a fixed number of iterations only)")
           .values({"f64", "f32"}, {"f64"}, {"f64", "f32"})
           .name_args<Type>([](const Type& t) {
             return t == Type::F64 ? NameArgs{} : NameArgs{{"type", "f32"}};
           })},
      {},
      {"cfg", "type", "dist", "shapes"}};
  return a;
}

}  // namespace

static void register_kmeans(const Options& opt) {
  declare_counter("lloyd_iterations", CounterKind::Result);
  declare_counter("inertia", CounterKind::Result);
  // Measured, not the work: a TF32 run's near ties vary with the order of its
  // float sums, so a comparison does not ask them equal.
  declare_counter("near_ties", CounterKind::Share);
  declare_counter("tie_gap_of_bound", CounterKind::Share);
  declare_counter("seconds_per_iteration", CounterKind::Time, "s");
  axes().declare_counters();
  for (const char* part : {"h2d_s", "kernel_s", "d2h_s", "host_s"})
    declare_counter(part, CounterKind::Time, "s");
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const std::vector<int> default_blocks = opt.profile == Profile::Smoke ? std::vector<int>{128}
                                          : opt.profile == Profile::Full
                                              ? std::vector<int>{32, 64, 128, 256, 512, 1024}
                                              : std::vector<int>{64, 256, 1024};
  const auto blocks = opt.blocks ? *opt.blocks : default_blocks;
  // --kmeans-loops and --kmeans-exit are both a Criteria (parse_options parsed them).
  const auto* loops = opt.value<Criteria>("--kmeans-loops");
  const auto* exit_rule = opt.value<Criteria>("--kmeans-exit");
  const auto* gpus_flag = opt.value<std::vector<int>>("--kmeans-gpus");
  const auto gpus = gpus_flag ? *gpus_flag : default_gpu_axis();
  for (const Point& pt : axes().points(opt)) {
    const Config& cfg = pt.get<Config>("shapes");
    Problem p{cfg.n, cfg.d, cfg.k, pt.get<Dist>("dist"), cfg.crit};
    if (loops) p.crit = *loops;
    if (exit_rule) p.crit = *exit_rule;
    p.type = pt.get<Type>("type");
    // Where the profile chose f32 (not the command line, where validate says
    // why not and every variant is listed): only problems with a fixed number
    // of iterations, and only the single-precision variants.
    const bool profile_f32 = p.type == Type::F32 && !opt.given("--kmeans-type");
    if (profile_f32 && !p.crit.fixed) continue;
    validate(p);  // UsageError before anything runs
    for (const auto& e : registry()) {
      if (profile_f32 && !e.traits.single) continue;
      const bool is_mpi = e.backend == Backend::Mpi;
      if (is_mpi)
        mpi::check_grid(opt, "KMeans/" + std::string(e.name), p.n,
                        "points (N=" + std::to_string(p.n) + " in configuration " + cfg.name + ")", threads);
      const auto knobs =
          e.knob == Knob::Gpus
              ? knob_values(
                    e.knob, threads, blocks, {},
                    e.backend == Backend::MpiCuda ? mpi::team_gpu_axis(gpus_flag ? &gpus : nullptr) : gpus,
                    opt.scalings)
              : entry_knobs(e, opt, is_mpi ? mpi::thread_axis(opt, threads) : threads, blocks);
      for (const auto& k : knobs) {
        const RunName name = axes().name(pt, e.name);
        // Weak scaling: each GPU keeps the named N points, the problem grows
        // by them (the counters give the whole).
        Problem q = p;
        if (k.weak) q.n = p.n * k.gpus;
        RegisterOptions ro;
        ro.unit = benchmark::kMillisecond;
        ro.axes = axes().counters(pt);
        if (k.weak) set_counter(ro.axes, "N", double(q.n));
        ro.rate = Rate{"GBps", "bandwidth", q.type == Type::F32 ? "gemm_tf32" : "gemm_f64"};
        ro.throughput = Throughput().bytes(Show::RateAndModel).flops(Show::Model).per("iteration");
        register_entry<kmeans::Job>(name, e, k, q, opt, ro, "N*K*D", double(q.n) * q.k * q.d);
      }
    }
  }
}

// The run's context: the NCCL that CUDA.NCCL and MPI.NCCL call, where built with it.
static ContextLines kmeans_context() {
#ifdef PARBENCH_WITH_NCCL
  return {{"nccl_version", kmeans::nccl_version()}};
#else
  return {};
#endif
}

// The axes' flags, then the exit rules' and the GPU counts'.
static FlagSection kmeans_flags() {
  FlagSection s = axes().flags();
  s.flags.push_back(
      {"--kmeans-loops",
       "L",
       "run exactly L iterations (the fixed loop of the large-data configuration); not together with "
       "--kmeans-exit",
       [](const std::string& flag, const std::string& v) { return std::any(fixed(parse_loops(flag, v))); },
       {}});
  s.flags.push_back(
      {"--kmeans-exit",
       "I,C,P",
       "exit rule: at most I iterations, stop when the fraction of points that changed cluster is <= "
       "C or no centroid moved more than P (the course report's rule: 500,0.01,0.01)",
       [](const std::string& flag, const std::string& v) { return std::any(parse_exit(flag, v)); },
       {}});
  s.flags.push_back(
      {"--kmeans-gpus",
       "LIST",
       "GPU counts for CUDA.NCCL, the points split across GPUs (default 1 up to the GPUs visible); "
       "more than are visible is an error",
       [](const std::string& flag, const std::string& v) { return std::any(parse_gpu_counts(flag, v)); },
       {}});
  s.check_together = [](const Options& o) {
    // Two exit rules at once would leave one silently unused.
    if (o.given("--kmeans-loops") && o.given("--kmeans-exit"))
      throw UsageError(
          "--kmeans-loops and --kmeans-exit cannot be combined: a run either takes a fixed "
          "number of iterations or stops on the exit rule");
  };
  return s;
}

Family kmeans_family() { return {"KMeans", kmeans_flags, register_kmeans, kmeans_context}; }

}  // namespace pb
