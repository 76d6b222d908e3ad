#include "core/train/host_rollout.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "core/env/environments.hpp"
#include "core/train/ppo_math.hpp"

namespace cas::train {

using ppo_math::logSumExp;
using ppo_math::sampleAction;

HostRollout::HostRollout(const RolloutSetup& setup) : setup_(setup) {
  const env::EnvironmentInfo* info = env::findEnvironment(setup.environment);
  if (!info || !info->singleAgent) throw std::invalid_argument("'" + setup.environment + "' is not a single-agent environment");
  actions_ = info->actionCount;
  obs_ = std::size_t(std::accumulate(info->observationShape.begin(), info->observationShape.end(), 1, std::multiplies<>()));
  const auto n = std::size_t(setup.envs), rows = n * std::size_t(setup.steps);
  envs_ = info->singleAgent(int(n), setup.environmentSeed, setup.data);
  observations_.assign(n * obs_, 0);
  for (std::size_t e = 0; e < n; ++e) envs_->observe(int(e), &observations_[e * obs_]);
  episodeReturn_.assign(n, 0);
  episodeLength_.assign(n, 0);
  obsRows_.assign(rows * obs_, 0);
  for (auto* v : {&actionRows_, &logProbs_, &values_, &rewards_, &dones_}) v->assign(rows, 0);
  minibatch_.assign(std::size_t(setup.minibatch) * (obs_ + 5), 0);
}

void HostRollout::forward(const std::vector<float>& observations, std::vector<float>* logits, std::vector<float>* values) {
  exec::Executable& inference = *setup_.inference;
  inference.setInput("obs", observations.data(), observations.size());
  inference.run();
  if (logits) {
    logits->resize(std::size_t(setup_.envs) * std::size_t(actions_));
    inference.readOutput("logits", logits->data(), logits->size());
  }
  if (values) {
    values->resize(std::size_t(setup_.envs));
    inference.readOutput("value", values->data(), values->size());
  }
}

void HostRollout::step(std::int64_t t, int e, const float* logits, float value, RolloutEpisodes& ended, std::vector<float>& finalObservations,
                       std::vector<bool>& truncated) {
  const auto copy = std::size_t(e);
  const double normaliser = logSumExp(logits, actions_);
  const int action = sampleAction(logits, actions_, normaliser, setup_.actionRandom[copy]);
  const std::size_t i = std::size_t(t) * std::size_t(setup_.envs) + copy;
  actionRows_[i] = float(action);
  logProbs_[i] = float(double(logits[action]) - normaliser);
  values_[i] = value;
  const env::StepResult result = envs_->step(e, action);
  rewards_[i] = result.reward;
  dones_[i] = result.terminated || result.truncated ? 1.0f : 0.0f;
  episodeReturn_[copy] += result.reward;
  ++episodeLength_[copy];
  if (result.truncated) {
    envs_->observe(e, &finalObservations[copy * obs_]);
    truncated[copy] = true;
  }
  if (result.terminated || result.truncated) {
    ended.returnSum += episodeReturn_[copy];
    ended.lengthSum += double(episodeLength_[copy]);
    ++ended.episodes;
    episodeReturn_[copy] = 0;
    episodeLength_[copy] = 0;
    envs_->reset(e);
  }
  envs_->observe(e, &observations_[copy * obs_]);
}

RolloutEpisodes HostRollout::collect(double gamma) {
  const int n = int(setup_.envs);
  std::vector<float> logits, values, finalObservations(observations_.size()), finalValues;
  std::vector<bool> truncated(static_cast<std::size_t>(n));
  RolloutEpisodes ended;
  for (std::int64_t t = 0; t < setup_.steps; ++t) {
    forward(observations_, &logits, &values);
    const std::size_t row = std::size_t(t) * std::size_t(n);
    std::copy(observations_.begin(), observations_.end(), obsRows_.begin() + std::ptrdiff_t(row * obs_));
    std::fill(truncated.begin(), truncated.end(), false);
    for (int e = 0; e < n; ++e) step(t, e, &logits[std::size_t(e) * std::size_t(actions_)], values[std::size_t(e)], ended, finalObservations, truncated);
    if (std::find(truncated.begin(), truncated.end(), true) != truncated.end()) {
      // One more batch through the policy for the cut episodes' last states.
      forward(finalObservations, nullptr, &finalValues);
      for (int e = 0; e < n; ++e)
        if (truncated[std::size_t(e)]) rewards_[row + std::size_t(e)] += float(gamma * double(finalValues[std::size_t(e)]));
    }
  }
  forward(observations_, nullptr, &lastValues_);
  return ended;
}

void HostRollout::estimateAdvantages(double gamma, double lambda) {
  gae_ = computeGae(rewards_, values_, dones_, lastValues_, setup_.steps, setup_.envs, gamma, lambda);
}

void HostRollout::gather(const std::int64_t* rows) {
  const auto m = std::size_t(setup_.minibatch);
  float* o = minibatch_.data();
  float *actions = o + m * obs_, *logProbs = actions + m, *values = logProbs + m, *advantages = values + m, *returns = advantages + m;
  for (std::size_t j = 0; j < m; ++j) {
    const auto i = std::size_t(rows[j]);
    std::copy_n(&obsRows_[i * obs_], obs_, o + j * obs_);
    actions[j] = actionRows_[i];
    logProbs[j] = logProbs_[i];
    values[j] = values_[i];
    advantages[j] = gae_.advantages[i];
    returns[j] = gae_.returns[i];
  }
  exec::Executable& update = *setup_.update;
  update.setInput("obs", o, m * obs_);
  update.setInput("actions", actions, m);
  update.setInput("old_log_probs", logProbs, m);
  update.setInput("old_values", values, m);
  update.setInput("advantages", advantages, m);
  update.setInput("returns", returns, m);
}

RolloutArrays HostRollout::read() const {
  return {obsRows_, actionRows_, logProbs_, values_, rewards_, dones_, gae_.advantages, gae_.returns, lastValues_};
}

}  // namespace cas::train
