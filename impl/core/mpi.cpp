#include "core/mpi.hpp"

#include <mpi.h>

namespace pb::mpi {
namespace {
int g_rank = 0, g_size = 1, g_local = 1;
bool g_started = false;
}  // namespace

bool built() { return true; }

void init(int* argc, char*** argv) {
  int provided = 0;
  // Only the thread that called init makes MPI calls (OpenMP regions do not).
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &g_local);
  MPI_Comm_free(&node);
}

void finalize() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

int rank() { return g_rank; }
int size() { return g_size; }
int local_size() { return g_local; }

double max(double v) {
  if (!g_started || g_size == 1) return v;
  double out = v;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void barrier() {
  if (g_started && g_size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace pb::mpi
