// The duet meetings (impl/core/duet.hpp) between two real processes: this
// test's and a forked partner, each one side of one meeting file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/duet.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Instance 0: the partner takes `setup` seconds between entering it and
// being ready (or enters instance 1 instead, as a side whose instance 0
// failed does), then times it for 0.2 s and exits. This side sets up at
// once, then enters instance 1. Returns how long this side's
// ready_to_time(0) waited.
double wait_at_ready(double setup, bool partner_fails) {
  char dir[] = "/tmp/pb_duet_XXXXXX";
  if (!::mkdtemp(dir)) return -1;
  const std::string file = std::string(dir) + "/meet";
  const pid_t child = ::fork();
  if (child == 0) {
    ::setenv("PARBENCH_DUET", (file + ":1").c_str(), 1);
    pb::duet::active();
    pb::duet::instance_started(0);
    std::this_thread::sleep_for(std::chrono::duration<double>(setup));
    if (partner_fails)
      pb::duet::instance_started(1);
    else
      pb::duet::ready_to_time(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::exit(0);  // exit, not _Exit: the duet's exit handler marks this side finished
  }
  ::setenv("PARBENCH_DUET", (file + ":0").c_str(), 1);
  pb::duet::active();
  pb::duet::instance_started(0);
  const double t0 = now();
  pb::duet::ready_to_time(0);
  const double waited = now() - t0;
  pb::duet::instance_started(1);  // the next instance: met by a partner there, or passed once it has exited
  int status = 0;
  ::waitpid(child, &status, 0);
  ::unlink(file.c_str());
  ::rmdir(dir);
  return waited;
}

}  // namespace

// One process can be one side of one duet only (its state is kept for the
// process), so the cases run in forked children of the test.
TEST(Duet, TheQuickerSideWaitsAtTheReadyMeetingUntilItsPartnerIsReadyOrHasMovedOn) {
  for (bool fails : {false, true}) {
    const pid_t tester = ::fork();
    if (tester == 0) {
      const double waited = wait_at_ready(0.5, fails);
      std::_Exit(waited >= 0.2 && waited < 10.0 ? 0 : 1);  // about 0.5 s; loose for a busy machine
    }
    int status = 0;
    ::waitpid(tester, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << (fails ? "a partner that moved on to the next instance" : "a partner 0.5 s slower to set up")
        << ": the ready meeting did not hold this side 0.2-10 s";
  }
  // Without the variable nothing waits.
  const double t0 = now();
  ::unsetenv("PARBENCH_DUET");
  pb::duet::ready_to_time(0);
  EXPECT_LT(now() - t0, 0.1);
}
