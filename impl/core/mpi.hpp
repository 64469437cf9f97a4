#pragma once
// MPI in the harness. Without MPI (built with PARBENCH_MPI=OFF, or no MPI
// found) every function behaves as one rank. Under `mpirun -np P`, every rank
// registers the same instances and runs them in lockstep: an MPI job's timed
// run starts after a barrier and its time is the maximum over ranks, so the
// iteration counts Google Benchmark derives from those times agree on every
// rank and the collectives inside the runs never diverge. Only rank 0
// reports (console and JSON).
//
// A process that no MPI launcher started (no mpirun, srun or mpiexec in its
// environment) does not start MPI in init(): singleton start-up costs about
// half a second a process, and most runs hold no MPI job. An MPI job calls
// start() in its untimed prepare, which starts MPI then as one rank.
#include <cstddef>
#include <cstdint>
#include <string>

namespace pb::mpi {

bool built();                        // compiled with MPI
void init(int* argc, char*** argv);  // MPI_Init_thread (funneled) under a launcher; else deferred to start()
void start();                        // MPI_Init_thread now if init() deferred it; no-op once started
void finalize();
int rank();            // 0 without MPI
int size();            // 1 without MPI
int local_size();      // ranks on this host (MPI_COMM_TYPE_SHARED)
int local_rank();      // this rank's place among them (0 without MPI)
double max(double v);  // over all ranks
void barrier();
bool any(bool v);                          // true on every rank when true on one
bool same(std::uint64_t v);                // every rank holds the same value
bool root_says(bool v);                    // rank 0's v, on every rank (the others wait idle)
[[noreturn]] void abort(const char* why);  // prints why, ends every rank
// Rank 0's `bytes` bytes at `data`, on every rank.
void broadcast(void* data, std::size_t bytes);
// Rank 0 receives every rank's `count` values (counts may differ), in rank
// order, at `all`; `all` is read only on rank 0.
void gather(const double* mine, std::int64_t count, double* all);
void gather(const int* mine, std::int64_t count, int* all);
// The message of the lowest rank whose `why` is not empty ("rank R: why"),
// on every rank; "" when every rank's is empty. Every rank must call it.
std::string first_error(const std::string& why);
// Whether the MPI library can take GPU memory in its calls: "yes", "no", or
// "unknown" (an MPI that does not say).
const char* cuda_aware();

}  // namespace pb::mpi
