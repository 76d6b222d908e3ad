#pragma once
// AlphaZero on a backend: batched self-play with the search of core/search, a replay buffer with
// the game's symmetries, training steps on the IR-built loss (policy cross-entropy + value MSE +
// L2), evaluation against baselines, and checkpoints that hold everything needed to resume.
// Thread-safety: one thread drives a trainer (the engine thread).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/engine/parameters.hpp"
#include "core/exec/backend.hpp"
#include "core/project/project.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/update.hpp"

namespace cas::train {

struct EvaluationResult {
  std::string opponent;
  int games = 0;
  int wins = 0, draws = 0, losses = 0;                // totals, for the agent
  int winsFirst = 0, drawsFirst = 0, lossesFirst = 0;  // the agent moving first
  int winsSecond = 0, drawsSecond = 0, lossesSecond = 0;
  double winRate() const { return games ? double(wins) / games : 0; }
};

struct IterationReport {
  std::int64_t iteration = 0;
  std::int64_t gamesPlayed = 0;  // in the whole run
  std::int64_t positions = 0;    // in the replay buffer
  // Training steps taken: 0 while the replay buffer holds fewer positions than one batch
  // (batchSize), and then the loss terms below mean nothing and are not reported.
  std::int64_t trainingSteps = 0, batchSize = 0;
  float loss = 0, policyLoss = 0, valueLoss = 0, l2 = 0, entropy = 0;
  double simulationsPerSecond = 0, gamesPerSecond = 0;
  double inferenceSeconds = 0, searchSeconds = 0, trainSeconds = 0, dataSeconds = 0;
  std::int64_t recycledNodes = 0;
  std::vector<EvaluationResult> evaluations;  // when this iteration evaluated
};

// The top of one game's search tree, breadth first (node 0 is the root), for views.
struct TreeSnapshot {
  struct Node {
    std::int32_t parent;  // index in nodes; -1 for the root
    int action, visits, virtualLoss, depth;
    float q, prior;  // q from the point of view of the player who moved into the node
  };
  int game = 0;
  std::int64_t iteration = 0;
  std::string environment;     // the project's environment id ("tictactoe", ...)
  std::string board;           // the root position, as text
  std::vector<int> rootMoves;  // the moves from the game's start to the root position
  std::vector<Node> nodes;
  int treeNodes = 0;           // nodes in the whole tree
  int treeCapacity = 0;        // the tree's node budget
  std::int64_t recycledNodes = 0;  // nodes this tree has recycled so far
  float cPuct = 0;             // the exploration constant the search uses now
};

class AlphaZeroTrainer {
 public:
  AlphaZeroTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend);

  const project::Project& project() const { return project_; }
  const engine::ParameterSet& parameters() const { return params_; }
  // Applies live parameters at the next safe point (the trainer calls it between iterations);
  // restart-only ones are refused with a sentence saying so.
  std::optional<std::string> setParameter(const std::string& name, const engine::ParamValue& value);

  // One iteration: self-play until games_per_iteration more games have finished, then
  // steps_per_iteration training steps; evaluates every eval_every iterations.
  IterationReport runIteration(const std::function<bool()>& cancelled = {});
  std::int64_t iteration() const { return iteration_; }
  // One more simulation in every self-play game's tree (for stepping through a search).
  void stepSimulation();
  TreeSnapshot snapshot(int game, int maxNodes) const;
  // The self-play inference program on this trainer's backend and its batch, for kernel metrics
  // (exec::Executable::profileKernels). Between iterations only, on the thread driving the trainer.
  exec::Executable& inferenceProgram() { return *inference_; }
  std::int64_t inferenceBatch() const { return inferenceBatch_; }

  EvaluationResult evaluate(const std::string& opponent, int games, std::uint64_t seed);
  // Analysis of one position given in the game's notation.
  search::RootStats analyse(const std::string& moves, int simulations, std::string* error);
  // The position analyse() searched last.
  const env::BoardGames& analysisBoard() const { return analysis_->positions(); }
  // Where the self-play search runs ("cpu" or "cuda"), and a sentence saying why.
  std::string searchDevice() const { return selfPlay_->device(); }
  const std::string& searchNote() const { return searchNote_; }
  // The self-play search, for its kernel metrics and runtime statistics.
  search::SelfPlaySearch& selfPlaySearch() { return *selfPlay_; }

  // The whole state (parameters, optimizer, replay buffer, counters) as bytes, and back.
  std::string checkpoint() const;
  // The most bytes checkpoint() can return for this trainer: a larger file is not one of its
  // checkpoints and is refused before it is read.
  std::uint64_t checkpointSizeLimit() const;
  bool restore(const std::string& bytes, std::string* error);

 private:
  void buildNetworks();
  void syncInference();
  std::unique_ptr<search::SelfPlaySearch> makeSearch(int games, const search::SearchConfig& config, std::uint64_t seed, std::string* note);
  search::SearchConfig searchConfig(bool selfPlay) const;
  OptimizerConfig optimizerConfig() const;
  void trainSteps(IterationReport& report);
  const char* allocating_ = "the trainer";  // what buildNetworks is allocating, for an out-of-memory error

  project::Project project_;
  engine::ParameterSet params_;
  std::shared_ptr<exec::Backend> backend_;
  pdl::CompiledPolicy trainPolicy_;
  std::unique_ptr<Updater> updater_;
  std::unique_ptr<exec::Executable> inference_;
  std::int64_t inferenceBatch_ = 0;
  int actions_ = 0, obsSize_ = 0;
  std::unique_ptr<search::SelfPlaySearch> selfPlay_, analysis_;
  std::string searchNote_;
  // Per self-play game: the positions seen so far, waiting for the result.
  struct Record {
    std::vector<float> obs, policy;
    int player;
    int action;  // the move played from this position
  };
  std::vector<std::vector<Record>> records_;
  // Replay buffer (a ring): observation, policy target, value target.
  std::vector<float> bufferObs_, bufferPolicy_, bufferValue_;
  std::int64_t bufferSize_ = 0, bufferNext_ = 0;
  std::int64_t iteration_ = 0, gamesPlayed_ = 0;
  std::mt19937_64 rng_;  // replay sampling and symmetries
};

}  // namespace cas::train
