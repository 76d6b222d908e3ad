#pragma once
// What the host side of the device search (gpu_search.cpp) launches: the buffers of one search,
// and the kernels of search_kernels.cu for one game, behind a small interface so that the host
// code is written once for every game.
// Thread-safety: SearchKernels objects are immutable; launches go to the stream given.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/search/replay_launch.hpp"
#include "gpu/search/search_steps.cuh"

namespace cas::gpu::search {

// Instrumented kernels only: SIMT samples (active lanes summed over sampled warp steps) and,
// for the last launch, each block's SM and %globaltimer span.
struct KernelCounters {
  unsigned long long activeLanes, warpSteps;
};
struct BlockRecord {
  std::uint32_t sm, unused;
  std::uint64_t start, end;
};
struct Instrumentation {
  KernelCounters* counters;
  BlockRecord* blocks;  // one per block of the launch
};

struct DeviceSearchBuffers {
  TreeStorage trees;
  void* roots;  // [games] Game::State
  Pending* pending;
  float* obs;
  const float* logits;
  const float* values;
  const DeviceSearchParams* params;
  RootOut* stats;
  const std::uint8_t* listed;     // [games]: part of the current search() call
  const std::int32_t* moveGames;  // the games of a playMoves/resetGames call
  const std::int32_t* moveActions;
  Instrumentation select, expand;
  int games, k;
};

// Self-play's moves on the device (SelfPlaySearch::recordAndPlay): each game's positions so far
// and what one move reports back.
struct MoveOut {
  std::int32_t played;       // the move played; -1 for a game not listed
  std::int32_t endedLength;  // the game's length when this move ended it, else 0
};
struct SelfPlayBuffers {
  void* states;            // [games][maxMoves] Game::State: the root before each move
  float* policies;         // [games][maxMoves][actions]: the search's policy there
  MoveOut* moves;          // [games]
  std::int64_t* offsets;   // [games]: where an ended game's rows start, after fresh.base
  FreshRegion fresh;
};

// A kernel as the reports name it, with its compiled attributes.
struct SearchKernelInfo {
  std::string name, label;
  int registers = -1, threadsPerBlock = 0;
  double theoreticalOccupancy = -1;  // active warps / the SM's maximum, 0..1; -1 unknown
};

class SearchKernels {
 public:
  virtual ~SearchKernels() = default;
  virtual int actions() const = 0;
  virtual int observationSize() const = 0;
  virtual std::size_t stateBytes() const = 0;
  static constexpr int kThreadsPerBlock = 32;  // one warp a block: games spread over the SMs
  static int blocksFor(int threads) { return (threads + kThreadsPerBlock - 1) / kThreadsPerBlock; }

  // The per-game kernels (search_steps.cuh), one thread per game, or per listed move.
  virtual void resetGames(const DeviceSearchBuffers& b, int count, CUstream s) const = 0;  // count < 0: every game
  virtual void playMoves(const DeviceSearchBuffers& b, int count, CUstream s) const = 0;
  virtual void encodeRoots(const DeviceSearchBuffers& b, CUstream s) const = 0;
  virtual void expandRoots(const DeviceSearchBuffers& b, CUstream s) const = 0;
  virtual void selectLeaves(const DeviceSearchBuffers& b, bool masked, bool instrument, CUstream s) const = 0;
  virtual void expandLeaves(const DeviceSearchBuffers& b, bool instrument, CUstream s) const = 0;
  // expandLeaves, then selectLeaves for the next step, per game in one launch.
  virtual void expandThenSelect(const DeviceSearchBuffers& b, bool masked, bool instrument, CUstream s) const = 0;
  virtual void finishRoots(const DeviceSearchBuffers& b, CUstream s) const = 0;
  virtual void rootStatistics(const DeviceSearchBuffers& b, CUstream s) const = 0;
  // After rootStatistics, in every game the last search listed: records the root and its policy,
  // plays RootOut::played (search_record_play); places the ended games' rows in game order
  // (search_place_ended); writes each ended game's positions with its result into the fresh
  // region and starts a fresh game (search_write_ended).
  virtual int maxMoves() const = 0;
  virtual void recordAndPlay(const DeviceSearchBuffers& b, const SelfPlayBuffers& sp, CUstream s) const = 0;
  // Game g's arrays gathered from the slot-major fields into `out`, each `budget` entries long,
  // one after the other: visits, valueSum, prior, firstChild, parent, lastUsed, then the
  // two-byte childCount, action, virtualLoss (aligned whatever the budget): a snapshot.
  virtual void gatherTree(const DeviceSearchBuffers& b, int game, void* out, CUstream s) const = 0;
  // The hashed test evaluator over every row: obs -> logits, values.
  virtual void hashedEvaluate(const DeviceSearchBuffers& b, float* logits, float* values, CUstream s) const = 0;

  // select(masked), select(branchy), expand: names and attributes for the kernel reports.
  virtual SearchKernelInfo selectInfo(bool masked) const = 0;
  virtual SearchKernelInfo expandInfo() const = 0;
};

// The kernels for a board game of core/env/games.hpp; null when it has no device twin.
const SearchKernels* searchKernels(const std::string& environment);

}  // namespace cas::gpu::search
