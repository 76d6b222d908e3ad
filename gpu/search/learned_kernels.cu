// The device search over a learned model's kernels: each runs one game's share of a search
// phase (learned_steps.cuh) per thread, in blocks of one warp so that the games spread over
// every SM (the work is latency-bound: a thread walks its tree load by load).
//
//   kernel                   threads     computes
//   learned_hashed_roots     per game    the hashed model's represent and predict (tests)
//   learned_hashed_recurrent per row     the hashed model's recurrent step (tests)
//   learned_expand_roots     per game    the call's games marked; fresh trees from the root
//                                        rows, noise or Gumbel arms; the first leaves selected
//   learned_store_root_states per float  the root rows' states into the pool
//   learned_store_leaf_states per float  the new leaves' next states into the pool
//   learned_expand_select    per game    expansion, pending marks off, discounted backup with
//                                        the min-max bounds, Gumbel halving; next selection
//   learned_gather_states    per float   the new rows' states from their leaves' parents
//   learned_finish_roots     per game    the root's clean priors back
//   learned_root_stats       per game    LearnedRootOut
//   learned_gather_tree      per slot    one game's tree arrays, contiguous, for a snapshot
//
// Compiled with -fmad=false (gpu/CMakeLists.txt): the arithmetic must round as the CPU
// reference's does (core/search/search_math.hpp). Thread-safety: see learned_launch.hpp.
#include <cuda_runtime.h>

#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/search/learned_launch.hpp"

