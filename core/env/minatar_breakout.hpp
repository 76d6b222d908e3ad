#pragma once
// Batched MinAtar Breakout with the rules of the `minatar` package (Young & Tian, 2019): a
// paddle on the bottom row of a 10x10 grid, a ball moving along diagonals, three rows of bricks
// (refilled when all are gone and the ball reaches the bottom row), +1 per brick, the episode
// ends when the ball passes the paddle. Sticky actions as minatar's Environment wrapper: with
// probability 0.1 the previous action is repeated (the previous action survives a reset, as
// there). Actions are minatar's minimal set: 0 none, 1 left, 2 right.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 4 x 10 x 10 floats        row 0 at the top, row 9 the paddle's
//   channel 0 paddle | 1 ball | 2 trail (the ball's previous cell) | 3 bricks
//
// The random draws (the ball's starting side at a reset, the sticky-action draw at a step) can be
// given, so that a recorded minatar trace is replayed step for step (tests/golden/minatar);
// without them they come from the game's own generator (game_random.hpp).
// Thread-safety: distinct games may be stepped from distinct threads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/minatar_sticky.hpp"

namespace cas::env {

class MinAtarBreakout {
 public:
  static constexpr int kRows = 10, kColumns = 10, kChannels = 4, kActions = 3;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  MinAtarBreakout(int games, std::uint64_t seed);
  int size() const { return int(games_.size()); }

  void reset(int game);                 // the ball starts on the side the generator draws
  void reset(int game, int ballStart);  // 0: column 0 moving down-right; 1: column 9 moving down-left
  struct StepResult {
    float reward;
    bool terminal;
  };
  StepResult step(int game, int action);
  // `stickyDraw` in [0, 1): the previous action is repeated when it is below 0.1.
  StepResult step(int game, int action, double stickyDraw);
  void observe(int game, float* out) const;  // kObservationSize floats
  bool terminal(int game) const { return games_[size_t(game)].terminal; }

 private:
  struct Game {
    int ballX = 0, ballY = 0, lastX = 0, lastY = 0, direction = 0, paddle = 4;
    bool strike = false, terminal = false;
    std::uint16_t bricks[kRows] = {};  // bit c of row r: a brick at (r, c)
  };
  std::vector<Game> games_;
  std::vector<GameRandom> random_;  // per game
  std::vector<StickyAction> sticky_;  // per game; a reset leaves it
};

}  // namespace cas::env
