#pragma once
// The GPUs a multi-GPU job spreads over, in one process or over MPI ranks,
// and, in targets built with NCCL (PARBENCH_WITH_NCCL), their communicators.
//
// In one process the team is GPUs 0 .. T-1, one communicator each
// (ncclCommInitAll). Over P ranks (a Backend::MpiCuda job) each rank drives
// T / P of them, which devices and which members TeamLayout (core/gpu.hpp)
// says; the team is ordered as the ranks are. Rank 0 makes one NCCL unique
// id, MPI broadcasts it, and every rank's GPUs join one communicator of T
// members.
//
// Work split into parts puts part q on member q % T; a process holds the
// parts of its own members only.
#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/gpu.hpp"
#include "core/mpi.hpp"
#ifdef PARBENCH_WITH_NCCL
#include "core/cuda/nccl.cuh"
#endif

namespace pb {

class GpuTeam {
 public:
  // `gpus`: the team's size T; `over_ranks`: spread over this run's MPI ranks.
  GpuTeam(int gpus, bool over_ranks) {
    int visible = 0;
    if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
    layout_ = over_ranks ? TeamLayout::make(gpus, mpi::size(), mpi::rank(), mpi::local_rank(),
                                            mpi::local_size(), visible)
                         : TeamLayout::make(gpus, 1, 0, 0, 1, visible);
    for (int i = 0; i < layout_.per; ++i) devices_.push_back(layout_.base + i);
    // A rank's home GPU is its first: current from here on, so the timer's
    // events and clocks and the registrar's check that every rank has one
    // model see this rank's GPU, not device 0.
    if (layout_.ranks > 1 && layout_.per > 0 && layout_.base < visible) PB_CUDA(cudaSetDevice(layout_.base));
  }
#ifdef PARBENCH_WITH_NCCL
  ~GpuTeam() { release(false); }
#endif
  GpuTeam(const GpuTeam&) = delete;
  GpuTeam& operator=(const GpuTeam&) = delete;

  // Whether the team can run here with its work in `parts` parts.
  Support supports(int parts) const {
    if (const std::string why = layout_.why_not(parts); !why.empty()) return Support::no(why);
    std::vector<std::string> names;
    for (int d : devices_) {
      cudaDeviceProp prop{};
      PB_CUDA(cudaGetDeviceProperties(&prop, d));
      names.push_back(prop.name);
    }
    if (const std::string why = mixed_gpu_models(names); !why.empty()) return Support::no(why);
    return Support::yes();
  }

#ifdef PARBENCH_WITH_NCCL
  // The communicators; every rank calls it at the same point.
  void connect() {
    release(false);
    comms_.assign(std::size_t(local()), nullptr);
    if (!over_ranks()) {
      PB_NCCL(ncclCommInitAll(comms_.data(), local(), devices_.data()));
      return;
    }
    ncclUniqueId id{};
    if (mpi::rank() == 0) PB_NCCL(ncclGetUniqueId(&id));
    mpi::broadcast(&id, sizeof id);
    const DeviceGuard guard;
    NcclGroup group;
    for (int i = 0; i < local(); ++i) {
      PB_CUDA(cudaSetDevice(devices_[std::size_t(i)]));
      PB_NCCL(ncclCommInitRank(&comms_[std::size_t(i)], size(), id, first() + i));
    }
    group.end();
  }
  // Aborted after a failed collective (one may never finish), destroyed otherwise.
  void release(bool failed) { release_comms(comms_, failed); }

  ncclComm_t comm(int i) const { return comms_[std::size_t(i)]; }
#endif

  int size() const { return layout_.gpus; }                     // T
  int local() const { return layout_.per; }                     // the GPUs this process drives
  int first() const { return layout_.first; }                   // the team member of this process's GPU 0
  bool over_ranks() const { return layout_.ranks > 1; }         // members in other processes
  int device(int i) const { return devices_[std::size_t(i)]; }  // the CUDA device of this process's GPU i
  const std::vector<int>& devices() const { return devices_; }
  // This process's GPU (0 .. local() - 1) that holds part q, or -1.
  int holder(std::int64_t q) const { return layout_.holder(q); }
  // Over ranks, rank 0's `all` receives every rank's all[lo, hi) in rank
  // order: a rank's parts are one run of the work, as its members are
  // consecutive. In one process nothing moves.
  template <class T>
  void gather(std::vector<T>& all, std::int64_t lo, std::int64_t hi) const {
    if (!over_ranks()) return;
    const std::vector<T> mine(all.begin() + lo, all.begin() + hi);
    mpi::gather(mine.data(), hi - lo, all.data());
  }
  // Waits for all work on this process's GPUs.
  void sync() const {
    const DeviceGuard guard;
    for (int d : devices_) {
      PB_CUDA(cudaSetDevice(d));
      PB_CUDA(cudaDeviceSynchronize());
    }
  }

 private:
  TeamLayout layout_;
  std::vector<int> devices_;
#ifdef PARBENCH_WITH_NCCL
  std::vector<ncclComm_t> comms_;
#endif
};

}  // namespace pb
