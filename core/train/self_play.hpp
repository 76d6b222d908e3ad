#pragma once
// Self-play: the games played side by side by one SelfPlaySearch. Each game's positions wait,
// with the search's policy, until the game ends; then they enter the replay buffer with the
// result from each mover's point of view. Also the views of a game in progress (a tree snapshot)
// and stepping one simulation at a time.
// Thread-safety: one thread drives it (the engine thread).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/params/run_params.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/replay_buffer.hpp"
#include "core/train/reports.hpp"

namespace cas::train {

// Self-play explores (root noise, a temperature over the opening moves); evaluation and analysis
// play their best (neither).
enum class SearchUse { SelfPlay, Evaluation };
search::SearchConfig searchConfig(const params::SearchParams& p, SearchUse use);

class SelfPlay {
 public:
  SelfPlay(std::unique_ptr<search::SelfPlaySearch> search, int observationSize);

  search::SelfPlaySearch& search() { return *search_; }
  const search::SelfPlaySearch& search() const { return *search_; }

  // Plays until `games` more games have finished or `cancelled` says so (checked between moves),
  // storing each finished game's positions in `buffer`; fills the report's self-play figures
  // (speeds, seconds, recycled nodes) and returns the games finished.
  std::int64_t play(std::int64_t games, ReplayBuffer& buffer, const std::function<bool()>& cancelled, IterationReport& report);
  // One more simulation in every unfinished game's tree.
  void stepSimulation();
  // The top `maxNodes` nodes of `game`'s tree (clamped to a game that exists), breadth first.
  TreeSnapshot snapshot(int game, int maxNodes) const;
  // Fresh games and no positions waiting (after a checkpoint replaced the network).
  void restart();

 private:
  // A position seen in a game still running.
  struct Record {
    std::vector<float> obs, policy;
    int player;
    int action;  // the move played from this position
  };
  std::unique_ptr<search::SelfPlaySearch> search_;
  int observationSize_;
  std::vector<std::vector<Record>> records_;  // per game
};

}  // namespace cas::train
