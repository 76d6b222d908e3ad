#pragma once
// What minatar's Environment wrapper adds to every MinAtar game: with probability 0.1 the
// previous action is carried out instead of the one chosen, and the previous action survives a
// reset. The MinAtar twins keep one per game, beside the game's state (so a reset leaves it).
// Compiled for the host and the device (CAS_HD).
// Thread-safety: a value; one thread at a time per instance.
#include "core/support/host_device.hpp"

namespace cas::env {

inline constexpr double kMinatarStickyProbability = 0.1;

struct StickyAction {
  int last = 0;  // minatar's number of the action carried out last

  // The action carried out for `chosen` (minatar's number) and the draw in [0, 1); remembered.
  CAS_HD int take(int chosen, double draw) {
    if (draw >= kMinatarStickyProbability) last = chosen;
    return last;
  }
  // The same without remembering it.
  CAS_HD int peek(int chosen, double draw) const { return draw < kMinatarStickyProbability ? last : chosen; }
};

}  // namespace cas::env
