// CUDA.Rows: the grid split by rows into parts, part p on GPU p % gpus, each
// part in the red/black split layout with one halo row above and below, and
// halo rows exchanged every half-sweep (seed 002's two-GPU version, whose
// missing exchange left a seam; the tests check for that seam).
//
// One half-sweep of colour c on a part that owns interior rows a <= i < b:
//  - stream `edge`: rows a and b - 1 (the ones neighbours need), then their
//    copies into the neighbours' halo rows (cudaMemcpyPeerAsync: peer to peer
//    where the GPUs can, staged by the driver otherwise; on one GPU a device
//    copy);
//  - stream `inner`: rows a + 1 ... b - 2, at the same time as the exchange.
// Events order the rest: a part's next half-sweep waits for both its streams,
// and its edge rows for the neighbours' copies into its halos. The kernel is
// CUDA.SplitColumns' (columns.cuh), so on one GPU and one part this is that
// variant plus the exchange machinery.
//
// The benchmark's `gpus` axis runs it with parts = gpus; the tests also split
// one GPU into 2-4 parts, so the exchange is checked on any machine with a GPU.
//
// MPI.NCCL is the same over MPI ranks (core/cuda/team.cuh), one rank a GPU or
// more (or one process, as the tests run it): a rank holds the parts of its
// own GPUs, and every halo row goes by NCCL send and receive on the edge stream (one group a half-sweep for
// the rank's parts), which orders it after the edge rows on both sides with no event across GPUs; the
// interior update overlaps it as before. Rank 0 gathers the field for the check.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/team.cuh"
#include "core/knobs.hpp"
#include "core/mpi.hpp"
#include "sor/cuda/columns.cuh"
#include "sor/sor.hpp"

namespace pb::sor {
namespace {

constexpr int kRowsBlock = 256;

class Rows final : public Variant {
 public:
  Rows(int gpus, int parts, bool over_ranks) : parts_(parts), team_(gpus, over_ranks), nccl_(over_ranks) {}
#ifdef PARBENCH_WITH_NCCL
  ~Rows() override { team_.release(failed_); }
#endif

  Support supports(const Problem& p) const override {
#ifndef PARBENCH_WITH_NCCL
    if (nccl_) return Support::no("built without NCCL, which exchanges its halos");
#endif
    // A grid of fewer interior rows than parts gets fewer parts; over ranks
    // each GPU needs its part.
    if (nccl_ && p.m - 2 < team_.size())
      return Support::no("fewer interior rows (" + std::to_string(p.m - 2) + ") than GPUs");
    return team_.supports(parts_);
  }

  void prepare(const Problem& p, const Inputs& in) override {
    const DeviceGuard guard;
#ifdef PARBENCH_WITH_NCCL
    if (nccl_) team_.connect();  // first: see core/cuda/team.cuh
#endif
    c_ = consts(p), sweeps_ = p.sweeps;
    w_ = (p.n + 1) / 2;
    const std::int64_t rows = p.m - 2;
    std::vector<double> host[2];
    to_split(in.u0, p.m, p.n, w_, host);
    if (!nccl_)
      for (int a : team_.devices())
        for (int b : team_.devices())
          if (a != b) enable_peer_access(a, b);
    parts_v_.clear();
    nparts_ = int(std::min<std::int64_t>(parts_, rows));  // each part owns a row or more
    for (std::int64_t q = 0; q < nparts_; ++q) {
      if (team_.holder(q) < 0) continue;  // another rank's
      auto part = std::make_unique<Part>();
      part->q = int(q);
      part->gpu = team_.holder(q);
      part->dev = team_.device(part->gpu);
      part->a = 1 + rows * q / nparts_;
      part->b = 1 + rows * (q + 1) / nparts_;
      PB_CUDA(cudaSetDevice(part->dev));
      part->create();
      const std::size_t n = std::size_t((part->b - part->a + 2) * w_);
      for (int c = 0; c < 2; ++c) {
        part->arr[c] = DeviceBuffer<double>(n);
        part->start[c] = DeviceBuffer<double>(n);
        PB_CUDA(cudaMemcpy(part->start[c].get(), host[c].data() + (part->a - 1) * w_, n * sizeof(double),
                           cudaMemcpyHostToDevice));
      }
      // A copy from pageable memory may return before the data has landed, and
      // the variant's non-blocking stream is not ordered after it: wait here.
      PB_CUDA(cudaDeviceSynchronize());
      parts_v_.push_back(std::move(part));
    }
    PB_CUDA(cudaSetDevice(parts_v_[0]->dev));
    go_ = std::make_unique<Event>();
  }

