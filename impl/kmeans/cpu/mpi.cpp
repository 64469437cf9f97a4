// MPI: seed 001's MPI + OpenMP k-means. Rank 0 owns the input and scatters
// it (MPI_Scatterv; N / P points a rank, the remainder one each on the low
// ranks) and broadcasts the initial centroids. Each iteration every rank
// assigns its points with an OpenMP team (the reference's dist2, so the
// assignment matches it) and builds per-thread partial sums; MPI_Allreduce
// adds the sums, counts and changed-point counts of all ranks, and every rank
// applies the same update and exit test to the totals; rank 0's centroids
// and verdict are then broadcast (MPI does not promise every rank bitwise the
// same sum), so all agree on when to stop. The final assignment is gathered on rank 0 (MPI_Gatherv).
// All of it is timed; result() (untimed) broadcasts the gathered result so
// every rank checks the same answer.
#include "core/mpi.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <climits>

#include "kmeans/cpu/cpu_variants.hpp"

namespace pb::kmeans {
namespace {

class MpiKMeans final : public CpuKMeans {
 public:
  explicit MpiKMeans(int threads) : threads_(threads) {}
  Support supports(const Problem& p) const override {
    const int P = mpi::size();
    if (threads_ < 1) return Support::no("threads must be >= 1");
    if (p.n < P) return Support::no("more ranks than points");
    if (p.n * p.d > INT_MAX || p.k * p.d > INT_MAX)
      return Support::no("N*D or K*D exceeds MPI's int counts and displacements");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    mpi::start();  // a process that no launcher started runs this job as one rank
    CpuKMeans::prepare(p, in);
    const int P = mpi::size();
    me_ = mpi::rank();
    counts_.resize(P), displs_.resize(P), xcounts_.resize(P), xdispls_.resize(P);
    for (int r = 0, at = 0; r < P; ++r) {
      counts_[r] = int(p.n / P + (r < p.n % P ? 1 : 0));
      displs_[r] = at;
      xcounts_[r] = int(counts_[r] * p.d);
      xdispls_[r] = int(std::int64_t(at) * p.d);
      at += counts_[r];
    }
    local_ = counts_[me_];
    x_.assign(std::size_t(local_) * p.d, 0.0);
    a_.assign(local_, -1);
    best_.assign(local_, 0.0);
    sums_.assign(std::size_t(threads_) * p.k * p.d, 0.0);
    cnt_.assign(std::size_t(threads_) * p.k, 0);
    total_s_.assign(std::size_t(p.k) * p.d, 0.0);
    total_n_.assign(p.k, 0);
    bcast_.assign(std::size_t(p.k) * p.d + 1, 0.0);
  }
  void reset() override {
    CpuKMeans::reset();
    std::fill(a_.begin(), a_.end(), -1);  // this rank's points: no cluster yet
  }
  void run() override {
    const auto D = p_.d, K = p_.k;
    // Only rank 0's input is read: the other ranks receive their share.
    MPI_Scatterv(in_->points.data(), xcounts_.data(), xdispls_.data(), MPI_DOUBLE, x_.data(), xcounts_[me_],
                 MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double* C = out_.centroids.data();
    MPI_Bcast(C, int(K * D), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const double* X = x_.data();
    int* A = a_.data();
    double* B = best_.data();
    double* S = sums_.data();
    std::int64_t* Cnt = cnt_.data();
    for (int it = 0;;) {
      std::int64_t changed = 0;
#pragma omp parallel num_threads(threads_)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        double* my_s = S + std::int64_t(t) * K * D;
        std::int64_t* my_n = Cnt + std::int64_t(t) * K;
        std::fill_n(my_s, K * D, 0.0);
        std::fill_n(my_n, K, 0);
#pragma omp for schedule(static) reduction(+ : changed)
        for (int i = 0; i < local_; ++i) {
          const double* x = X + std::int64_t(i) * D;
          const int best = nearest(x, C, K, D, B[i]);
          if (A[i] != best) ++changed, A[i] = best;
          ++my_n[best];
          for (std::int64_t d = 0; d < D; ++d) my_s[best * D + d] += x[d];
        }  // implicit barrier
        merge_partials(S, Cnt, K, D, nt);
      }
      std::int64_t all_changed = 0;
      MPI_Allreduce(S, total_s_.data(), int(K * D), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(Cnt, total_n_.data(), int(K), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(&changed, &all_changed, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      const double move = finish_update(total_s_.data(), total_n_.data(), C, K, D);
      ++it;
      // MPI does not promise every rank bitwise the same reduction: rank 0's
      // centroids and exit verdict go to all, so no rank can stop alone.
      double* msg = bcast_.data();
      std::copy_n(C, K * D, msg);
      msg[K * D] = p_.crit.stop(it, all_changed, move, p_.n) ? 1.0 : 0.0;
      MPI_Bcast(msg, int(K * D + 1), MPI_DOUBLE, 0, MPI_COMM_WORLD);
      std::copy_n(msg, K * D, C);
      if (msg[K * D] != 0.0) {
        out_.iterations = it;
        break;
      }
    }
    MPI_Gatherv(A, local_, MPI_INT, out_.assign.data(), counts_.data(), displs_.data(), MPI_INT, 0,
                MPI_COMM_WORLD);
    MPI_Gatherv(B, local_, MPI_DOUBLE, best_d_.data(), counts_.data(), displs_.data(), MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
  }
  void result(Result& out) override {
    MPI_Bcast(out_.assign.data(), int(p_.n), MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(best_d_.data(), int(p_.n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    CpuKMeans::result(out);
  }

 private:
  int threads_;
  int me_ = 0, local_ = 0;
  std::vector<int> counts_, displs_, xcounts_, xdispls_;
  std::vector<double> x_, best_, sums_, total_s_, bcast_;
  std::vector<int> a_;
  std::vector<std::int64_t> cnt_, total_n_;
};

}  // namespace

std::unique_ptr<Variant> make_mpi(int threads) { return std::make_unique<MpiKMeans>(threads); }

}  // namespace pb::kmeans
