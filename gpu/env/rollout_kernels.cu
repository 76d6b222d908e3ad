// PPO's rollout kernels that do not depend on the environment (environment_kernels.cu steps the
// copies). Each is the host rollout's loop (core/train/ppo.cpp, gae.cpp) with one thread per
// element.
//
//   kernel          threads                      computes
//   ppo_bootstrap   per copy                     a cut episode's last reward += gamma * V(final)
//   ppo_gae         per copy (column of [T][N])  advantages and value targets, t = T-1 .. 0
//   ppo_gather      per row x (obs + 5)          a minibatch's rows into the update's inputs
// 256-thread blocks; the gather is a copy bound by memory, grid-stride.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/train/ppo_math.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/env/rollout_launch.hpp"

namespace cas::gpu::env {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(std::int64_t work) { return unsigned(std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1, 1 << 20)); }
cudaStream_t stream(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

void checkLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string(kernel) + " did not launch: " + cudaGetErrorString(e));
}

__global__ void bootstrapKernel(float* rewards, const std::uint8_t* truncated, const float* finalValues, double gamma, int count) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < count && truncated[e]) rewards[e] += float(gamma * double(finalValues[e]));
}

__global__ void gaeKernel(RolloutArraysOnDevice a, std::int64_t steps, std::int64_t envs, double gamma, double lambda) {
  const std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (e < envs) cas::train::ppo_math::gaeColumn(a.rewards, a.values, a.dones, a.lastValues[e], steps, envs, e, gamma, lambda, a.advantages, a.returns);
}

__global__ void gatherKernel(RolloutArraysOnDevice a, const std::int64_t* rows, std::int64_t count, int obs, MinibatchInputs out) {
  const std::int64_t width = obs + 5;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < count * width; idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t j = idx / width, col = idx % width, i = rows[j];
    if (col < obs) out.obs[j * obs + col] = a.obs[i * obs + col];
    else if (col == obs) out.actions[j] = a.actions[i];
    else if (col == obs + 1) out.oldLogProbs[j] = a.logProbs[i];
    else if (col == obs + 2) out.oldValues[j] = a.values[i];
    else if (col == obs + 3) out.advantages[j] = a.advantages[i];
    else out.returns[j] = a.returns[i];
  }
}

}  // namespace

void launchBootstrap(float* rewards, const std::uint8_t* truncated, const float* finalValues, double gamma, int count, CUstream s) {
  bootstrapKernel<<<gridFor(count), kThreads, 0, stream(s)>>>(rewards, truncated, finalValues, gamma, count);
  checkLaunch("ppo_bootstrap");
}

void launchGae(RolloutArraysOnDevice a, std::int64_t steps, std::int64_t envs, double gamma, double lambda, CUstream s) {
  gaeKernel<<<gridFor(envs), kThreads, 0, stream(s)>>>(a, steps, envs, gamma, lambda);
  checkLaunch("ppo_gae");
}

void launchGather(RolloutArraysOnDevice a, const std::int64_t* rows, std::int64_t count, int observationSize, MinibatchInputs out, CUstream s) {
  gatherKernel<<<gridFor(count * (observationSize + 5)), kThreads, 0, stream(s)>>>(a, rows, count, observationSize, out);
  checkLaunch("ppo_gather");
}

}  // namespace cas::gpu::env
