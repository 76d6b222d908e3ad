#pragma once
// PPO's rollout on the host (rollout.hpp): the environments' CPU twins stepped with the
// inference program's policy, the rollout's arrays in host memory, GAE on the host, and each
// minibatch copied into the update program's inputs. The spec the device rollout is held to.
//
//   rollout arrays, [T][N] (step t of copy e at t * N + e; observations with [obs] more):
//   obs | actions | log_probs | values | rewards | dones;  last values [N];  advantages, returns
//   minibatch staging: [obs rows | actions | log-probs | values | advantages | returns]
//
// Thread-safety: one thread drives a rollout (the engine thread).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/env/single_agent.hpp"
#include "core/train/gae.hpp"
#include "core/train/rollout.hpp"

namespace cas::train {

class HostRollout final : public Rollout {
 public:
  // Throws std::invalid_argument when setup.environment is not a single-agent environment.
  explicit HostRollout(const RolloutSetup& setup);

  RolloutEpisodes collect(double gamma) override;
  void estimateAdvantages(double gamma, double lambda) override;
  void gather(const std::int64_t* rows) override;
  RolloutArrays read() const override;

 private:
  // The policy on `observations_`-shaped input: logits [N][A] and values [N] when asked for.
  void forward(const std::vector<float>& observations, std::vector<float>* logits, std::vector<float>* values);
  // Copy e's step t with `action`: records it, steps the twin, ends and resets its episode.
  void step(std::int64_t t, int e, const float* logits, float value, RolloutEpisodes& ended, std::vector<float>& finalObservations,
            std::vector<bool>& truncated);

  RolloutSetup setup_;
  int actions_ = 0;
  std::size_t obs_ = 0;
  std::unique_ptr<env::SingleAgentEnvironments> envs_;
  std::vector<float> observations_;    // [N][obs]: what each copy shows now
  std::vector<double> episodeReturn_;  // per copy, the running episode's
  std::vector<std::int64_t> episodeLength_;
  std::vector<float> obsRows_, actionRows_, logProbs_, values_, rewards_, dones_, lastValues_;
  Advantages gae_;
  std::vector<float> minibatch_;
};

}  // namespace cas::train
