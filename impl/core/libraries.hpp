#pragma once
// The version of the external library an instance's timed run calls
// (RegisterOptions::library), written beside it as the JSON's
// "library_version" (docs/json.md): with the code fingerprint it tells a
// comparison whether what an instance ran changed.
#include <string>

namespace pb {

// "openblas": openblas_get_config() of the library loaded at run time (its
// version, its build options and the core type whose kernels it runs);
// "cublas": cuBLAS's major.minor.patch at run time; "cub", "thrust": the
// version of the headers the build compiled (they are compiled into the
// variant, so their code is in its fingerprint too); "nccl": NCCL's version
// at run time. Empty for a name it does not know.
std::string library_version(const std::string& library);

// The CUDA libraries' part (cuda/libraries.cu); empty in a build without CUDA.
std::string cuda_library_version(const std::string& library);

}  // namespace pb
