#pragma once
// The address-space layout bench times in. Address randomisation moves the
// stack, the heap and the mappings by different amounts in every process, and
// with them the cache-set and 4K-aliasing conflicts of a CPU kernel's
// buffers: two processes of one binary then time one loop up to 1.5x apart
// (docs/perf/compare.md). bench runs without it: fixed_layout() re-executes
// the process once with ADDR_NO_RANDOMIZE before anything else starts.
#include <string>

namespace pb::layout {

// Re-executes bench without address randomisation, unless it is already off,
// PARBENCH_ASLR=on asks to keep it, or the process runs under valgrind (which
// lays out its guest itself). Returns when no re-execution happens.
void fixed_layout(char** argv);
// "off" or "on": how this process runs, for the JSON's context.
std::string randomisation();

}  // namespace pb::layout
