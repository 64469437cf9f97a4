#pragma once
// What a family needs for an MPI variant (Backend::Mpi), so that the
// variant's own file is the only MPI code of the family: the verdict that rank
// 0 computes, the ranks x threads grid checked against the host's cores, and
// the `ranks` axis in the run name.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/options.hpp"
#include "core/registrar.hpp"
#include "core/status.hpp"

namespace pb::mpi {

// The check of a result every rank holds: rank 0 alone runs `check` (the
// reference, on every core, while the other ranks wait idle) and its verdict
// goes to all, so they leave or enter the timed loop together. Only rank 0
// carries the message.
Check root_verdict(const std::function<Check()>& check);

// The thread counts an MPI variant runs: the given --threads, or of the
// default axis those that fit beside this host's ranks (at least 1).
std::vector<int> thread_axis(const Options& opt, const std::vector<int>& threads);

// UsageError when the grid cannot run: more ranks than `items` (the work the
// ranks split, e.g. "points (N=1000 in configuration smoke)"), or ranks on
// this host x a given thread count above its cores (unless --oversubscribe).
// `who` names the variant ("KMeans/MPI").
void check_grid(const Options& opt, const std::string& who, std::int64_t items, const std::string& items_text,
                const std::vector<int>& threads);

// The `gpus` axis of an entry whose ranks share out GPUs (Backend::MpiCuda):
// the team's size over every rank. `given`: the family's --<family>-gpus list;
// without it, one GPU a rank up to this host's GPUs shared among its ranks.
std::vector<int> team_gpu_axis(const std::vector<int>* given);

// The `ranks` axis: in the run name (ranks:P), as a counter, and the instance
// marked as one that runs collectives.
void add_ranks(RunName& name, RegisterOptions& ro);

}  // namespace pb::mpi
