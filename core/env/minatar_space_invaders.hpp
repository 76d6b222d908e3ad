#pragma once
// Batched MinAtar Space Invaders with the rules of the `minatar` package: a cannon on the bottom
// row fires upward (at most once every 5 steps); a block of 4 x 6 aliens marches sideways and
// steps down at the edges, faster as fewer remain, and the alien nearest the cannon fires every
// 10 steps; +1 per alien hit; an enemy bullet or an alien reaching the cannon, or aliens on the
// bottom row stepping down, end the episode. A cleared block is replaced, and each replacement
// marches one step sooner (from 12 down to 6). Sticky actions as minatar's Environment wrapper
// (probability 0.1, the previous action survives a reset); the game itself draws nothing.
// Actions are minatar's minimal set: 0 none, 1 left, 2 right, 3 fire.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 6 x 10 x 10 floats
//   channel 0 cannon (row 9) | 1 aliens | 2 aliens, when marching left | 3 aliens, when marching
//   right | 4 the cannon's bullets | 5 the aliens' bullets
//
// Thread-safety: distinct games may be stepped from distinct threads.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/minatar_sticky.hpp"

namespace cas::env {

class MinAtarSpaceInvaders {
 public:
  static constexpr int kRows = 10, kColumns = 10, kChannels = 6, kActions = 4;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr int kShotCoolDown = 5, kInitialMoveInterval = 12, kFastestMoveInterval = 6, kAlienShotInterval = 10;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  MinAtarSpaceInvaders(int games, std::uint64_t seed);
  int size() const { return int(games_.size()); }

  void reset(int game);
  struct StepResult {
    float reward;
    bool terminal;
  };
  StepResult step(int game, int action);
  StepResult step(int game, int action, double stickyDraw);  // stickyDraw in [0, 1)
  int difficulty(int game) const { return games_[size_t(game)].rampIndex; }
  void observe(int game, float* out) const;  // kObservationSize floats
  bool terminal(int game) const { return games_[size_t(game)].terminal; }

 private:
  using Rows = std::array<std::uint16_t, kRows>;  // bit c of row r: (r, c) is set
  struct Game {
    Rows aliens{}, bullets{}, alienBullets{};
    int cannon = 5, direction = -1;
    int moveInterval = kInitialMoveInterval, moveTimer = kInitialMoveInterval;
    int alienShotTimer = kAlienShotInterval, shotTimer = 0, rampIndex = 0;
    bool terminal = false;
  };
  std::vector<Game> games_;
  std::vector<GameRandom> random_;  // per game: the sticky-action draws
  std::vector<StickyAction> sticky_;  // per game; a reset leaves it
};

}  // namespace cas::env
