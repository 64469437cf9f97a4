#pragma once
// CUDA.OddEvenMerge.Windows's plan and step, host and device code, so the
// CPU tests run the same step on the same plan (impl/sort/test_sort.cpp).
//
// A step of stride k of Batcher's odd-even merges of size 2p pairs i with
// i + k inside one block of 2p: i mod 2p < p where k = p, else i mod 2k >= k
// and i mod 2p + k < 2p. No step of stride k >= q (powers of two) changes an
// index's residue mod q, and on each residue class such steps are the same
// network on the class-local index j = i / q, with p / q and k / q. So one
// block runs several steps on a window: C consecutive residues (C = 32:
// whole 128-byte lines; C = 1 with q = 1: a contiguous window) by rows of
// class-local indices, in shared memory. A window's centre is exact where
// its pairs stay inside it: the first steps of a merge (from k = p) on
// windows aligned to the merge's blocks, and later steps on windows with a
// halo of at least the sum of their strides on each side, read and not
// written.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/host_device.hpp"
#include "sort/sort.hpp"

namespace pb::sort::windows {

// One pass: steps k = khi, khi / 2, ..., q (absolute strides) of the merges
// of size 2p on class-local windows [b J - H, (b + 1) J + H) of C residues
// mod q; the centre J rows are written. J and H are multiples of 2 khi / q.
struct Pass {
  std::int64_t p, khi, q;
  int J, H, C;
};

// The passes after the tile sort (tiles of min(W, P) words, every merge of
// size 2p <= W), for arrays of P words (a power of two) and windows of W
// words (a power of two, at least 4,096): for each merge of size 2p > W, its
// first steps (k = p .. 64 p / W) on aligned windows of W / 32 rows by 32
// residues; where the strides left are above W / 8, their steps down to
// W / 4 on windows of 32 residues with a halo of twice the first class-local
// stride, 5 steps in one pass where that reaches W / 4 (a halo of 2 x 32
// rows), else 4 at a time; the last steps (k <= W / 8) on
// contiguous windows with a halo of 2k each side (the sum of the strides
// k .. 1 is 2k - 1).
inline std::vector<Pass> plan(std::int64_t W, std::int64_t P) {
  std::vector<Pass> out;
  for (std::int64_t p = std::min(W, P); p < P; p <<= 1) {
    std::int64_t q = 64 * p / W;
    out.push_back({p, p, q, int(2 * p / q), 0, 32});
    for (std::int64_t k = q / 2; k >= 1; k = q / 2) {
      if (8 * k <= W) {
        out.push_back({p, k, 1, int(W - 4 * k), int(2 * k), 1});
        break;
      }
      q = k / 16 <= W / 4 ? W / 4 : k / 8;
      const int H = int(2 * (k / q));
      out.push_back({p, k, q, int(W / 32 - 2 * H), H, 32});
    }
  }
  return out;
}

// The compare-exchange of rows i and i + k of residue c.
template <class T, int C>
PB_HOST_DEVICE inline void exchange(T* s, int i, int k, int c) {
  cmpx(s[i * C + c], s[(i + k) * C + c], true);
}

// One step, class-local stride k of the merges of class-local size 2p, on a
// window s of `rows` rows of C residues whose first row is class-local index
// j0 (a multiple of 2k), N class-local indices in all. A caller is one of
// `stride` threads, `first` its number; stride is a multiple of C, so a
// thread keeps one residue and walks rows. Pairs with an end outside the
// window or the array are left.
//
// Everything that does not change from pair to pair is worked out once, in
// 32 bits: the rows whose pairs lie in the array, an interval tested with
// one unsigned comparison, and where the window meets the boundaries of the
// merges' blocks of 2p, which a pair of a later step (k < p) must not cross.
template <class T, int C>
PB_HOST_DEVICE inline void step(T* s, int rows, std::int64_t j0, std::int64_t N, std::int64_t p, int k,
                                int first, int stride) {
  const int c = first % C, dt = stride / C, pairs = rows / 2;
  // Pairs (i, i + k) in the array: ilo <= i < ihi - k.
  const std::int64_t left = N - j0;
  const int ilo = j0 < 0 ? (-j0 < rows ? int(-j0) : rows) : 0;
  const int ihi = left < rows ? (left > 0 ? int(left) : 0) : rows;
  const unsigned span = ihi - k > ilo ? unsigned(ihi - k - ilo) : 0u;
  if (k == p) {
    // The first step pairs i (i mod 2p < p) with i + p, inside its block.
    for (int t = first / C; t < pairs; t += dt) {
      const int i = 2 * t - (t & (k - 1));
      if (unsigned(i - ilo) < span) exchange<T, C>(s, i, k, c);
    }
    return;
  }
  const std::int64_t block = 2 * p;
  if (block < rows) {
    // Several blocks in the window (2p < rows, so 32 bits hold it).
    const int mask = int(block) - 1, at = int(j0 & (block - 1)), lim = int(block) - k;
    for (int t = first / C; t < pairs; t += dt) {
      const int i = 2 * t - (t & (k - 1)) + k;
      if (unsigned(i - ilo) < span && ((at + i) & mask) < lim) exchange<T, C>(s, i, k, c);
    }
    return;
  }
  // At most one boundary inside the window, at row e = 2p - (j0 mod 2p)
  // (& gives the residue of a negative j0 too); rows e - k .. e - 1 do not
  // pair across it. With none inside, lo lies far below row 0.
  const std::int64_t e = block - (j0 & (block - 1));
  const int lo = e < rows ? int(e) - k : -(1 << 30);
  for (int t = first / C; t < pairs; t += dt) {
    const int i = 2 * t - (t & (k - 1)) + k;
    if (unsigned(i - ilo) < span && unsigned(i - lo) >= unsigned(k)) exchange<T, C>(s, i, k, c);
  }
}

// The first steps of an aligned pass (no halo, from k = p) in registers.
// There the window's rows are one block of 2p class-local rows, and a thread
// keeps R rows of one residue, r = w + dt n (n < R, w < dt, dt R rows), so
// the steps of class-local stride dt R / 2 down to dt pair rows of one
// thread: in n they are the odd-even merge of R values (n with n + R / 2,
// then n with n + k where n & k and n + k < R). The steps below dt pair rows
// of different threads and stay in shared memory.
template <class T, int R>
PB_HOST_DEVICE inline void merge_in_registers(T (&v)[R]) {
  PB_UNROLL
  for (int n = 0; n < R / 2; ++n) cmpx(v[n], v[n + R / 2], true);
  PB_UNROLL
  for (int k = R / 4; k >= 1; k /= 2) {
    PB_UNROLL
    for (int n = 0; n < R; ++n)
      if ((n & k) && n + k < R) cmpx(v[n], v[n + k], true);
  }
}

}  // namespace pb::sort::windows
