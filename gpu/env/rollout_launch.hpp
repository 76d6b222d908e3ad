#pragma once
// PPO's rollout kernels that do not depend on the environment (rollout_kernels.cu), over the
// rollout's [T][N] arrays (core/train/rollout.hpp draws them).
// Thread-safety: launches go to the stream given.
#include <cuda.h>

#include <cstdint>

namespace cas::gpu::env {

struct RolloutArraysOnDevice {
  float *obs, *actions, *logProbs, *values, *rewards, *dones, *advantages, *returns, *lastValues;
};

// The update program's minibatch inputs.
struct MinibatchInputs {
  float *obs, *actions, *oldLogProbs, *oldValues, *advantages, *returns;
};

// rewards[e] += gamma * finalValues[e] where truncated[e] (one step's row).
void launchBootstrap(float* rewards, const std::uint8_t* truncated, const float* finalValues, double gamma, int count, CUstream s);
// GAE(lambda) down each of the N columns (core/train/ppo_math.hpp's gaeColumn).
void launchGae(RolloutArraysOnDevice a, std::int64_t steps, std::int64_t envs, double gamma, double lambda, CUstream s);
// Rows `rows[j]` (j < count) of the rollout into the minibatch inputs.
void launchGather(RolloutArraysOnDevice a, const std::int64_t* rows, std::int64_t count, int observationSize, MinibatchInputs out, CUstream s);

}  // namespace cas::gpu::env
