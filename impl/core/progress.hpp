#pragma once
// Progress of a long sweep on stderr: instance i of n, elapsed time and an
// estimate of the time left, redrawn in place each second. Only when enabled
// (bench turns it on when stderr is a terminal, unless --no-progress), so the
// console table on stdout and the JSON file never see it.
#include <string>

namespace pb::progress {

// Starts the display for `total` instances (the ones the filter selects).
void start(int total);
// Called by the registrar when an instance (registration index `id`) is
// entered; a repeated call for the instance already running is ignored.
void instance_started(int id);
// Held around console output: erases the progress line, and draws it again
// (after flushing stdout) when it goes; the ticker waits meanwhile.
class Hold {
 public:
  Hold();
  ~Hold();
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
};
// Stops the display and erases the line.
void stop();

// "1:02:03" / "2:03" for a duration in seconds (exposed for tests).
std::string clock_text(double seconds);

}  // namespace pb::progress
