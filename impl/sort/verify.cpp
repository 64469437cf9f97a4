#include "sort/verify.hpp"

#include <cstdio>
#include <cstring>

namespace pb::sort {

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

}  // namespace pb::sort
