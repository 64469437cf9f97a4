#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <parallel/algorithm>

#include "core/status.hpp"
#include "fixtures/fixtures.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

std::vector<std::uint32_t> reference(const Problem& p, const Inputs& in) {
  const std::int64_t n = p.n, L = p.length;
  std::vector<std::uint64_t> w(static_cast<std::size_t>(n));
  const bool desc = p.order == Order::Desc;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t o = ord(p.key, in.keys[std::size_t(i)]);
    if (desc) o = ~o;
    // Index within the array: ties broken by input position = stable.
    w[std::size_t(i)] = (std::uint64_t(o) << 32) | std::uint64_t(i % L);
  }
  if (p.batch() == 1) {
    __gnu_parallel::sort(w.begin(), w.end());
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t a = 0; a < p.batch(); ++a) std::sort(w.begin() + a * L, w.begin() + (a + 1) * L);
  }
  std::vector<std::uint32_t> ref(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    ref[std::size_t(i)] = std::uint32_t((i / L) * L + std::int64_t(w[std::size_t(i)] & 0xffffffffu));
  return ref;
}

Check verify(const Problem& p, const Inputs& in, const std::vector<std::uint32_t>& ref, const Output& out,
             bool stable) {
  const std::int64_t n = p.n, L = p.length;
  char buf[320];
  if (std::int64_t(out.keys.size()) != n || (p.pairs() && std::int64_t(out.values.size()) != n))
    return {false, "output has the wrong size", "full"};
  // 1. Keys in reference order (sorted, same multiset up to the sign of zero).
  std::int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (std::int64_t j = 0; j < n; ++j)
    if (ord(p.key, out.keys[std::size_t(j)]) != ord(p.key, in.keys[ref[std::size_t(j)]]) && j < bad) bad = j;
  if (bad < n) {
    std::snprintf(buf, sizeof buf,
                  "array %lld position %lld: key 0x%08x where the sorted order has 0x%08x "
                  "(out of order, lost or duplicated key)",
                  (long long)(bad / L), (long long)(bad % L), out.keys[std::size_t(bad)],
                  in.keys[ref[std::size_t(bad)]]);
    return {false, buf, "full"};
  }
  // 2. f32: zeros keep their signs, array by array.
  if (p.key == Key::F32) {
    std::int64_t bad_array = p.batch();
#pragma omp parallel for schedule(static) reduction(min : bad_array)
    for (std::int64_t a = 0; a < p.batch(); ++a) {
      std::int64_t diff = 0;
      for (std::int64_t j = a * L; j < (a + 1) * L; ++j)
        diff += (out.keys[std::size_t(j)] == 0x80000000u) - (in.keys[std::size_t(j)] == 0x80000000u);
      if (diff != 0 && a < bad_array) bad_array = a;
    }
    if (bad_array < p.batch()) {
      std::snprintf(buf, sizeof buf, "array %lld: the number of -0.0 keys changed", (long long)bad_array);
      return {false, buf, "full"};
    }
  }
  if (!p.pairs()) return {true, "", "full"};
  // 3. Values: a permutation of each array's indices, each with its key.
  std::vector<std::uint8_t> seen(std::size_t(n), 0);
  for (std::int64_t j = 0; j < n; ++j) {
    const std::uint32_t v = out.values[std::size_t(j)];
    const std::int64_t a = j / L;
    const char* why = nullptr;
    if (std::int64_t(v) < a * L || std::int64_t(v) >= (a + 1) * L)
      why = "is not an index of this array";
    else if (seen[v]++)
      why = "appears twice";
    else if (out.keys[std::size_t(j)] != in.keys[v])
      why = "did not travel with its key";
    if (why) {
      std::snprintf(buf, sizeof buf, "array %lld position %lld: value %u %s", (long long)a,
                    (long long)(j % L), v, why);
      return {false, buf, "full"};
    }
  }
  // 4. Stability: equal keys in input order, i.e. exactly the reference.
  if (stable) {
    for (std::int64_t j = 0; j < n; ++j)
      if (out.values[std::size_t(j)] != ref[std::size_t(j)]) {
        std::snprintf(
            buf, sizeof buf, "array %lld position %lld: value %u, stable order has %u (equal keys reordered)",
            (long long)(j / L), (long long)(j % L), out.values[std::size_t(j)], ref[std::size_t(j)]);
        return {false, buf, "full+stable"};
      }
    return {true, "", "full+stable"};
  }
  return {true, "", "full"};
}

// The sorting problem: names, parsing, checks and the generated keys of
// every distribution.

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
