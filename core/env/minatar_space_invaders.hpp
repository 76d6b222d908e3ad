#pragma once
// MinAtar Space Invaders with the rules of the `minatar` package: a cannon on the bottom row
// fires upward (at most once every 5 steps); a block of 4 x 6 aliens marches sideways and steps
// down at the edges, faster as fewer remain, and the alien nearest the cannon fires every 10
// steps; +1 per alien hit; an enemy bullet or an alien reaching the cannon, or aliens on the
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
// Draws (minatar_games.hpp): only the sticky-action draw at a step.
// Thread-safety: static functions over the caller's state.
#include <cstdint>

#include "core/env/minatar_games.hpp"

namespace cas::env {

struct SpaceInvadersRules {
  static constexpr int kRows = 10, kColumns = 10, kChannels = 6, kActions = 4;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr int kShotCoolDown = 5, kInitialMoveInterval = 12, kFastestMoveInterval = 6, kAlienShotInterval = 10;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  struct Rows {
    std::uint16_t row[kRows] = {};  // bit c of row r: (r, c) is set
  };
  struct Game {
    Rows aliens, bullets, alienBullets;
    int cannon = 5, direction = -1;
    int moveInterval = kInitialMoveInterval, moveTimer = kInitialMoveInterval;
    int alienShotTimer = kAlienShotInterval, shotTimer = 0, rampIndex = 0;
    bool terminal = false;
  };
  using State = MinatarState<Game>;

  CAS_HD static void reset(State& state) {
    state.game = Game{};
    fillAliens(state.game.aliens);
  }
  CAS_HD static int difficulty(const State& state) { return state.game.rampIndex; }

  // minatar's action number for ours (none, left, right, fire: 0, 1, 3, 5), out-of-range actions
  // clamped. Written without clamping first: CUDA 13.0's ptxas (sm_90, -O2) folds
  // `clamp(action, 0, 3) == 3` into the predicate output of a VIMNMX.RELU that is true for every
  // action, so every unsticky action became fire on the device (bench/diagnostics/si_probe.cu).
  CAS_HD static int minatarAction(int action) {
    if (action >= 3) return 5;
    if (action == 2) return 3;
    return action == 1 ? 1 : 0;
  }

