// Std: std::sort (keys) / std::stable_sort (pairs), one thread, array by array:
// the single-core baseline. ParallelMode: libstdc++'s parallel mode
// (__gnu_parallel::sort / stable_sort, a multiway mergesort) on one large
// array, or the std algorithms over arrays in parallel for a batch.
#include <omp.h>

#include <algorithm>
#include <parallel/algorithm>

#include "sort/cpu/cpu_variants.hpp"

namespace pb::sort {
namespace {

struct KV {
  std::uint32_t k, v;
};

// Which library sort runs: std::sort / std::stable_sort on one thread (the
// serial reference), or libstdc++'s parallel mode on a team of threads.
enum class Library { Serial, ParallelMode };

class StdSort final : public CpuSort {
 public:
  StdSort(int threads, Library lib) : threads_(threads), pm_(lib == Library::ParallelMode) {}
  Support supports(const Problem&) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    return Support::yes();
  }
  bool stable() const override { return true; }  // pairs use the stable algorithms
  void prepare(const Problem& p, const Inputs& in) override {
    CpuSort::prepare(p, in);
    if (p.pairs()) kv_.resize(std::size_t(p.n));
  }
  void run() override {
    const Key key = p_.key;
    const bool desc = p_.order == Order::Desc;
    auto before = [key, desc](std::uint32_t a, std::uint32_t b) {
      return desc ? ord(key, b) < ord(key, a) : ord(key, a) < ord(key, b);
    };
    auto kv_before = [before](const KV& a, const KV& b) { return before(a.k, b.k); };
    const std::int64_t n = p_.n, L = p_.length, batch = p_.batch();
    const int nt = pm_ ? threads_ : 1;
    if (!p_.pairs()) {
      std::copy(in_->keys.begin(), in_->keys.end(), out_.keys.begin());
      auto* k = out_.keys.data();
      if (pm_ && batch == 1) {
        with_threads([&] { __gnu_parallel::sort(k, k + n, before); });
      } else {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
        for (std::int64_t a = 0; a < batch; ++a) std::sort(k + a * L, k + (a + 1) * L, before);
      }
      return;
    }
    KV* kv = kv_.data();
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (std::int64_t i = 0; i < n; ++i) kv[i] = {in_->keys[std::size_t(i)], in_->values[std::size_t(i)]};
    if (pm_ && batch == 1) {
      with_threads([&] { __gnu_parallel::stable_sort(kv, kv + n, kv_before); });
    } else {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
      for (std::int64_t a = 0; a < batch; ++a) std::stable_sort(kv + a * L, kv + (a + 1) * L, kv_before);
    }
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (std::int64_t i = 0; i < n; ++i)
      out_.keys[std::size_t(i)] = kv[i].k, out_.values[std::size_t(i)] = kv[i].v;
  }

 private:
  // Parallel mode takes its team size from omp_get_max_threads().
  template <class F>
  void with_threads(F f) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads_);
    f();
    omp_set_num_threads(saved);
  }
  int threads_;
  bool pm_;
  std::vector<KV> kv_;
};

}  // namespace

std::unique_ptr<Variant> make_std() { return std::make_unique<StdSort>(1, Library::Serial); }
std::unique_ptr<Variant> make_parallel_mode(int threads) {
  return std::make_unique<StdSort>(threads, Library::ParallelMode);
}

}  // namespace pb::sort
