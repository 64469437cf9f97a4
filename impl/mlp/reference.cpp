#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/status.hpp"
#include "fixtures/fixtures.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {
namespace {

double act(Activation a, double z) {
  return a == Activation::Sigmoid ? 1.0 / (1.0 + std::exp(-z)) : std::max(z, 0.0);
}
// The derivative from the pre-activation z.
double act_grad(Activation a, double z) {
  if (a == Activation::Relu) return z > 0 ? 1.0 : 0.0;
  const double s = 1.0 / (1.0 + std::exp(-z));
  return s * (1.0 - s);
}

void check_rows(const Problem& p, const Data& d, std::int64_t first, std::int64_t rows) {
  validate(p);
  if (d.features != p.widths.front() || d.classes != p.widths.back())
    throw std::invalid_argument("mlp: data of " + std::to_string(d.features) + " features and " +
                                std::to_string(d.classes) + " classes for " + p.str());
  if (first < 0 || rows < 1 || first + rows > d.n)
    throw std::invalid_argument("mlp: rows " + std::to_string(first) + " + " + std::to_string(rows) +
                                " outside a data set of " + std::to_string(d.n));
}

// Forward pass over `rows` rows from `first`: z[l] and a[l] for l = 1..L
// (a[0] is the input), a[L] the softmax.
void forward(const Problem& p, const Params<double>& w, const Data& d, std::int64_t first, std::int64_t rows,
             std::vector<std::vector<double>>& z, std::vector<std::vector<double>>& a) {
  const std::int64_t L = p.layers();
  z.assign(std::size_t(L + 1), {});
  a.assign(std::size_t(L + 1), {});
  a[0].assign(d.x.begin() + first * d.features, d.x.begin() + (first + rows) * d.features);
  for (std::int64_t l = 1; l <= L; ++l) {
    const std::int64_t in = p.widths[std::size_t(l - 1)], out = p.widths[std::size_t(l)];
    auto& zl = z[std::size_t(l)];
    zl.assign(std::size_t(rows * out), 0.0);
    const auto& al = a[std::size_t(l - 1)];
    const auto& W = w.w[std::size_t(l - 1)];
    const auto& b = w.b[std::size_t(l - 1)];
    for (std::int64_t r = 0; r < rows; ++r) {
      double* zr = &zl[std::size_t(r * out)];
      for (std::int64_t k = 0; k < in; ++k) {
        const double x = al[std::size_t(r * in + k)];
        const double* wk = &W[std::size_t(k * out)];
        for (std::int64_t c = 0; c < out; ++c) zr[c] += x * wk[c];
      }
      for (std::int64_t c = 0; c < out; ++c) zr[c] += b[std::size_t(c)];
    }
    auto& outa = a[std::size_t(l)];
    outa.resize(zl.size());
    if (l < L) {
      for (std::size_t i = 0; i < zl.size(); ++i) outa[i] = act(p.act, zl[i]);
    } else {
      for (std::int64_t r = 0; r < rows; ++r) {  // softmax, shifted by the row's largest value
        const double* zr = &zl[std::size_t(r * out)];
        double* ar = &outa[std::size_t(r * out)];
        const double top = *std::max_element(zr, zr + out);
        double sum = 0;
        for (std::int64_t c = 0; c < out; ++c) sum += (ar[c] = std::exp(zr[c] - top));
        for (std::int64_t c = 0; c < out; ++c) ar[c] /= sum;
      }
    }
  }
}

double cross_entropy(const Problem& p, const std::vector<double>& prob, const Data& d, std::int64_t first,
                     std::int64_t rows) {
  const std::int64_t out = p.widths.back();
  double sum = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    sum -= std::log(std::max(prob[std::size_t(r * out + d.label[std::size_t(first + r)])], 1e-300));
  return sum / double(rows);
}

}  // namespace

double loss(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first) {
  check_rows(p, d, first, p.batch);
  std::vector<std::vector<double>> z, a;
  forward(p, params, d, first, p.batch, z, a);
  return cross_entropy(p, a.back(), d, first, p.batch);
}

