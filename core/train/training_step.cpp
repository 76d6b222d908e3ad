#include "core/train/training_step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/train/gradient_exchange.hpp"

namespace cas::train {

OptimizerConfig optimizerConfig(const params::TrainParams& p) {
  OptimizerConfig c;
  c.kind = p.optimizer;
  c.learningRate = float(p.learningRate);
  c.momentum = float(p.momentum);
  c.gradClip = float(p.gradClip);
  c.weightDecay = float(p.weightDecay);
  return c;
}

namespace {

// Whether this phase trains: when the store holds a batch, and in data-parallel training when
// every rank's store does (the ranks take their steps together).
bool canTrain(Updater& updater, const search::ReplayStore& store, std::int64_t batch) {
  const bool here = store.size() >= batch;
  return updater.exchange() ? updater.exchange()->everyRank(here) : here;
}

}  // namespace

TrainingPhase::TrainingPhase(Updater& updater, search::ReplayStore& store, std::int64_t steps, std::int64_t batch, std::mt19937_64& rng)
    : updater_(updater), store_(store), steps_(canTrain(updater, store, batch) ? steps : 0), batch_(batch), rng_(rng) {
  if (!training()) return;
  deviceStart_ = updater_.executable().deviceSeconds();
  updater_.resetLossSums();
}

void TrainingPhase::enqueue(std::int64_t count) {
  const auto start = Clock::now();
  for (std::int64_t i = 0; i < count && queued_ < steps_; ++i, ++queued_) {
    store_.sample(batch_, rng_(), updater_.executable());
    updater_.enqueueStep();
  }
  hostSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
}

void TrainingPhase::finish(std::int64_t iteration, IterationReport& report) {
  report.batchSize = batch_;
  if (!training()) return;
  enqueue(remaining());
  const auto start = Clock::now();
  LossSums sums = updater_.lossSums();  // waits for the last step
  hostSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  if (GradientExchange* exchange = updater_.exchange()) exchange->averageLossSums(sums);  // the loss over every rank's batches
  const std::optional<double> deviceEnd = updater_.executable().deviceSeconds();
  report.trainSeconds = deviceStart_ && deviceEnd ? *deviceEnd - *deviceStart_ : hostSeconds_;
  report.trainingSteps = steps_;
  if (!std::isfinite(sums.total))
    throw LossNotFinite("the loss became " + std::string(std::isnan(sums.total) ? "NaN" : "infinite") + " in iteration " + std::to_string(iteration + 1) +
                            "; lower train.learning_rate or clip harder with a smaller train.grad_clip (the last checkpoint is kept)",
                        sums.total);
  const auto n = double(steps_);
  report.loss = float(sums.total / n);
  report.policyLoss = float(sums.term("policy") / n);
  report.valueLoss = float(sums.term("value") / n);
  report.l2 = float(sums.term("l2") / n);
  report.entropy = float(sums.term("entropy") / n);
}

}  // namespace cas::train
