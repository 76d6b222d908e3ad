#pragma once
// AlphaZero on a backend, composed of its parts: self-play (self_play.hpp) fills the replay
// buffer (replay_buffer.hpp), training steps (training_step.hpp) fit the network to it, matches
// against baselines evaluate it (evaluation.hpp), and checkpoints (checkpoint.hpp) hold
// everything needed to resume. The trainer owns the networks, the parameters and the counters,
// and applies live parameter changes to every part. Given a communicator it is one rank of
// data-parallel training (data_parallel.hpp): its own self-play and replay shard, its seeds drawn
// from its own streams, its gradients averaged with the other ranks' before every step.
// Thread-safety: one thread drives a trainer (the engine thread, or its rank's thread).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "core/exec/backend.hpp"
#include "core/params/parameters.hpp"
#include "core/params/run_params.hpp"
#include "core/project/project.hpp"
#include "core/search/self_play_search.hpp"
#include "core/search/replay_store.hpp"
#include "core/collective/communicator.hpp"
#include "core/train/baselines.hpp"
#include "core/train/gradient_exchange.hpp"
#include "core/train/reports.hpp"
#include "core/train/self_play.hpp"
#include "core/train/trainer.hpp"
#include "core/train/update.hpp"

namespace cas::train {

// What makes a trainer one rank of data-parallel training; none (no communicator): a run of its own.
struct DataParallelRank {
  dist::Communicator* communicator = nullptr;  // outlives the trainer
  std::optional<FaultInjection> fault;
};

// The seed of rank `rank`'s streams (self-play, replay draws) in a run seeded `seed`: rank 0 (and
// a single-rank run) keeps `seed` itself.
std::uint64_t rankSeed(std::uint64_t seed, int rank);

class AlphaZeroTrainer final : public Trainer, public SearchingTrainer {
 public:
  // With `rank.communicator`, every rank of the group must construct its trainer at the same
  // time (rank 0's initial weights are broadcast to the others).
  AlphaZeroTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, DataParallelRank rank = {});

  const project::Project& project() const override { return project_; }
  const params::ParameterSet& parameters() const override { return params_; }
  // The parameters in force, typed (read again after every change).
  const params::SearchParams& searchParams() const { return search_; }
  const params::TrainParams& trainParams() const { return train_; }
  // Applies live parameters at the next safe point (the trainer calls it between iterations);
  // restart-only ones are refused with a sentence saying so.
  std::optional<std::string> setParameter(const std::string& name, const params::ParamValue& value) override;

  // One iteration: self-play until games_per_iteration more games have finished, and
  // steps_per_iteration training steps; evaluates every eval_every iterations. With
  // train.overlap the training steps read the replay ring as the iteration found it while
  // self-play fills the fresh positions (on a GPU side by side, on two streams); without, they
  // follow self-play and read its games too. Either way the fresh positions join the ring and
  // the new weights reach self-play when the iteration ends.
  IterationReport runIteration(const std::function<bool()>& cancelled = {}) override;
  std::optional<std::string> outputsNotFiniteAtStart() override;
  std::int64_t iteration() const override { return iteration_; }
  // This trainer's rank in data-parallel training (0 in a run of its own).
  int rank() const { return exchange_ ? exchange_->rank() : 0; }
  // The parameters and optimizer state (Updater::stateProgram), for comparing ranks.
  const Updater& updater() const { return *updater_; }
  std::int64_t checkpointEvery() const override { return train_.checkpointEvery; }
  // One more simulation in every self-play game's tree (for stepping through a search).
  SearchingTrainer* searching() override { return this; }
  void stepSimulation() override { selfPlay_->stepSimulation(); }
  TreeSnapshot snapshot(int game, int maxNodes) const override;
  // The self-play search's device sunburst (made on first use), or null for the CPU search.
  std::shared_ptr<search::DeviceSunburst> deviceSunburst() override;
  // The self-play inference program on this trainer's backend and its batch, for kernel metrics
  // (exec::Executable::profileKernels). Between iterations only, on the thread driving the trainer.
  exec::Executable& inferenceProgram() override { return *inference_; }
  std::int64_t inferenceBatch() const override { return inferenceBatch_; }

