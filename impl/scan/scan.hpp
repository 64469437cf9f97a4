#pragma once
// Scan family: the inclusive prefix sum of n elements, u32 (wrapping, exact)
// or f32, over the whole array or segmented, where a segment is a run of
// equal keys (the scan restarts wherever key[i] != key[i - 1]).
//
// Inputs: u32 values uniform over all 32 bits (sums wrap modulo 2^32); f32
// values uniform in (-1, 1) and never 0, so partial sums stay near sqrt(n)
// and float can hold them. Segment keys count the segments so far: a new
// segment starts at each element with probability 1/segment (the mean
// length), so lengths vary.
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace pb::scan {

enum class Type { U32, F32 };

struct Problem {
  Type type = Type::U32;
  std::int64_t n = 0;
  std::int64_t segment = 0;  // mean segment length; 0: one scan over all
  bool segmented() const { return segment > 0; }
  std::string str() const;  // "u32 n=... segment=..."
};

// The largest n (2^30): the libraries take an int count, and the inputs,
// output and reference of 2^30 elements take 12 GiB of host memory.
inline constexpr std::int64_t kMaxElements = std::int64_t(1) << 30;

struct Inputs {
  std::vector<std::uint32_t> values;  // raw bits (f32 as its bit pattern)
  std::vector<std::uint32_t> keys;    // segment keys, non-decreasing; empty unless segmented
};
Inputs make_inputs(const Problem& p, std::uint64_t base_seed);

struct Output {
  std::vector<std::uint32_t> values;  // raw bits
};

// The reference: u32 sums exactly (modulo 2^32); f32 sums in double, with
// each element's sum of magnitudes for the error bound (verify()).
struct Reference {
  std::vector<std::uint32_t> exact;    // u32
  std::vector<double> sum, magnitude;  // f32
};
Reference reference(const Problem& p, const Inputs& in);

// u32: every element equal. f32: |x_i - s_i| <= kF32Tolerance * m_i, where
// s_i is the exact sum and m_i the sum of magnitudes of the segment so far.
// Any order of float additions errs by at most (depth) * 2^-24 * m_i; the
// variants' deepest chain of dependent additions is a tile's look-back
// (n / 4096 sums of tiles), whose errors cancel like a random walk, and 2^-20
// (16 units in the last place) bounds every variant's error on the benchmark
// inputs with room (docs/families/scan.md).
inline constexpr double kF32Tolerance = 1.0 / (1 << 20);
Check verify(const Problem& p, const Inputs& in, const Reference& ref, const Output& out);

// Whether element i starts a segment.
inline bool head(const Inputs& in, std::int64_t i) {
  return i == 0 || in.keys[std::size_t(i)] != in.keys[std::size_t(i - 1)];
}

class Variant {
 public:
  virtual ~Variant() = default;
  virtual Support supports(const Problem&) const { return Support::yes(); }
  virtual void prepare(const Problem& p, const Inputs& in) = 0;  // untimed
  virtual void run() = 0;                                        // out of place: no reset
  virtual void result(Output& out) = 0;
  virtual void* stream() { return nullptr; }
};

}  // namespace pb::scan
