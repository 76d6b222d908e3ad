#pragma once
// MuZero's self-play: copies of a single-agent environment (its CPU twins, sticky actions and
// all), every move of every copy chosen by one batched call of the search over the learned model,
// and each copy's episode recorded as muzero_targets.hpp keeps it (the observation before the
// move, the action, its reward, the search's policy and root value). An episode goes to the replay
// when it ends, terminated or truncated, and the copy starts a new one.
//
//   step():  observe every copy -> search(all copies) -> rootStats -> choose each action
//            (visits^(1/T) sampled, or the search's choice at T = 0) -> step each copy -> record
//
// An episode that reaches the replay's capacity in steps is cut there and handed over, truncated.
// A truncated episode is kept as it is: its value targets bootstrap only inside it (as the
// pseudocode's make_target does), so the last n positions of a time-limited episode learn a value
// with the rewards after the cut missing.
// Thread-safety: driven by one thread.
#include <cstdint>
#include <vector>

#include "core/env/single_agent.hpp"
#include "core/search/learned_search.hpp"
#include "core/train/muzero_targets.hpp"

namespace cas::train {

struct MuZeroSelfPlayStats {
  std::int64_t moves = 0;     // moves played, all copies
  std::int64_t episodes = 0;  // episodes ended and handed to the replay
  double returnSum = 0;       // the undiscounted returns of those episodes
  std::int64_t lengthSum = 0;  // and their lengths
  double meanReturn() const { return episodes > 0 ? returnSum / double(episodes) : 0.0; }
};

class MuZeroSelfPlay {
 public:
  // `envs` and `search` hold the same number of copies; both outlive this object. temperature 0
  // plays the search's choice.
  MuZeroSelfPlay(env::SingleAgentEnvironments& envs, search::LearnedSearch& search, EpisodeReplay& replay, float temperature,
                 std::uint64_t seed);

  // One move in every copy.
  void step();
  const MuZeroSelfPlayStats& stats() const { return stats_; }
  void setTemperature(float t) { temperature_ = t; }

 private:
  int choose(const search::RootStats& root, int copy);
  void record(int copy, const float* observation, const search::RootStats& root, int action, float reward);

  env::SingleAgentEnvironments& envs_;
  search::LearnedSearch& search_;
  EpisodeReplay& replay_;
  float temperature_;
  std::uint64_t seed_, draws_ = 0;
  std::vector<Episode> running_;  // per copy, the episode under way
  std::vector<double> returns_;   // per copy, its return so far
  MuZeroSelfPlayStats stats_;
};

}  // namespace cas::train
