// GoogleTest main with MPI initialised (one rank when started directly; the
// MPI k-means tests also run under mpirun with several ranks, see
// CMakeLists.txt). Only rank 0 prints.
#include <gtest/gtest.h>

#include "core/mpi.hpp"

int main(int argc, char** argv) {
  pb::mpi::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (pb::mpi::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  pb::mpi::finalize();
  return rc;
}
