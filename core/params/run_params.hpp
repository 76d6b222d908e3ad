#pragma once
// The registry's parameters as typed values, one struct per section. Each struct is read from a
// ParameterSet by one function (run_params.cpp), the only code that names a parameter by its
// key: the trainer, the engine, the CLI and the studio read fields, so a parameter's name and
// type are written twice (its declaration in parameters.cpp and its reading here) and nowhere
// else. Values keep the registry's types (integers std::int64_t, numbers double); a choice
// whose value selects behaviour is an enum, one passed on as a word (a device) stays a string.
// Thread-safety: plain values and functions.
#include <cstdint>
#include <string>

#include "core/params/parameters.hpp"

namespace cas::params {

enum class RootPolicy { Puct, Gumbel };
enum class SelectionKernel { Masked, Branchy };

// [search]'s defaults, declared once: the registry's rows (parameters.cpp) and the search's own
// configuration (search::SearchConfig's member defaults) read them.
struct SearchDefaults {
  std::int64_t simulations = 64;
  double cPuct = 1.5, dirichletAlpha = 0.3, dirichletFraction = 0.25;
  std::int64_t leavesPerStep = 1;
  double virtualLoss = 1.0, temperature = 1.0;
  std::int64_t temperatureMoves = 8, nodeBudget = 16384, gumbelArms = 16;
  bool subtreeReuse = true, instrument = false;
};
inline constexpr SearchDefaults kSearchDefaults{};

// [search]: the tree search of self-play, evaluation and analysis.
struct SearchParams {
  std::int64_t simulations = 0;
  double cPuct = 0, dirichletAlpha = 0, dirichletFraction = 0;
  std::int64_t leavesPerStep = 0;
  double virtualLoss = 0, temperature = 0;
  std::int64_t temperatureMoves = 0, nodeBudget = 0;
  RootPolicy rootPolicy = RootPolicy::Puct;
  std::int64_t gumbelArms = 0;
  bool subtreeReuse = false;
  std::string device;  // "auto", "cpu" or "gpu" (search::makeSearch's words)
  SelectionKernel selection = SelectionKernel::Masked;
  bool instrument = false;
};

// [train]: AlphaZero's self-play volume, the optimizer, the replay buffer, evaluation; and the
// checkpoints of every algorithm (checkpoint_every).
struct TrainParams {
  std::int64_t parallelGames = 0, gamesPerIteration = 0, batchSize = 0, stepsPerIteration = 0;
  bool overlap = true;  // self-play and training side by side (alphazero.hpp: runIteration)
  std::string optimizer;  // "adam" or "sgd" (train::OptimizerConfig's words)
  double learningRate = 0, momentum = 0, weightDecay = 0, gradClip = 0;
  std::int64_t replayCapacity = 0, evalEvery = 0, evalGames = 0, checkpointEvery = 0;
};

// [ppo]: PPO's rollouts, its clipped objective and its optimizer (core/train/ppo.hpp).
struct PpoParams {
  std::int64_t envs = 0, rolloutSteps = 0, minibatches = 0, epochs = 0, totalSteps = 0;
  double learningRate = 0;
  bool annealLearningRate = true;
  double gamma = 0, gaeLambda = 0, clip = 0, valueCoef = 0, entropyCoef = 0, maxGradNorm = 0;
  bool deviceRollout = true;  // on a backend with device twins of the environment
};

// [muzero]: MuZero's self-play volume, its unrolled targets and the run's length
// (core/train/muzero_trainer.hpp); the optimizer, the batch and the replay's size are [train]'s.
struct MuZeroParams {
  std::int64_t copies = 0, unrollSteps = 0, tdSteps = 0;
  double discount = 0;
  std::int64_t movesPerIteration = 0, updatesPerIteration = 0;
  double temperature = 0, minMaxFloor = 0;
  std::int64_t totalSteps = 0;
};

// [runtime]: the backend and the seed. runtime.threads and runtime.threads_per_block are
// declared for project files but not read by this program yet, so they have no field here.
struct RuntimeParams {
  std::string device;  // "auto", "cpu" or "cuda" (exec::BackendRegistry::select's words)
  std::int64_t seed = 0;
};

// [dist]: data-parallel training over several ranks (core/train/data_parallel.hpp).
struct DistParams {
  std::int64_t bucketKib = 0;      // the gradient all-reduce's bucket size
  std::int64_t checksumEvery = 0;  // optimizer steps between the ranks' weight checks
  double timeoutSeconds = 0;       // the longest a rank waits for the others in a collective
};

SearchParams readSearchParams(const ParameterSet& set);
TrainParams readTrainParams(const ParameterSet& set);
PpoParams readPpoParams(const ParameterSet& set);
MuZeroParams readMuZeroParams(const ParameterSet& set);
RuntimeParams readRuntimeParams(const ParameterSet& set);
DistParams readDistParams(const ParameterSet& set);

}  // namespace cas::params
