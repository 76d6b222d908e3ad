#pragma once
// The Connect Four perfect-play judge: a bitboard negamax with alpha-beta after Pascal Pons'
// solver (http://blog.gamesolver.org/solving-connect-four/), scores in his convention
// (perfect_play.hpp).
//   - Bitboards in the games' own layout (games.cpp): column c holds bits 7c (bottom) to 7c+5,
//     bit 7c+6 stays empty so that shifts never carry a line across columns.
//   - Alpha-beta over the moves that do not lose at once (a move under an opponent's winning
//     cell is never searched; a forced block is the only move searched).
//   - Move ordering: the moves that create the most winning cells first, ties broken centre
//     first (columns 4, 3, 5, 2, 6, 1, 7).
//   - A transposition table of a fixed size (set at construction) holding upper or lower bounds;
//     entries are replaced, never chained, so memory stays at that size.
//   - Iterative deepening over the distance to the end: a sequence of null-window searches
//     narrows the score's interval, probing near its ends first, where a quick win or loss is
//     proven with few positions; weak mode narrows [-1, 1] only.
//   - Limits on nodes and seconds: past either the position is reported unsolved with the
//     bounds proven so far. Entries proven before the stop stay in the table (they are exact
//     bounds), so a later search of a nearby position starts from them.
// Thread-safety: one Connect4Solver per thread (its table is unsynchronised).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/perfect_play.hpp"

namespace cas::env {

class Connect4Solver final : public PerfectPlayer {
 public:
  static constexpr std::size_t kDefaultTableBytes = std::size_t(64) << 20;
  static constexpr std::size_t kMinTableBytes = std::size_t(64) << 10;
  // A table of the largest power of two of 8-byte entries within `tableBytes`; throws
  // std::invalid_argument below kMinTableBytes.
  explicit Connect4Solver(std::size_t tableBytes = kDefaultTableBytes);

  Solution solve(const BoardGames& positions, int game, SolveMode mode, const SolveLimits& limits) override;
  // Forgets every entry: searches after it are as from a new solver.
  void clearTable();
  std::size_t tableBytes() const { return table_.size() * sizeof(std::uint64_t); }

 private:
  struct Position;
  int negamax(const Position& p, int alpha, int beta);
  bool outOfLimits();
  std::uint64_t tableIndex(std::uint64_t key) const;

  std::vector<std::uint64_t> table_;  // key in the low 56 bits, the bound's code in the top 8
  int tableShift_ = 0;                // 64 - log2(entries), for Fibonacci hashing
  std::int64_t nodes_ = 0, nodeLimit_ = 0;
  double secondsLimit_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool stopped_ = false;
};

}  // namespace cas::env
