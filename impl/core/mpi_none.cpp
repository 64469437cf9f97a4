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
double max(double v) { return v; }
void barrier() {}
bool any(bool v) { return v; }
bool same(std::uint64_t) { return true; }
bool root_says(bool v) { return v; }
void abort(const char* why) {
  std::fprintf(stderr, "bench: %s\n", why);
  std::abort();
}
}  // namespace pb::mpi
