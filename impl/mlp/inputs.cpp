// The MLP problem's checks, its first weights and its synthetic data.
#include <cmath>
#include <map>
#include <mutex>
#include <string>

#include "core/status.hpp"
#include "fixtures/fixtures.hpp"
#include "mlp/idx.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {

const char* to_string(Activation a) { return a == Activation::Sigmoid ? "sigmoid" : "relu"; }

Activation parse_activation(const std::string& text) {
  if (text == "sigmoid") return Activation::Sigmoid;
  if (text == "relu") return Activation::Relu;
  throw UsageError("unknown activation '" + text + "' (sigmoid, relu)");
}

std::int64_t Problem::parameters() const {
  std::int64_t n = 0;
  for (std::int64_t l = 1; l <= layers(); ++l) n += (widths[std::size_t(l - 1)] + 1) * widths[std::size_t(l)];
  return n;
}

double Problem::gemm_flops() const {
  double madds = 0;
  for (std::int64_t l = 1; l <= layers(); ++l) {
    const double in = double(widths[std::size_t(l - 1)]), out = double(widths[std::size_t(l)]);
    madds += 2 * double(batch) * in * out;         // forward and weight gradient
    if (l > 1) madds += double(batch) * in * out;  // delta propagation
  }
  return 2 * madds;
}

double Problem::gemm_bytes() const {
  double elems = 0;
  for (std::int64_t l = 1; l <= layers(); ++l) {
    const double in = double(widths[std::size_t(l - 1)]), out = double(widths[std::size_t(l)]);
    const double b = double(batch);
    elems += b * in + in * out + b * out;             // forward: X, W in; Y out
    elems += in * b + b * out + in * out;             // weight gradient: X, dY in; dW out
    if (l > 1) elems += b * out + out * in + b * in;  // delta: dY, W in; dX out
  }
  return elems * (f64 ? 8.0 : 4.0);
}

std::string widths_name(const std::vector<std::int64_t>& widths) {
  std::string s;
  for (auto w : widths) s += (s.empty() ? "" : "-") + std::to_string(w);
  return s;
}

std::string Problem::str() const {
  return widths_name(widths) + " batch " + std::to_string(batch) + " " + to_string(act) +
         (f64 ? " f64" : " f32") + (mnist.empty() ? "" : " mnist");
}

void validate(const Problem& p) {
  if (p.widths.size() < 2) throw UsageError("an MLP needs at least an input and an output width");
  for (auto w : p.widths)
    if (w < 1) throw UsageError("layer width " + std::to_string(w) + " is not positive in " + p.str());
  if (p.batch < 1) throw UsageError("batch " + std::to_string(p.batch) + " is not positive");
  if (!(p.lr > 0) || !std::isfinite(p.lr)) throw UsageError("learning rate must be a finite number > 0");
  if (!p.mnist.empty() && (p.widths.front() != 784 || p.widths.back() < 10))
    throw UsageError("MNIST has 784 inputs and 10 classes; network " + p.str() + " does not fit");
}

const Data& mnist_train(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, Data> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(dir);
  if (it == loaded.end()) it = loaded.emplace(dir, read_mnist(dir, "train")).first;
  return it->second;
}

Params<double> initial_params(const Problem& p, std::uint64_t seed) {
  validate(p);
  Params<double> out;
  for (std::int64_t l = 1; l <= p.layers(); ++l) {
    const std::int64_t in = p.widths[std::size_t(l - 1)], o = p.widths[std::size_t(l)];
    const double scale = std::sqrt(6.0 / double(in + o));
    const auto sw = fixtures::seed_for(seed, "mlp.w", {l, in, o});
    const auto sb = fixtures::seed_for(seed, "mlp.b", {l, o});
    std::vector<double> w(static_cast<std::size_t>(in * o)), b(static_cast<std::size_t>(o));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = scale * fixtures::unit_symmetric(fixtures::hash(sw, i));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.01 * fixtures::unit_symmetric(fixtures::hash(sb, i));
    out.w.push_back(std::move(w));
    out.b.push_back(std::move(b));
  }
  return out;
}

Data synthetic_data(std::int64_t n, std::int64_t features, std::int64_t classes, std::uint64_t seed) {
  if (n < 1 || features < 1 || classes < 2)
    throw UsageError("synthetic data needs n, features >= 1, classes >= 2");
  Data d;
  d.n = n, d.features = features, d.classes = classes;
  d.x.resize(std::size_t(n * features));
  d.label.resize(std::size_t(n));
  const auto sp = fixtures::seed_for(seed, "mlp.prototypes", {features, classes});
  const auto sl = fixtures::seed_for(seed, "mlp.labels", {n, classes});
  const auto sx = fixtures::seed_for(seed, "mlp.noise", {n, features});
  auto unit = [](std::uint64_t h) { return 0.5 + 0.5 * fixtures::unit_symmetric(h); };  // (0, 1), never 0
  for (std::int64_t i = 0; i < n; ++i) {
    const int c = int(fixtures::hash(sl, std::uint64_t(i)) % std::uint64_t(classes));
    d.label[std::size_t(i)] = c;
    for (std::int64_t f = 0; f < features; ++f) {
      const double proto = unit(fixtures::hash(sp, std::uint64_t(c * features + f)));
      const double noise = unit(fixtures::hash(sx, std::uint64_t(i * features + f)));
      d.x[std::size_t(i * features + f)] = 0.5 * proto + 0.5 * noise;
    }
  }
  return d;
}

Inputs make_inputs(const Problem& p, std::uint64_t base_seed) {
  validate(p);
  const auto seed = fixtures::seed_for(base_seed, "mlp", {p.widths.front(), p.widths.back(), p.batch});
  if (p.mnist.empty())
    return {synthetic_data(p.batch, p.widths.front(), p.widths.back(), seed), initial_params(p, seed)};
  const Data& all = mnist_train(p.mnist);
  if (p.batch > all.n)
    throw UsageError("batch " + std::to_string(p.batch) + " is larger than the " + std::to_string(all.n) +
                     " images of the MNIST train set in " + p.mnist);
  Data d;
  d.n = p.batch, d.features = all.features, d.classes = p.widths.back();
  d.x.assign(all.x.begin(), all.x.begin() + p.batch * all.features);
  d.label.assign(all.label.begin(), all.label.begin() + p.batch);
  return {d, initial_params(p, seed)};
}

}  // namespace pb::mlp
