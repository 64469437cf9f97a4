// GoogleTest main. MPI starts only where a test needs it (core/mpi.hpp): under
// mpirun for the multi-rank k-means tests, or when an MPI variant prepares.
// Only rank 0 prints.
//
// --gpu-tests runs the GPU tests alone (the suites named Gpu*, see
// tests/variant_cases.hpp; a --gtest_filter given with it replaces Gpu*).
// On a machine without a usable GPU it runs none and exits with 77, which
// ctest reports as one skipped test; with PARBENCH_REQUIRE_GPU set (a GPU
// host) that is a failure instead.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/gpu.hpp"
#include "core/mpi.hpp"

namespace {
constexpr int kExitSkipped = 77;  // ctest's SKIP_RETURN_CODE for this test

bool take_flag(int& argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) {
      for (int j = i; j < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return true;
    }
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  const bool gpu_only = take_flag(argc, argv, "--gpu-tests");
  if (gpu_only && !pb::gpu_status().available) {
    if (std::getenv("PARBENCH_REQUIRE_GPU")) {
      std::fprintf(stderr, "parbench_tests: PARBENCH_REQUIRE_GPU is set but the GPU is unusable: %s\n",
                   pb::gpu_status().reason.c_str());
      return 1;
    }
    std::printf("parbench_tests: every GPU test skipped: %s\n", pb::gpu_status().reason.c_str());
    return kExitSkipped;
  }
  pb::mpi::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (gpu_only && GTEST_FLAG_GET(filter) == "*") GTEST_FLAG_SET(filter, "Gpu*");  // a given filter stays
  if (pb::mpi::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  pb::mpi::finalize();
  return rc;
}
