#include "gemm/case.hpp"

namespace pb::gemm {

template <class T>
std::shared_ptr<Case<T>> shared_case(const Problem& p, std::uint64_t base_seed) {
  static std::mutex mu;
  static std::shared_ptr<Case<T>> last;
  std::lock_guard<std::mutex> lock(mu);
  if (last && last->seed == base_seed && last->problem.op == p.op && last->problem.m == p.m &&
      last->problem.n == p.n && last->problem.k == p.k)
    return last;
  last.reset();  // release the old inputs before generating new ones
  last = std::make_shared<Case<T>>(p, base_seed);
  return last;
}

template std::shared_ptr<Case<float>> shared_case(const Problem&, std::uint64_t);
template std::shared_ptr<Case<double>> shared_case(const Problem&, std::uint64_t);

}  // namespace pb::gemm
