#pragma once
// Single-agent environments as PPO steps them: a batch of independent copies, each stepped,
// observed and reset on its own. The CPU twins (CartPole, ...) implement it; the catalogue
// (environments.hpp) says which environment has one, and so which ones PPO can train on.
// Thread-safety: distinct copies may be stepped from distinct threads.
#include <cstdint>
#include <string>
#include <vector>

namespace cas::env {

struct StepResult {
  float reward;
  bool terminated;  // the episode ended in a terminal state (no value beyond it)
  bool truncated;   // the episode was cut by a time limit (the state still has a value)
};

class SingleAgentEnvironments {
 public:
  virtual ~SingleAgentEnvironments() = default;
  virtual int size() const = 0;
  // A new episode in copy `env`, drawn from that copy's own generator.
  virtual void reset(int env) = 0;
  // One step; after an episode ends the copy stays in its last state until reset.
  virtual StepResult step(int env, int action) = 0;
  // The observation of copy `env` (the catalogue's observation shape, flattened).
  virtual void observe(int env, float* out) const = 0;
  // What a copy's state holds beyond its observation, as named numbers a recorded episode keeps
  // frame by frame for the studio's Episode dock (trading: the position and the profits, which
  // the observation does not show): the names, then a copy's values in their order. None by
  // default.
  virtual std::vector<std::string> scalarNames() const { return {}; }
  virtual std::vector<float> scalars(int /*env*/) const { return {}; }
};

}  // namespace cas::env
