#include "core/instructions.hpp"

#include <cstdlib>
#include <cstring>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PB_HAVE_CALLGRIND 1
#else
#define PB_HAVE_CALLGRIND 0
#endif

namespace pb::instructions {

bool counting() {
#if PB_HAVE_CALLGRIND
  static const bool on = [] {
    const char* v = std::getenv("PARBENCH_CALLGRIND");
    return v && std::strcmp(v, "1") == 0 && RUNNING_ON_VALGRIND != 0;
  }();
  return on;
#else
  return false;
#endif
}

void begin() {
#if PB_HAVE_CALLGRIND
  if (counting()) CALLGRIND_TOGGLE_COLLECT;
#endif
}

void end() {
#if PB_HAVE_CALLGRIND
  if (counting()) CALLGRIND_TOGGLE_COLLECT;
#endif
}

void dump(const std::string& name, long long iterations) {
#if PB_HAVE_CALLGRIND
  if (!counting()) return;
  const std::string desc = "parbench " + std::to_string(iterations) + " " + name;
  CALLGRIND_DUMP_STATS_AT(desc.c_str());
#else
  (void)name;
  (void)iterations;
#endif
}

}  // namespace pb::instructions
