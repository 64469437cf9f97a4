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

// One step, class-local stride k of the merges of class-local size 2p, on a
// window s of `rows` rows of C residues whose first row is class-local index
// j0 (a multiple of 2k), N class-local indices in all: the compare-exchange
// slots first, first + step, ... (a block's threads on the GPU, all of them
// on the host). Pairs with an end outside the window or the array are left.
template <class T, int C>
PB_HOST_DEVICE inline void step(T* s, int rows, std::int64_t j0, std::int64_t N, std::int64_t p, int k,
                                int first, int stride) {
  const int slots = rows / 2 * C;
  const bool top = k == p;
  // Once a window, not once a pair: whether every row lies in the array, and
  // where the window starts in its block of 2p (in 32 bits where 2p allows;
  // & gives the residue of a negative j0 too).
  const bool inside = j0 >= 0 && j0 + rows <= N;
  const bool narrow = 2 * p <= (std::int64_t(1) << 30);
  const unsigned block = unsigned(2 * p), at = narrow ? unsigned(j0 & (2 * p - 1)) : 0u;
  for (int u = first; u < slots; u += stride) {
    const int c = u % C, t = u / C;
    int i = 2 * t - (t & (k - 1));
    if (!top) i += k;
    if (i + k >= rows) continue;
    if (!inside && (j0 + i < 0 || j0 + i + k >= N)) continue;
    if (!top && (narrow ? ((at + unsigned(i)) & (block - 1)) + unsigned(k) >= block
                        : ((j0 + i) & (2 * p - 1)) + k >= 2 * p))
      continue;
    T& a = s[i * C + c];
    T& b = s[(i + k) * C + c];
    const T lo = a < b ? a : b, hi = a < b ? b : a;
    a = lo;
    b = hi;
  }
}

}  // namespace pb::sort::windows
