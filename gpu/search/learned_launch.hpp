#pragma once
// What the host side of the device search over a learned model (gpu_learned_search.cpp)
// launches: the kernels of learned_kernels.cu, one thread per game (or per row, or per slot),
// over the buffers a LearnedContext names (learned_steps.cuh draws their layout).
// Thread-safety: launches go to the stream given; loadLearnedKernels may be called from any
// thread (CUDA serialises module loading).
#include <cuda.h>

#include "gpu/search/learned_steps.cuh"

namespace cas::gpu::search {

// Loads every kernel now (CUDA loads modules lazily), so that none loads inside a graph capture;
// throws CudaError when one cannot load.
void loadLearnedKernels();

// The hashed test model: represent and predict over every game's root row (observations
// [games, observationSize]); recurrent over every one of the games * k rows.
void launchHashedRoots(const LearnedContext& c, const float* observations, int observationSize, float* rootStates, float* rootLogits,
                       float* rootValues, CUstream s);
void launchHashedRecurrent(const LearnedContext& c, float* nextStates, float* rewards, float* logits, float* values, CUstream s);

// learned_expand_roots: marks the call's games (listed [games]), gives them fresh trees from
// their root rows and selects the first step's leaves; then the roots' states into the pool and
// the selected rows' states out of it.
void launchExpandRoots(const LearnedContext& c, const std::uint8_t* listed, CUstream s);
// A step: the new leaves' states into the pool, learned_expand_select (expansion and backup, then
// the next step's selection), the selected rows' states out of the pool.
void launchExpandSelect(const LearnedContext& c, CUstream s);
void launchFinishRoots(const LearnedContext& c, CUstream s);
void launchRootStatistics(const LearnedContext& c, CUstream s);
// Game g's tree arrays, gathered from the slot-major fields into `out` ([budget] entries per
// field, in core/search/tree_fields.hpp's order): a snapshot.
void launchGatherTree(const LearnedContext& c, int game, void* out, CUstream s);

}  // namespace cas::gpu::search
