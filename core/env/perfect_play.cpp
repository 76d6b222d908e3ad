#include "core/env/perfect_play.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace cas::env {

std::vector<std::optional<Solution>> PerfectPlayer::solveMoves(const BoardGames& positions, int game, SolveMode mode,
                                                               const SolveLimits& limits) {
  const auto start = std::chrono::steady_clock::now();
  const std::optional<BoardGeometry>& board = positions.info().board;
  const int cells = board ? board->rows * board->columns : 0;
  const int n = positions.moveCount(game);
  auto scratch = makeBoardGames(positions.info().name, 1);
  std::vector<std::optional<Solution>> out(size_t(positions.actionCount()));
  std::int64_t nodesUsed = 0;
  for (int a = 0; a < positions.actionCount(); ++a) {
    if (!positions.legal(game, a)) continue;
    // What is left of the limits for this move; none left: the move stays unsolved with the
    // widest bounds (a win at the earliest with this stone, a loss with the opponent's next).
    SolveLimits left = limits;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (limits.nodes > 0) left.nodes = limits.nodes - nodesUsed;
    if (limits.seconds > 0) left.seconds = limits.seconds - elapsed;
    if ((limits.nodes > 0 && left.nodes <= 0) || (limits.seconds > 0 && left.seconds <= 0)) {
      Solution none;
      none.lower = mode == SolveMode::Weak ? -1 : -(cells - n) / 2;
      none.upper = mode == SolveMode::Weak ? 1 : (cells + 1 - n) / 2;
      out[size_t(a)] = none;
      continue;
    }
    positions.copy(game, *scratch, 0);
    scratch->play(0, a);
    const Solution child = solve(*scratch, 0, mode, left);
    nodesUsed += child.nodes;
    Solution mine = child;  // the child's value is for the opponent: negated, bounds swapped
    mine.score = -child.score;
    mine.lower = -child.upper;
    mine.upper = -child.lower;
    out[size_t(a)] = mine;
  }
  return out;
}

std::vector<int> perfectMoves(const std::vector<std::optional<Solution>>& moves) {
  bool any = false;
  int ceiling = 0;  // the most any legal move may score
  for (const std::optional<Solution>& m : moves) {
    if (!m) continue;
    const int most = m->solved ? m->score : m->upper;
    ceiling = any ? std::max(ceiling, most) : most;
    any = true;
  }
  std::vector<int> actions;
  for (int a = 0; a < int(moves.size()); ++a)
    if (moves[size_t(a)] && moves[size_t(a)]->solved && moves[size_t(a)]->score == ceiling) actions.push_back(a);
  return actions;
}

std::optional<bool> isMistake(const std::vector<std::optional<Solution>>& moves, int action) {
  if (action < 0 || action >= int(moves.size()) || !moves[size_t(action)])
    throw std::invalid_argument("move " + std::to_string(action + 1) + " is not a legal move of the position judged");
  const Solution& played = *moves[size_t(action)];
  if (!played.solved) return std::nullopt;
  const int verdict = played.verdict();
  auto sign = [](int x) { return (x > 0) - (x < 0); };
  bool open = false;  // an unsolved move might still be better
  for (const std::optional<Solution>& m : moves) {
    if (!m) continue;
    if (sign(m->lower) > verdict) return true;  // a solved move's lower bound is its score
    if (!m->solved && sign(m->upper) > verdict) open = true;
  }
  if (open) return std::nullopt;
  return false;
}

// --- tic-tac-toe --------------------------------------------------------------------------------

namespace {
constexpr int kTicTacToeCells = 9;
}

TicTacToeSolver::TicTacToeSolver() : scratch_(makeBoardGames("tictactoe", kTicTacToeCells + 1)) {}

int TicTacToeSolver::negamax(int depth) {
  if (scratch_->terminal(depth))
    return scratch_->terminalValue(depth) < 0 ? -(kTicTacToeCells + 2 - scratch_->moveCount(depth)) / 2 : 0;
  const std::uint64_t key = scratch_->key(depth);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  int best = -kTicTacToeCells;
  for (int a = 0; a < kTicTacToeCells; ++a) {
    if (!scratch_->legal(depth, a)) continue;
    scratch_->copy(depth, *scratch_, depth + 1);
    scratch_->play(depth + 1, a);
    best = std::max(best, -negamax(depth + 1));
  }
  memo_[key] = best;
  return best;
}

Solution TicTacToeSolver::solve(const BoardGames& positions, int game, SolveMode mode, const SolveLimits&) {
  const std::optional<BoardGeometry>& b = positions.info().board;
  if (!b || b->rows != 3 || b->columns != 3 || b->inARow != 3 || b->dropsInColumns)
    throw std::invalid_argument("the tic-tac-toe solver cannot judge a position of " + positions.info().name);
  if (game < 0 || game >= positions.size())
    throw std::invalid_argument("game " + std::to_string(game) + " is not one of the " + std::to_string(positions.size()) + " games");
  const auto start = std::chrono::steady_clock::now();
  const std::size_t known = memo_.size();
  positions.copy(game, *scratch_, 0);
  const int score = negamax(0);
  Solution s;
  s.solved = true;
  s.score = s.lower = s.upper = mode == SolveMode::Weak ? (score > 0) - (score < 0) : score;
  s.nodes = std::int64_t(memo_.size() - known);  // positions newly solved; the memo keeps the rest
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace cas::env