  void reset() override {
    const DeviceGuard guard;
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(part->dev));
      for (int c = 0; c < 2; ++c)
        PB_CUDA(cudaMemcpyAsync(part->arr[c].get(), part->start[c].get(), part->start[c].bytes(),
                                cudaMemcpyDeviceToDevice, part->inner->get()));
      PB_CUDA(cudaStreamSynchronize(part->inner->get()));
    }
    PB_CUDA(cudaSetDevice(parts_v_[0]->dev));
  }

  void run() override {
    failed_ = true;  // until run() returns normally
    sweeps(true);
    failed_ = false;
  }

  // The timed call's work on its streams, ending on part 0's inner stream;
  // without `exchanged` no halo row moves (the communication profile's pass
  // without the exchange: its field is wrong and not used).
  void sweeps(bool exchanged) {
    const DeviceGuard guard;
    const int n = int(parts_v_.size());
    // Every stream starts after what the timer recorded on part 0's stream.
    PB_CUDA(cudaSetDevice(parts_v_[0]->dev));
    PB_CUDA(cudaEventRecord(go_->get(), parts_v_[0]->inner->get()));
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(part->dev));
      PB_CUDA(cudaStreamWaitEvent(part->inner->get(), go_->get(), 0));
      PB_CUDA(cudaStreamWaitEvent(part->edge->get(), go_->get(), 0));
    }
    for (int s = 0; s < sweeps_; ++s)
      for (int colour = 0; colour < 2; ++colour) {
        // First every wait on the previous half-sweep's events, then the new
        // work: a wait issued after a neighbour's new record would wait for
        // this half-sweep's copy instead.
        for (int q = 0; q < n; ++q) {
          Part& part = *parts_v_[std::size_t(q)];
          PB_CUDA(cudaSetDevice(part.dev));
          PB_CUDA(cudaStreamWaitEvent(part.edge->get(), part.inner_done->get(), 0));
          PB_CUDA(cudaStreamWaitEvent(part.inner->get(), part.sent->get(), 0));
          wait_for_neighbours(q);
        }
        for (auto& part : parts_v_) {
          PB_CUDA(cudaSetDevice(part->dev));
          sweep(*part, colour, part->edge->get(), part->a, part->a + 1);
          if (part->b - 1 > part->a) sweep(*part, colour, part->edge->get(), part->b - 1, part->b);
        }
        if (exchanged) {
          exchange(colour);
        } else {
          for (auto& part : parts_v_) {
            PB_CUDA(cudaSetDevice(part->dev));
            PB_CUDA(cudaEventRecord(part->sent->get(), part->edge->get()));
          }
        }
        for (auto& part : parts_v_) {
          PB_CUDA(cudaSetDevice(part->dev));
          sweep(*part, colour, part->inner->get(), part->a + 1, part->b - 1);
          PB_CUDA(cudaEventRecord(part->inner_done->get(), part->inner->get()));
        }
      }
    // The timer's stream (part 0's inner) ends after every part's last work.
    PB_CUDA(cudaSetDevice(parts_v_[0]->dev));
    for (auto& part : parts_v_) {
      PB_CUDA(cudaStreamWaitEvent(parts_v_[0]->inner->get(), part->sent->get(), 0));
      PB_CUDA(cudaStreamWaitEvent(parts_v_[0]->inner->get(), part->inner_done->get(), 0));
    }
  }

  void result(std::vector<double>& u) override {
    const DeviceGuard guard;
    std::vector<double> host[2] = {std::vector<double>(std::size_t(c_.m * w_)),
                                   std::vector<double>(std::size_t(c_.m * w_))};
    std::int64_t first = c_.m, last = 0;  // the rows this process holds
    for (const auto& held : parts_v_) {
      const Part& part = *held;
      PB_CUDA(cudaSetDevice(part.dev));
      PB_CUDA(cudaDeviceSynchronize());
      // Owned rows, plus the boundary rows the first and last parts hold as halos.
      const std::int64_t lo = part.q == 0 ? part.a - 1 : part.a;
      const std::int64_t hi = part.q + 1 == nparts_ ? part.b + 1 : part.b;
      first = std::min(first, lo), last = std::max(last, hi);
      for (int c = 0; c < 2; ++c)
        PB_CUDA(cudaMemcpy(host[c].data() + lo * w_, part.arr[c].get() + (lo - (part.a - 1)) * w_,
                           std::size_t((hi - lo) * w_) * sizeof(double), cudaMemcpyDeviceToHost));
    }
    for (auto& h : host) team_.gather(h, first * w_, last * w_);  // rank 0 checks the whole
    from_split(host, c_.m, c_.n, w_, u);
  }

  void* stream() override { return parts_v_.empty() ? nullptr : parts_v_[0]->inner->get(); }

  // The halo exchanges of a timed run alone, on the same streams in the same
  // order: every half-sweep's exchange waits for the neighbours' exchange of
  // the half-sweep before, as the edge rows that feed it do in run(); then
  // the run without them. Over ranks the ranks start together and the
  // slowest counts.
  CommProfile communication() override {
    const DeviceGuard guard;
    const int n = int(parts_v_.size());
    if (nparts_ < 2) return {};
    Part& first = *parts_v_[0];
    team_.sync();
    mpi::barrier();
    PB_CUDA(cudaSetDevice(first.dev));
    Stopwatch watch;
    watch.begin(first.inner->get());
    PB_CUDA(cudaEventRecord(go_->get(), first.inner->get()));
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(part->dev));
      PB_CUDA(cudaStreamWaitEvent(part->edge->get(), go_->get(), 0));
    }
    double bytes = 0;
    for (int s = 0; s < sweeps_; ++s)
      for (int colour = 0; colour < 2; ++colour) {
        for (int q = 0; q < n; ++q) {
          PB_CUDA(cudaSetDevice(parts_v_[std::size_t(q)]->dev));
          wait_for_neighbours(q);
        }
        bytes += exchange(colour);
      }
    PB_CUDA(cudaSetDevice(first.dev));
    for (auto& part : parts_v_) PB_CUDA(cudaStreamWaitEvent(first.inner->get(), part->sent->get(), 0));
    const double seconds = mpi::max(watch.end(first.inner->get()));
    // The call without its exchange: how much of a call the exchange adds
    // is what overlap left of it (reset() restores the field before any
    // timed run).
    team_.sync();
    mpi::barrier();
    PB_CUDA(cudaSetDevice(first.dev));
    Stopwatch alone;
    alone.begin(first.inner->get());
    sweeps(false);
    PB_CUDA(cudaSetDevice(first.dev));
    const double compute = mpi::max(alone.end(first.inner->get()));
    return {bytes, seconds, compute};
  }

 private:
  struct Part;

  // Half-sweep `colour` of rows first <= i < last of `part` on stream st.
  void sweep(Part& part, int colour, cudaStream_t st, std::int64_t first, std::int64_t last) {
    if (first >= last) return;
    half_sweep_columns<<<columns_grid(w_, kRowsBlock, last - first), kRowsBlock, 0, st>>>(
        part.arr[colour].get(), part.arr[1 - colour].get(), c_, colour, w_, first, last, part.a - 1);
    PB_CUDA_LAUNCHED();
  }

  // Peer copies: part q's edge stream (its device current) waits for its
  // neighbours' copies of the half-sweep before into its halos. NCCL orders
  // its exchange itself.
  void wait_for_neighbours(int q) {
    if (nccl_) return;
    Part& part = *parts_v_[std::size_t(q)];
    if (q > 0) PB_CUDA(cudaStreamWaitEvent(part.edge->get(), parts_v_[std::size_t(q - 1)]->sent->get(), 0));
    if (q + 1 < int(parts_v_.size()))
      PB_CUDA(cudaStreamWaitEvent(part.edge->get(), parts_v_[std::size_t(q + 1)]->sent->get(), 0));
  }

  // Every part's edge rows of `colour` into its neighbours' halos, on the
  // parts' edge streams, each then recording its `sent` event. Returns the
  // bytes this process sends.
  double exchange(int colour) {
    double bytes = 0;
#ifdef PARBENCH_WITH_NCCL
    if (nccl_) {
      const std::size_t row = std::size_t(w_);
      NcclGroup group;
      for (auto& held : parts_v_) {
        Part& part = *held;
        double* arr = part.arr[colour].get();  // row i at (i - (a - 1)) * w
        const ncclComm_t comm = team_.comm(part.gpu);
        const cudaStream_t st = part.edge->get();
        const std::int64_t h = part.b - part.a + 1;  // the bottom halo's row in the array
        if (part.q > 0) {
          PB_NCCL(ncclSend(arr + w_, row, ncclDouble, part.q - 1, comm, st));
          PB_NCCL(ncclRecv(arr, row, ncclDouble, part.q - 1, comm, st));
          bytes += double(row * sizeof(double));
        }
        if (part.q + 1 < nparts_) {
          PB_NCCL(ncclSend(arr + (h - 1) * w_, row, ncclDouble, part.q + 1, comm, st));
          PB_NCCL(ncclRecv(arr + h * w_, row, ncclDouble, part.q + 1, comm, st));
          bytes += double(row * sizeof(double));
        }
      }
      group.end();
      for (auto& part : parts_v_) {
        PB_CUDA(cudaSetDevice(part->dev));
        PB_CUDA(cudaEventRecord(part->sent->get(), part->edge->get()));
      }
      return bytes;
    }
#endif
    for (int q = 0; q < int(parts_v_.size()); ++q) {
      PB_CUDA(cudaSetDevice(parts_v_[std::size_t(q)]->dev));
      bytes += send_halos(q, colour);
    }
    return bytes;
  }

  // Peer copies, on part q's edge stream (its device current): row a into
  // the previous part's bottom halo, row b - 1 into the next part's top halo,
  // then the part's `sent` event. Returns the bytes copied.
  double send_halos(int q, int colour) {
    const std::size_t row_bytes = std::size_t(w_) * sizeof(double);
    Part& part = *parts_v_[std::size_t(q)];
    const double* mine = part.arr[colour].get();
    const std::int64_t row0 = part.a - 1;
    double bytes = 0;
    if (q > 0) {
      const Part& up = *parts_v_[std::size_t(q - 1)];
      PB_CUDA(cudaMemcpyPeerAsync(up.arr[colour].get() + (part.a - (up.a - 1)) * w_, up.dev,
                                  mine + (part.a - row0) * w_, part.dev, row_bytes, part.edge->get()));
      bytes += double(row_bytes);
    }
    if (q + 1 < int(parts_v_.size())) {
      const Part& down = *parts_v_[std::size_t(q + 1)];
      PB_CUDA(cudaMemcpyPeerAsync(down.arr[colour].get(), down.dev, mine + (part.b - 1 - row0) * w_, part.dev,
                                  row_bytes, part.edge->get()));
      bytes += double(row_bytes);
    }
    PB_CUDA(cudaEventRecord(part.sent->get(), part.edge->get()));
    return bytes;
  }

  struct Part {
    int q = 0;                  // its index among all parts (the team member q % T holds it)
    int gpu = 0;                // the team's GPU of this process that holds it
    int dev = 0;                // that GPU's CUDA device
    std::int64_t a = 0, b = 0;  // interior rows a <= i < b; the arrays hold rows a - 1 ... b
    DeviceBuffer<double> arr[2], start[2];
    std::unique_ptr<Stream> inner, edge;
    std::unique_ptr<Event> sent, inner_done;
    void create() {  // on the current device
      inner = std::make_unique<Stream>();
      edge = std::make_unique<Stream>();
      sent = std::make_unique<Event>();
      inner_done = std::make_unique<Event>();
    }
  };
  int parts_;       // asked for
  int nparts_ = 0;  // prepared: at most one a row
  GpuTeam team_;
  bool nccl_;            // halos by NCCL (MPI.NCCL, in one process too), else peer copies
  bool failed_ = false;  // a run() threw: the communicators are aborted, not destroyed
  Consts c_{};
  int sweeps_ = 0;
  std::int64_t w_ = 0;
  std::vector<std::unique_ptr<Part>> parts_v_;
  std::unique_ptr<Event> go_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_rows(int gpus, int parts, Spread spread) {
  return std::make_unique<Rows>(gpus, parts, spread == Spread::OverRanks);
}

}  // namespace pb::sor
