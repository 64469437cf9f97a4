#pragma once
// The one place where Jobs become Google Benchmark instances.
#include <benchmark/benchmark.h>

#include <string>

#include "core/job.hpp"
#include "core/run_name.hpp"

namespace pb {

struct RegisterOptions {
  benchmark::TimeUnit unit = benchmark::kMicrosecond;
  bool flush_l2 = false;
  Counters axes;  // numeric axes of the instance, written as counters
};

// Registers `name` (all instances use manual time: the backend's Timer measures
// run() alone). Returns the Benchmark for further settings.
benchmark::internal::Benchmark* register_job(const RunName& name, JobFactory make,
                                             const RegisterOptions& opt);

// Drives one instance (the contract in job.hpp). Exposed for tests.
void run_job(benchmark::State& state, const JobFactory& make, const RegisterOptions& opt);

// Skip with a reason. Google Benchmark 1.8 has SkipWithMessage; 1.7 only
// SkipWithError, so there the reason travels as an error whose message starts
// with the disposition prefix (status.hpp), which the tools read as a skip.
void skip(benchmark::State& state, const std::string& message);

}  // namespace pb
