// MLP axes: widths x batch x activation x precision x variant (GEMM backend) x threads.
// Run names:
// MLP/<backend>/data:<synthetic|mnist>/type:<f32|f64>/widths:<784-128-10>/act:<a>/batch:<b>[/threads:<t>]
#include "core/family.hpp"

#include "core/registrar.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"
#include "mlp/job.hpp"

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

// Batch sizes: N or 2^K each, in [1, 2^20] (core's count list).
std::vector<std::int64_t> parse_batches(const std::string& flag, const std::string& text) {
  return parse_counts(flag, text, std::int64_t(1) << 20);
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

}  // namespace

static void register_mlp(const Options& opt) {
  declare_counter("samples_per_second", CounterKind::Rate, "1/s");
  declare_counter("GFLOPS", CounterKind::Rate, "GFLOP/s");
  declare_counter("gemm_share", CounterKind::Share);
  declare_counter("flops_per_call", CounterKind::Model, "flop");
  declare_counter("bytes_per_call", CounterKind::Model, "B");
  declare_counter("loss", CounterKind::Result);
  declare_counter("batch", CounterKind::Problem);
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const bool smoke = opt.profile == Profile::Smoke, full = opt.profile == Profile::Full;
  const auto* wf = opt.flag("--mlp-widths");
  const auto widths = wf      ? parse_widths("--mlp-widths", *wf)
                      : smoke ? std::vector<std::vector<std::int64_t>>{{784, 32, 10}}
                              : std::vector<std::vector<std::int64_t>>{{784, 128, 10}, {784, 1024, 1024, 10}};
  const auto* bf = opt.flag("--mlp-batch");
  const auto batches = bf      ? parse_batches("--mlp-batch", *bf)
                       : smoke ? std::vector<std::int64_t>{32}
                       : full  ? std::vector<std::int64_t>{32, 64, 256, 1024, 4096}
                               : std::vector<std::int64_t>{64, 1024};
  const auto* af = opt.flag("--mlp-act");
  const auto acts = af ? parse_word_list("--mlp-act", *af, kActs) : std::vector<std::string>{"sigmoid"};
  const auto* tf = opt.flag("--mlp-type");
  const auto types = tf     ? parse_word_list("--mlp-type", *tf, kTypes)
                     : full ? kTypes
                            : std::vector<std::string>{"f32"};
  const auto* mf = opt.flag("--mlp-mnist");
  const std::string dir = mf ? *mf : "";
  if (mf) {
    const Data& set = mnist("--mlp-mnist", dir);
    for (auto batch : batches)
      if (batch > set.n)
        throw UsageError("--mlp-batch: " + std::to_string(batch) + " is larger than the " +
                         std::to_string(set.n) + " images of the MNIST train set in " + dir);
  }
  for (const auto& type : types)
    for (const auto& w : widths)
      for (const auto& act : acts)
        for (auto batch : batches) {
          Problem p;
          p.widths = w, p.batch = batch, p.act = parse_activation(act), p.f64 = type == "f64", p.mnist = dir;
          validate(p);
          for (const auto& e : registry()) {
            for (const auto& k : entry_knobs(e, opt, threads, {})) {
              RunName name{"MLP",
                           e.name,
                           {{"data", dir.empty() ? "synthetic" : "mnist"},
                            {"type", type},
                            {"widths", widths_name(w)},
                            {"act", act},
                            {"batch", std::to_string(batch)}}};
              RegisterOptions ro;
              ro.unit = benchmark::kMillisecond;
              ro.axes = {{"batch", double(batch)}};
              ro.rate = Rate{"GFLOPS", p.f64 ? "gemm_f64" : "gemm_f32"};
              register_entry<mlp::Job>(name, e, k, p, opt, ro, "GEMM flops a step", p.gemm_flops());
            }
          }
        }
}

static FlagSection mlp_flags() {
  return {
      "MLP",
      {{"--mlp-widths",
        "LIST",
        "networks, each input-hidden...-classes widths, e.g. 784-1024-1024-10 (default 784-128-10, "
        "784-1024-1024-10; smoke 784-32-10)",
        [](const std::string& flag, const std::string& v) { parse_widths(flag, v); },
        {}},
       {"--mlp-batch",
        "LIST",
        "mini-batch sizes (default 64, 1024; smoke 32; full 32 ... 4096)",
        [](const std::string& flag, const std::string& v) { parse_batches(flag, v); },
        {}},
       {"--mlp-act",
        "LIST",
        "hidden-layer activations: sigmoid, relu (default sigmoid)",
        [](const std::string& flag, const std::string& v) { parse_word_list(flag, v, kActs); },
        {}},
       {"--mlp-type",
        "LIST",
        "precision of the backends: f32, f64 (default f32; full both)",
        [](const std::string& flag, const std::string& v) { parse_word_list(flag, v, kTypes); },
        {}},
       {"--mlp-mnist",
        "DIR",
        "train on MNIST's train set (DIR/train-images-idx3-ubyte, DIR/train-labels-idx1-ubyte) instead of "
        "synthetic data; the networks must take 784 inputs and 10 classes",
        [](const std::string& flag, const std::string& v) { mnist(flag, v); },
        {}}},
      nullptr};
}

Family mlp_family() { return {"MLP", mlp_flags, register_mlp, nullptr}; }

}  // namespace pb
