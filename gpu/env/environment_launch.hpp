#pragma once
// The device environments' kernels (environment_kernels.cu), one row per environment: the
// catalogue name, the size of one copy's state and the launches, each instantiated from the
// CPU twin's rules (core/env/cartpole.hpp, minatar_*.hpp) by one template.
//
//   states         [count] copies of the rules' State (game, sticky action, generator), as the
//                  CPU twin keeps them; a trading copy's holds the view of the series below
//   series         a trading environment's prices and diffs [bars] each (DeviceSeries), read
//                  by every copy
//   actionRandom   [count] GameRandom: the random actions of stepRandomly
//   observations   [count][observationSize] floats, channels first as the twins write them
//   per copy       reward (float), terminated / truncated (uint8), and for stepRandomly the
//                  running reward and episode count; for PPO's rollout step RolloutStepArrays
// One thread per copy, 128-thread blocks.
// Thread-safety: launches go to the stream given.
#include <cuda.h>

#include <cstdint>
#include <string_view>

#include "core/env/game_random.hpp"
#include "core/env/trading_rules.hpp"

namespace cas::gpu::env {

struct RandomTotals {
  float* reward;           // [count], added to
  std::int32_t* episodes;  // [count], added to
};

// PPO's rollout step (device_rollout.cpp): the arrays of one step t, [N] each, and what lasts
// across rollouts per copy.
struct RolloutStepArrays {
  const float* logits;                                      // [count][actions], the inference program's output
  const float* values;                                      // [count]
  float *actions, *logProbs, *valuesOut, *rewards, *dones;  // row t of the rollout
  std::uint8_t* truncated;                                  // [count]: the copy's episode was cut by the time limit this step
  float* finalObservations;                                 // [count][observationSize]: a cut episode's last observation
  double *episodeReturn, *episodeLength;                    // the running episodes
  double *endedCount, *endedReturn, *endedLength;           // episodes ended since the last read
};

struct EnvironmentKernels {
  const char* name;
  std::uint64_t stateBytes;
  int observationSize, actionCount;
  bool canTruncate;  // a time limit cuts episodes (CartPole): the rollout bootstraps them
  bool needsSeries;  // the copies trade a price series: init() is given its view on the device
  // Seeds copy g with GameRandom::forGame(seed, g) and resets it, as the CPU twin's constructor;
  // `series` (device pointers) for the environments that need one, else null.
  void (*init)(void* states, int count, std::uint64_t seed, const cas::env::TradingSeriesView* series, CUstream s);
  // One step with `actions`; copies whose episode ended are reset.
  void (*step)(void* states, const std::int32_t* actions, float* rewards, std::uint8_t* terminated, std::uint8_t* truncated, int count,
               CUstream s);
  void (*observe)(const void* states, float* observations, int count, CUstream s);
  // One step with random actions, the reset of ended copies and every copy's observation, fused.
  void (*stepRandomly)(void* states, cas::env::GameRandom* actionRandom, float* observations, RandomTotals totals, int count, CUstream s);
  // PPO's step: sample each copy's action from its logits (ppo_math.hpp), step, count, reset.
  void (*rolloutStep)(void* states, cas::env::GameRandom* actionRandom, RolloutStepArrays arrays, int count, CUstream s);
};

// The row for a catalogue name; null when the environment has no device twin.
const EnvironmentKernels* findEnvironmentKernels(std::string_view name);

// actionRandom[g] = GameRandom::forGame(seed, g).
void launchSeedActions(cas::env::GameRandom* actionRandom, int count, std::uint64_t seed, CUstream s);

}  // namespace cas::gpu::env
