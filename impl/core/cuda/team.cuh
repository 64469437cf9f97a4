#pragma once
// The GPUs a multi-GPU job spreads over, in one process or over MPI ranks,
// and, in targets built with NCCL (PARBENCH_WITH_NCCL), their communicators.
//
// In one process the team is GPUs 0 .. T-1, one communicator each
// (ncclCommInitAll). Over P ranks (a Backend::MpiCuda job) each rank drives
// T / P of them: the ranks of a host take consecutive devices (local rank l:
// devices l * T/P ...), unless the launcher shows each rank its own GPUs
// only (Slurm's --gpus-per-task), which the rank then takes all of. Team member r * T/P + i is rank r's GPU
// i, so the team is ordered as the ranks are; rank 0 makes one NCCL unique id, MPI broadcasts it, and every
// rank's GPUs join one communicator of T members.
//
// Work split into parts puts part q on member q % T; a process holds the
// parts of its own members only.
#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/mpi.hpp"
#ifdef PARBENCH_WITH_NCCL
#include "core/cuda/nccl.cuh"
#endif

namespace pb {

class GpuTeam {
 public:
  // `gpus`: the team's size T; `over_ranks`: spread over this run's MPI ranks.
  GpuTeam(int gpus, bool over_ranks) : gpus_(gpus), ranks_(over_ranks ? mpi::size() : 1) {
    per_ = gpus_ % ranks_ == 0 ? gpus_ / ranks_ : 0;
    if (cudaGetDeviceCount(&visible_) != cudaSuccess) visible_ = 0;
    own_only_ = over_ranks && visible_ == per_;
    base_ = over_ranks && !own_only_ ? mpi::local_rank() * per_ : 0;
    first_ = over_ranks ? mpi::rank() * per_ : 0;
    for (int i = 0; i < per_; ++i) devices_.push_back(base_ + i);
  }
#ifdef PARBENCH_WITH_NCCL
  ~GpuTeam() { release(false); }
#endif
  GpuTeam(const GpuTeam&) = delete;
  GpuTeam& operator=(const GpuTeam&) = delete;

  // Whether the team can run here with its work in `parts` parts.
  Support supports(int parts) const {
    if (gpus_ < 1) return Support::no("asks for no GPUs");
    if (per_ == 0)
      return Support::no(std::to_string(gpus_) + " GPUs do not split evenly over " + std::to_string(ranks_) +
                         " ranks");
    const int visible = visible_;
    const int host_ranks = ranks_ > 1 && !own_only_ ? mpi::local_size() : 1;
    if (host_ranks * per_ > visible)
      return Support::no(ranks_ > 1
                             ? std::to_string(host_ranks) + " ranks on this host x " + std::to_string(per_) +
                                   " GPUs a rank need " + std::to_string(host_ranks * per_) + " GPUs, " +
                                   std::to_string(visible) + " visible"
                             : "asks for " + std::to_string(gpus_) + " GPUs, " + std::to_string(visible) +
                                   " visible");
    if (parts < gpus_) return Support::no("fewer parts than GPUs");
    if (ranks_ > 1 && parts != gpus_) return Support::no("over MPI ranks every GPU holds one part");
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
    comms_.assign(std::size_t(per_), nullptr);
    if (ranks_ == 1) {
      PB_NCCL(ncclCommInitAll(comms_.data(), per_, devices_.data()));
      return;
    }
    ncclUniqueId id{};
    if (mpi::rank() == 0) PB_NCCL(ncclGetUniqueId(&id));
    mpi::broadcast(&id, sizeof id);
    const DeviceGuard guard;
    NcclGroup group;
    for (int i = 0; i < per_; ++i) {
      PB_CUDA(cudaSetDevice(devices_[std::size_t(i)]));
      PB_NCCL(ncclCommInitRank(&comms_[std::size_t(i)], gpus_, id, first_ + i));
    }
    group.end();
  }
  // Aborted after a failed collective (one may never finish), destroyed otherwise.
  void release(bool failed) { release_comms(comms_, failed); }

  ncclComm_t comm(int i) const { return comms_[std::size_t(i)]; }
#endif

  int size() const { return gpus_; }                            // T
  int local() const { return per_; }                            // the GPUs this process drives
  int first() const { return first_; }                          // the team member of this process's GPU 0
  bool over_ranks() const { return ranks_ > 1; }                // members in other processes
  int device(int i) const { return devices_[std::size_t(i)]; }  // the CUDA device of this process's GPU i
  const std::vector<int>& devices() const { return devices_; }
  // This process's GPU (0 .. local() - 1) that holds part q, or -1.
  int holder(std::int64_t q) const {
    const int i = int(q % gpus_) - first_;
    return i >= 0 && i < per_ ? i : -1;
  }
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
  int gpus_, ranks_;
  int per_ = 0, base_ = 0, first_ = 0, visible_ = 0;
  bool own_only_ = false;  // the launcher shows this rank its own GPUs only
  std::vector<int> devices_;
#ifdef PARBENCH_WITH_NCCL
  std::vector<ncclComm_t> comms_;
#endif
};

}  // namespace pb
