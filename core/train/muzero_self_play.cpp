#include "core/train/muzero_self_play.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/search/replay_draw.hpp"

namespace cas::train {

MuZeroSelfPlay::MuZeroSelfPlay(env::SingleAgentEnvironments& envs, search::LearnedSearch& search, EpisodeReplay& replay, float temperature,
                               std::uint64_t seed)
    : envs_(envs), search_(search), replay_(replay), temperature_(temperature), seed_(seed) {
  if (envs.size() != search.games())
    throw std::invalid_argument("MuZero's self-play needs one search game per environment copy: " + std::to_string(envs.size()) +
                                " copies, " + std::to_string(search.games()) + " games");
  if (!(temperature >= 0)) throw std::invalid_argument("MuZero's self-play temperature must be 0 or more");
  running_.resize(size_t(envs.size()));
  returns_.assign(size_t(envs.size()), 0.0);
  for (int c = 0; c < envs.size(); ++c) envs_.reset(c);
}

// visits^(1/T) sampled with the copy's draw; the search's choice at T = 0 or with no visits.
int MuZeroSelfPlay::choose(const search::RootStats& root, int copy) {
  const std::uint64_t draw = search::replayDraw(seed_, draws_ * std::uint64_t(envs_.size()) + std::uint64_t(copy));
  if (temperature_ <= 0) return root.played;
  std::vector<double> weight(root.visits.size());
  for (size_t a = 0; a < weight.size(); ++a)
    weight[a] = root.visits[a] > 0 ? std::pow(double(root.visits[a]), 1.0 / double(temperature_)) : 0.0;
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  if (!(total > 0) || !std::isfinite(total)) return root.played;
  double u = double(draw >> 11) * 0x1.0p-53 * total;
  for (size_t a = 0; a < weight.size(); ++a)
    if ((u -= weight[a]) < 0) return int(a);
  return root.played;  // rounding left u at the top: the search's choice
}

void MuZeroSelfPlay::record(int copy, const float* observation, const search::RootStats& root, int action, float reward) {
  Episode& e = running_[size_t(copy)];
  const int o = replay_.setup().observationSize;
  e.observations.insert(e.observations.end(), observation, observation + o);
  e.actions.push_back(action);
  e.rewards.push_back(reward);
  e.policies.insert(e.policies.end(), root.policy.begin(), root.policy.end());
  e.values.push_back(root.value);
  returns_[size_t(copy)] += reward;
}

void MuZeroSelfPlay::step() {
  const int copies = envs_.size(), o = replay_.setup().observationSize;
  std::vector<float> observations(size_t(copies) * size_t(o));
  for (int c = 0; c < copies; ++c) envs_.observe(c, observations.data() + size_t(c) * size_t(o));
  std::vector<int> all(static_cast<size_t>(copies));
  std::iota(all.begin(), all.end(), 0);
  search_.search(all, observations.data());
  const std::vector<search::RootStats> roots = search_.rootStats(all);
  for (int c = 0; c < copies; ++c) {
    const int action = choose(roots[size_t(c)], c);
    const env::StepResult r = envs_.step(c, action);
    record(c, observations.data() + size_t(c) * size_t(o), roots[size_t(c)], action, r.reward);
    stats_.moves += 1;
    // An episode as long as the replay's capacity ends there: the replay could not keep more of it.
    const bool full = running_[size_t(c)].length() >= replay_.setup().capacity;
    if (!r.terminated && !r.truncated && !full) continue;
    stats_.episodes += 1;
    stats_.returnSum += returns_[size_t(c)];
    stats_.lengthSum += running_[size_t(c)].length();
    replay_.add(std::move(running_[size_t(c)]));
    running_[size_t(c)] = Episode{};
    returns_[size_t(c)] = 0;
    envs_.reset(c);
  }
  draws_ += 1;
}

}  // namespace cas::train
