#include "core/engine/trained_run.hpp"

#include <stdexcept>

namespace cas::engine {

TrainedRun openTrainedRun(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, CheckpointNeed need) {
  TrainedRun out;
  project::Project project;
  out.folder = RunFolder::open(dir, &project, &out.error);
  if (!out.folder) return out;
  std::unique_ptr<train::AlphaZeroTrainer> trainer;
  try {
    trainer = std::make_unique<train::AlphaZeroTrainer>(project, std::move(backend));
  } catch (const std::exception& e) {  // the run's policy no longer compiles
    out.error = e.what();
    return out;
  }
  std::string name;
  const std::optional<std::string> bytes = out.folder->newestCheckpoint(&out.skipped, &name);
  if (bytes) {
    if (!trainer->restore(*bytes, &out.error)) {
      out.error = "checkpoint " + name + " cannot be used: " + out.error;
      return out;
    }
    out.checkpoint = out.folder->path() / "checkpoints" / name;
  } else if (need == CheckpointNeed::Required) {
    out.error = dir.string() + " has no valid checkpoint yet";
    return out;
  }
  out.trainer = std::move(trainer);
  return out;
}

}  // namespace cas::engine
