#include "core/train/trainer.hpp"

#include <stdexcept>

#include "core/train/alphazero.hpp"
#include "core/train/data_parallel.hpp"
#include "core/train/memory_estimate.hpp"
#include "core/train/muzero_trainer.hpp"
#include "core/train/process_group.hpp"
#include "core/train/ppo.hpp"

namespace cas::train {

TreeSnapshot treeSnapshot(Trainer& trainer, int game, int maxNodes) {
  if (SearchingTrainer* searching = trainer.searching()) return searching->snapshot(game, maxNodes);
  TreeSnapshot snap;
  snap.game = game;
  snap.iteration = trainer.iteration();
  snap.environment = trainer.project().environment;
  return snap;
}

namespace {

std::unique_ptr<Trainer> buildTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, const ParallelOptions& parallel) {
  if (parallel.communicator) {
    if (project.algorithm != "alphazero")
      throw std::runtime_error("data-parallel training (--gpus) is built for AlphaZero; a " + project.algorithm + " run trains on one GPU");
    auto rank0 = std::make_unique<AlphaZeroTrainer>(project, std::move(backend), DataParallelRank{parallel.communicator, parallel.fault});
    return std::make_unique<LeadingRank>(std::move(rank0), *parallel.communicator);
  }
  if (parallel.ranks > 1) return std::make_unique<DataParallelTrainer>(project, std::move(backend), parallel);
  if (project.algorithm == "ppo") return std::make_unique<PpoTrainer>(project, std::move(backend));
  if (project.algorithm == "muzero") return std::make_unique<MuZeroTrainer>(project, std::move(backend));
  return std::make_unique<AlphaZeroTrainer>(project, std::move(backend));
}

}  // namespace

std::unique_ptr<Trainer> makeTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, const ParallelOptions& parallel,
                                     bool toTrain) {
  std::unique_ptr<Trainer> trainer = buildTrainer(project, std::move(backend), parallel);
  if (toTrain)
    if (auto problem = trainer->outputsNotFiniteAtStart()) throw std::runtime_error(*problem);
  return trainer;
}

std::optional<std::string> trainingProblem(const project::Project& project, int ranks) {
  if (project.algorithm == "ppo") {
    if (auto problem = ppoConfigurationProblem(project)) return problem;
    return refuseIfTooLarge(estimatePpoMemory(project), availableMemory());
  }
  if (project.algorithm == "muzero") {
    if (auto problem = muZeroConfigurationProblem(project)) return problem;
    return refuseIfTooLarge(estimateMuZeroMemory(project), availableMemory());
  }
  const params::TrainParams train = params::readTrainParams(project.parameters);
  // A step draws a whole batch from the replay buffer, which never holds more than its capacity.
  if (train.batchSize > train.replayCapacity)
    return "train.batch_size = " + std::to_string(train.batchSize) + " is more than train.replay_capacity = " + std::to_string(train.replayCapacity) +
           ": a training step draws its batch from the replay buffer, which never holds that many positions, so the run would never train; " +
           "lower train.batch_size or raise train.replay_capacity";
  return refuseIfTooLarge(forRanks(estimateTrainerMemory(project, train.evalGames), ranks), availableMemory());
}

}  // namespace cas::train
