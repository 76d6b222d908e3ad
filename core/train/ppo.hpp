#pragma once
// PPO (Schulman et al. 2017) for single-agent environments, as CleanRL's ppo.py runs it: each
// iteration collects a rollout of ppo.rollout_steps steps of ppo.envs environments with the
// current policy (actions sampled from the softmax of its logits), estimates advantages with
// GAE(lambda) (gae.hpp), then updates the network for ppo.epochs passes over the rollout in
// ppo.minibatches shuffled minibatches with the clipped objective, the clipped value loss and the
// entropy bonus (update.hpp, LossKind::Ppo: built on the IR, so autodiff and every backend cover
// it), global-norm gradient clipping and Adam, whose step size anneals linearly to zero over
// ppo.total_steps environment steps, where the run ends.
// An episode cut by the time limit is bootstrapped: its last reward gains gamma * V(final
// observation), so that the value does not learn that step 500 ends the world.
// Resuming from a checkpoint starts fresh episodes (the checkpoint holds the network, the
// optimizer and the counters, not the environments' states).
// Thread-safety: one thread drives a trainer (the engine thread).
#include <cstdint>
#include <memory>
#include <random>
#include <optional>
#include <string>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/single_agent.hpp"
#include "core/params/run_params.hpp"
#include "core/search/replay_store.hpp"
#include "core/train/rollout.hpp"
#include "core/train/gae.hpp"
#include "core/train/trainer.hpp"
#include "core/train/update.hpp"

namespace cas::train {

// PPO's optimizer (Adam with CleanRL's epsilon, gradients clipped to ppo.max_grad_norm) at
// `learningRateFraction` of ppo.learning_rate: the trainer's, and `check --ir --update`'s.
OptimizerConfig ppoOptimizerConfig(const params::PpoParams& p, double learningRateFraction = 1.0);

// Why a PPO project cannot train (an environment PPO cannot step, ppo.minibatches that does not
// divide the rollout): what PpoTrainer refuses, in one sentence; nullopt when it can.
std::optional<std::string> ppoConfigurationProblem(const project::Project& project);

class PpoTrainer final : public Trainer, public EpisodicTrainer {
 public:
  // Throws std::runtime_error when the policy does not compile (its first diagnostic, with
  // file:line) or ppo.minibatches does not divide a rollout.
  PpoTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend);

  const project::Project& project() const override { return project_; }
  const params::ParameterSet& parameters() const override { return params_; }
  const params::PpoParams& ppoParams() const { return ppo_; }
  std::optional<std::string> setParameter(const std::string& name, const params::ParamValue& value) override;

  // One rollout and one update (the update is checked between minibatches for cancellation).
  IterationReport runIteration(const std::function<bool()>& cancelled = {}) override;
  std::int64_t iteration() const override { return iteration_; }
  std::int64_t environmentSteps() const { return iteration_ * rolloutSize(); }
  bool reachedEnd() const override { return environmentSteps() >= ppo_.totalSteps; }
  std::int64_t checkpointEvery() const override { return train_.checkpointEvery; }

  // `episodes` episodes in fresh environments seeded with `seed`, played ppo.envs at a time:
  // the most probable action (greedy) or one sampled from the policy (stochastic).
  EpisodicTrainer* episodic() override { return this; }
  EpisodeEvaluation evaluate(int episodes, bool stochastic, std::uint64_t seed) override;
  // One episode in a fresh environment seeded with `seed`, at most maxSteps steps, recorded.
  RecordedEpisode recordEpisode(bool stochastic, std::uint64_t seed, int maxSteps) override;
  // For trading-stocks: the greedy policy over the series' held-out part against buy and hold
  // (ppo_judgement.cpp, as the next).
  std::optional<HeldOutResult> heldOut() override;
  // For market-making: the greedy policy against the closed-form quotes on the same episodes.
  std::optional<OptimumComparison> againstOptimum(int episodes, std::uint64_t seed) override;

  // Where the rollout runs, in one sentence: on the device (the backend's device rollout) or on
  // the host, and why not on the device when the backend has one.
  const std::string& rolloutNote() const override { return rolloutNote_; }
  std::int64_t totalSteps() const override { return ppo_.totalSteps; }
  std::int64_t stepsPerIteration() const override { return rolloutSize(); }
  bool rolloutOnDevice() const { return rolloutOnDevice_; }
  // The last iteration's rollout and advantages, wherever they are (the device's are copied).
  RolloutArrays lastRollout() const;

  exec::Executable& inferenceProgram() override { return *inference_; }
  std::int64_t inferenceBatch() const override { return ppo_.envs; }

  std::string checkpoint() const override;
  std::uint64_t checkpointSizeLimit() const override;
  bool restore(const std::string& bytes, std::string* error) override;

 private:
  std::int64_t rolloutSize() const { return ppo_.envs * ppo_.rolloutSteps; }
  void syncInference();  // the updated weights into the rollout's network
  // Fresh environments and action generators, seeded from the trainer's generator.
  void startEpisodes();
  // The policy on `observations` (ppo.envs of them): logits [envs][actions] and values [envs].
  void forward(const std::vector<float>& observations, std::vector<float>* logits, std::vector<float>* values);
  // ppo.epochs passes over the rollout in shuffled minibatches, each gathered by the rollout.
  void update(const std::function<bool()>& cancelled, IterationReport& report);
  OptimizerConfig optimizerConfig() const;
  // Why an update's loss is not finite, in one sentence: the rollout's fault (values that were
  // not finite before the update: the policy's computation, or the environment) or the update's.
  std::string lossNotFinite(double loss) const;
  search::ReplaySetup emptyReplay() const;  // the checkpoint format's replay section, empty for PPO

  project::Project project_;
  params::ParameterSet params_;
  params::PpoParams ppo_;
  params::TrainParams train_;  // train.checkpoint_every
  std::shared_ptr<exec::Backend> backend_;
  int actions_ = 0, obsSize_ = 0;
  std::unique_ptr<Updater> updater_;
  std::unique_ptr<exec::Executable> inference_;  // batch ppo.envs
  std::mt19937_64 rng_;  // minibatch shuffles, and the seeds of environments and action draws

  // The rollout: the backend's device rollout (ppo.device_rollout, on a backend with device
  // twins of the environment), else a HostRollout over the CPU twins.
  std::unique_ptr<Rollout> rollout_;
  bool rolloutOnDevice_ = false;
  std::string rolloutNote_;

  std::int64_t iteration_ = 0, episodesFinished_ = 0;
};

}  // namespace cas::train
