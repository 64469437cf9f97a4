#include "core/mpi.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace pb::mpi {
namespace {
int g_rank = 0, g_size = 1, g_local = 1, g_local_rank = 0;
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
  MPI_Comm_rank(node, &g_local_rank);
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
int local_rank() { return g_local_rank; }

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

void broadcast(void* data, std::size_t bytes) {
  if (!g_started || g_size == 1) return;
  // In pieces: MPI counts are ints.
  auto* at = static_cast<char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const int n = int(std::min<std::size_t>(bytes - done, std::size_t(1) << 30));
    MPI_Bcast(at + done, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    done += std::size_t(n);
  }
}

namespace {
template <class T>
void gather_any(const T* mine, std::int64_t count, T* all, MPI_Datatype type) {
  if (!g_started || g_size == 1) {
    std::copy_n(mine, count, all);
    return;
  }
  if (count > INT_MAX) abort("a rank's piece of a gathered result exceeds MPI's int counts");
  const int n = int(count);
  std::vector<int> counts(static_cast<std::size_t>(g_size)), displs(static_cast<std::size_t>(g_size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    std::int64_t at = 0;
    for (int r = 0; r < g_size; ++r) {
      if (at > INT_MAX) abort("a gathered result exceeds MPI's int displacements");
      displs[std::size_t(r)] = int(at);
      at += counts[std::size_t(r)];
    }
  }
  MPI_Gatherv(mine, n, type, all, counts.data(), displs.data(), type, 0, MPI_COMM_WORLD);
}
}  // namespace

void gather(const double* mine, std::int64_t count, double* all) { gather_any(mine, count, all, MPI_DOUBLE); }
void gather(const int* mine, std::int64_t count, int* all) { gather_any(mine, count, all, MPI_INT); }

std::string first_error(const std::string& why) {
  if (!g_started || g_size == 1) return why.empty() ? why : "rank 0: " + why;
  int mine = why.empty() ? g_size : g_rank, first = g_size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == g_size) return "";
  std::uint64_t n = g_rank == first ? why.size() : 0;
  MPI_Bcast(&n, 1, MPI_UINT64_T, first, MPI_COMM_WORLD);
  std::string text = g_rank == first ? why : std::string(n, ' ');
  MPI_Bcast(text.data(), int(n), MPI_CHAR, first, MPI_COMM_WORLD);
  return "rank " + std::to_string(first) + ": " + text;
}

const char* cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() ? "yes" : "no";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return "no";
#else
  return "unknown";
#endif
}

void abort(const char* why) {
  std::fprintf(stderr, "bench (rank %d of %d): %s\n", g_rank, g_size, why);
  std::fflush(stderr);
  if (g_started) MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

}  // namespace pb::mpi
