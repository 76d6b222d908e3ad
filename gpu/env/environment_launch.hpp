#pragma once
// The device environments' kernels (environment_kernels.cu), one row per environment: the
// catalogue name, the size of one copy's state and the launches, each instantiated from the
// CPU twin's rules (core/env/cartpole.hpp, minatar_*.hpp) by one template.
//
//   states         [count] copies of the rules' State (game, sticky action, generator), as the
//                  CPU twin keeps them
//   actionRandom   [count] GameRandom: the random actions of stepRandomly
//   observations   [count][observationSize] floats, channels first as the twins write them
//   per copy       reward (float), terminated / truncated (uint8), and for stepRandomly the
//                  running reward and episode count
// One thread per copy, 128-thread blocks.
// Thread-safety: launches go to the stream given.
#include <cuda.h>

#include <cstdint>
#include <string_view>

#include "core/env/game_random.hpp"

namespace cas::gpu::env {

struct RandomTotals {
  float* reward;           // [count], added to
  std::int32_t* episodes;  // [count], added to
};

struct EnvironmentKernels {
  const char* name;
  std::uint64_t stateBytes;
  int observationSize, actionCount;
  // Seeds copy g with GameRandom::forGame(seed, g) and resets it, as the CPU twin's constructor.
  void (*init)(void* states, int count, std::uint64_t seed, CUstream s);
  // One step with `actions`; copies whose episode ended are reset.
  void (*step)(void* states, const std::int32_t* actions, float* rewards, std::uint8_t* terminated, std::uint8_t* truncated, int count,
               CUstream s);
  void (*observe)(const void* states, float* observations, int count, CUstream s);
  // One step with random actions, the reset of ended copies and every copy's observation, fused.
  void (*stepRandomly)(void* states, cas::env::GameRandom* actionRandom, float* observations, RandomTotals totals, int count, CUstream s);
};

// The row for a catalogue name; null when the environment has no device twin.
const EnvironmentKernels* findEnvironmentKernels(std::string_view name);

// actionRandom[g] = GameRandom::forGame(seed, g).
void launchSeedActions(cas::env::GameRandom* actionRandom, int count, std::uint64_t seed, CUstream s);

}  // namespace cas::gpu::env
