#pragma once
// Checked NCCL calls: a failed call throws CudaError naming the call, NCCL's
// message and the place, as PB_CUDA does for the runtime. Only in targets
// built with NCCL (PARBENCH_WITH_NCCL).
#include <nccl.h>

#include <string>
#include <vector>

#include "core/cuda/check.cuh"

namespace pb {

[[noreturn]] inline void nccl_fail(ncclResult_t r, const char* what, const char* file, int line) {
  throw CudaError(std::string(what) + ": NCCL " + ncclGetErrorString(r) + " at " + file + ":" +
                  std::to_string(line));
}

// Communicators released: aborted after a failed collective (one may never
// finish), destroyed otherwise.
inline void release_comms(std::vector<ncclComm_t>& comms, bool failed) {
  for (ncclComm_t c : comms)
    if (c) failed ? ncclCommAbort(c) : ncclCommDestroy(c);
  comms.clear();
}

// An NCCL group, opened when made; end() closes it, checked. A throw inside
// the group closes it on the way out too: it would otherwise hold this
// thread's later NCCL calls.
class NcclGroup {
 public:
  NcclGroup();
  ~NcclGroup() {
    if (open_) ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  void end();

 private:
  bool open_ = true;
};

}  // namespace pb

#define PB_NCCL(call)                                                                  \
  do {                                                                                 \
    ncclResult_t pb_nccl_ = (call);                                                    \
    if (pb_nccl_ != ncclSuccess) ::pb::nccl_fail(pb_nccl_, #call, __FILE__, __LINE__); \
  } while (0)

inline pb::NcclGroup::NcclGroup() { PB_NCCL(ncclGroupStart()); }
inline void pb::NcclGroup::end() {
  open_ = false;
  PB_NCCL(ncclGroupEnd());
}
