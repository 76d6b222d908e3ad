#pragma once
// What every MinAtar twin shares: the rules of one game are a struct of static functions
// compiled for the host and the device (CAS_HD), over one copy's plain state, so that the CPU
// twin and the CUDA backend's environment kernels (gpu/env) run the same code; MinAtarGames is
// the CPU's batch of copies. A game's rules struct provides:
//
//   struct Game   what a reset starts afresh (fixed-size fields only: no heap, no std::)
//   State         MinatarState<Game>: one copy, whole (its sticky action and generator too)
//   reset(State&), step(State&, action) -> MinatarStep, mark(const State&, float*): the
//                 observation's ones into a zeroed observation (observeMinatar writes it whole)
//   reset(State&, draws...), step(State&, action, stickyDraw, draws...): the same with minatar's
//                 random draws given, so that a recorded minatar trace is replayed step for step
//
// Helpers here are written out (no std::min, std::popcount) because the device code is C++17
// under nvcc without the standard library's device overloads.
// Thread-safety: MinAtarGames: distinct copies may be stepped from distinct threads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/minatar_sticky.hpp"
#include "core/support/host_device.hpp"

namespace cas::env {

struct MinatarStep {
  float reward;
  bool terminal;
};

namespace grid {

inline constexpr int kRows = 10, kColumns = 10;
inline constexpr std::uint16_t kFullRow = (1u << kColumns) - 1;

CAS_HD inline int clampInt(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
CAS_HD inline int minInt(int a, int b) { return a < b ? a : b; }
CAS_HD inline int maxInt(int a, int b) { return a > b ? a : b; }
CAS_HD inline int absInt(int v) { return v < 0 ? -v : v; }
CAS_HD inline int bitCount(std::uint32_t v) {
  int n = 0;
  for (; v != 0; v &= v - 1) ++n;
  return n;
}
CAS_HD inline void clear(float* out, int count) {
  for (int i = 0; i < count; ++i) out[i] = 0.0f;
}
// The cell (channel, row, column) of a channels-first 10x10 observation.
CAS_HD inline float& cell(float* out, int channel, int row, int column) { return out[(channel * kRows + row) * kColumns + column]; }

}  // namespace grid

// One copy of a game: the game's state, which a reset starts afresh, and what outlives a reset.
template <class Game>
struct MinatarState {
  Game game;
  StickyAction sticky;  // a reset leaves it
  GameRandom random;
};

// A copy's whole observation: zeros, then the rules' ones.
template <class Rules>
CAS_HD void observeMinatar(const typename Rules::State& state, float* out) {
  grid::clear(out, Rules::kObservationSize);
  Rules::mark(state, out);
}

template <class Rules>
class MinAtarGames : public Rules {
 public:
  using State = typename Rules::State;

  MinAtarGames(int games, std::uint64_t seed) : states_(std::size_t(games)) {
    for (int g = 0; g < games; ++g) states_[std::size_t(g)].random = GameRandom::forGame(seed, g);
    for (int g = 0; g < games; ++g) reset(g);
  }
  int size() const { return int(states_.size()); }

  void reset(int game) { Rules::reset(at(game)); }
  template <class... Draws>
  void reset(int game, const Draws&... draws) {
    Rules::reset(at(game), draws...);
  }
  MinatarStep step(int game, int action) { return Rules::step(at(game), action); }
  template <class... Draws>
  MinatarStep step(int game, int action, double stickyDraw, const Draws&... draws) {
    return Rules::step(at(game), action, stickyDraw, draws...);
  }
  void observe(int game, float* out) const { observeMinatar<Rules>(state(game), out); }
  bool terminal(int game) const { return state(game).game.terminal; }
  const State& state(int game) const { return states_[std::size_t(game)]; }

 private:
  State& at(int game) { return states_[std::size_t(game)]; }
  std::vector<State> states_;
};

}  // namespace cas::env
