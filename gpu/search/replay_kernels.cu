// The device replay store's kernels, each the CPU store's loop (core/train/replay_buffer.cpp)
// with one thread per copied float.
//
//   kernel          threads                          computes
//   replay_commit   per fresh row x (obs + A + 1)    fresh rows appended to the ring
//   replay_sample   per sample x (obs + A + 1)       a batch: slot and symmetry drawn per sample
//                                                    (core/search/replay_draw.hpp), entries gathered
//                                                    through the symmetry tables
// Grid-stride loops over 256-thread blocks; the work is a copy, bound by memory.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/search/replay_draw.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/search/replay_launch.hpp"

namespace cas::gpu::search {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(std::int64_t work) { return unsigned(std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1, 65535)); }

__global__ void commitKernel(SampleArrays fresh, SampleArrays ring, std::int64_t from, std::int64_t count, std::int64_t next, std::int64_t capacity,
                             int obs, int actions) {
  const std::int64_t width = obs + actions + 1;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < count * width; idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = idx / width, col = idx % width;
    const std::int64_t src = from + row, dst = (next + row) % capacity;
    if (col < obs) ring.obs[dst * obs + col] = fresh.obs[src * obs + col];
    else if (col < obs + actions) ring.policy[dst * actions + col - obs] = fresh.policy[src * actions + col - obs];
    else ring.value[dst] = fresh.value[src];
  }
}

__global__ void sampleKernel(SampleArrays ring, std::int64_t size, SymmetryTables sym, std::uint64_t seed, std::int64_t batch, SampleArrays out,
                             int obs, int actions) {
  const std::int64_t width = obs + actions + 1;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < batch * width; idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx / width, col = idx % width;
    const auto j = std::int64_t(cas::search::replayDraw(seed, 2 * std::uint64_t(i)) % std::uint64_t(size));
    const auto s = std::int64_t(cas::search::replayDraw(seed, 2 * std::uint64_t(i) + 1) % std::uint64_t(sym.count));
    if (col < obs) out.obs[i * obs + col] = ring.obs[j * obs + sym.obsFrom[s * obs + col]];
    else if (col < obs + actions) out.policy[i * actions + col - obs] = ring.policy[j * actions + sym.policyFrom[s * actions + col - obs]];
    else out.value[i] = ring.value[j];
  }
}

cudaStream_t runtimeStream(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

void checkLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string(kernel) + " did not launch: " + cudaGetErrorString(e));
}

}  // namespace

void launchCommit(SampleArrays fresh, SampleArrays ring, std::int64_t from, std::int64_t count, std::int64_t next, std::int64_t capacity,
                  int observationSize, int actions, CUstream s) {
  if (count <= 0) return;
  const std::int64_t work = count * (observationSize + actions + 1);
  commitKernel<<<gridFor(work), kThreads, 0, runtimeStream(s)>>>(fresh, ring, from, count, next, capacity, observationSize, actions);
  checkLaunch("replay_commit");
}

void launchSample(SampleArrays ring, std::int64_t size, SymmetryTables symmetries, std::uint64_t seed, std::int64_t batch, SampleArrays out,
                  int observationSize, int actions, CUstream s) {
  const std::int64_t work = batch * (observationSize + actions + 1);
  sampleKernel<<<gridFor(work), kThreads, 0, runtimeStream(s)>>>(ring, size, symmetries, seed, batch, out, observationSize, actions);
  checkLaunch("replay_sample");
}

}  // namespace cas::gpu::search
