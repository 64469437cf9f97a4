// The work schedule of CUDA.WGMMA's persistent grid: which work units (and
// which of their K tiles) each cluster multiplies, and who finishes a unit
// whose K tiles are shared. Host and device code, so the tests check on the
// CPU the schedule the kernel runs.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/host_device.hpp"

namespace pb::gemm::streamk {

// W clusters take `units` work units. The first dp_units go unit by unit
// (unit u to cluster u mod W); the K tiles of the others, T = (units -
// dp_units) * ktiles in all, in order of unit then K, are cut into `shares`
// contiguous shares, [T c / shares, T (c + 1) / shares) for cluster c < shares.
struct Schedule {
  int units = 0;
  int dp_units = 0;  // all units: no stream-K
  int parts = 1;     // the most clusters that share one stream-K unit
  int shares = 0;    // the clusters with a stream-K share
  int clusters = 0;  // the grid, in clusters
};

// The share that holds stream-K iteration i of T: the last share c that
// begins at or before i, T c / shares <= i, that is T c < (i + 1) shares.
PB_HOST_DEVICE inline int share_of(long long i, long long T, int shares) {
  return int(((i + 1) * shares - 1) / T);
}

// Of stream-K unit us (counted from dp_units) of ktiles K tiles, with T
// stream-K K tiles in all: the first cluster with a part of it and the one
// that finishes it.
struct Split {
  int lowest, finisher;
};
PB_HOST_DEVICE inline Split split_of(long long T, int shares, int us, int ktiles) {
  const long long first = (long long)us * ktiles;
  return {share_of(first, T, shares), share_of(first + ktiles - 1, T, shares)};
}

// The schedule for `units` units of ktiles K tiles on a GPU that holds
// `resident` clusters at once. Stream-K only from min_rounds full rounds of
// units on, and only for the last, partial round; a share is at least half
// a unit, so a unit is split at most three ways. Every cluster with a share
// is in the grid.
inline Schedule plan(std::int64_t units, int resident, std::int64_t ktiles, int min_rounds) {
  Schedule s;
  s.units = s.dp_units = int(units);
  s.clusters = int(std::min<std::int64_t>(resident, units));
  const std::int64_t rounds = units / resident;
  if (rounds < min_rounds || units % resident == 0 || ktiles == 0) return s;
  s.dp_units = int(rounds * resident);
  const std::int64_t left = units - s.dp_units;
  const long long T = left * ktiles;
  s.shares = int(std::clamp<long long>(T / std::max<std::int64_t>(ktiles / 2, 1),
                                       std::min<long long>({left, T, resident}), resident));
  s.clusters = resident;
  for (std::int64_t us = 0; us < left; ++us) {
    const Split split = split_of(T, s.shares, int(us), int(ktiles));
    s.parts = std::max(s.parts, split.finisher - split.lowest + 1);
  }
  return s;
}

// Calls f(u, k0, k1) for each piece of work of cluster c of W, in order:
// its data-parallel units whole, then the pieces [k0, k1) of the units of
// its stream-K share, last piece first. A split unit is finished by the
// cluster with its last K tile, and that piece comes last in the cluster's
// order; every other piece of a split unit comes first in its cluster's
// order (or is the cluster's whole share). So a finisher waits only for
// clusters of lower index, which post early.
template <class F>
PB_HOST_DEVICE void for_each_piece(const Schedule& s, int ktiles, int c, int W, F&& f) {
  for (int u = c; u < s.dp_units; u += W) f(u, 0, ktiles);
  if (c >= s.shares) return;
  const long long T = (long long)(s.units - s.dp_units) * ktiles;
  const long long begin = T * c / s.shares;
  for (long long pos = T * (c + 1) / s.shares; pos > begin;) {
    const long long us = (pos - 1) / ktiles, first = us * ktiles;
#ifdef __CUDA_ARCH__
    const long long k0 = max(begin, first) - first;
#else
    const long long k0 = std::max(begin, first) - first;
#endif
    f(s.dp_units + int(us), int(k0), int(pos - first));
    pos = first + k0;
  }
}

}  // namespace pb::gemm::streamk
