#include "core/duet.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace pb::duet {
namespace {

// One side's state, a cache line of its own.
struct alignas(64) Side {
  std::atomic<long> pid;       // 0 until the side has started
  std::atomic<long> entered;   // instances entered so far
  std::atomic<long> finished;  // 1 once the side has exited
  std::atomic<long> ready;     // the count of `entered` at the instance last ready to be timed
  std::atomic<long> meetings;  // kMeetings once the side knows the ready meeting; 0 in older binaries
};
// Older binaries' sides hold the first three fields in the same 64 bytes and
// leave the others zero, so a pair of old and new binaries still meets at
// the start of each instance.
constexpr long kMeetings = 2;
struct Shared {
  Side side[2];
};
static_assert(std::atomic<long>::is_always_lock_free, "duet counters must be lock-free across processes");

// A partner that has not started after this long (its listing, its fixtures)
// is taken to be gone: this side goes on alone rather than hang.
constexpr double kStartWait = 120.0;

struct State {
  Shared* shared = nullptr;
  int me = 0;
  int last_id = -1;
  bool tried = false;
  bool alone = false;  // the partner never came: no more waiting for it
};
State& state() {
  static State s;
  return s;
}

void on_exit() {
  if (Shared* sh = state().shared) sh->side[state().me].finished.store(1);
}

Shared* attach() {
  State& s = state();
  if (s.tried) return s.shared;
  s.tried = true;
  const char* spec = std::getenv("PARBENCH_DUET");
  if (!spec || !*spec) return nullptr;
  const std::string text(spec);
  const auto colon = text.rfind(':');
  const std::string side = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (side != "0" && side != "1") {
    std::fprintf(stderr, "bench: PARBENCH_DUET=%s: want FILE:0 or FILE:1; running alone\n", spec);
    return nullptr;
  }
  const std::string file = text.substr(0, colon);
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ::ftruncate(fd, sizeof(Shared)) != 0) {
    std::fprintf(stderr, "bench: PARBENCH_DUET: cannot open %s (%s); running alone\n", file.c_str(),
                 std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  void* p = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "bench: PARBENCH_DUET: cannot map %s (%s); running alone\n", file.c_str(),
                 std::strerror(errno));
    return nullptr;
  }
  s.shared = static_cast<Shared*>(p);
  s.me = side == "1" ? 1 : 0;
  s.shared->side[s.me].meetings.store(kMeetings);
  s.shared->side[s.me].pid.store(long(::getpid()));
  std::atexit(on_exit);
  return s.shared;
}

bool gone(const Side& other) {
  const long pid = other.pid.load();
  return other.finished.load() != 0 || (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH);
}

}  // namespace

bool active() { return attach() != nullptr; }

void reset_for_tests() {
  State& s = state();
  if (s.shared) ::munmap(s.shared, sizeof(Shared));
  s = State{};
}

void instance_started(int id) {
  Shared* sh = attach();
  State& s = state();
  if (!sh || s.alone || id == s.last_id) return;
  s.last_id = id;
  Side& mine = sh->side[s.me];
  const Side& other = sh->side[1 - s.me];
  const long at = mine.entered.fetch_add(1) + 1;
  const auto began = std::chrono::steady_clock::now();
  // Polls every 100 us: the waiting side sleeps on its own cores.
  while (other.entered.load() < at && !gone(other)) {
    if (other.pid.load() == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > kStartWait) {
      std::fprintf(stderr, "bench: PARBENCH_DUET: the partner did not start in %.0f s; running alone\n",
                   kStartWait);
      s.alone = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void ready_to_time(int id) {
  Shared* sh = attach();
  State& s = state();
  if (!sh || s.alone || id != s.last_id) return;
  Side& mine = sh->side[s.me];
  const Side& other = sh->side[1 - s.me];
  // Only this side counts its instances, so `entered` is the instance's
  // count; a second call for it finds the partner's ready count already met.
  const long at = mine.entered.load();
  mine.ready.store(at);
  if (other.meetings.load() < kMeetings) return;
  while (other.ready.load() < at && other.entered.load() <= at && !gone(other))
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

}  // namespace pb::duet
