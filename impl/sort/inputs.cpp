// The sorting problem: names, parsing, checks and the generated keys of
// every distribution.
#include <cstring>

#include "core/status.hpp"
#include "fixtures/fixtures.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

const char* to_string(Key k) { return k == Key::U32 ? "u32" : "f32"; }
const char* to_string(Payload p) { return p == Payload::Keys ? "keys" : "pairs"; }
const char* to_string(Order o) { return o == Order::Asc ? "asc" : "desc"; }
const char* to_string(Dist d) {
  switch (d) {
    case Dist::Uniform: return "uniform";
    case Dist::Sorted: return "sorted";
    case Dist::Reversed: return "reversed";
    case Dist::FewUnique: return "few-unique";
    case Dist::AllEqual: return "all-equal";
  }
  return "?";
}

namespace {
template <class E>
E parse_enum(const std::string& what, const std::string& text, std::initializer_list<E> all) {
  std::string allowed;
  for (E e : all) {
    if (text == to_string(e)) return e;
    allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(e));
  }
  throw UsageError(what + ": unknown value '" + text + "' (allowed: " + allowed + ")");
}
}  // namespace

Key parse_key(const std::string& t) { return parse_enum("--key", t, {Key::U32, Key::F32}); }
Payload parse_payload(const std::string& t) {
  return parse_enum("--payload", t, {Payload::Keys, Payload::Pairs});
}
Order parse_order(const std::string& t) { return parse_enum("--order", t, {Order::Asc, Order::Desc}); }
Dist parse_dist(const std::string& t) {
  return parse_enum("--sort-dist", t,
                    {Dist::Uniform, Dist::Sorted, Dist::Reversed, Dist::FewUnique, Dist::AllEqual});
}

std::string Problem::str() const {
  return std::string(to_string(key)) + " " + to_string(payload) + " " + to_string(order) + " " +
         to_string(dist) + " n=" + std::to_string(n) + " length=" + std::to_string(length);
}

void validate(const Problem& p) {
  if (p.n < 1 || p.n > kMaxElements)
    throw UsageError("sort: " + std::to_string(p.n) + " elements is out of range [1, 2^30]");
  if (p.length < 1 || p.length > p.n)
    throw UsageError("sort: array length " + std::to_string(p.length) + " is out of range [1, " +
                     std::to_string(p.n) + "]");
  if (p.n % p.length != 0)
    throw UsageError("sort: array length " + std::to_string(p.length) + " does not divide the total " +
                     std::to_string(p.n));
}

namespace {
std::uint32_t f32_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
// 16 distinct keys for few-unique: u32 from the hash; f32 with both zeros,
// negatives and positives.
std::uint32_t few_value(Key k, std::uint64_t seed, int t) {
  const std::uint64_t h = fixtures::hash(seed ^ 0x5bd1e995ull, std::uint64_t(t));
  if (k == Key::U32) return std::uint32_t(h >> 32);
  if (t == 0) return 0x80000000u;  // -0.0
  if (t == 1) return 0u;           // +0.0
  return f32_bits(float(fixtures::unit_symmetric(h) * 1000.0));
}
}  // namespace

Inputs make_inputs(const Problem& p, std::uint64_t base_seed) {
  validate(p);
  const std::string name = std::string("sort-") + to_string(p.key) + "-" + to_string(p.dist);
  const std::uint64_t seed = fixtures::seed_for(base_seed, name, {p.n, p.length});
  Inputs in;
  in.keys.resize(std::size_t(p.n));
  in.values.resize(std::size_t(p.n));
  const std::int64_t L = p.length;
  const bool f32 = p.key == Key::F32;
  std::uint32_t few[16];
  for (int t = 0; t < 16; ++t) few[t] = few_value(p.key, seed, t);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < p.n; ++i) {
    const std::uint64_t h = fixtures::hash(seed, std::uint64_t(i));
    const std::int64_t local = i % L;
    // Position in [0, 1] along the array for sorted / reversed inputs.
    const double at = L > 1 ? double(local) / double(L - 1) : 0.0;
    std::uint32_t k = 0;
    switch (p.dist) {
      case Dist::Uniform:
        if (!f32) {
          k = std::uint32_t(h >> 32);
        } else {
          const std::int64_t r = i % 4099;
          k = f32_bits(float(fixtures::unit_symmetric(h) * 1000.0));
          if (i % 61 == 7) k = 0x80000000u;  // -0.0
          if (i % 61 == 19) k = 0u;          // +0.0
          if (r == 5) k = 0x7f800000u;       // +inf
          if (r == 11) k = 0xff800000u;      // -inf
        }
        break;
      case Dist::Sorted:
      case Dist::Reversed: {
        const double a = p.dist == Dist::Sorted ? at : 1.0 - at;
        k = f32 ? f32_bits(float(-1000.0 + 2000.0 * a)) : std::uint32_t(a * 4294967295.0);
        break;
      }
      case Dist::FewUnique: k = few[h >> 60]; break;
      case Dist::AllEqual: k = few[3]; break;
    }
    in.keys[std::size_t(i)] = k;
    in.values[std::size_t(i)] = std::uint32_t(i);
  }
  return in;
}

}  // namespace pb::sort
