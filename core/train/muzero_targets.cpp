#include "core/train/muzero_targets.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/search/replay_draw.hpp"

namespace cas::train {
namespace {

void checkSize(const std::string& field, std::size_t got, std::int64_t want) {
  if (std::int64_t(got) != want)
    throw std::invalid_argument("the episode's " + field + " hold " + std::to_string(got) + " values, but its length needs " +
                                std::to_string(want));
}

void checkSetup(const MuZeroTargetSetup& s) {
  if (s.observationSize <= 0 || s.actions <= 0)
    throw std::invalid_argument("MuZero's targets need an observation size and actions above 0");
  if (s.unrollSteps < 1 || s.tdSteps < 1) throw std::invalid_argument("MuZero's targets need unroll and TD steps of at least 1");
  if (!(s.discount > 0 && s.discount <= 1)) throw std::invalid_argument("MuZero's discount must be in (0, 1]");
  if (s.capacity < 1) throw std::invalid_argument("MuZero's replay needs a capacity of at least one position");
}

// What an episode may hold: a reward or root value far beyond any environment's (whose squared
// scaled target would overflow the loss), a visit distribution that does not sum to 1, or an
// observation that is not a finite number come only from an altered checkpoint.
constexpr float kMaxMagnitude = 1e9f;
constexpr double kDistributionTolerance = 1e-3;

void checkStep(const MuZeroTargetSetup& s, const Episode& e, std::int64_t i) {
  const std::string step = " at step " + std::to_string(i);
  if (e.actions[size_t(i)] < 0 || e.actions[size_t(i)] >= s.actions)
    throw std::invalid_argument("the episode's action " + std::to_string(i) + " is " + std::to_string(e.actions[size_t(i)]) +
                                ", outside 0-" + std::to_string(s.actions - 1));
  if (!(std::abs(e.rewards[size_t(i)]) <= kMaxMagnitude) || !(std::abs(e.values[size_t(i)]) <= kMaxMagnitude))
    throw std::invalid_argument("the episode's reward or root value" + step + " is not a finite number of at most 1e9 in size");
  double sum = 0;
  for (std::int64_t a = 0; a < s.actions; ++a) {
    const float p = e.policies[size_t(i * s.actions + a)];
    if (!(p >= 0 && p <= 1)) throw std::invalid_argument("the episode's visit distribution" + step + " holds a value outside [0, 1]");
    sum += p;
  }
  if (std::abs(sum - 1.0) > kDistributionTolerance)
    throw std::invalid_argument("the episode's visit distribution" + step + " sums to " + std::to_string(sum) + ", not 1");
  for (std::int64_t o = 0; o < s.observationSize; ++o)
    if (!std::isfinite(e.observations[size_t(i * s.observationSize + o)]))
      throw std::invalid_argument("the episode's observation" + step + " holds a value that is not a finite number");
}

void checkEpisode(const MuZeroTargetSetup& s, const Episode& e) {
  const std::int64_t t = e.length();
  if (t < 1) throw std::invalid_argument("an episode needs at least one step");
  checkSize("observations", e.observations.size(), t * s.observationSize);
  checkSize("rewards", e.rewards.size(), t);
  checkSize("policies", e.policies.size(), t * s.actions);
  checkSize("values", e.values.size(), t);
  for (std::int64_t i = 0; i < t; ++i) checkStep(s, e, i);
}

}  // namespace

void MuZeroBatch::setInputs(exec::Executable& training) const {
  training.setInput("obs", obs.data(), obs.size());
  training.setInput("actions", actions.data(), actions.size());
  training.setInput("policy_targets", policyTargets.data(), policyTargets.size());
  training.setInput("value_targets", valueTargets.data(), valueTargets.size());
  training.setInput("reward_targets", rewardTargets.data(), rewardTargets.size());
}

EpisodeReplay::EpisodeReplay(MuZeroTargetSetup setup) : setup_(setup) { checkSetup(setup_); }

void EpisodeReplay::add(Episode episode) {
  checkEpisode(setup_, episode);
  positions_ += episode.length();
  episodes_.push_back(std::move(episode));
  while (positions_ > setup_.capacity && episodes_.size() > 1) {
    positions_ -= episodes_.front().length();
    episodes_.pop_front();
  }
}

// z = sum_{j < n} gamma^j r_{i+j} + gamma^n v_{i+n} (inside the episode only).
float EpisodeReplay::valueTarget(const Episode& e, std::int64_t i) const {
  const std::int64_t end = e.length(), bootstrap = i + setup_.tdSteps;
  double value = bootstrap < end ? double(e.values[size_t(bootstrap)]) * std::pow(double(setup_.discount), setup_.tdSteps) : 0.0;
  double weight = 1.0;
  for (std::int64_t j = i; j < std::min(bootstrap, end); ++j, weight *= setup_.discount) value += weight * double(e.rewards[size_t(j)]);
  return float(value);
}

void EpisodeReplay::writeTargets(const Episode& e, std::int64_t t, std::uint64_t draw, MuZeroBatch& out, std::int64_t row) const {
  const std::int64_t end = e.length(), k = setup_.unrollSteps, a = setup_.actions, o = setup_.observationSize;
  std::copy_n(e.observations.begin() + t * o, o, out.obs.begin() + row * o);
  for (std::int64_t step = 0; step <= k; ++step) {
    const std::int64_t i = t + step;
    float* policy = out.policyTargets.data() + (row * (k + 1) + step) * a;
    if (i < end)
      std::copy_n(e.policies.begin() + i * a, a, policy);
    else
      std::fill_n(policy, a, 0.0f);
    out.valueTargets[size_t(row * (k + 1) + step)] = i < end ? valueTarget(e, i) : 0.0f;
    if (step == 0) continue;
    out.rewardTargets[size_t(row * k + step - 1)] = i <= end ? e.rewards[size_t(i - 1)] : 0.0f;
    const std::int64_t action =
        i - 1 < end ? e.actions[size_t(i - 1)] : std::int64_t(search::replayDraw(draw, std::uint64_t(step)) % std::uint64_t(a));
    float* oneHot = out.actions.data() + (row * k + step - 1) * a;
    std::fill_n(oneHot, a, 0.0f);
    oneHot[action] = 1.0f;
  }
}

MuZeroBatch EpisodeReplay::sample(std::int64_t batch, std::uint64_t seed) const {
  if (positions_ == 0) throw std::logic_error("MuZero's replay holds no episode to sample");
  if (batch < 1) throw std::invalid_argument("MuZero's batch must hold at least one position, not " + std::to_string(batch));
  const std::int64_t k = setup_.unrollSteps, a = setup_.actions;
  MuZeroBatch out;
  out.batch = batch;
  out.obs.resize(size_t(batch * setup_.observationSize));
  out.actions.resize(size_t(batch * k * a));
  out.policyTargets.resize(size_t(batch * (k + 1) * a));
  out.valueTargets.resize(size_t(batch * (k + 1)));
  out.rewardTargets.resize(size_t(batch * k));
  std::vector<std::int64_t> starts;  // each episode's first position
  starts.reserve(episodes_.size());
  std::int64_t next = 0;
  for (const Episode& e : episodes_) {
    starts.push_back(next);
    next += e.length();
  }
  for (std::int64_t row = 0; row < batch; ++row) {
    // Modulo over at most 2^63 positions: a bias below 2^-40 for any buffer that fits in memory.
    const auto position = std::int64_t(search::replayDraw(seed, std::uint64_t(2 * row)) % std::uint64_t(positions_));
    const size_t episode = size_t(std::upper_bound(starts.begin(), starts.end(), position) - starts.begin()) - 1;
    writeTargets(episodes_[episode], position - starts[episode], search::replayDraw(seed, std::uint64_t(2 * row + 1)), out, row);
  }
  return out;
}

}  // namespace cas::train
