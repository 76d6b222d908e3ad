#pragma once
// Opening an existing run folder: its project with the recorded parameter values, a trainer on a
// given backend, restored from the newest checkpoint whose checksum holds. What `cuda-agent
// train --resume`, `eval`, `analyze` and `play` and the studio's Play panel load.
// Thread-safety: openTrainedRun may run on any thread; the trainer it returns is then driven by
// one thread at a time.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/run_folder.hpp"
#include "core/exec/backend.hpp"
#include "core/train/alphazero.hpp"

namespace cas::engine {

enum class CheckpointNeed {
  Required,  // playing, analysing, evaluating: a run without a checkpoint is refused
  Optional,  // resuming training: a run without one starts from fresh weights
};

struct TrainedRun {
  std::unique_ptr<train::AlphaZeroTrainer> trainer;  // null when the run could not be opened
  std::optional<RunFolder> folder;
  std::filesystem::path checkpoint;  // the checkpoint restored; empty when there was none
  std::vector<std::string> skipped;  // checkpoints passed over, each with the reason
  std::string error;                 // why trainer is null
};

TrainedRun openTrainedRun(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, CheckpointNeed need);

}  // namespace cas::engine
