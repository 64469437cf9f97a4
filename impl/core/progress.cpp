#include "core/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "core/registrar.hpp"

namespace pb::progress {
namespace {

using Clock = std::chrono::steady_clock;

struct State {
  std::mutex mu;
  std::condition_variable cv;
  bool on = false, stopping = false, drawn = false;
  int total = 0, started = 0, last_id = -1;
  std::string current;
  Clock::time_point t0, instance_t0;
  std::thread ticker;
};
State& st() {
  static State s;
  return s;
}

int columns() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
  return 100;
}

// Called with the lock held.
void draw(State& s) {
  if (!s.on || s.started == 0) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - s.t0).count();
  const int done = s.started - 1;  // the current one is still running
  std::string line = "[" + std::to_string(s.started) + "/" + std::to_string(s.total) + "] " +
                     clock_text(elapsed) + " elapsed";
  // Time left: the mean time of the finished instances times those left (a
  // rough guide: unsupported instances take no time, large ones minutes).
  if (done > 0 && s.total > done) line += ", ~" + clock_text(elapsed / done * (s.total - done)) + " left";
  line += "  " + s.current;
  const std::size_t width = std::size_t(columns()) - 1;
  if (line.size() > width) line = line.substr(0, width);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  s.drawn = true;
}

void erase(State& s) {
  if (!s.drawn) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  s.drawn = false;
}

}  // namespace

std::string clock_text(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  long t = long(seconds + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

void start(int total) {
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.on) return;
  s.on = true;
  s.total = total;
  s.t0 = Clock::now();
  s.ticker = std::thread([&s] {
    std::unique_lock<std::mutex> lk(s.mu);
    while (!s.stopping) {
      s.cv.wait_for(lk, std::chrono::seconds(1));
      if (!s.stopping) draw(s);
    }
  });
}

void instance_started(int id) {
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.on || id == s.last_id || id < 0) return;
  s.last_id = id;
  ++s.started;
  const auto& all = registered();
  s.current = id < int(all.size()) ? all[std::size_t(id)].name : std::string();
  draw(s);
}

Hold::Hold() {
  st().mu.lock();
  erase(st());
}

Hold::~Hold() {
  std::fflush(stdout);
  draw(st());
  st().mu.unlock();
}

void stop() {
  State& s = st();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.on) return;
    s.stopping = true;
    erase(s);
  }
  s.cv.notify_all();
  if (s.ticker.joinable()) s.ticker.join();
  std::lock_guard<std::mutex> lock(s.mu);
  s.on = false;
}

}  // namespace pb::progress
