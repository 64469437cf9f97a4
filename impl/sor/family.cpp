// SOR axes, declared as data: field x grid x sweeps x omega, then variant x
// (threads | block shape | block | gpus).
// Run names:
// SOR/<variant>/field:<f>/M:<m>/N:<n>/sweeps:<s>/omega:<w>[/threads:<t>|/block:<XxY>|/block:<b>|/gpus:<g>]
#include "core/family.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/axes.hpp"
#include "core/registrar.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"
#include "sor/registry.hpp"

namespace pb {
namespace {
using namespace sor;

struct Grid {
  std::int64_t m, n;
};

// "MxN,..." grids, boundary included, each at least 3 x 3.
std::vector<Grid> parse_grids(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<Grid> out;
  for (const auto& item : split(text, ',')) {
    const auto dims =
        parse_dims(flag, item, 2, 1, std::int64_t(1) << 20, "MxN (grid points, e.g. 1000x1500)");
    const Grid g{dims[0], dims[1]};
    if (g.m < 3 || g.n < 3)
      throw UsageError(flag + ": grid " + item + " is smaller than 3 x 3 (the boundary alone takes 2 x 2)");
    out.push_back(g);
  }
  return out;
}

std::vector<double> parse_omegas(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<double> out;
  for (const auto& item : split(text, ',')) {
    const double w = parse_number(flag, item);
    if (!(w > 0 && w < 2))
      throw UsageError(flag + ": omega " + item + " is outside (0, 2), where SOR converges");
    out.push_back(w);
  }
  return out;
}

std::vector<double> parse_steps(const std::string& flag, const std::string& text) {
  const auto parts = split(text, ',');
  if (parts.size() != 2) throw UsageError(flag + ": want h1,h2 (the grid steps along x and y)");
  std::vector<double> out;
  for (const auto& item : parts) {
    const double h = parse_number(flag, item);
    if (!(h > 0)) throw UsageError(flag + ": step " + item + " is not positive");
    out.push_back(h);
  }
  return out;
}

std::vector<BlockShape> parse_shapes(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<BlockShape> out;
  for (const auto& item : split(text, ',')) {
    const auto dims = parse_dims(flag, item, 2, 1, 1024, "XxY (threads along j and i, e.g. 32x8)");
    const BlockShape s{int(dims[0]), int(dims[1])};
    if (s.x * s.y > 1024) throw UsageError(flag + ": block " + item + " has more than 1024 threads");
    out.push_back(s);
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The problem axes, declared once (core/axes.hpp), in run-name order; the
// knobs (threads, block shapes, blocks, GPUs) and the grid steps keep
// flags of their own.
const AxisSet& axes() {
  static const AxisSet a{
      "SOR",
      {Axis::choice<Field>("field", {{"vortex", Field::Vortex}, {"analytic", Field::Analytic}})
           .help("SOR problems: vortex (variable coefficients, the benchmark problem), analytic (constant "
                 "coefficients "
                 "with a known exact solution)")
           .values({"vortex", "analytic"}, {"vortex"}, {"vortex"}),
       Axis::of<Grid>(
           "grids",
           [](const std::string& flag, const std::string& item) { return parse_grids(flag, item).at(0); },
           [](const Grid& g) { return std::to_string(g.m) + "x" + std::to_string(g.n); })
           .key("grid")
           .help("SOR grids, each MxN grid points with the boundary (at least 3x3), e.g. 1000x1500")
           .name_args<Grid>([](const Grid& g) -> NameArgs {
             return {{"M", std::to_string(g.m)}, {"N", std::to_string(g.n)}};
           })
           .counters<Grid>({"M", "N"},
                           [](const Grid& g) {
                             return std::vector<double>{double(g.m), double(g.n)};
                           })
           .values({"67x45", "130x257"}, {"1000x1500", "4098x4098", "16386x16386"},
                   {"257x257", "1000x1500", "4098x4098", "8193x8193", "16386x16386", "24002x24002"}),
       Axis::integer("sweeps", 1, 1000000)
           .help("red-black sweeps per timed run")
           .counter()
           .values({"4"}, {"20"}, {"20"}),
       Axis::of<double>(
           "omega",
           [](const std::string& flag, const std::string& item) { return parse_omegas(flag, item).at(0); },
           [](const double& w) { return number(w); })
           .help("relaxation factors, each in (0, 2)")
           .counter()
           .values({"1.5"}, {"1.5"}, {"1.5"})}};
  return a;
}

}  // namespace

static void register_sor(const Options& opt) {
  declare_counter("residual", CounterKind::Result);
  axes().declare_counters();
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const bool smoke = opt.profile == Profile::Smoke;
  const auto blocks = opt.blocks ? *opt.blocks
                      : smoke    ? std::vector<int>{128}
                                 : std::vector<int>{128, 256, 512};
  const auto* shape_flag = opt.value<std::vector<BlockShape>>("--sor-blocks");
  const auto shapes = shape_flag ? *shape_flag
                      : smoke    ? std::vector<BlockShape>{{32, 4}}
                                 : std::vector<BlockShape>{{32, 4}, {32, 8}, {64, 4}};
  const auto* gpus_flag = opt.value<std::vector<int>>("--sor-gpus");
  const auto gpus = gpus_flag ? *gpus_flag : default_gpu_axis();
  const auto* steps_flag = opt.value<std::vector<double>>("--sor-steps");
  const auto steps = steps_flag ? *steps_flag : std::vector<double>{0, 0};
  for (const Point& pt : axes().points(opt)) {
    const Grid& grid = pt.get<Grid>("grids");
    Problem p;
    p.m = grid.m, p.n = grid.n, p.sweeps = int(pt.get<std::int64_t>("sweeps"));
    p.omega = pt.get<double>("omega"), p.field = pt.get<Field>("field");
    p.h1 = steps[0], p.h2 = steps[1];
    validate(p);  // UsageError before anything runs
    for (const auto& e : registry()) {
      const auto team =
          e.backend == Backend::MpiCuda ? mpi::team_gpu_axis(gpus_flag ? &gpus : nullptr) : gpus;
      for (const auto& k :
           knob_values(e.knob, threads, e.blocks.empty() ? blocks : e.blocks, shapes, team, opt.scalings)) {
        // Weak scaling: each GPU keeps the named grid's interior rows, the
        // whole grid grows by them (the counters give the whole).
        Problem q = p;
        if (k.weak) q.m = (p.m - 2) * k.gpus + 2;
        RegisterOptions ro;
        ro.unit = benchmark::kMillisecond;
        ro.axes = axes().counters(pt);
        if (k.weak) set_counter(ro.axes, "M", double(q.m));
        ro.rate = Rate{"GBps", "bandwidth", "gemm_f64"};
        ro.throughput = Throughput().items("updates").bytes(Show::RateAndModel).flops(Show::Model);
        register_entry<sor::Job>(axes().name(pt, e.name), e, k, q, opt, ro, "M*N*sweeps",
                                 double(q.points()) * q.sweeps);
      }
    }
  }
}

// The axes' flags, then the grid steps' and the knobs'.
static FlagSection sor_flags() {
  FlagSection s = axes().flags();
  s.flags.push_back(
      {"--sor-steps",
       "H1,H2",
       "grid steps along x and y (default: the unit square's, 1/(M-1) and 1/(N-1))",
       [](const std::string& flag, const std::string& v) { return std::any(parse_steps(flag, v)); },
       {}});
  s.flags.push_back(
      {"--sor-blocks",
       "LIST",
       "2-D CUDA block shapes XxY (threads along a row x rows), e.g. 32x8 (default 32x4,32x8,64x4)",
       [](const std::string& flag, const std::string& v) { return std::any(parse_shapes(flag, v)); },
       {}});
  s.flags.push_back(
      {"--sor-gpus",
       "LIST",
       "GPU counts for CUDA.Rows, the grid split by rows across GPUs (default 1 up to the GPUs "
       "visible); more than are visible is an error",
       [](const std::string& flag, const std::string& v) { return std::any(parse_gpu_counts(flag, v)); },
       {}});
  return s;
}

Family sor_family() { return {"SOR", sor_flags, register_sor, nullptr}; }

}  // namespace pb
