#pragma once
// Self-play: the games played side by side by one SelfPlaySearch. Each game's positions wait,
// with the search's policy, until the game ends; then they join the replay store's fresh
// positions with the result from each mover's point of view. Where the search and the store
// share a device, the positions never leave it (SelfPlaySearch::recordAndPlay); otherwise they
// wait here, on the host. Also the views of a game in progress (a tree snapshot) and stepping
// one simulation at a time.
// Thread-safety: one thread drives it (the engine thread).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/params/run_params.hpp"
#include "core/search/replay_store.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/reports.hpp"

namespace cas::train {

class TrainingPhase;

using search::SearchUse;

// The top `maxNodes` nodes of one game's tree in `search` (clamped to a game that exists),
// breadth first, with its root position; the caller fills in the moves that led to the root,
// the iteration and the environment.
TreeSnapshot snapshotTree(const search::SelfPlaySearch& search, int game, int maxNodes);

class SelfPlay {
 public:
  // maxMoves: the longest game (the store's fresh positions must hold every game in progress).
  SelfPlay(std::unique_ptr<search::SelfPlaySearch> search, int observationSize, int maxMoves);

  search::SelfPlaySearch& search() { return *search_; }
  const search::SelfPlaySearch& search() const { return *search_; }

  // Plays until `games` more games have finished, `cancelled` says so (checked between moves)
  // or the store's fresh positions could not hold another move's ending games; each finished
  // game's positions go to `store`. When `training` is given, its steps are queued between the
  // moves, spread over them (they read only the store's ring, which self-play does not touch).
  // Fills the report's self-play figures (speeds, seconds, recycled nodes) and returns the games
  // finished.
  std::int64_t play(std::int64_t games, search::ReplayStore& store, const std::function<bool()>& cancelled, IterationReport& report,
                    TrainingPhase* training = nullptr);
  // One more simulation in every unfinished game's tree.
  void stepSimulation();
  // The top `maxNodes` nodes of `game`'s tree (clamped to a game that exists), breadth first.
  TreeSnapshot snapshot(int game, int maxNodes) const;
  // Fresh games and no positions waiting (after a checkpoint replaced the network).
  void restart();

 private:
  // A position seen in a game still running, kept here when the search cannot keep it.
  struct Record {
    std::vector<float> obs, policy;
    int player;
  };
  // recordAndPlay's spec, on the host.
  void recordAndPlayOnHost(const std::vector<int>& games, search::ReplayStore& store, std::vector<int>& played, std::vector<int>& ended);

  std::unique_ptr<search::SelfPlaySearch> search_;
  int observationSize_, maxMoves_;
  std::vector<std::vector<Record>> records_;  // per game (host recording only)
  std::vector<std::vector<int>> moves_;       // per game: the moves from its start
  std::int64_t movesPerIteration_ = 0;        // the last iteration's, to spread training steps
};

}  // namespace cas::train
