// OMP.Radix: least-significant-digit radix sort, four passes of 8 bits, with
// per-thread histograms. Each thread owns one contiguous slice of the input;
// a pass counts the slice's digits, one thread turns the (digit, thread)
// counts into write offsets, and every thread scatters its slice in order, so
// the sort is stable. Digits come from ord() (f32: -0.0 and +0.0 share a
// digit, sort.hpp) and are reversed for descending order; the raw keys move.
// One array only (length = total): batches are the networks' axis.
#include <omp.h>

#include <algorithm>

#include "sort/cpu/cpu_variants.hpp"

namespace pb::sort {
namespace {

constexpr int kBits = 8, kDigits = 1 << kBits, kPasses = 32 / kBits;

class Radix final : public CpuSort {
 public:
  explicit Radix(int threads) : threads_(threads) {}
  Support supports(const Problem& p) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    if (p.batch() != 1)
      return Support::no("sorts one array (length = total); batches are the networks' axis");
    return Support::yes();
  }
  bool stable() const override { return true; }
  void prepare(const Problem& p, const Inputs& in) override {
    CpuSort::prepare(p, in);
    tmp_k_.assign(std::size_t(p.n), 0);
    if (p.pairs()) tmp_v_.assign(std::size_t(p.n), 0);
    hist_.assign(std::size_t(threads_) * kDigits, 0);
  }
  void run() override {
    const std::int64_t n = p_.n;
    const Key key = p_.key;
    const std::uint32_t flip = p_.order == Order::Desc ? kDigits - 1 : 0;
    const bool pairs = p_.pairs();
    std::int64_t* H = hist_.data();
#pragma omp parallel num_threads(threads_)
    {
      const int me = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::int64_t lo = n * me / nt, hi = n * (me + 1) / nt;
      // Passes: input -> tmp -> out -> tmp -> out (an even count ends in out).
      const std::uint32_t* sk = in_->keys.data();
      const std::uint32_t* sv = in_->values.data();
      std::uint32_t* dk = tmp_k_.data();
      std::uint32_t* dv = tmp_v_.data();
      std::int64_t* my = H + std::int64_t(me) * kDigits;
      for (int pass = 0; pass < kPasses; ++pass) {
        const int shift = pass * kBits;
        std::fill_n(my, kDigits, 0);
        for (std::int64_t i = lo; i < hi; ++i) ++my[((ord(key, sk[i]) >> shift) & (kDigits - 1)) ^ flip];
#pragma omp barrier
#pragma omp single
        {
          std::int64_t at = 0;
          for (int d = 0; d < kDigits; ++d)
            for (int t = 0; t < nt; ++t) {
              const std::int64_t c = H[std::int64_t(t) * kDigits + d];
              H[std::int64_t(t) * kDigits + d] = at;
              at += c;
            }
        }  // implicit barrier: offsets ready
        for (std::int64_t i = lo; i < hi; ++i) {
          const std::uint32_t k = sk[i];
          const std::int64_t to = my[((ord(key, k) >> shift) & (kDigits - 1)) ^ flip]++;
          dk[to] = k;
          if (pairs) dv[to] = sv[i];
        }
#pragma omp barrier
        const bool to_out = (pass % 2) == 0;  // the next destination
        sk = dk, sv = dv;
        dk = to_out ? out_.keys.data() : tmp_k_.data();
        dv = to_out ? out_.values.data() : tmp_v_.data();
      }
    }
  }

 private:
  int threads_;
  std::vector<std::uint32_t> tmp_k_, tmp_v_;
  std::vector<std::int64_t> hist_;
};

}  // namespace

std::unique_ptr<Variant> make_omp_radix(int threads) { return std::make_unique<Radix>(threads); }

}  // namespace pb::sort
