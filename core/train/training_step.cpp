#include "core/train/training_step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace cas::train {
namespace {

// A loss term: a mean, whose one element is read at the shape the graph gives it.
float scalarOutput(const exec::Executable& exe, const std::string& name) {
  const ir::Graph& g = exe.graph();
  std::vector<float> v(size_t(ir::numel(g.node(g.output(name)).shape)));
  exe.readOutput(name, v.data(), v.size());
  return v[0];
}

}  // namespace

OptimizerConfig optimizerConfig(const params::TrainParams& p) {
  OptimizerConfig c;
  c.kind = p.optimizer;
  c.learningRate = float(p.learningRate);
  c.momentum = float(p.momentum);
  c.gradClip = float(p.gradClip);
  c.weightDecay = float(p.weightDecay);
  return c;
}

void trainSteps(Updater& updater, const ReplayBuffer& buffer, const env::BoardGames& game, std::int64_t steps, std::int64_t batch,
                std::mt19937_64& rng, std::int64_t iteration, IterationReport& report) {
  report.batchSize = batch;
  if (buffer.size() < batch) return;
  report.trainingSteps = steps;
  const auto obsSize = size_t(buffer.observationSize()), actions = size_t(buffer.actions());
  std::vector<float> obs(size_t(batch) * obsSize), policy(size_t(batch) * actions), value(static_cast<size_t>(batch));
  exec::Executable& exe = updater.executable();
  const bool hasL2 = exe.graph().output("loss/l2") != ir::kNoNode;
  double loss = 0, pl = 0, vl = 0, l2 = 0, ent = 0;
  for (std::int64_t s = 0; s < steps; ++s) {
    buffer.sample(batch, game, rng, obs.data(), policy.data(), value.data());
    exe.setInput("obs", obs.data(), obs.size());
    exe.setInput("policy_targets", policy.data(), policy.size());
    exe.setInput("value_targets", value.data(), value.size());
    const float stepLoss = updater.step();
    if (!std::isfinite(stepLoss))
      throw std::runtime_error("the loss became " + std::string(std::isnan(stepLoss) ? "NaN" : "infinite") + " in iteration " +
                               std::to_string(iteration + 1) + "; lower train.learning_rate or clip harder with a smaller train.grad_clip (the last checkpoint is kept)");
    loss += stepLoss;
    pl += scalarOutput(exe, "loss/policy");
    vl += scalarOutput(exe, "loss/value");
    ent += scalarOutput(exe, "loss/entropy");
    if (hasL2) l2 += scalarOutput(exe, "loss/l2");
  }
  const auto n = double(std::max<std::int64_t>(1, steps));
  report.loss = float(loss / n);
  report.policyLoss = float(pl / n);
  report.valueLoss = float(vl / n);
  report.l2 = float(l2 / n);
  report.entropy = float(ent / n);
}

}  // namespace cas::train
