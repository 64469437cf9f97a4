#pragma once
// MNIST's IDX files (http://yann.lecun.com/exdb/mnist/ describes the format):
// a big-endian magic (0x00000803 for unsigned-byte images n x rows x cols,
// 0x00000801 for unsigned-byte labels n), the dimensions as big-endian 32-bit
// counts, then the bytes. Any file that does not match gives a UsageError
// naming the file and what is wrong.
#include <cstdint>
#include <string>
#include <vector>

#include "mlp/mlp.hpp"

namespace pb::mlp {

struct IdxImages {
  std::int64_t n = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  // n x rows x cols
};

IdxImages read_idx_images(const std::string& path);
std::vector<std::uint8_t> read_idx_labels(const std::string& path);

// DIR/<set>-images-idx3-ubyte and DIR/<set>-labels-idx1-ubyte (set "train"
// or "t10k") as Data: pixels / 255, labels 0-9, the two files' counts equal.
Data read_mnist(const std::string& dir, const std::string& set);

}  // namespace pb::mlp
