#pragma once
// Why a number is missing. Every benchmark instance ends in one disposition:
// passed (timed), or one of the reasons below, which becomes the entry's
// message in the JSON. The message prefixes are the grammar the plots and the
// comparator read (see regress/load/results.py).
#include <stdexcept>
#include <string>

namespace pb {

// A variant's answer to "can you run this problem?": empty reason means yes.
struct Support {
  std::string reason;
  bool ok() const { return reason.empty(); }
  static Support yes() { return {}; }
  static Support no(std::string why) { return {std::move(why)}; }
};

// The verifier's answer: empty message means the result matched the reference.
struct Check {
  bool passed = true;
  std::string message;  // on failure: how many elements, worst error and where
  std::string method;   // how the check was done ("full", "sampled+freivalds"): the JSON's "verified"
};

// Thrown by prepare() when device or host memory runs out. The instance
// reports "out of memory" and the run continues with the next one.
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown for a problem the user asked for that makes no sense (bad sizes,
// unknown names). Caught before anything runs; the process exits with kExitUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitUsage = 2;

// Message prefixes of the dispositions.
inline constexpr const char* kUnsupported = "unsupported: ";
inline constexpr const char* kIncorrect = "incorrect: ";
inline constexpr const char* kFailed = "failed: ";
inline constexpr const char* kOutOfMemory = "out of memory: ";

}  // namespace pb
