#pragma once
// GPU tests skip where there is no usable GPU, so the suite runs anywhere.
// On a GPU host the nightly job (ci/gpu.sh) sets PARBENCH_REQUIRE_GPU: there a
// GPU test that cannot use the GPU fails instead of skipping unnoticed.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/gpu.hpp"

#define PB_SKIP_WITHOUT_GPU()                                                                           \
  do {                                                                                                  \
    if (!::pb::gpu_status().available) {                                                                \
      if (std::getenv("PARBENCH_REQUIRE_GPU"))                                                          \
        FAIL() << "PARBENCH_REQUIRE_GPU is set but the GPU is unusable: " << ::pb::gpu_status().reason; \
      GTEST_SKIP() << "GPU test skipped: " << ::pb::gpu_status().reason;                                \
    }                                                                                                   \
  } while (0)