  CAS_HD static MinatarStep step(State& state, int action) { return step(state, action, state.random.uniform()); }
  // minatar's Space Invaders `act`, branch for branch; `stickyDraw` in [0, 1).
  CAS_HD static MinatarStep step(State& state, int action, double stickyDraw) {
    const int a = state.sticky.take(minatarAction(action), stickyDraw);
    Game& s = state.game;
    if (s.terminal) return {0.0f, true};

    if (a == 5 && s.shotTimer == 0) {
      s.bullets.row[9] |= std::uint16_t(1u << s.cannon);
      s.shotTimer = kShotCoolDown;
    } else if (a == 1) {
      s.cannon = grid::maxInt(0, s.cannon - 1);
    } else if (a == 3) {
      s.cannon = grid::minInt(9, s.cannon + 1);
    }

    s.bullets = rollRows(s.bullets, -1);  // up one row; those past the top are gone
    s.bullets.row[9] = 0;
    s.alienBullets = rollRows(s.alienBullets, 1);  // down one row; those past the bottom are gone
    s.alienBullets.row[0] = 0;
    if (at(s.alienBullets, 9, s.cannon)) s.terminal = true;

    if (at(s.aliens, 9, s.cannon)) s.terminal = true;
    if (s.moveTimer == 0) {
      s.moveTimer = grid::minInt(count(s.aliens), s.moveInterval);
      if ((anyInColumn(s.aliens, 0) && s.direction < 0) || (anyInColumn(s.aliens, 9) && s.direction > 0)) {
        s.direction = -s.direction;
        if (s.aliens.row[9] != 0) s.terminal = true;
        s.aliens = rollRows(s.aliens, 1);
      } else {
        for (std::uint16_t& row : s.aliens.row) row = rollColumns(row, s.direction);
      }
      if (at(s.aliens, 9, s.cannon)) s.terminal = true;
    }
    if (s.alienShotTimer == 0) {
      s.alienShotTimer = kAlienShotInterval;
      // The alien nearest the cannon: columns by distance (the left one first at a tie), the
      // lowest alien of the first column that has one.
      for (int d = 0; d < kColumns; ++d) {
        int column = -1;
        if (s.cannon - d >= 0 && anyInColumn(s.aliens, s.cannon - d)) column = s.cannon - d;
        else if (d > 0 && s.cannon + d < kColumns && anyInColumn(s.aliens, s.cannon + d)) column = s.cannon + d;
        if (column < 0) continue;
        int row = kRows - 1;
        while (!at(s.aliens, row, column)) --row;
        s.alienBullets.row[row] |= std::uint16_t(1u << column);
        break;
      }
    }

    float reward = 0;
    for (int r = 0; r < kRows; ++r) {
      const std::uint16_t hits = s.aliens.row[r] & s.bullets.row[r];
      reward += float(grid::bitCount(hits));
      s.aliens.row[r] &= std::uint16_t(~hits);
      s.bullets.row[r] &= std::uint16_t(~hits);
    }

    s.shotTimer -= s.shotTimer > 0;
    s.moveTimer -= 1;
    s.alienShotTimer -= 1;
    if (count(s.aliens) == 0) {
      if (s.moveInterval > kFastestMoveInterval) {
        s.moveInterval -= 1;
        s.rampIndex += 1;
      }
      fillAliens(s.aliens);
    }
    return {reward, s.terminal};
  }

  // The observation's ones, into `out` already zero (observeMinatar clears it first; the device
  // kernels clear the row in 16-byte stores).
  CAS_HD static void mark(const State& state, float* out) {
    const Game& s = state.game;
    grid::cell(out, 0, 9, s.cannon) = 1;
    plane(out, 1, s.aliens);
    plane(out, s.direction < 0 ? 2 : 3, s.aliens);
    plane(out, 4, s.bullets);
    plane(out, 5, s.alienBullets);
  }

 private:
  CAS_HD static bool at(const Rows& rows, int r, int c) { return (rows.row[r] >> c) & 1u; }
  CAS_HD static int count(const Rows& rows) {
    int n = 0;
    for (std::uint16_t row : rows.row) n += grid::bitCount(row);
    return n;
  }
  CAS_HD static bool anyInColumn(const Rows& rows, int c) {
    for (std::uint16_t row : rows.row)
      if ((row >> c) & 1u) return true;
    return false;
  }
  // numpy's roll along the rows: row r moves to r + shift, wrapping around.
  CAS_HD static Rows rollRows(const Rows& rows, int shift) {
    Rows out;
    for (int r = 0; r < kRows; ++r) out.row[(r + shift + 10) % 10] = rows.row[r];
    return out;
  }
  // numpy's roll along the columns by one: column c moves to c + shift, wrapping around.
  CAS_HD static std::uint16_t rollColumns(std::uint16_t row, int shift) {
    if (shift > 0) return std::uint16_t(((row << 1) | (row >> 9)) & grid::kFullRow);
    return std::uint16_t(((row >> 1) | (row << 9)) & grid::kFullRow);
  }
  CAS_HD static void fillAliens(Rows& aliens) {
    for (int r = 0; r < 4; ++r) aliens.row[r] = 0b0011111100;  // columns 2-7
  }
  CAS_HD static void plane(float* out, int channel, const Rows& rows) {
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kColumns; ++c)
        if (at(rows, r, c)) grid::cell(out, channel, r, c) = 1;
  }
};

using MinAtarSpaceInvaders = MinAtarGames<SpaceInvadersRules>;

}  // namespace cas::env
