// Seq: one pass, one thread (the family's baseline). OMP: the two-pass
// parallel scan: each thread sums its contiguous chunk (a vectorised
// reduction), one thread scans the chunk sums, then each thread scans its
// chunk from its offset. Both
// carry (head, sum) across a segmented scan's boundaries alike: a chunk's
// offset stops at the chunk's first head.
#include "scan/scan.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace pb::scan {
namespace {

template <class T>
void scan_range(const T* in, const std::uint32_t* keys, T* out, std::int64_t lo, std::int64_t hi, T carry) {
  T s = carry;
  for (std::int64_t i = lo; i < hi; ++i) {
    if (keys && (i == 0 || keys[i] != keys[i - 1])) s = T(0);
    s += in[i];
    out[i] = s;
  }
}

class CpuScan : public Variant {
 public:
  explicit CpuScan(int threads) : threads_(threads) {}
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p;
    in_ = &in;
    out_.assign(std::size_t(p.n), 0);
  }
  void run() override {
    if (p_.type == Type::U32)
      go(in_->values.data(), out_.data());
    else
      go(reinterpret_cast<const float*>(in_->values.data()), reinterpret_cast<float*>(out_.data()));
  }
  void result(Output& out) override { out.values = out_; }

 private:
  template <class T>
  void go(const T* in, T* out) {
    const std::uint32_t* keys = p_.segmented() ? in_->keys.data() : nullptr;
    const std::int64_t n = p_.n;
    if (threads_ <= 1) return scan_range(in, keys, out, 0, n, T(0));
    const int t = threads_;
    std::vector<T> sums(std::size_t(t) + 1, T(0));
    std::vector<std::int64_t> last_head(std::size_t(t), -1);
#pragma omp parallel num_threads(t)
    {
      const int me = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::int64_t lo = n * me / nt, hi = n * (me + 1) / nt;
      // Pass 1: the chunk's sum since its last head (all of it when none),
      // found from the end, then summed as a vectorised reduction: no chain
      // of dependent additions, so it costs one read of the chunk.
      std::int64_t h = -1;
      if (keys)
        for (std::int64_t i = hi - 1; i >= lo && h < 0; --i)
          if (i == 0 || keys[i] != keys[i - 1]) h = i;
      T s = T(0);
#pragma omp simd reduction(+ : s)
      for (std::int64_t i = h >= 0 ? h : lo; i < hi; ++i) s += in[i];
      sums[std::size_t(me) + 1] = s;
      last_head[std::size_t(me)] = h;
#pragma omp barrier
#pragma omp single
      {
        // The offsets: each chunk's carry-in, stopped by a head in the chunk before.
        T carry = T(0);
        for (int c = 0; c < nt; ++c) {
          const T chunk = sums[std::size_t(c) + 1];
          sums[std::size_t(c)] = carry;
          carry = last_head[std::size_t(c)] >= 0 ? chunk : carry + chunk;
        }
      }
      scan_range(in, keys, out, lo, hi, sums[std::size_t(me)]);
    }
  }
  int threads_;
  Problem p_;
  const Inputs* in_ = nullptr;
  std::vector<std::uint32_t> out_;
};

}  // namespace

std::unique_ptr<Variant> make_seq() { return std::make_unique<CpuScan>(1); }
std::unique_ptr<Variant> make_omp(int threads) { return std::make_unique<CpuScan>(threads); }

}  // namespace pb::scan
