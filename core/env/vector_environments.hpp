#pragma once
// A batch of copies of one single-agent environment stepped together where a backend keeps
// them (the CUDA backend: device memory and kernels, gpu/env), which exec::DeviceServices::
// createEnvironments hands out. Each copy is seeded as the CPU twin's copy of the same index
// (GameRandom::forGame(seed, copy)), steps by the same rules (the twins' CAS_HD functions), and
// is reset as soon as its episode ends, as PPO's rollout resets the CPU twins; so the CPU twins
// (single_agent.hpp) are the spec the device copies are checked against, copy for copy.
// Thread-safety: one thread drives a batch.
#include <cstdint>

namespace cas::env {

class VectorEnvironments {
 public:
  virtual ~VectorEnvironments() = default;
  virtual int size() const = 0;
  virtual int observationSize() const = 0;
  virtual int actionCount() const = 0;

  // One step of every copy with `actions` (host memory, one per copy): each copy's reward and
  // how its episode ended, if it did (host memory, one per copy); then each copy whose episode
  // ended is reset.
  virtual void step(const int* actions, float* rewards, std::uint8_t* terminated, std::uint8_t* truncated) = 0;
  // Every copy's observation, [size][observationSize], into host memory.
  virtual void observe(float* observations) = 0;

  // `steps` steps of every copy with uniformly random actions (copy g draws from
  // GameRandom::forGame(actionSeed, g)), each step followed by the observation of every copy
  // written into one batch as a policy would read it; nothing crosses to the host until the end.
  // What `cuda-agent bench env` times (`seconds`: measured where the copies live).
  struct RandomRun {
    double reward = 0;          // summed over copies and steps
    std::int64_t episodes = 0;  // episodes that ended (each reset at once)
    double seconds = 0;
  };
  virtual RandomRun stepRandomly(int steps, std::uint64_t actionSeed) = 0;
};

}  // namespace cas::env
