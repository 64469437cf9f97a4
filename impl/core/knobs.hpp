#pragma once
// The per-instance knob of a variant: the thread count of a CPU-parallel
// variant or the block size of a CUDA one. Registries say which a variant has.
namespace pb {
enum class Knob { None, Threads, Block };
struct Knobs {
  int threads = 1;  // Knob::Threads variants
  int block = 0;    // Knob::Block variants
};
}  // namespace pb
