#pragma once
// PPO's rollout: N copies of an environment stepped T times with the inference program's
// policy, the advantages of what they collected, and minibatches of it put into the update
// program's inputs. PpoTrainer drives one Rollout and does not know where it runs:
// - HostRollout (host_rollout.hpp): the environments' CPU twins, the arrays in host memory; the
//   spec;
// - a backend's device rollout (exec::DeviceServices::createRollout; the CUDA backend's is
//   gpu/env/device_rollout.cpp): the device twins, the arrays, the advantages and the
//   minibatches never cross to the host. A kernel samples the actions (ppo_math.hpp, with the
//   generators the host rollout would use); the same seeds give the same rollout
//   (tests/gpu/test_device_rollout.cpp).
// Both: an episode cut by a time limit gains gamma * V(final observation) in its last reward.
//
//   rollout arrays, [T][N] (step t of copy e at t * N + e; observations with [obs] more):
//   obs | actions | log_probs | values | rewards | dones | advantages | returns;  last values [N]
//
// Thread-safety: one thread drives a rollout (the engine thread), as the trainer.
#include <cstdint>
#include <string>
#include <vector>

#include "core/env/environments.hpp"
#include "core/env/game_random.hpp"
#include "core/exec/backend.hpp"

namespace cas::train {

struct RolloutSetup {
  std::string environment;             // a catalogue name with a device twin
  std::int64_t envs = 0, steps = 0;    // N copies, T steps per rollout
  std::uint64_t environmentSeed = 0;   // copy e seeded as the CPU twin's copy e
  std::vector<env::GameRandom> actionRandom;  // [N]: each copy's action draws, from here on
  exec::Executable* inference = nullptr;  // batch N: input "obs"; outputs "logits" [N][A], "value" [N]
  exec::Executable* update = nullptr;     // minibatch rows: inputs obs, actions, old_log_probs, old_values, advantages, returns
  std::int64_t minibatch = 0;
  env::EnvironmentData data;  // the project's price series, for a trading environment
};

// The episodes that ended during one rollout.
struct RolloutEpisodes {
  std::int64_t episodes = 0;
  double returnSum = 0, lengthSum = 0;
};

struct RolloutArrays {
  std::vector<float> obs, actions, logProbs, values, rewards, dones, advantages, returns, lastValues;
};

class Rollout {
 public:
  virtual ~Rollout() = default;
  // T steps of every copy with the inference program's current weights.
  virtual RolloutEpisodes collect(double gamma) = 0;
  // Advantages and value targets of the rollout just collected.
  virtual void estimateAdvantages(double gamma, double lambda) = 0;
  // Rows `rows` (count = the setup's minibatch, indices into [T][N]) into the update program's inputs.
  virtual void gather(const std::int64_t* rows) = 0;
  // The arrays on the host (tests, checks); waits for the device.
  virtual RolloutArrays read() const = 0;
};

}  // namespace cas::train
