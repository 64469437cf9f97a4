#include "mlp/idx.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "core/status.hpp"

namespace pb::mlp {
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
