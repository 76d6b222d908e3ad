#pragma once
// The replay store's counter-based draws (replay_store.hpp says how sampling uses them), written
// once for the host and the device store's kernels.
#include <cstdint>

#include "core/support/host_device.hpp"

namespace cas::search {

// The i-th 64-bit draw of `seed`: splitmix64 of the counter.
CAS_HD inline std::uint64_t replayDraw(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace cas::search