double gradients(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                 Gradients& g) {
  check_rows(p, d, first, p.batch);
  const std::int64_t L = p.layers(), B = p.batch;
  std::vector<std::vector<double>> z, a;
  forward(p, params, d, first, B, z, a);
  const double value = cross_entropy(p, a.back(), d, first, B);
  g.w.assign(std::size_t(L), {});
  g.b.assign(std::size_t(L), {});
  // G_L = (softmax - onehot) / B
  std::vector<double> delta = a.back();
  const std::int64_t classes = p.widths.back();
  for (std::int64_t r = 0; r < B; ++r)
    delta[std::size_t(r * classes + d.label[std::size_t(first + r)])] -= 1.0;
  for (auto& v : delta) v /= double(B);
  for (std::int64_t l = L; l >= 1; --l) {
    const std::int64_t in = p.widths[std::size_t(l - 1)], out = p.widths[std::size_t(l)];
    const auto& prev = a[std::size_t(l - 1)];
    auto& dW = g.w[std::size_t(l - 1)];
    auto& db = g.b[std::size_t(l - 1)];
    dW.assign(std::size_t(in * out), 0.0);
    db.assign(std::size_t(out), 0.0);
    for (std::int64_t r = 0; r < B; ++r) {  // dW = A_{l-1}^T G_l, db = column sums of G_l
      const double* gr = &delta[std::size_t(r * out)];
      for (std::int64_t k = 0; k < in; ++k) {
        const double x = prev[std::size_t(r * in + k)];
        double* row = &dW[std::size_t(k * out)];
        for (std::int64_t c = 0; c < out; ++c) row[c] += x * gr[c];
      }
      for (std::int64_t c = 0; c < out; ++c) db[std::size_t(c)] += gr[c];
    }
    if (l == 1) break;
    // G_{l-1} = (G_l W_l^T) .* act'(Z_{l-1})
    const auto& W = params.w[std::size_t(l - 1)];
    const auto& zp = z[std::size_t(l - 1)];
    std::vector<double> next(std::size_t(B * in), 0.0);
    for (std::int64_t r = 0; r < B; ++r)
      for (std::int64_t k = 0; k < in; ++k) {
        double s = 0;
        const double* wk = &W[std::size_t(k * out)];
        const double* gr = &delta[std::size_t(r * out)];
        for (std::int64_t c = 0; c < out; ++c) s += gr[c] * wk[c];
        next[std::size_t(r * in + k)] = s * act_grad(p.act, zp[std::size_t(r * in + k)]);
      }
    delta.swap(next);
  }
  return value;
}

double step(const Problem& p, Params<double>& params, const Data& d, std::int64_t first) {
  Gradients g;
  const double value = gradients(p, params, d, first, g);
  for (std::size_t l = 0; l < g.w.size(); ++l) {
    for (std::size_t i = 0; i < g.w[l].size(); ++i) params.w[l][i] -= p.lr * g.w[l][i];
    for (std::size_t i = 0; i < g.b[l].size(); ++i) params.b[l][i] -= p.lr * g.b[l][i];
  }
  return value;
}

double accuracy(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                std::int64_t n) {
  check_rows(p, d, first, n);
  std::vector<std::vector<double>> z, a;
  forward(p, params, d, first, n, z, a);
  const std::int64_t out = p.widths.back();
  std::int64_t right = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    const double* ar = &a.back()[std::size_t(r * out)];
    right += std::max_element(ar, ar + out) - ar == d.label[std::size_t(first + r)];
  }
  return double(right) / double(n);
}

Check verify(const Problem& p, const Params<double>& start, const Params<double>& reference,
             const Params<double>& got) {
  if (got.w.size() != reference.w.size() || got.b.size() != reference.b.size())
    return {false, "wrong number of layers: " + std::to_string(got.w.size()), "step"};
  const double eps =
      p.f64 ? std::numeric_limits<double>::epsilon() : double(std::numeric_limits<float>::epsilon());
  std::int64_t k = p.batch;
  for (auto w : p.widths) k = std::max(k, w);
  // Per tensor (each layer's weights, each layer's biases): a hidden layer's
  // updates can be a small fraction of the output layer's, and one bound for
  // all would let a wrong hidden-layer gradient through.
  for (int bias = 0; bias < 2; ++bias)
    for (std::size_t l = 0; l < reference.w.size(); ++l) {
      const auto& want = bias ? reference.b[l] : reference.w[l];
      const auto& from = bias ? start.b[l] : start.w[l];
      const auto& have = bias ? got.b[l] : got.w[l];
      if (have.size() != want.size())
        return {false, "layer " + std::to_string(l + 1) + " has the wrong shape", "step"};
      double update = 0, scale = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        update = std::max(update, std::fabs(want[i] - from[i]));
        scale = std::max(scale, std::fabs(want[i]));
      }
      const double tol = 8 * double(k) * eps * update + 2 * eps * scale;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double err = std::fabs(have[i] - want[i]);
        if (!(err <= tol)) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "layer %zu %s %zu: %.9g, reference %.9g (off by %.3g, bound %.3g)",
                        l + 1, bias ? "bias" : "weight", i, have[i], want[i], err, tol);
          return {false, buf, "step"};
        }
      }
    }
  return {true, "", "step"};
}

