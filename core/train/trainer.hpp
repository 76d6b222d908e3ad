#pragma once
// What the engine drives: one algorithm's training loop (AlphaZeroTrainer, PpoTrainer,
// MuZeroTrainer), run an iteration at a time on the engine thread, with live parameter changes
// between iterations and its whole state as checkpoint bytes. makeTrainer builds the one a project's algorithm names.
// Thread-safety: one thread drives a trainer (the engine thread).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/exec/backend.hpp"
#include "core/params/parameters.hpp"
#include "core/project/project.hpp"
#include "core/train/gradient_exchange.hpp"
#include "core/train/reports.hpp"

namespace cas::search {
class SelfPlaySearch;
}

namespace cas::train {

class SearchingTrainer;
class EpisodicTrainer;

class Trainer {
 public:
  virtual ~Trainer() = default;

  virtual const project::Project& project() const = 0;
  virtual const params::ParameterSet& parameters() const = 0;
  // Applies a live parameter at the next safe point (the engine calls it between iterations);
  // restart-only ones are refused with a sentence saying so.
  virtual std::optional<std::string> setParameter(const std::string& name, const params::ParamValue& value) = 0;

  // One iteration; `cancelled` is polled at the iteration's safe points.
  virtual IterationReport runIteration(const std::function<bool()>& cancelled = {}) = 0;
  virtual std::int64_t iteration() const = 0;
  // Whether the run has reached the end its algorithm sets itself (PPO: ppo.total_steps);
  // AlphaZero runs until stopped.
  virtual bool reachedEnd() const { return false; }
  // Why the policy cannot be trained as it stands: its outputs on the first observation, with the
  // weights it starts from, are not finite (it computes NaN from its input, a log of a negative
  // number), as `check` finds; nullopt when they are, or when the algorithm does not ask.
  virtual std::optional<std::string> outputsNotFiniteAtStart() { return std::nullopt; }
  virtual std::int64_t checkpointEvery() const = 0;

  // What the trainer's algorithm adds (SearchingTrainer, EpisodicTrainer below): null when it
  // has no such capability. Callers ask here instead of casting to an algorithm's class.
  virtual SearchingTrainer* searching() { return nullptr; }
  virtual EpisodicTrainer* episodic() { return nullptr; }

  // The program the network is evaluated with most (AlphaZero: self-play's, PPO: the rollout's)
  // and its batch, for kernel metrics (exec::Executable::profileKernels). Between iterations
  // only, on the thread driving the trainer.
  virtual exec::Executable& inferenceProgram() = 0;
  virtual std::int64_t inferenceBatch() const = 0;

  // The whole state as bytes (checkpoint.hpp), and back.
  virtual std::string checkpoint() const = 0;
  // The most bytes checkpoint() can return: a larger file is not one of its checkpoints.
  virtual std::uint64_t checkpointSizeLimit() const = 0;
  virtual bool restore(const std::string& bytes, std::string* error) = 0;

  // Once, after the run's last iteration: a trainer leading ranks in other processes tells them
  // the run has ended (LeadingRank); the others have nothing to do. Throws when it cannot.
  virtual void endRun() {}
};

// A trainer whose algorithm searches (AlphaZero): a view steps its self-play search and looks
// at its trees. Thread-safety: the thread driving the trainer, between iterations.
class SearchingTrainer {
 public:
  virtual ~SearchingTrainer() = default;
  // One more simulation in every self-play game (the studio's Step while paused).
  virtual void stepSimulation() = 0;
  virtual TreeSnapshot snapshot(int game, int maxNodes) const = 0;
  // The tree view's device geometry for the search's trees when they live on a device (the CUDA
  // search), made once and kept; null for a search whose trees are in host memory.
  virtual std::shared_ptr<search::DeviceSunburst> deviceSunburst() = 0;
  virtual search::SelfPlaySearch& selfPlaySearch() = 0;
  // Where the self-play search runs, and why there, in one sentence.
  virtual const std::string& searchNote() const = 0;
};

// A trainer whose algorithm plays episodes of a single-agent environment (PPO): its policy
// evaluated and recorded, its rollout described. Thread-safety: as SearchingTrainer.
class EpisodicTrainer {
 public:
  virtual ~EpisodicTrainer() = default;
  // `episodes` whole episodes of the policy, greedy or sampled, from environments seeded by `seed`.
  virtual EpisodeEvaluation evaluate(int episodes, bool stochastic, std::uint64_t seed) = 0;
  // One episode frame by frame, cut after `maxSteps` steps.
  virtual RecordedEpisode recordEpisode(bool stochastic, std::uint64_t seed, int maxSteps) = 0;
  // A trading run's result on its series' held-out part; nullopt for other environments.
  virtual std::optional<HeldOutResult> heldOut() { return std::nullopt; }
  // A market-making run's greedy policy against the closed-form quotes over `episodes` episodes
  // seeded by `seed`; nullopt for other environments.
  virtual std::optional<OptimumComparison> againstOptimum(int /*episodes*/, std::uint64_t /*seed*/) { return std::nullopt; }
  // Where the rollout runs, and why there, in one sentence.
  virtual const std::string& rolloutNote() const = 0;
  // The environment steps the run ends at, and those one iteration takes.
  virtual std::int64_t totalSteps() const = 0;
  virtual std::int64_t stepsPerIteration() const = 0;
};

// A snapshot of `game`'s tree when `trainer` searches; one without nodes (the iteration and
// environment only) when it does not.
TreeSnapshot treeSnapshot(Trainer& trainer, int game, int maxNodes);

// How many ranks train one run side by side: CPU threads of this process (data_parallel.hpp), or
// processes of a group this one leads (process_group.hpp).
struct ParallelOptions {
  int ranks = 1;                        // 1: one trainer; more: data-parallel CPU ranks on threads
  std::optional<FaultInjection> fault;  // a rank made to fail at a step (gradient_exchange.hpp)
  // Rank 0 of a group of processes (cuda-agent train --gpus N); outlives the trainer. The other
  // ranks build their AlphaZeroTrainer themselves and follow (followLeadingRank).
  dist::Communicator* communicator = nullptr;
};

// The trainer of the project's algorithm on `backend`; with `parallel.ranks` > 1 a
// DataParallelTrainer of that many ranks; with `parallel.communicator` a LeadingRank, rank 0 of
// that group. Throws std::runtime_error when the policy does not
// compile, the configuration cannot be built or the algorithm or backend has no data-parallel
// path (the message says which).
// `toTrain`: refused (std::runtime_error) when outputsNotFiniteAtStart() finds a reason, before
// self-play plays an iteration on NaN outputs; eval, analyze and play read a run without it.
std::unique_ptr<Trainer> makeTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, const ParallelOptions& parallel = {},
                                     bool toTrain = true);

// Why the project's configuration cannot train, as the trainer it names would refuse it before
// building anything: PPO's minibatches that do not divide its rollout or exceed the largest
// compiled batch, an AlphaZero batch larger than its replay buffer or a configuration too large
// for the memory available (memory_estimate.hpp). nullopt when it can.
// `cuda-agent check` asks the same, so that it accepts only what `train` accepts. `ranks`: the
// data-parallel CPU ranks (--ranks) of this process, each of which allocates a whole trainer.
std::optional<std::string> trainingProblem(const project::Project& project, int ranks = 1);

}  // namespace cas::train