namespace cas::gpu::search {
namespace {

constexpr int kThreadsPerBlock = 32;  // one warp a block
constexpr int kCopyThreads = 256;     // the latent copies: memory-bound, full blocks
int blocksFor(std::int64_t threads, int perBlock = kThreadsPerBlock) { return int((threads + perBlock - 1) / perBlock); }

__device__ inline std::int64_t thread() { return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }

__global__ void hashedRootsKernel(LearnedContext c, const float* observations, int observationSize, float* rootStates, float* rootLogits,
                                  float* rootValues) {
  const std::int64_t g = thread();
  if (g < c.games) hashedRootRow(observations, observationSize, int(g), c, rootStates, rootLogits, rootValues);
}

__global__ void hashedRecurrentKernel(LearnedContext c, float* nextStates, float* rewards, float* logits, float* values) {
  const std::int64_t row = thread();
  if (row < std::int64_t(c.games) * c.k) hashedRecurrentRow(c, row, nextStates, rewards, logits, values);
}

__global__ void expandRootsKernel(LearnedContext c, const std::uint8_t* listed) {
  const std::int64_t g = thread();
  if (g >= c.games) return;
  c.trees.gameSlots[g].listed = listed[g];
  expandLearnedRoot(c, int(g));
  selectLearnedLeaves(c, int(g));
}

__global__ void expandSelectKernel(LearnedContext c) {
  const std::int64_t g = thread();
  if (g >= c.games) return;
  expandLearnedLeaves(c, int(g));
  selectLearnedLeaves(c, int(g));
}

// The latent copies: one thread per float, blocks of kCopyThreads (whole rows side by side).
__global__ void storeRootStatesKernel(LearnedContext c) {
  const std::int64_t e = thread();
  if (e < std::int64_t(c.games) * c.stateSize) storeRootStateElement(c, int(e / c.stateSize), int(e % c.stateSize));
}

__global__ void storeLeafStatesKernel(LearnedContext c) {
  const std::int64_t e = thread();
  if (e < std::int64_t(c.games) * c.k * c.stateSize) storeLeafStateElement(c, e / c.stateSize, int(e % c.stateSize));
}

__global__ void gatherStatesKernel(LearnedContext c) {
  const std::int64_t e = thread();
  if (e < std::int64_t(c.games) * c.k * c.stateSize) gatherStateElement(c, e / c.stateSize, int(e % c.stateSize));
}

__global__ void finishRootsKernel(LearnedContext c) {
  const std::int64_t g = thread();
  if (g < c.games) finishLearnedRoot(c, int(g));
}

__global__ void rootStatisticsKernel(LearnedContext c) {
  const std::int64_t g = thread();
  if (g < c.games) learnedRootStatistics(c, int(g));
}

__global__ void gatherTreeKernel(TreeFields f, int game, int games, int budget, unsigned char* out) {
  const std::int64_t s = thread();
  if (s >= budget) return;
  const std::int64_t i = s * games + game;
  const std::int64_t n = budget;
  unsigned char* p = out;  // a section of `budget` entries per field, in tree_fields.hpp's order
#define CAS_TREE_GATHER(name, type, root)    \
  reinterpret_cast<type*>(p)[s] = f.name[i]; \
  p += n * std::int64_t(sizeof(type));
  CAS_TREE_FIELDS(CAS_TREE_GATHER)
#undef CAS_TREE_GATHER
}

void checkLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw CudaError(std::string("launching ") + kernel + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

template <typename Kernel>
void load(Kernel kernel, const char* name) {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, kernel);
  if (e == cudaSuccess) return;
  cudaGetLastError();
  throw CudaError(std::string("the kernel ") + name + " did not load: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

cudaStream_t runtimeStream(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

}  // namespace

void loadLearnedKernels() {
  load(hashedRootsKernel, "learned_hashed_roots");
  load(hashedRecurrentKernel, "learned_hashed_recurrent");
  load(expandRootsKernel, "learned_expand_roots");
  load(expandSelectKernel, "learned_expand_select");
  load(storeRootStatesKernel, "learned_store_root_states");
  load(storeLeafStatesKernel, "learned_store_leaf_states");
  load(gatherStatesKernel, "learned_gather_states");
  load(finishRootsKernel, "learned_finish_roots");
  load(rootStatisticsKernel, "learned_root_stats");
  load(gatherTreeKernel, "learned_gather_tree");
}

void launchHashedRoots(const LearnedContext& c, const float* observations, int observationSize, float* rootStates, float* rootLogits,
                       float* rootValues, CUstream s) {
  hashedRootsKernel<<<blocksFor(c.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c, observations, observationSize, rootStates, rootLogits,
                                                                                   rootValues);
  checkLaunch("learned_hashed_roots");
}

void launchHashedRecurrent(const LearnedContext& c, float* nextStates, float* rewards, float* logits, float* values, CUstream s) {
  hashedRecurrentKernel<<<blocksFor(std::int64_t(c.games) * c.k), kThreadsPerBlock, 0, runtimeStream(s)>>>(c, nextStates, rewards, logits,
                                                                                                           values);
  checkLaunch("learned_hashed_recurrent");
}

void launchExpandRoots(const LearnedContext& c, const std::uint8_t* listed, CUstream s) {
  expandRootsKernel<<<blocksFor(c.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c, listed);
  checkLaunch("learned_expand_roots");
  storeRootStatesKernel<<<blocksFor(std::int64_t(c.games) * c.stateSize, kCopyThreads), kCopyThreads, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_store_root_states");
  gatherStatesKernel<<<blocksFor(std::int64_t(c.games) * c.k * c.stateSize, kCopyThreads), kCopyThreads, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_gather_states");
}

void launchExpandSelect(const LearnedContext& c, CUstream s) {
  const int copyBlocks = blocksFor(std::int64_t(c.games) * c.k * c.stateSize, kCopyThreads);
  storeLeafStatesKernel<<<copyBlocks, kCopyThreads, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_store_leaf_states");
  expandSelectKernel<<<blocksFor(c.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_expand_select");
  gatherStatesKernel<<<copyBlocks, kCopyThreads, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_gather_states");
}

void launchFinishRoots(const LearnedContext& c, CUstream s) {
  finishRootsKernel<<<blocksFor(c.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_finish_roots");
}

void launchRootStatistics(const LearnedContext& c, CUstream s) {
  rootStatisticsKernel<<<blocksFor(c.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c);
  checkLaunch("learned_root_stats");
}

void launchGatherTree(const LearnedContext& c, int game, void* out, CUstream s) {
  gatherTreeKernel<<<(c.trees.budget + 127) / 128, 128, 0, runtimeStream(s)>>>(c.trees.main, game, c.games, c.trees.budget,
                                                                               static_cast<unsigned char*>(out));
  checkLaunch("learned_gather_tree");
}

}  // namespace cas::gpu::search
