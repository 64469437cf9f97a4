#pragma once
// The sorting family's reference and verifier.
#include <memory>
#include <mutex>

#include "core/status.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

// Reference permutation: ref[j] is the input index of the key that belongs at
// position j, i.e. what std::stable_sort by key (ascending or descending, in
// the order of sort.hpp) leaves there, array by array. Computed as a sort of
// (ordered key, index) pairs, which is that unique stable result (a test pins
// it against std::stable_sort), in parallel over arrays or with the
// libstdc++ parallel sort for one large array.
std::vector<std::uint32_t> reference(const Problem& p, const Inputs& in);

// Keys in the order of the reference (sorted, each array the input's multiset
// up to the sign of zero), every value a distinct index of its own array and
// carrying its key's exact bits, zero signs preserved per array; with
// `stable`, values equal to the reference's.
Check verify(const Problem& p, const Inputs& in, const std::vector<std::uint32_t>& ref, const Output& out,
             bool stable);

// One problem's inputs and reference, shared by the variants that run it.
class Case {
 public:
  // Problems with the same inputs and reference share a Case: everything but
  // the payload (the reference permutation serves keys-only and pairs alike).
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.n == b.n && a.length == b.length && a.key == b.key && a.order == b.order && a.dist == b.dist;
  }
  Case(const Problem& p, std::uint64_t base_seed)
      : problem(p), seed(base_seed), inputs(make_inputs(p, base_seed)) {}
  const Problem problem;
  const std::uint64_t seed;
  const Inputs inputs;
  const std::vector<std::uint32_t>& ref() {
    std::call_once(once_, [&] { ref_ = reference(problem, inputs); });
    return ref_;
  }

 private:
  std::once_flag once_;
  std::vector<std::uint32_t> ref_;
};

}  // namespace pb::sort
