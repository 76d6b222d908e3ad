#pragma once
// PPO's rollout kept where a backend's device is (exec::DeviceServices::createRollout hands it out; the
// CUDA backend's is gpu/env/device_rollout.cpp): the environments' device twins, the rollout's
// arrays, the advantages and the minibatches never cross to the host. Each step the copies'
// observations go into the inference program's input, its logits and values come back to a
// kernel that samples the actions (ppo_math.hpp, with the generators the CPU rollout would use),
// steps the copies and resets those whose episode ended; an episode cut by a time limit gains
// gamma * V(final observation) in its last reward, as on the host. GAE runs on the device, and a
// minibatch is gathered from the rollout straight into the update program's inputs.
// PpoTrainer's host rollout (ppo.cpp, the CPU twins) is the spec: the same seeds give the same
// rollout (tests/gpu/test_device_rollout.cpp).
//
//   rollout arrays, [T][N] (step t of copy e at t * N + e; observations with [obs] more):
//   obs | actions | log_probs | values | rewards | dones | advantages | returns;  last values [N]
//
// Thread-safety: one thread drives a rollout (the engine thread), as the trainer.
#include <cstdint>
#include <string>
#include <vector>

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
};

// The episodes that ended during one rollout.
struct RolloutEpisodes {
  std::int64_t episodes = 0;
  double returnSum = 0, lengthSum = 0;
};

struct RolloutArrays {
  std::vector<float> obs, actions, logProbs, values, rewards, dones, advantages, returns, lastValues;
};

class DeviceRollout {
 public:
  virtual ~DeviceRollout() = default;
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
