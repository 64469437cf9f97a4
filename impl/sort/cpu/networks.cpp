// OMP.Bitonic and OMP.OddEvenMerge: Batcher's two sorting networks with
// OpenMP, on any array length.
//
// Every array is padded to P = the next power of two. Keys are packed into
// one unsigned word that sorts ascending: rank(key) (sort.hpp; descending is
// ascending on the complement) for keys only, rank << 32 | value for pairs.
// Padding is the all-ones word, which sorts after every real element (a real
// pair never has the value 0xFFFFFFFF), and is dropped when unpacking. Pack,
// network and unpack are all timed.
//
// Bitonic: stages up to B = min(P, 4096) elements run block by block while
// the block is in cache; above that, each step j >= B is one parallel pass
// over the whole input and the steps j < B of a stage run block by block
// again. Odd-even merge: every step is one parallel pass (its comparators do
// not stay inside aligned blocks).
#include <omp.h>

#include <algorithm>

#include "sort/cpu/cpu_variants.hpp"

namespace pb::sort {
namespace {

template <class T>
inline void cmpx(T* a, std::int64_t i, std::int64_t l, bool up) {
  if ((a[i] > a[l]) == up) std::swap(a[i], a[l]);
}

// All comparators (i, i + j) of steps j = from .. 1 of bitonic stage k inside
// [lo, hi), an aligned block of at least 2 * from elements.
template <class T>
void bitonic_block(T* a, std::int64_t lo, std::int64_t hi, std::int64_t k, std::int64_t from,
                   std::int64_t P) {
  for (std::int64_t j = from; j >= 1; j >>= 1)
    for (std::int64_t i = lo; i < hi; ++i) {
      const std::int64_t l = i ^ j;
      if (l > i) cmpx(a, i, l, ((i & (P - 1)) & k) == 0);
    }
}

template <class T>
void bitonic(T* a, std::int64_t total, std::int64_t P, int threads) {
  const std::int64_t B = std::min<std::int64_t>(P, 4096);
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (std::int64_t lo = 0; lo < total; lo += B)
      for (std::int64_t k = 2; k <= B; k <<= 1) bitonic_block(a, lo, lo + B, k, k / 2, P);
    for (std::int64_t k = 2 * B; k <= P; k <<= 1) {
      for (std::int64_t j = k / 2; j >= B; j >>= 1) {
#pragma omp for schedule(static)
        for (std::int64_t t = 0; t < total / 2; ++t) {
          const std::int64_t i = 2 * t - (t & (j - 1));
          cmpx(a, i, i + j, ((i & (P - 1)) & k) == 0);
        }
      }
#pragma omp for schedule(static)
      for (std::int64_t lo = 0; lo < total; lo += B) bitonic_block(a, lo, lo + B, k, B / 2, P);
    }
  }
}

template <class T>
void odd_even(T* a, std::int64_t total, std::int64_t P, int threads) {
#pragma omp parallel num_threads(threads)
  for (std::int64_t p = 1; p < P; p <<= 1)
    for (std::int64_t k = p; k >= 1; k >>= 1) {
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < total / 2; ++t) {
        std::int64_t i = 2 * t - (t & (k - 1));  // bit k of i clear
        if (k < p) {
          i += k;                                        // inner steps: comparators from the odd k-chunks
          if ((i & (2 * p - 1)) + k >= 2 * p) continue;  // partner outside this merge
        }
        cmpx(a, i, i + k, true);
      }
    }
}

class Network final : public CpuSort {
 public:
  Network(int threads, Merge merge) : threads_(threads), merge_(merge) {}
  Support supports(const Problem& p) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    if (next_pow2(p.length) * p.batch() > (std::int64_t(1) << 32))
      return Support::no("padded input above 2^32 elements");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    CpuSort::prepare(p, in);
    P_ = next_pow2(p.length);
    const std::size_t padded = std::size_t(P_ * p.batch());
    if (p.pairs())
      w64_.assign(padded, 0);
    else
      w32_.assign(padded, 0);
  }
  void run() override {
    if (p_.pairs())
      go(w64_.data());
    else
      go(w32_.data());
  }

 private:
  template <class T>
  void go(T* w) {
    const std::int64_t L = p_.length, P = P_, total = P * p_.batch();
    const Problem p = p_;
    const auto* keys = in_->keys.data();
    const auto* vals = in_->values.data();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t s = 0; s < total; ++s) {
      const std::int64_t a = s / P, i = s % P;
      if (i >= L) {
        w[s] = T(~T(0));
      } else {
        const std::int64_t src = a * L + i;
        const T r = rank(p, keys[src]);
        w[s] = sizeof(T) == 8 ? T((std::uint64_t(r) << 32) | vals[src]) : r;
      }
    }
    if (merge_ == Merge::Bitonic)
      bitonic(w, total, P, threads_);
    else
      odd_even(w, total, P, threads_);
    auto* ok = out_.keys.data();
    auto* ov = out_.values.data();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const T v = w[(j / L) * P + j % L];
      ok[j] = unrank(p, std::uint32_t(sizeof(T) == 8 ? std::uint64_t(v) >> 32 : v));
      if (sizeof(T) == 8) ov[j] = std::uint32_t(v);
    }
  }

  int threads_;
  Merge merge_;
  std::int64_t P_ = 1;
  std::vector<std::uint32_t> w32_;
  std::vector<std::uint64_t> w64_;
};

}  // namespace

std::unique_ptr<Variant> make_omp_bitonic(int threads) {
  return std::make_unique<Network>(threads, Merge::Bitonic);
}
std::unique_ptr<Variant> make_omp_odd_even(int threads) {
  return std::make_unique<Network>(threads, Merge::OddEven);
}

}  // namespace pb::sort
