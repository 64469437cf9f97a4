// MLP axes, declared as data: precision x widths x activation x batch, then
// variant (GEMM backend) x threads.
// Run names:
// MLP/<backend>/data:<synthetic|mnist>/type:<f32|f64>/widths:<784-128-10>/act:<a>/batch:<b>[/threads:<t>]
#include "core/family.hpp"

#include "core/axes.hpp"
#include "core/registrar.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"
#include "mlp/registry.hpp"

namespace pb {
namespace {
using namespace mlp;

// "784-128-10,784-1024-1024-10": each an input width, hidden widths and a class count, all >= 1.
std::vector<std::vector<std::int64_t>> parse_widths(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& item : split(text, ',')) {
    std::vector<std::int64_t> w;
    for (const auto& part : split(item, '-')) w.push_back(parse_int(flag + " width", part, 1, 1 << 20));
    if (w.size() < 2) throw UsageError(flag + ": '" + item + "' needs at least an input and an output width");
    if (w.back() < 2) throw UsageError(flag + ": '" + item + "' ends in fewer than 2 classes");
    out.push_back(w);
  }
  return out;
}

// --mlp-mnist=DIR: MNIST's train set there, read now (a bad file is one line
// and exit 2 before anything runs), and the folder it came from.
struct Mnist {
  std::string dir;
  const Data* data;
};
Mnist mnist(const std::string& flag, const std::string& dir) {
  if (dir.empty()) throw UsageError(flag + ": empty folder name");
  try {
    return {dir, &mnist_train(dir)};
  } catch (const UsageError& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

using Widths = std::vector<std::int64_t>;

// The axes, declared once (core/axes.hpp); the cross product runs type
// outermost, batch innermost.
const AxisSet& axes() {
  static const AxisSet a{
      "MLP",
      {Axis::word("type", {"f32", "f64"})
           .help("precision of the backends: f32, f64")
           .values({"f32"}, {"f32"}, {"f32", "f64"}),
       Axis::of<Widths>(
           "widths",
           [](const std::string& flag, const std::string& item) { return parse_widths(flag, item).at(0); },
           [](const Widths& w) { return widths_name(w); })
           .help("networks, each input-hidden...-classes widths, e.g. 784-1024-1024-10")
           .values({"784-32-10"}, {"784-128-10", "784-1024-1024-10"}, {"784-128-10", "784-1024-1024-10"}),
       Axis::choice<Activation>("act", {{"sigmoid", Activation::Sigmoid}, {"relu", Activation::Relu}})
           .help("hidden-layer activations: sigmoid, relu")
           .values({"sigmoid"}, {"sigmoid"}, {"sigmoid"}),
       Axis::count("batch", 1, std::int64_t(1) << 20)
           .help("mini-batch sizes, each N or 2^K")
           .counter()
           .values({"32"}, {"64", "1024"}, {"32", "64", "256", "1024", "4096"})}};
  return a;
}

}  // namespace

static void register_mlp(const Options& opt) {
  declare_counter("gemm_share", CounterKind::Share);
  declare_counter("loss", CounterKind::Result);
  axes().declare_counters();
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const auto points = axes().points(opt);
  const auto* set = opt.value<Mnist>("--mlp-mnist");  // read by parse_options
  const std::string dir = set ? set->dir : "";
  if (set) {
    for (const auto& pt : points)
      if (pt.get<std::int64_t>("batch") > set->data->n)
        throw UsageError("--mlp-batch: " + pt.text("batch") + " is larger than the " +
                         std::to_string(set->data->n) + " images of the MNIST train set in " + dir);
  }
  for (const auto& pt : points) {
    Problem p;
    p.widths = pt.get<Widths>("widths"), p.batch = pt.get<std::int64_t>("batch"),
    p.act = pt.get<Activation>("act");
    p.f64 = pt.get<std::string>("type") == "f64", p.mnist = dir;
    validate(p);
    for (const auto& e : registry())
      for (const auto& k : entry_knobs(e, opt, threads, {})) {
        RunName name = axes().name(pt, e.name);
        name.args.insert(name.args.begin(), {"data", dir.empty() ? "synthetic" : "mnist"});
        RegisterOptions ro;
        ro.unit = benchmark::kMillisecond;
        ro.axes = axes().counters(pt);
        ro.rate = Rate{"GFLOPS", p.f64 ? "gemm_f64" : "gemm_f32"};
        ro.throughput = Throughput().items("samples").bytes(Show::Model).flops(Show::RateAndModel);
        register_entry<mlp::Job>(name, e, k, p, opt, ro, "GEMM flops a step", p.gemm_flops());
      }
  }
}

// The axes' flags and the data source's.
static FlagSection mlp_flags() {
  FlagSection s = axes().flags();
  s.flags.push_back({"--mlp-mnist",
                     "DIR",
                     "train on MNIST's train set (DIR/train-images-idx3-ubyte, DIR/train-labels-idx1-ubyte) "
                     "instead of synthetic data; the networks must take 784 inputs and 10 classes",
                     [](const std::string& flag, const std::string& v) { return std::any(mnist(flag, v)); },
                     {}});
  return s;
}

Family mlp_family() { return {"MLP", mlp_flags, register_mlp, nullptr}; }

}  // namespace pb
