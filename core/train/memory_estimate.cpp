#include "core/train/memory_estimate.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>

#include "core/env/environments.hpp"
#include "core/params/run_params.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/support/atomic_file.hpp"

namespace cas::train {
namespace {

// The CPU search tree keeps nine arrays per node (core/search/tree.hpp): 30 bytes, rounded up.
constexpr std::uint64_t kTreeBytesPerNode = 32;
// Training keeps each activation's value and gradient, and temporaries of the same size.
constexpr std::uint64_t kTrainingCopiesPerActivation = 3;
// Weights for self-play, and for training the weights, gradients and Adam's two moments.
constexpr std::uint64_t kCopiesPerParameter = 5;
// The replay buffer, the checkpoint bytes made from it, and (when restoring) the file read back.
constexpr std::uint64_t kReplayBufferCopies = 3;
constexpr std::uint64_t kFloat = sizeof(float);
// A PPO rollout step keeps, beside its observation, the action, log-probability, value, reward,
// done flag, advantage and return (core/train/rollout.hpp).
constexpr std::uint64_t kRolloutFloatsPerStep = 7;

const std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

std::uint64_t times(std::uint64_t a, std::uint64_t b) { return b != 0 && a > kUnlimited / b ? kUnlimited : a * b; }

MemoryPart trees(const char* what, std::int64_t games, std::int64_t budget, std::string reduce) {
  return {std::string(what) + " (" + std::to_string(games) + " games of " + std::to_string(budget) + " nodes)",
          times(times(std::uint64_t(games), std::uint64_t(budget)), kTreeBytesPerNode), std::move(reduce)};
}

// A number from a /proc or /sys file: the first integer after `key` (or at the start).
std::optional<std::uint64_t> numberIn(const char* path, const std::string& key, std::uint64_t unit) {
  const auto text = readFile(path, FileLimit{"a system memory file", 1u << 20});
  if (!text) return std::nullopt;
  const size_t at = key.empty() ? 0 : text->find(key);
  if (at == std::string::npos) return std::nullopt;
  std::istringstream in(text->substr(at + key.size()));
  std::uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;  // "max": no limit
  return times(v, unit);
}

// The networks' memory: activations at the inference and training batches, and the parameters
// with their gradients and optimizer state. nullopt when the policy does not compile (the
// compiler's diagnostic says why elsewhere).
std::optional<MemoryPart> networksPart(const project::Project& project, std::uint64_t inferenceBatch, std::uint64_t trainingBatch,
                                       const char* inferenceUse, const char* reduce) {
  // The network's size per sample, from the policy compiled for one sample (cheap: no backend).
  const pdl::CompileResult compiled = project::compilePolicy(project, 1, nullptr);
  if (!compiled.policy) return std::nullopt;
  std::uint64_t activations = 0;  // per sample: the parameters are counted once, below
  for (const ir::Node& n : compiled.policy->graph.nodes)
    if (n.op != ir::Op::Input || n.attrs.role == ir::InputRole::Data) activations += std::uint64_t(ir::numel(n.shape));
  return MemoryPart{"the networks (batch " + std::to_string(inferenceBatch) + " for " + inferenceUse + ", " + std::to_string(trainingBatch) +
                        " for training)",
                    times(times(activations, kFloat), inferenceBatch + times(trainingBatch, kTrainingCopiesPerActivation)) +
                        times(std::uint64_t(compiled.policy->parameterCount), kCopiesPerParameter * kFloat),
                    reduce};
}

}  // namespace

std::uint64_t MemoryEstimate::total() const {
  std::uint64_t sum = 0;
  for (const MemoryPart& p : parts) sum = std::min(kUnlimited - p.bytes, sum) + p.bytes;
  return sum;
}

search::ReplaySetup replaySetup(const project::Project& project) {
  const params::TrainParams train = params::readTrainParams(project.parameters);
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  search::ReplaySetup s;
  s.environment = project.environment;
  s.capacity = train.replayCapacity;
  s.observationSize = int(std::accumulate(e->observationShape.begin(), e->observationShape.end(), std::int64_t(1), std::multiplies<>()));
  s.actions = e->actionCount;
  const std::int64_t maxMoves = e->board ? std::int64_t(e->board->rows) * e->board->columns : 1;  // a stone per move
  s.freshCapacity = (train.gamesPerIteration + train.parallelGames) * maxMoves;
  return s;
}

MemoryEstimate estimateTrainerMemory(const project::Project& project, std::int64_t evaluationGames) {
  const params::SearchParams searchParams = params::readSearchParams(project.parameters);
  const params::TrainParams trainParams = params::readTrainParams(project.parameters);
  MemoryEstimate e;
  const env::EnvironmentInfo* environment = env::findEnvironment(project.environment);
  if (!environment) return e;
  const auto observation = std::uint64_t(
      std::accumulate(environment->observationShape.begin(), environment->observationShape.end(), std::int64_t(1), std::multiplies<>()));
  const auto sample = observation + std::uint64_t(environment->actionCount) + 1;  // observation, policy target, value target
  const auto capacity = std::uint64_t(trainParams.replayCapacity);
  e.parts.push_back({"the replay buffer (" + std::to_string(capacity) + " positions of " + std::to_string(sample) + " floats, with its checkpoint)",
                     times(times(capacity, sample * kFloat), kReplayBufferCopies), "train.replay_capacity"});
  const auto fresh = std::uint64_t(replaySetup(project).freshCapacity);
  e.parts.push_back({"the replay buffer's fresh positions (" + std::to_string(fresh) + " positions of " + std::to_string(sample) + " floats)",
                     times(fresh, sample * kFloat), "train.games_per_iteration or train.parallel_games"});
  const std::int64_t budget = searchParams.nodeBudget, parallel = trainParams.parallelGames;
  e.parts.push_back(trees("the self-play search trees", parallel, budget, "search.node_budget or train.parallel_games"));
  e.parts.push_back(trees("the analysis search tree", 1, budget, "search.node_budget"));
  if (evaluationGames > 0)
    for (MemoryPart& part : estimateEvaluationMemory(project, evaluationGames).parts) e.parts.push_back(std::move(part));

  const auto inferenceBatch = std::uint64_t(parallel * searchParams.leavesPerStep);
  if (auto part = networksPart(project, inferenceBatch, std::uint64_t(trainParams.batchSize), "self-play",
                               "train.parallel_games, search.leaves_per_step or train.batch_size"))
    e.parts.push_back(std::move(*part));
  return e;
}

MemoryEstimate estimatePpoMemory(const project::Project& project) {
  MemoryEstimate e;
  const env::EnvironmentInfo* environment = env::findEnvironment(project.environment);
  if (!environment) return e;
  const params::PpoParams ppo = params::readPpoParams(project.parameters);
  const auto observation = std::uint64_t(
      std::accumulate(environment->observationShape.begin(), environment->observationShape.end(), std::int64_t(1), std::multiplies<>()));
  const std::uint64_t samples = times(std::uint64_t(ppo.envs), std::uint64_t(ppo.rolloutSteps));
  const std::uint64_t sample = observation + kRolloutFloatsPerStep;
  e.parts.push_back({"the rollout (" + std::to_string(ppo.envs) + " x " + std::to_string(ppo.rolloutSteps) + " steps of " + std::to_string(sample) +
                         " floats)",
                     times(times(samples, sample), kFloat), "ppo.envs or ppo.rollout_steps"});
  const std::uint64_t minibatch = ppo.minibatches > 0 ? samples / std::uint64_t(ppo.minibatches) : samples;
  if (auto part = networksPart(project, std::uint64_t(ppo.envs), minibatch, "the rollout", "ppo.envs, ppo.rollout_steps or ppo.minibatches"))
    e.parts.push_back(std::move(*part));
  return e;
}

// The learned model compiled for one sample (unrolled `unrollSteps` steps): nullopt when it does
// not compile (the trainer's compile says why).
static std::optional<pdl::CompiledLearnedModel> learnedModelForOneSample(const project::Project& project, std::int64_t unrollSteps) {
  const auto source = readFile(project.policyFile, kPolicyFileLimit);
  const env::EnvironmentInfo* environment = env::findEnvironment(project.environment);
  if (!source || !environment) return std::nullopt;
  pdl::LearnedModelOptions o;
  o.observationShape.assign(environment->observationShape.begin(), environment->observationShape.end());
  o.actionCount = environment->actionCount;
  o.training = true;
  o.unrollSteps = unrollSteps;
  return pdl::compileLearnedModel(*source, o).model;
}

// Floats per sample of a program's values (its activations; parameters are counted apart).
static std::uint64_t activationsPerSample(const pdl::CompiledPolicy& program) {
  std::uint64_t floats = 0;
  for (const ir::Node& n : program.graph.nodes)
    if (n.op != ir::Op::Input || n.attrs.role == ir::InputRole::Data) floats += std::uint64_t(ir::numel(n.shape));
  return floats;
}

MemoryEstimate estimateMuZeroMemory(const project::Project& project) {
  MemoryEstimate e;
  const env::EnvironmentInfo* environment = env::findEnvironment(project.environment);
  const params::MuZeroParams mz = params::readMuZeroParams(project.parameters);
  const params::SearchParams search = params::readSearchParams(project.parameters);
  const params::TrainParams train = params::readTrainParams(project.parameters);
  const std::optional<pdl::CompiledLearnedModel> model = learnedModelForOneSample(project, mz.unrollSteps);
  if (!environment || !model) return e;
  const auto state = std::uint64_t(ir::numel(model->stateShape)), actions = std::uint64_t(environment->actionCount);
  const auto observation = std::uint64_t(
      std::accumulate(environment->observationShape.begin(), environment->observationShape.end(), std::int64_t(1), std::multiplies<>()));
  const std::uint64_t perNode = kTreeBytesPerNode + kFloat + times(state, kFloat);  // the tree, the edge's reward, the latent state
  e.parts.push_back({"the search trees with their latent states (" + std::to_string(mz.copies) + " copies of " + std::to_string(search.nodeBudget) +
                         " nodes of " + std::to_string(state) + " floats)",
                     times(times(std::uint64_t(mz.copies), std::uint64_t(search.nodeBudget)), perNode), "search.node_budget or muzero.copies"});
  // The replay keeps up to twice its capacity (its newest episode beyond it), a position's
  // observation, visit distribution, action, reward and value as floats.
  const std::uint64_t position = times(observation + actions + 3, kFloat);
  e.parts.push_back({"the episode replay (" + std::to_string(train.replayCapacity) + " positions of " + std::to_string(observation + actions + 3) +
                         " floats, and the checkpoint made from it)",
                     times(times(times(2, std::uint64_t(train.replayCapacity)), position), kReplayBufferCopies), "train.replay_capacity"});
  const std::uint64_t searchRows = times(std::uint64_t(mz.copies), std::uint64_t(std::max<std::int64_t>(1, search.leavesPerStep)));
  const std::uint64_t searchFloats = activationsPerSample(model->represent) + activationsPerSample(model->recurrent) + activationsPerSample(model->predict);
  e.parts.push_back({"the learned model (" + std::to_string(searchRows) + " rows for the search, " + std::to_string(train.batchSize) +
                         " unrolled for training, " + std::to_string(model->parameterCount) + " parameters)",
                     times(times(searchFloats, kFloat), searchRows) +
                         times(times(activationsPerSample(*model->unrolled), kFloat), times(std::uint64_t(train.batchSize), kTrainingCopiesPerActivation)) +
                         times(std::uint64_t(model->parameterCount), kCopiesPerParameter * kFloat),
                     "muzero.copies, search.leaves_per_step, train.batch_size or the model's layers"});
  return e;
}

MemoryEstimate estimateEvaluationMemory(const project::Project& project, std::int64_t games) {
  MemoryEstimate e;
  // Played in rounds of at most train.parallel_games (AlphaZeroTrainer::evaluate).
  games = std::min(games, params::readTrainParams(project.parameters).parallelGames);
  e.parts.push_back(trees("the evaluation search trees", games, params::readSearchParams(project.parameters).nodeBudget,
                          "search.node_budget or train.parallel_games"));
  return e;
}

MemoryEstimate forRanks(MemoryEstimate estimate, int ranks) {
  if (ranks <= 1) return estimate;
  for (MemoryPart& part : estimate.parts) {
    part.what += " on each of the " + std::to_string(ranks) + " ranks";
    part.bytes = times(part.bytes, std::uint64_t(ranks));
    part.reduce += ", or give fewer --ranks";
  }
  return estimate;
}

MemoryPart searchTreesPart(std::int64_t games, std::int64_t nodeBudget, std::string reduce) {
  return trees("the search trees", games, nodeBudget, std::move(reduce));
}

std::uint64_t availableMemory() {
  std::uint64_t available = numberIn("/proc/meminfo", "MemAvailable:", 1024).value_or(kUnlimited);
  const auto cgroupLimit = numberIn("/sys/fs/cgroup/memory.max", "", 1);
  const auto cgroupUse = numberIn("/sys/fs/cgroup/memory.current", "", 1);
  if (cgroupLimit && cgroupUse) available = std::min(available, *cgroupLimit > *cgroupUse ? *cgroupLimit - *cgroupUse : 0);
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const auto mapped = numberIn("/proc/self/statm", "", std::uint64_t(::sysconf(_SC_PAGESIZE))).value_or(0);
    available = std::min<std::uint64_t>(available, limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0);
  }
  return available;
}

std::optional<std::string> refuseIfTooLarge(const MemoryEstimate& estimate, std::uint64_t available) {
  const std::uint64_t total = estimate.total();
  if (total <= available || estimate.parts.empty()) return std::nullopt;
  const MemoryPart& largest =
      *std::max_element(estimate.parts.begin(), estimate.parts.end(), [](const MemoryPart& a, const MemoryPart& b) { return a.bytes < b.bytes; });
  return "this configuration needs about " + formatBytes(total) + " of memory, more than the " + formatBytes(available) +
         " available; the largest part is " + largest.what + ", " + formatBytes(largest.bytes) + ": reduce " + largest.reduce;
}

}  // namespace cas::train
