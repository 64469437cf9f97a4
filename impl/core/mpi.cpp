#include "core/mpi.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace pb::mpi {
namespace {
int g_rank = 0, g_size = 1, g_local = 1;
bool g_started = false, g_finalized = false;

// A launcher leaves its mark in the environment of every rank it starts:
// Open MPI's mpirun, PMI (MPICH's hydra, srun --mpi=pmi2) or PMIx (srun --mpi=pmix, Open MPI 5).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

void start_with(int* argc, char*** argv) {
  if (g_started || g_finalized) return;
  int provided = 0;
  // Only the thread that called init makes MPI calls (OpenMP regions do not).
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_started = true;
  if (provided < MPI_THREAD_FUNNELED) abort("the MPI library does not support MPI_THREAD_FUNNELED");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &g_local);
  MPI_Comm_free(&node);
}

}  // namespace

bool built() { return true; }

void init(int* argc, char*** argv) {
  if (launched_by_mpi()) start_with(argc, argv);
}

void start() { start_with(nullptr, nullptr); }

void finalize() {
  if (g_started) MPI_Finalize(), g_finalized = true;
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

bool any(bool v) {
  if (!g_started || g_size == 1) return v;
  int in = v ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return out != 0;
}

bool same(std::uint64_t v) {
  if (!g_started || g_size == 1) return true;
  unsigned long long lo = v, hi = v, in = v;
  MPI_Allreduce(&in, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&in, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

bool root_says(bool v) {
  if (!g_started || g_size == 1) return v;
  int x = v ? 1 : 0;
  // The other ranks may wait here for seconds while rank 0 works alone (a
  // reference on every core): they poll and sleep rather than spin inside a
  // blocking broadcast, which would take those cores from rank 0.
  MPI_Request req;
  MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return x != 0;
}

void abort(const char* why) {
  std::fprintf(stderr, "bench (rank %d of %d): %s\n", g_rank, g_size, why);
  std::fflush(stderr);
  if (g_started) MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

}  // namespace pb::mpi
