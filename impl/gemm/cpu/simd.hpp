#pragma once
// The instruction sets OMP.Blocked has a micro-kernel for, and which one runs.
// Each kernel is compiled for its own instruction set; the host's widest one
// runs unless --gemm-simd asks for a narrower one (to compare them on one
// machine). The choice is the context key cpu_simd of every run.
#include <memory>
#include <string>

#include "gemm/gemm.hpp"

namespace pb::gemm {

enum class Simd {
  Baseline,  // the compiler's baseline (SSE2 on x86-64): 16-byte vectors
  Avx2,      // AVX2 and FMA: 16 registers of 32 bytes
  Avx512,    // AVX-512F: 32 registers of 64 bytes
};

const char* to_string(Simd s);  // "baseline", "avx2", "avx512"
bool host_supports(Simd s);
Simd widest_simd();  // the host's widest
// A name the host supports; UsageError naming `flag` for an unknown name or
// a set this CPU lacks.
Simd parse_host_simd(const std::string& flag, const std::string& v);
// The one OMP.Blocked runs: the host's widest, or the one set_blocked_simd chose.
Simd blocked_simd();
void set_blocked_simd(Simd s);

template <class T>
std::unique_ptr<Variant<T>> make_cpu_blocked(int threads, Simd simd);

}  // namespace pb::gemm
