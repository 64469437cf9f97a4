#pragma once
// What the build was: recorded in every run's JSON context.
#include <string>

namespace pb {
struct BuildInfo {
  std::string git_revision;
  std::string build_type;
  std::string cxx_compiler;
  std::string cxx_flags;
  std::string cuda_compiler;  // empty in a CPU-only build
  std::string cuda_flags;
  std::string cuda_architectures;
  std::string sanitize;
};
const BuildInfo& build_info();  // generated at build time by cmake/BuildInfo.cmake
}  // namespace pb
