#pragma once
// The per-instance knob of a variant: the thread count of a CPU-parallel
// variant, the block size of a CUDA one, or the 2-D block shape of a CUDA
// stencil. Registries say which a variant has.
namespace pb {
enum class Knob { None, Threads, Block, BlockShape };
struct Knobs {
  int threads = 1;  // Knob::Threads variants
  int block = 0;    // Knob::Block variants; Knob::BlockShape: the block's x extent
  int block_y = 0;  // Knob::BlockShape: the block's y extent (threads = block * block_y)
};
}  // namespace pb
