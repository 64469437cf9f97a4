#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/mpi.hpp"

namespace pb::mpi {
bool built() { return false; }
void init(int*, char***) {}
void start() {}
void finalize() {}
int rank() { return 0; }
int size() { return 1; }
int local_size() { return 1; }
int local_rank() { return 0; }
double max(double v) { return v; }
void barrier() {}
bool any(bool v) { return v; }
bool same(std::uint64_t) { return true; }
bool root_says(bool v) { return v; }
void broadcast(void*, std::size_t) {}
void gather(const double* mine, std::int64_t count, double* all) { std::copy_n(mine, count, all); }
void gather(const int* mine, std::int64_t count, int* all) { std::copy_n(mine, count, all); }
std::string first_error(const std::string& why) { return why.empty() ? why : "rank 0: " + why; }
const char* cuda_aware() { return "no"; }
void abort(const char* why) {
  std::fprintf(stderr, "bench: %s\n", why);
  std::abort();
}
}  // namespace pb::mpi
