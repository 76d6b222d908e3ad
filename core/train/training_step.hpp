#pragma once
// The training phase of an iteration: steps of the update graph (update.hpp) on batches drawn
// from the replay store. The steps are queued a few at a time, so that self-play's moves can be
// queued between them (on a GPU the two then run side by side), and the loss terms, which the
// update graph sums in place, are read once at the end: no step waits for another. On a
// data-parallel rank the phase trains only when every rank's store holds a batch, and reports
// the loss averaged over the ranks.
// Thread-safety: driven by the thread that drives the Updater (the engine thread).
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "core/params/run_params.hpp"
#include "core/search/replay_store.hpp"
#include "core/train/reports.hpp"
#include "core/train/update.hpp"

namespace cas::train {

OptimizerConfig optimizerConfig(const params::TrainParams& p);

// What TrainingPhase::finish throws when the loss stopped being finite: its message blames the
// step size (the learning rate, the clipping); the trainer, which can look at the data the steps
// drew and at the network's outputs on it, may say better (AlphaZeroTrainer::lossNotFinite).
struct LossNotFinite : std::runtime_error {
  LossNotFinite(const std::string& message, double loss) : std::runtime_error(message), loss(loss) {}
  double loss;
};

// What a run that stops in iteration `iterationsDone` + 1 keeps, for the end of its message: its
// last checkpoint, or, stopped in its first iteration, none (a message that claimed a checkpoint
// sent the user to a --resume that had nothing to resume).
inline std::string checkpointKept(std::int64_t iterationsDone) {
  return iterationsDone > 0 ? " (the last checkpoint is kept)" : " (no checkpoint was written: nothing of the run can be resumed)";
}

class TrainingPhase {
 public:
  // `steps` updates on batches of `batch` samples, each drawn from `store` with a seed taken
  // from `rng` as the step is queued; none while the store's ring holds fewer than one batch.
  TrainingPhase(Updater& updater, search::ReplayStore& store, std::int64_t steps, std::int64_t batch, std::mt19937_64& rng);

  bool training() const { return steps_ > 0; }
  std::int64_t remaining() const { return steps_ - queued_; }
  // Queues up to `count` more steps.
  void enqueue(std::int64_t count);
  // Queues the rest, waits for them and fills the report's training figures. Throws
  // LossNotFinite, naming iteration + 1 and the parameters to lower, when the loss stopped being
  // finite.
  void finish(std::int64_t iteration, IterationReport& report);

 private:
  using Clock = std::chrono::steady_clock;
  Updater& updater_;
  search::ReplayStore& store_;
  std::int64_t steps_, batch_, queued_ = 0;
  std::mt19937_64& rng_;
  std::optional<double> deviceStart_;  // the training program's device seconds before the phase
  double hostSeconds_ = 0;             // spent queueing (all of it, where steps run on the host)
};

}  // namespace cas::train