// The MLP problem's checks, its first weights and its synthetic data.

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

namespace {

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError(path + ": cannot open (want an MNIST IDX file)");
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 | std::uint32_t(b[at + 2]) << 8 |
         std::uint32_t(b[at + 3]);
}

// The dimensions after the magic, checked against the file's length.
std::vector<std::int64_t> header(const std::vector<std::uint8_t>& b, const std::string& path,
                                 std::uint32_t magic, const char* what) {
  if (b.size() < 4)
    throw UsageError(path + ": " + std::to_string(b.size()) + " bytes, too short for an IDX header");
  const std::uint32_t got = be32(b, 0);
  if (got != magic) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "magic 0x%08x, want 0x%08x", unsigned(got), unsigned(magic));
    throw UsageError(path + ": not an IDX file of " + what + " (" + buf + ")");
  }
  const std::size_t dims = magic & 0xff;
  if (b.size() < 4 + 4 * dims) throw UsageError(path + ": cut off inside its header");
  std::vector<std::int64_t> d;
  std::uint64_t body = 1;
  for (std::size_t i = 0; i < dims; ++i) {
    d.push_back(std::int64_t(be32(b, 4 + 4 * i)));
    if (d.back() == 0) throw UsageError(path + ": dimension " + std::to_string(i + 1) + " is 0");
    if (body > (std::uint64_t(1) << 40) / std::uint64_t(d.back()))  // no MNIST file is near 1 TB
      throw UsageError(path + ": its header's dimensions are implausibly large");
    body *= std::uint64_t(d.back());
  }
  const std::uint64_t have = b.size() - 4 - 4 * dims;
  if (have != body)
    throw UsageError(path + ": " + std::to_string(have) + " bytes of data where the header says " +
                     std::to_string(body) + (have < body ? " (cut off)" : " (trailing bytes)"));
  return d;
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  const auto b = slurp(path);
  const auto d = header(b, path, 0x00000803u, "images");
  IdxImages out;
  out.n = d[0], out.rows = d[1], out.cols = d[2];
  out.pixels.assign(b.begin() + 16, b.end());
  return out;
}

std::vector<std::uint8_t> read_idx_labels(const std::string& path) {
  const auto b = slurp(path);
  header(b, path, 0x00000801u, "labels");
  return std::vector<std::uint8_t>(b.begin() + 8, b.end());
}

Data read_mnist(const std::string& dir, const std::string& set) {
  const std::string ip = dir + "/" + set + "-images-idx3-ubyte", lp = dir + "/" + set + "-labels-idx1-ubyte";
  const auto img = read_idx_images(ip);
  const auto lab = read_idx_labels(lp);
  if (std::int64_t(lab.size()) != img.n)
    throw UsageError(lp + ": " + std::to_string(lab.size()) + " labels for " + std::to_string(img.n) +
                     " images in " + ip);
  if (img.n < 1) throw UsageError(ip + ": no images");
  Data d;
  d.n = img.n, d.features = img.rows * img.cols, d.classes = 10;
  d.x.resize(img.pixels.size());
  for (std::size_t i = 0; i < img.pixels.size(); ++i) d.x[i] = img.pixels[i] / 255.0;
  d.label.resize(lab.size());
  for (std::size_t i = 0; i < lab.size(); ++i) {
    if (lab[i] > 9)
      throw UsageError(lp + ": label " + std::to_string(lab[i]) + " at " + std::to_string(i) +
                       " is not a digit");
    d.label[i] = lab[i];
  }
  return d;
}

}  // namespace pb::mlp
