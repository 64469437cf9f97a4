#include "core/libraries.hpp"

#include <cblas.h>

#include <map>
#include <mutex>

namespace pb {

std::string library_version(const std::string& library) {
  // Asked once per instance at registration: each library once.
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(library);
  if (it != known.end()) return it->second;
  std::string v;
  if (library == "openblas") {
    const char* config = openblas_get_config();
    v = config ? config : "";
  } else {
    v = cuda_library_version(library);
  }
  known[library] = v;
  return v;
}

#ifndef PARBENCH_WITH_CUDA
std::string cuda_library_version(const std::string&) { return {}; }
#endif

}  // namespace pb