  // `cancelled`: asked before every move; once it says so, the games finished so far are the result.
  EvaluationResult evaluate(const std::string& opponent, int games, std::uint64_t seed, const std::function<bool()>& cancelled = {});
  EvaluationResult evaluate(Opponent& opponent, int games, std::uint64_t seed);
  // This trainer's agent as another agent's opponent (`cuda-agent eval --opponent run:DIR`): its
  // search at evaluation settings, following up to `games` games of a match; named `name`.
  std::unique_ptr<Opponent> asOpponent(int games, std::uint64_t seed, std::string name);
  // The games a match of `games` plays at once: at most train.parallel_games, the batch the
  // network holds (an opponent that searches plays rounds of the same size).
  int evaluationRound(int games) const { return int(std::min<std::int64_t>(games, train_.parallelGames)); }
  // Analysis of one position given in the game's notation.
  search::RootStats analyse(const std::string& moves, int simulations, std::string* error);
  // The position analyse() searched last.
  const env::BoardGames& analysisBoard() const { return analysis_->positions(); }
  // Stepping through the search of one position (the studio's teaching mode on a position it
  // picks): startAnalysis gives the analysis search a fresh tree at the position after `moves`,
  // its root evaluated and no simulation run yet (false with `error` for moves that are not
  // legal or a finished game); stepAnalysis runs one more simulation in it; analysisSnapshot is
  // its top `maxNodes` nodes. analyse() replaces that tree by its own search.
  bool startAnalysis(const std::vector<int>& moves, std::string* error);
  void stepAnalysis();
  TreeSnapshot analysisSnapshot(int maxNodes) const;
  // Where the self-play search runs ("cpu" or "cuda"), and a sentence saying why.
  std::string searchDevice() const { return selfPlay_->search().device(); }
  const std::string& searchNote() const override { return searchNote_; }
  // Where the replay store lives ("cpu" or "cuda"), and why not on the device when it is not.
  std::string replayDevice() const { return store_->device(); }
  const std::string& replayNote() const { return storeNote_; }
  // The self-play search, for its kernel metrics and runtime statistics.
  search::SelfPlaySearch& selfPlaySearch() override { return selfPlay_->search(); }

  // The whole state (parameters, optimizer, replay buffer, counters) as bytes (checkpoint.hpp),
  // and back.
  std::string checkpoint() const override;
  // The most bytes checkpoint() can return for this trainer: a larger file is not one of its
  // checkpoints and is refused before it is read.
  std::uint64_t checkpointSizeLimit() const override;
  bool restore(const std::string& bytes, std::string* error) override;

 private:
  void buildNetworks();
  void syncInference();
  std::unique_ptr<search::SelfPlaySearch> makeSearch(int games, SearchUse use, std::uint64_t seed, std::string* note);
  // The inference network's logits and values for the first `count` observations of `obs` (at
  // most one inference batch of them), with the weights self-play uses.
  void networkOutputs(const float* obs, std::int64_t count, std::vector<float>* logits, std::vector<float>* values);
  // Why the loss became `loss` (not finite), in one sentence, as PPO's: the replay buffer's data
  // (observations, targets) not finite, or the network's outputs on it before any update (the
  // policy computes NaN from its input); the step size only when both are finite.
  std::string lossNotFinite(double loss);
  // A match of `games` games against `opponent`, its memory already checked.
  EvaluationResult playAgainst(Opponent& opponent, int games, std::uint64_t seed, const std::function<bool()>& cancelled = {});
  const char* allocating_ = "the trainer";  // what buildNetworks is allocating, for an out-of-memory error

  project::Project project_;
  params::ParameterSet params_;
  params::SearchParams search_;
  params::TrainParams train_;
  params::RuntimeParams runtime_;
  std::shared_ptr<exec::Backend> backend_;
  std::unique_ptr<GradientExchange> exchange_;  // data-parallel ranks only
  pdl::CompiledPolicy trainPolicy_;
  std::unique_ptr<Updater> updater_;
  std::unique_ptr<exec::Executable> inference_;
  std::int64_t inferenceBatch_ = 0;
  int actions_ = 0, obsSize_ = 0;
  std::unique_ptr<SelfPlay> selfPlay_;
  std::shared_ptr<search::DeviceSunburst> sunburst_;  // selfPlay_'s, for the tree view (deviceSunburst)
  bool sunburstAsked_ = false;
  std::unique_ptr<search::SelfPlaySearch> analysis_;
  std::vector<int> analysisMoves_;  // the moves to the analysis tree's root, since startAnalysis
  std::string searchNote_;
  std::unique_ptr<search::ReplayStore> store_;  // built after the networks (see allocating_)
  std::string storeNote_;
  std::int64_t iteration_ = 0, gamesPlayed_ = 0;
  std::mt19937_64 rng_;  // the training steps' replay draws (this rank's stream)
};

}  // namespace cas::train
