#pragma once
// Perfect play for the board games: the exact value of a position, or "unsolved" when the
// search runs past its limits (a value is never guessed). EnvironmentInfo::perfectPlayer makes
// one for the games that have a solver; evaluation (train/baselines, train/mistakes) and the
// studio's Board view reach it there.
//
// Scores follow Pascal Pons' convention (http://blog.gamesolver.org), for the player to move:
// 0 a draw; a win scores one more than the winner's stones left unplayed when the game ends,
// (cells + 2 - moves at the end) / 2 with cells = 42 for Connect Four and 9 for tic-tac-toe, so
// a quicker win scores more; a loss scores minus the winner's score. The empty Connect Four
// board scores +1: the first player wins with the last stone of its 21.
//
// Thread-safety: a PerfectPlayer is used by one thread at a time (it keeps a transposition
// table); distinct players may run on distinct threads.
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/env/games.hpp"

namespace cas::env {

// Weak: only win, draw or loss (-1, 0, +1), which needs far fewer nodes; Strong: the exact score.
enum class SolveMode { Weak, Strong };

// Where a search gives up and reports the position unsolved; 0 means no limit.
struct SolveLimits {
  std::int64_t nodes = 0;
  double seconds = 0;
};

struct Solution {
  bool solved = false;
  int score = 0;             // when solved: the exact score (Strong) or -1, 0, +1 (Weak)
  int lower = 0, upper = 0;  // the bounds proven on `score`; equal when solved
  std::int64_t nodes = 0;    // positions searched
  double seconds = 0;
  // -1 loss, 0 draw, +1 win for the player to move, when solved.
  int verdict() const { return (score > 0) - (score < 0); }
};

class PerfectPlayer {
 public:
  virtual ~PerfectPlayer() = default;
  // The value of game `game` of `positions` for the player to move (a finished game too: its
  // result). Throws std::invalid_argument when `positions` is not this player's game.
  virtual Solution solve(const BoardGames& positions, int game, SolveMode mode, const SolveLimits& limits) = 0;

  // Per action: the value of playing it for the player to move (the negated value of the
  // position it leads to); nullopt for an illegal action. `limits` bound the whole call: the
  // moves left when they run out come back unsolved.
  std::vector<std::optional<Solution>> solveMoves(const BoardGames& positions, int game, SolveMode mode, const SolveLimits& limits);
};

// The actions proven best among `moves` (from solveMoves): solved, with a score no other legal
// move can exceed (an unsolved move may reach its upper bound). Empty when none is proven.
std::vector<int> perfectMoves(const std::vector<std::optional<Solution>>& moves);

// Whether playing `action` (legal) makes the verdict worse than the position's: true when some
// move is proven to reach a better verdict, false when none can, nullopt when `action` or a
// move that might be better is unsolved.
std::optional<bool> isMistake(const std::vector<std::optional<Solution>>& moves, int action);

// Tic-tac-toe by exhaustive negamax: the whole game has 5,478 positions, so every call finishes
// within microseconds and the limits never bind.
class TicTacToeSolver final : public PerfectPlayer {
 public:
  TicTacToeSolver();
  Solution solve(const BoardGames& positions, int game, SolveMode mode, const SolveLimits& limits) override;

 private:
  int negamax(int depth);
  std::unique_ptr<BoardGames> scratch_;        // one slot per depth
  std::unordered_map<std::uint64_t, int> memo_;  // position key -> exact score
};

}  // namespace cas::env
