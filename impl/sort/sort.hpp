#pragma once
// Sorting family (seed 004): batched arrays of 32-bit keys, optionally with
// 32-bit values, sorted ascending or descending.
//
// Layout: `n` keys in `n / length` consecutive arrays of `length` each; every
// array is sorted independently (batch = n / length). Values, when present,
// are the keys' original global indices, so a check can tell that each value
// travelled with its key and (for stable variants) that equal keys kept their
// input order.
//
// Key order. u32: numeric. f32: IEEE numeric order over non-NaN values with
// -0.0 and +0.0 equal (the order of `<`, and the one CUB's radix sort
// implements); a stable sort keeps +-0 in input order. Keys are compared
// through ord(), an order-preserving map to u32 that sends -0.0 to +0.0's
// image. Inputs never contain NaN.
#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.hpp"
#include "core/status.hpp"

namespace pb::sort {

enum class Key { U32, F32 };
enum class Payload { Keys, Pairs };
enum class Order { Asc, Desc };
enum class Dist { Uniform, Sorted, Reversed, FewUnique, AllEqual };
// Which merging network a network sort builds (Batcher's two).
enum class Merge { Bitonic, OddEven };

const char* to_string(Key);
const char* to_string(Payload);
const char* to_string(Order);
const char* to_string(Dist);
Key parse_key(const std::string&);  // UsageError on an unknown name
Payload parse_payload(const std::string&);
Order parse_order(const std::string&);
Dist parse_dist(const std::string&);

struct Problem {
  std::int64_t n = 0;       // total keys
  std::int64_t length = 0;  // keys per array; divides n
  Key key = Key::U32;
  Payload payload = Payload::Keys;
  Order order = Order::Asc;
  Dist dist = Dist::Uniform;
  std::int64_t batch() const { return length ? n / length : 0; }
  bool pairs() const { return payload == Payload::Pairs; }
  std::string str() const;  // "u32 pairs asc uniform n=... length=..."
};

// Largest total a problem may have (2^30): values are u32 indices with
// 0xFFFFFFFF reserved for padding, and the libraries take an int count.
inline constexpr std::int64_t kMaxElements = std::int64_t(1) << 30;

// Throws UsageError on a problem no variant can be asked for (n or length
// below 1 or above kMaxElements, a length that does not divide n).
void validate(const Problem& p);

struct Inputs {
  std::vector<std::uint32_t> keys;    // raw bits (f32 keys as their bit patterns)
  std::vector<std::uint32_t> values;  // values[i] = i (filled for every problem)
};
Inputs make_inputs(const Problem& p, std::uint64_t base_seed);

struct Output {
  std::vector<std::uint32_t> keys;
  std::vector<std::uint32_t> values;  // empty for keys-only
};

// ---- the key order --------------------------------------------------------
PB_HOST_DEVICE inline std::uint32_t ord_f32(std::uint32_t bits) {
  if (bits == 0x80000000u) bits = 0;  // -0.0 sorts with +0.0
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
inline std::uint32_t ord(Key k, std::uint32_t bits) { return k == Key::F32 ? ord_f32(bits) : bits; }

// The networks' compare-exchange: the smaller of a and b into a and the
// larger into b (up), or the other way round; min and max, then placed: no
// branch.
template <class T>
PB_HOST_DEVICE inline void cmpx(T& a, T& b, bool up) {
  const T lo = a < b ? a : b, hi = a < b ? b : a;
  a = up ? lo : hi;
  b = up ? hi : lo;
}

// Padded length of an array in the networks: the next power of two.
inline std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// The key every packed variant (the networks) sorts ascending: a bijective
// order-preserving map (f32: the IEEE total order, -0.0 just below +0.0, a
// valid order of equal keys), complemented for descending, so that descending
// is ascending on the complement and unrank() restores the exact bits.
PB_HOST_DEVICE inline std::uint32_t rank(const Problem& p, std::uint32_t bits) {
  std::uint32_t o = bits;
  if (p.key == Key::F32) o = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return p.order == Order::Desc ? ~o : o;
}
PB_HOST_DEVICE inline std::uint32_t unrank(const Problem& p, std::uint32_t r) {
  const std::uint32_t o = p.order == Order::Desc ? ~r : r;
  if (p.key == Key::F32) return (o & 0x80000000u) ? (o & 0x7fffffffu) : ~o;
  return o;
}

class Variant {
 public:
  virtual ~Variant() = default;
  virtual Support supports(const Problem&) const { return Support::yes(); }
  virtual void prepare(const Problem& p, const Inputs& in) = 0;  // untimed
  virtual void reset() = 0;                                      // untimed: unsorted input back in place
  virtual void run() = 0;
  virtual void result(Output& out) = 0;
  virtual bool stable() const { return false; }  // equal keys keep input order (checked)
  virtual void* stream() { return nullptr; }
};

// The sorting family's reference permutation.

// Reference permutation: ref[j] is the input index of the key that belongs at
// position j, i.e. what std::stable_sort by key (ascending or descending, in
// the key order above) leaves there, array by array. Computed as a sort of
// (ordered key, index) pairs, which is that unique stable result (a test pins
// it against std::stable_sort), in parallel over arrays or with the
// libstdc++ parallel sort for one large array.
std::vector<std::uint32_t> reference(const Problem& p, const Inputs& in);

// The sorting family's verifier.

// Keys in the order of the reference (sorted, each array the input's multiset
// up to the sign of zero), every value a distinct index of its own array and
// carrying its key's exact bits, zero signs preserved per array; with
// `stable`, values equal to the reference's.
Check verify(const Problem& p, const Inputs& in, const std::vector<std::uint32_t>& ref, const Output& out,
             bool stable);

}  // namespace pb::sort
