#pragma once
// How much memory an AlphaZero configuration needs, estimated before anything is allocated, so
// that a legal but huge configuration (search.node_budget 16777216 with train.parallel_games
// 65536, train.replay_capacity 1e8) is refused with the parameter to reduce instead of ending in
// std::bad_alloc. The estimate counts the allocations that grow with the parameters: the replay
// buffer (with the checkpoint that copies it), the search trees of self-play, analysis and
// evaluation, and the networks' parameters, optimizer state and activations; for PPO, the rollout.
// Thread-safety: plain functions.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/project/project.hpp"
#include "core/search/replay_store.hpp"

namespace cas::train {

struct MemoryPart {
  std::string what;    // "the replay buffer (100000000 positions of 28 floats)"
  std::uint64_t bytes = 0;
  std::string reduce;  // the parameters that shrink it: "train.replay_capacity"
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;
  std::uint64_t total() const;
};

// The replay store a trainer of `project` makes: train.replay_capacity positions in the ring, and
// fresh positions for train.games_per_iteration + train.parallel_games whole games (an iteration
// stops at games_per_iteration, and every game still running may end on its last move).
search::ReplaySetup replaySetup(const project::Project& project);

// The memory a trainer of `project` needs, with `evaluationGames` games to evaluate
// (train.eval_games during training; --games for `cuda-agent eval`), played in rounds of at most
// train.parallel_games.
MemoryEstimate estimateTrainerMemory(const project::Project& project, std::int64_t evaluationGames);

// The memory a PPO trainer of `project` needs: the rollout of ppo.envs x ppo.rollout_steps steps
// and the networks at batch ppo.envs (acting) and at the minibatch (training).
MemoryEstimate estimatePpoMemory(const project::Project& project);

// The memory a MuZero trainer of `project` needs: the trees of muzero.copies searches with their
// latent states, the episode replay (with the checkpoint made from it), and the learned model's
// programs (the search's at muzero.copies x search.leaves_per_step rows, the unrolled training
// program at train.batch_size) with their parameters and optimizer state.
MemoryEstimate estimateMuZeroMemory(const project::Project& project);
// The search trees of an evaluation of `games` games (in rounds of train.parallel_games), on top
// of a trainer.
MemoryEstimate estimateEvaluationMemory(const project::Project& project, std::int64_t games);

// The memory of `ranks` trainers side by side (--ranks: each CPU rank builds a whole trainer, its
// replay buffer, trees and networks): every part `ranks` times, saying so, with --ranks among what
// reduces it. `estimate` itself for one rank.
MemoryEstimate forRanks(MemoryEstimate estimate, int ranks);

// The search trees of `games` games of `nodeBudget` nodes each (bench search).
MemoryPart searchTreesPart(std::int64_t games, std::int64_t nodeBudget, std::string reduce);

// What this process may still allocate: the least of the memory the system has available, the
// cgroup's limit less its use, and the address-space limit (ulimit -v) less what is mapped.
std::uint64_t availableMemory();

// nullopt when the estimate fits in `available`; otherwise the sentence that refuses it, naming
// the largest part and the parameters to reduce.
std::optional<std::string> refuseIfTooLarge(const MemoryEstimate& estimate, std::uint64_t available);

}  // namespace cas::train
