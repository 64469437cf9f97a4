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
// and exit 2 before anything runs).
const Data& mnist(const std::string& flag, const std::string& dir) {
  if (dir.empty()) throw UsageError(flag + ": empty folder name");
  try {
    return mnist_train(dir);
  } catch (const UsageError& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

const std::vector<std::string> kActs{"sigmoid", "relu"};
const std::vector<std::string> kTypes{"f32", "f64"};

// The axes, declared once (core/axes.hpp); the cross product runs type
// outermost, batch innermost.
const AxisSet& axes() {
  static const AxisSet a{"MLP",
                         {{"type",
                           "type",
                           "precision of the backends: f32, f64",
                           {"f32"},
                           {"f32"},
                           {"f32", "f64"},
                           words(kTypes)},
                          {"widths",
                           "widths",
                           "networks, each input-hidden...-classes widths, e.g. 784-1024-1024-10",
                           {"784-32-10"},
                           {"784-128-10", "784-1024-1024-10"},
                           {"784-128-10", "784-1024-1024-10"},
                           [](const std::string& flag, const std::string& item) {
                             return widths_name(parse_widths(flag, item).at(0));
                           }},
                          {"act",
                           "act",
                           "hidden-layer activations: sigmoid, relu",
                           {"sigmoid"},
                           {"sigmoid"},
                           {"sigmoid"},
                           words(kActs)},
                          {"batch",
                           "batch",
                           "mini-batch sizes, each N or 2^K",
                           {"32"},
                           {"64", "1024"},
                           {"32", "64", "256", "1024", "4096"},
                           counts(1, std::int64_t(1) << 20),
                           true}}};
  return a;
}

std::vector<std::int64_t> widths_of(const std::string& name) {
  std::vector<std::int64_t> w;
  for (const auto& part : split(name, '-')) w.push_back(std::stoll(part));
  return w;
}

}  // namespace

static void register_mlp(const Options& opt) {
  declare_counter("gemm_share", CounterKind::Share);
  declare_counter("loss", CounterKind::Result);
  axes().declare_counters();
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const auto points = axes().points(opt);
  const auto* set = opt.value<const Data*>("--mlp-mnist");  // read by parse_options
  const std::string dir = set ? *opt.flag("--mlp-mnist") : "";
  if (set) {
    for (const auto& pt : points)
      if (pt.integer("batch") > (*set)->n)
        throw UsageError("--mlp-batch: " + pt["batch"] + " is larger than the " + std::to_string((*set)->n) +
                         " images of the MNIST train set in " + dir);
  }
  for (const auto& pt : points) {
    Problem p;
    p.widths = widths_of(pt["widths"]), p.batch = pt.integer("batch"), p.act = parse_activation(pt["act"]);
    p.f64 = pt["type"] == "f64", p.mnist = dir;
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
                     [](const std::string& flag, const std::string& v) { return std::any(&mnist(flag, v)); },
                     {}});
  return s;
}

Family mlp_family() { return {"MLP", mlp_flags, register_mlp, nullptr}; }

}  // namespace pb
