#pragma once
// Test-only fault injection, for the crash-safe suite runner's tests
// (ci/run-suite): PARBENCH_TEST_FAULT=KIND:REGEX makes every instance whose
// name matches REGEX misbehave when it starts, the way a broken variant would:
//   crash    abort() the process (SIGABRT)
//   hang     sleep forever (the runner's time limit must end it)
//   gpu-oom  take every byte of GPU memory and keep it, so this instance and
//            the later ones of the process run out of memory
//   fail     throw, as a failed CUDA, NCCL or MPI call does
//   oom      throw OutOfMemory, as an allocation that fails in prepare() does
// KIND@R (e.g. fail@1) limits the fault to MPI rank R, for the tests of a
// collective job whose ranks must all learn of one rank's failure.
// Unset (always, outside tests) it costs one getenv at the first instance.
#include <string>

namespace pb {

void inject_test_fault(const std::string& instance_name);

}  // namespace pb
