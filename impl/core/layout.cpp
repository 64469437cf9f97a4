#include "core/layout.hpp"

#include <sys/personality.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define PB_UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#else
#define PB_UNDER_VALGRIND() false
#endif

namespace pb::layout {

void fixed_layout(char** argv) {
  const char* asked = std::getenv("PARBENCH_ASLR");
  if (asked && std::strcmp(asked, "on") == 0) return;
  if (PB_UNDER_VALGRIND()) return;
  const int now = personality(0xffffffff);
  if (now == -1 || (now & ADDR_NO_RANDOMIZE)) return;
  // Once only: a kernel that accepts the flag but does not keep it across
  // exec must not loop.
  if (asked && std::strcmp(asked, "tried") == 0) return;
  if (personality(static_cast<unsigned long>(now) | ADDR_NO_RANDOMIZE) == -1) return;
  setenv("PARBENCH_ASLR", "tried", 1);
  execv("/proc/self/exe", argv);
  personality(static_cast<unsigned long>(now));  // exec failed: run as started
}

std::string randomisation() {
  const int now = personality(0xffffffff);
  return now != -1 && (now & ADDR_NO_RANDOMIZE) ? "off" : "on";
}

}  // namespace pb::layout
