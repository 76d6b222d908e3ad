#pragma once
// MinAtar Breakout with the rules of the `minatar` package (Young & Tian, 2019): a paddle on the
// bottom row of a 10x10 grid, a ball moving along diagonals, three rows of bricks (refilled when
// all are gone and the ball reaches the bottom row), +1 per brick, the episode ends when the ball
// passes the paddle. Sticky actions as minatar's Environment wrapper: with probability 0.1 the
// previous action is repeated (the previous action survives a reset, as there). Actions are
// minatar's minimal set: 0 none, 1 left, 2 right.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 4 x 10 x 10 floats        row 0 at the top, row 9 the paddle's
//   channel 0 paddle | 1 ball | 2 trail (the ball's previous cell) | 3 bricks
//
// Draws (minatar_games.hpp): the ball's starting side at a reset, the sticky-action draw at a step.
// Thread-safety: static functions over the caller's state.
#include <cstdint>

#include "core/env/minatar_games.hpp"

namespace cas::env {

struct BreakoutRules {
  static constexpr int kRows = 10, kColumns = 10, kChannels = 4, kActions = 3;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  struct Game {
    int ballX = 0, ballY = 0, lastX = 0, lastY = 0, direction = 0, paddle = 4;
    bool strike = false, terminal = false;
    std::uint16_t bricks[kRows] = {};  // bit c of row r: a brick at (r, c)
  };
  using State = MinatarState<Game>;

  // 0: the ball starts in column 0 moving down-right; 1: column 9 moving down-left.
  CAS_HD static void reset(State& state, int ballStart) {
    Game& s = state.game;
    s = Game{};
    s.ballY = 3;
    s.ballX = ballStart == 0 ? 0 : 9;
    s.direction = ballStart == 0 ? 2 : 3;
    s.lastX = s.ballX;
    s.lastY = s.ballY;
    fillBricks(s.bricks);
  }
  CAS_HD static void reset(State& state) { reset(state, state.random.below(2)); }

  CAS_HD static MinatarStep step(State& state, int action) { return step(state, action, state.random.uniform()); }
  // minatar's Breakout `act`, branch for branch; `stickyDraw` in [0, 1).
  CAS_HD static MinatarStep step(State& state, int action, double stickyDraw) {
    // minatar's action numbers for our minimal set (none, left, right): 0, 1, 3.
    const int chosen = grid::clampInt(action, 0, kActions - 1);
    const int a = state.sticky.take(chosen == 0 ? 0 : (chosen == 1 ? 1 : 3), stickyDraw);
    Game& s = state.game;
    if (s.terminal) return {0.0f, true};
    // Direction 0 up-left, 1 up-right, 2 down-right, 3 down-left, and how each bounce maps them.
    constexpr int kStepX[4] = {-1, 1, 1, -1}, kStepY[4] = {-1, -1, 1, 1};
    constexpr int kBounceSideways[4] = {1, 0, 3, 2}, kBounceVertically[4] = {3, 2, 1, 0}, kBounceBack[4] = {2, 3, 0, 1};
    float reward = 0;
    if (a == 1) s.paddle = grid::maxInt(0, s.paddle - 1);
    else if (a == 3) s.paddle = grid::minInt(9, s.paddle + 1);

    s.lastX = s.ballX;
    s.lastY = s.ballY;
    int x = s.ballX + kStepX[s.direction], y = s.ballY + kStepY[s.direction];
    bool struck = false;
    if (x < 0 || x > 9) {
      x = grid::clampInt(x, 0, 9);
      s.direction = kBounceSideways[s.direction];
    }
    if (y < 0) {
      y = 0;
      s.direction = kBounceVertically[s.direction];
    } else if (s.bricks[y] & (1u << x)) {
      struck = true;
      if (!s.strike) {  // a second brick in a row is passed through, as in minatar
        reward += 1;
        s.strike = true;
        s.bricks[y] &= std::uint16_t(~(1u << x));
        y = s.lastY;
        s.direction = kBounceVertically[s.direction];
      }
    } else if (y == 9) {
      bool empty = true;
      for (int r = 0; r < kRows; ++r) empty = empty && s.bricks[r] == 0;
      if (empty) fillBricks(s.bricks);
      if (s.ballX == s.paddle) {
        s.direction = kBounceVertically[s.direction];
        y = s.lastY;
      } else if (x == s.paddle) {
        s.direction = kBounceBack[s.direction];
        y = s.lastY;
      } else {
        s.terminal = true;
      }
    }
    if (!struck) s.strike = false;
    s.ballX = x;
    s.ballY = y;
    return {reward, s.terminal};
  }

  // The observation's ones, into `out` already zero (observeMinatar clears it first; the device
  // kernels clear the row in 16-byte stores).
  CAS_HD static void mark(const State& state, float* out) {
    const Game& s = state.game;
    grid::cell(out, 0, 9, s.paddle) = 1;
    grid::cell(out, 1, s.ballY, s.ballX) = 1;
    grid::cell(out, 2, s.lastY, s.lastX) = 1;
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kColumns; ++c)
        if (s.bricks[r] & (1u << c)) grid::cell(out, 3, r, c) = 1;
  }

 private:
  CAS_HD static void fillBricks(std::uint16_t* bricks) {
    for (int r = 1; r <= 3; ++r) bricks[r] = grid::kFullRow;
  }
};

using MinAtarBreakout = MinAtarGames<BreakoutRules>;

}  // namespace cas::env
