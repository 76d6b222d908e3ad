#pragma once
// MuZero as a project trains it (algorithm = "muzero"): the project's learned model (PDL's
// represent, dynamics and predict) learned by MuZeroLearner, driven by the engine an iteration at
// a time like AlphaZero and PPO. An iteration: muzero.moves_per_iteration moves of every one of
// muzero.copies environment copies, each move chosen by one batched search over the model
// ([search]), then muzero.updates_per_iteration training steps on train.batch_size positions from
// the episode replay (train.replay_capacity positions). The run ends at muzero.total_steps
// environment steps.
//
// Its checkpoint is the common format (checkpoint.hpp) with the replay ring empty and the
// algorithm's section holding
//
//   i64 environment steps | the episode replay (EpisodeReplay::write: every kept episode)
//
// so a resumed run learns from the episodes it had played; the episodes under way are not kept
// and the copies start fresh ones, seeded from the run's generator.
// Thread-safety: one thread drives a trainer (the engine thread).
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "core/env/game_random.hpp"
#include "core/params/run_params.hpp"
#include "core/train/muzero_learner.hpp"
#include "core/train/trainer.hpp"

namespace cas::train {

// Why a MuZero project cannot train (an environment it cannot play, a batch larger than a
// compiled program may hold), in one sentence; nullopt when it can.
std::optional<std::string> muZeroConfigurationProblem(const project::Project& project);

class MuZeroTrainer final : public Trainer, public EpisodicTrainer {
 public:
  // Throws std::runtime_error with the model's first diagnostic (file:line) when it does not
  // compile, or the configuration problem.
  MuZeroTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend);
  ~MuZeroTrainer() override;

  const project::Project& project() const override { return project_; }
  const params::ParameterSet& parameters() const override { return params_; }
  std::optional<std::string> setParameter(const std::string& name, const params::ParamValue& value) override;

  IterationReport runIteration(const std::function<bool()>& cancelled = {}) override;
  std::int64_t iteration() const override { return learner_->iterations(); }
  std::int64_t environmentSteps() const { return environmentSteps_; }
  bool reachedEnd() const override { return environmentSteps_ >= muzero_.totalSteps; }
  std::int64_t checkpointEvery() const override { return train_.checkpointEvery; }

  // Episodes played with the search's choice (greedy: the most visited action, or Gumbel's
  // winner) or a move drawn from its visit distribution (stochastic), without root noise.
  EpisodicTrainer* episodic() override { return this; }
  EpisodeEvaluation evaluate(int episodes, bool stochastic, std::uint64_t seed) override;
  // Each frame's probabilities are the search's visit distribution at that position, its value
  // the root's value.
  RecordedEpisode recordEpisode(bool stochastic, std::uint64_t seed, int maxSteps) override;
  const std::string& rolloutNote() const override { return rolloutNote_; }
  std::int64_t totalSteps() const override { return muzero_.totalSteps; }
  std::int64_t stepsPerIteration() const override { return muzero_.copies * muzero_.movesPerIteration; }

  exec::Executable& inferenceProgram() override { return learner_->recurrentProgram(); }
  std::int64_t inferenceBatch() const override;

  std::string checkpoint() const override;
  std::uint64_t checkpointSizeLimit() const override;
  bool restore(const std::string& bytes, std::string* error) override;

  const MuZeroLearner& learner() const { return *learner_; }

 private:
  MuZeroOptions options() const;  // from params_
  search::ReplaySetup emptyRing() const;
  std::uint64_t sectionLimit() const;
  // Environment e's action from its root statistics: the search's choice, or drawn from the visits.
  static int chooseAction(const search::RootStats& root, bool stochastic, env::GameRandom& random);

  project::Project project_;
  params::ParameterSet params_;
  params::MuZeroParams muzero_;
  params::TrainParams train_;
  std::shared_ptr<exec::Backend> backend_;
  int observationSize_ = 0, actions_ = 0;
  std::unique_ptr<MuZeroLearner> learner_;
  std::mt19937_64 rng_;  // the seeds of the copies' episodes after a resume
  std::string rolloutNote_;
  std::int64_t environmentSteps_ = 0, episodesFinished_ = 0;
  MuZeroSelfPlayStats counted_;  // the learner's self-play figures already reported
};

}  // namespace cas::train
