#pragma once
// The per-instance knob of a variant: the thread count of a CPU-parallel
// variant, the block size of a CUDA one, the 2-D block shape of a CUDA
// stencil, or the GPU count of a multi-GPU one. Registries say which a
// variant has.
namespace pb {
enum class Knob { None, Threads, Block, BlockShape, Gpus };
struct Knobs {
  int threads = 1;    // Knob::Threads variants
  int block = 0;      // Knob::Block variants; Knob::BlockShape: the block's x extent
  int block_y = 0;    // Knob::BlockShape: the block's y extent (threads = block * block_y)
  int gpus = 1;       // Knob::Gpus: how many GPUs the variant spreads over
  int parts = 0;      // Knob::Gpus, tests only: split the work into more parts than GPUs (0: one a GPU)
  bool weak = false;  // Knob::Gpus: weak scaling, the problem grown with the GPU count (--scaling=weak)
  int tile = -1;      // a tunable kernel's configuration, by index (-1: the tuned table's choice)
};
// Where a Knob::Gpus variant's GPUs are driven from: all from this process,
// or a share from each MPI rank (the MPI x GPU variants).
enum class Spread { InProcess, OverRanks };
}  // namespace pb
