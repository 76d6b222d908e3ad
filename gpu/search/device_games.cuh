#pragma once
// The board games of core/env/games.cpp as device code: one small State per game, held in a
// thread's registers while it walks the tree, and the rules as functions of it. The CPU classes
// are the spec; tests/gpu/test_search_port.cpp plays both on 100k random moves and compares
// state, legality, terminal values and observations.
//
//   TicTacToe::State  mine, theirs: 9-bit boards (cell i = row*3 + column), from the mover's side
//   Connect4::State   mine, all:    7 bits per column (6 rows + a sentinel), bit = column*7 + row
//
// Observation planes (written straight into the network's input rows): the mover's stones, then
// the opponent's, row 0 of a plane being the top row of the board, as the CPU's observe().
// Thread-safety: pure functions of a State.
#include <cstdint>

#include "core/support/host_device.hpp"

namespace cas::gpu::search {

struct TicTacToe {
  static constexpr int kActions = 9, kObsSize = 18, kMaxMoves = 9;
  struct State {
    std::uint16_t mine, theirs;
    std::uint8_t moves;
  };

  CAS_HD static State start() { return {0, 0, 0}; }
  CAS_HD static bool wins(std::uint32_t b) {
    const std::uint32_t lines[8] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};
    bool won = false;
    for (int i = 0; i < 8; ++i) won = won || (b & lines[i]) == lines[i];
    return won;
  }
  CAS_HD static bool terminal(const State& s) { return s.moves == 9 || wins(s.theirs); }
  CAS_HD static float terminalValue(const State& s) { return wins(s.theirs) ? -1.0f : 0.0f; }
  CAS_HD static int moveCount(const State& s) { return s.moves; }
  CAS_HD static std::uint32_t legalMask(const State& s) { return terminal(s) ? 0u : ~std::uint32_t(s.mine | s.theirs) & 0x1FFu; }
  CAS_HD static void play(State& s, int a) {
    const std::uint16_t placed = std::uint16_t(s.mine | (1u << a));
    s.mine = s.theirs;
    s.theirs = placed;
    s.moves = std::uint8_t(s.moves + 1);
  }
  CAS_HD static void encode(const State& s, float* out) {
    for (int i = 0; i < 9; ++i) {
      out[i] = float((s.mine >> i) & 1u);
      out[9 + i] = float((s.theirs >> i) & 1u);
    }
  }
};

struct Connect4 {
  static constexpr int kActions = 7, kObsSize = 84, kMaxMoves = 42;
  struct State {
    std::uint64_t mine, all;
    std::uint8_t moves, won;
  };

  CAS_HD static State start() { return {0, 0, 0, 0}; }
  CAS_HD static bool fourInARow(std::uint64_t b) {
    const int shifts[4] = {1, 7, 6, 8};  // vertical, horizontal, the two diagonals
    bool found = false;
    for (int i = 0; i < 4; ++i) {
      const std::uint64_t m = b & (b >> shifts[i]);
      found = found || (m & (m >> (2 * shifts[i]))) != 0;
    }
    return found;
  }
  CAS_HD static bool terminal(const State& s) { return s.won || s.moves == 42; }
  CAS_HD static float terminalValue(const State& s) { return s.won ? -1.0f : 0.0f; }
  CAS_HD static int moveCount(const State& s) { return s.moves; }
  CAS_HD static std::uint32_t legalMask(const State& s) {
    if (terminal(s)) return 0;
    std::uint32_t mask = 0;
    for (int c = 0; c < 7; ++c) mask |= std::uint32_t(((s.all >> (c * 7 + 5)) & 1u) ^ 1u) << c;
    return mask;
  }
  CAS_HD static void play(State& s, int a) {
    const std::uint64_t all = s.all | (s.all + (std::uint64_t(1) << (a * 7)));
    const std::uint64_t placedBy = s.mine | (all ^ s.all);
    s.won = fourInARow(placedBy) ? 1 : 0;
    s.mine = s.all ^ s.mine;  // the opponent's stones are the next mover's
    s.all = all;
    s.moves = std::uint8_t(s.moves + 1);
  }
  CAS_HD static void encode(const State& s, float* out) {
    const std::uint64_t theirs = s.all ^ s.mine;
    for (int row = 0; row < 6; ++row)
      for (int col = 0; col < 7; ++col) {
        const int bit = col * 7 + (5 - row);
        out[row * 7 + col] = float((s.mine >> bit) & 1u);
        out[42 + row * 7 + col] = float((theirs >> bit) & 1u);
      }
  }
};

}  // namespace cas::gpu::search
