#include "core/train/trainer.hpp"

#include "core/train/alphazero.hpp"
#include "core/train/data_parallel.hpp"
#include "core/train/memory_estimate.hpp"
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

std::unique_ptr<Trainer> makeTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, const ParallelOptions& parallel) {
  if (parallel.communicator) {
    if (project.algorithm != "alphazero")
      throw std::runtime_error("data-parallel training (--gpus) is built for AlphaZero; a " + project.algorithm + " run trains on one GPU");
    auto rank0 = std::make_unique<AlphaZeroTrainer>(project, std::move(backend), DataParallelRank{parallel.communicator, parallel.fault});
    return std::make_unique<LeadingRank>(std::move(rank0), *parallel.communicator);
  }
  if (parallel.ranks > 1) return std::make_unique<DataParallelTrainer>(project, std::move(backend), parallel);
  if (project.algorithm == "ppo") return std::make_unique<PpoTrainer>(project, std::move(backend));
  return std::make_unique<AlphaZeroTrainer>(project, std::move(backend));
}

std::optional<std::string> trainingProblem(const project::Project& project) {
  if (project.algorithm == "ppo") return ppoConfigurationProblem(project);
  return refuseIfTooLarge(estimateTrainerMemory(project, params::readTrainParams(project.parameters).evalGames), availableMemory());
}

}  // namespace cas::train
