// The duet meetings (impl/core/duet.hpp) between two real processes: a forked
// side and its forked partner, each one side of one meeting file.
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

// Every forked process starts from no duet, whatever its parent found, and is
// ended by an alarm rather than left waiting on a partner that died unseen.
void forked() {
  pb::duet::reset_for_tests();
  ::alarm(30);
}

// Instance 0: the partner takes `setup` seconds between entering it and
// being ready (or enters instance 1 instead, as a side whose instance 0
// failed does), then times it for 0.2 s and exits. This side sets up at
// once, then enters instance 1. Returns how long this side's
// ready_to_time(0) waited, or -1 when it could not take part in a duet.
double wait_at_ready(double setup, bool partner_fails) {
  char dir[] = "/tmp/pb_duet_XXXXXX";
  if (!::mkdtemp(dir)) return -1;
  const std::string file = std::string(dir) + "/meet";
  const pid_t child = ::fork();
  if (child == 0) {
    forked();
    ::setenv("PARBENCH_DUET", (file + ":1").c_str(), 1);
    if (!pb::duet::active()) std::_Exit(3);
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
  if (!pb::duet::active()) return -1;
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

// Runs `body` in a forked, alarmed process: its exit status, or -1 when it
// did not exit (killed by the alarm or a signal).
template <class F>
int in_fork(F body) {
  const pid_t p = ::fork();
  if (p == 0) {
    forked();
    std::_Exit(body());
  }
  int status = 0;
  ::waitpid(p, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(Duet, TheQuickerSideWaitsAtTheReadyMeetingUntilItsPartnerIsReadyOrHasMovedOn) {
  for (bool fails : {false, true}) {
    // The partner takes about 0.5 s; the bounds are loose for a busy machine.
    const int rc = in_fork([fails] {
      const double waited = wait_at_ready(0.5, fails);
      return waited < 0 ? 2 : waited >= 0.2 && waited < 10.0 ? 0 : 1;
    });
    EXPECT_EQ(rc, 0) << (fails ? "a partner that moved on to the next instance"
                               : "a partner 0.5 s slower to set up")
                     << ": 1: the ready meeting did not hold this side 0.2-10 s; 2: no duet could be set up; "
                        "-1: killed (a hang ended by the alarm)";
  }
}

TEST(Duet, WithoutTheVariableNothingWaits) {
  const int rc = in_fork([] {
    ::unsetenv("PARBENCH_DUET");
    if (pb::duet::active()) return 2;
    const double t0 = now();
    pb::duet::instance_started(0);
    pb::duet::ready_to_time(0);
    return now() - t0 < 0.1 ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
}
