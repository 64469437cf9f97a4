#pragma once
// Google Benchmark's own flags, checked by bench before anything runs. The
// library prints its usage and exits 0 on a bad --benchmark_format or
// --benchmark_time_unit, takes any word as true for a boolean flag, and
// refuses "0.02s" for --benchmark_min_time before 1.8 (where seconds gained
// their suffix and "NNx" iterations came in): a typo in a CI job would pass
// green with no data. bench instead exits kExitUsage with one line, and hands
// the library --benchmark_min_time in the spelling its version reads.
#include <deque>
#include <string>

namespace pb::gb_flags {

// The value to hand Google Benchmark for --NAME=VALUE (NAME without the
// dashes), or UsageError naming the flag. `min_time_suffix`: the library
// reads --benchmark_min_time as "<seconds>s" or "<count>x" (1.8 and later),
// not as a bare number (1.7). Names it does not check come back unchanged.
std::string checked(const std::string& name, const std::string& value, bool min_time_suffix);

// Checks every Google Benchmark flag in argv and in the BENCHMARK_*
// environment variables the library also reads; rewrites the arguments (their
// text kept in `storage`) and variables whose spelling this library needs
// otherwise. UsageError on the first bad one.
void check(int argc, char** argv, bool min_time_suffix, std::deque<std::string>& storage);

}  // namespace pb::gb_flags
