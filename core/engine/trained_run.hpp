#pragma once
// Opening an existing run folder: its project (the run's own copies, see run_folder.hpp) with the
// recorded parameter values, a trainer on a given backend, restored from the newest checkpoint
// whose checksum holds. What `cuda-agent train --resume`/`--restart`, `eval`, `analyze` and
// `play` and the studio's Board load.
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

enum class RunUse {
  Read,     // playing, analysing, evaluating: the newest valid checkpoint is required; no lock
  Resume,   // training on: the lock, a valid checkpoint (else refused, the folder untouched), and
            // the logs cut back to it, the logged parameter changes applied again
  Restart,  // training again: the lock; metrics, changes and checkpoints are discarded
};

struct OpenRunOptions {
  RunUse use = RunUse::Read;
  bool useProjectFiles = false;  // the project folder's current files instead of the run's copies
  std::int64_t checkpointIteration = 0;  // Read: this iteration's checkpoint instead of the newest valid one (0)
  bool singleAgent = false;  // Read: a run of a two-player game is refused before anything is loaded (eval --episodes)
  train::ParallelOptions parallel = {};   // Resume, Restart: the ranks that train on (any number, whatever the run had)
};

template <class T>
struct OpenedRun {
  std::unique_ptr<T> trainer;  // null when the run could not be opened
  std::optional<RunFolder> folder;
  std::filesystem::path checkpoint;  // the checkpoint restored; empty when there was none
  std::vector<std::string> skipped;  // checkpoints passed over, each with the reason
  std::vector<Diagnostic> notices;   // warnings and notes: project edits, repaired logs, ...
  Diagnostic error;                  // why trainer is null
};

// A run of any algorithm, with the trainer its project names (train::makeTrainer): what training
// on (--resume, --restart) and `eval` open.
OpenedRun<train::Trainer> openAnyRun(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, const OpenRunOptions& options);

// An AlphaZero run (analysis, play, the studio's Board and views): a run of another algorithm is
// refused with an error saying what it is.
using TrainedRun = OpenedRun<train::AlphaZeroTrainer>;
TrainedRun openTrainedRun(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, const OpenRunOptions& options);

}  // namespace cas::engine
