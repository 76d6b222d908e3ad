#pragma once
// Each game's own random numbers (SplitMix64: 8 bytes of state), so that batched environments
// step and reset distinct games from distinct threads without sharing a generator, and a game's
// draws do not depend on how the games are spread over threads.
// Compiled for the host and the device (CAS_HD): a game's device twin draws the same numbers.
// Thread-safety: a value; one thread at a time per instance.
#include <cstdint>

#include "core/support/host_device.hpp"

namespace cas::env {

struct GameRandom {
  std::uint64_t state = 0;

  // Game `game` of a batch seeded with `seed`: streams that do not overlap in practice.
  CAS_HD static GameRandom forGame(std::uint64_t seed, int game) { return {seed * 0x9E3779B97F4A7C15ull + std::uint64_t(game) * 0xD1B54A32D192ED03ull}; }

  CAS_HD std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  CAS_HD double uniform() { return double(next() >> 11) * 0x1.0p-53; }        // [0, 1)
  CAS_HD int below(int n) { return int((next() >> 33) % std::uint64_t(n)); }  // [0, n); n small
};

}  // namespace cas::env
