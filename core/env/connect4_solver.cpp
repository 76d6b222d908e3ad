#include "core/env/connect4_solver.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cas::env {
namespace {

constexpr int kWidth = 7, kHeight = 6, kCells = kWidth * kHeight;
// No score lies outside these: the quickest loss comes with the opponent's fourth stone, the
// quickest win with the mover's fourth.
constexpr int kMinScore = -(kCells / 2) + 3, kMaxScore = (kCells + 1) / 2 - 3;
constexpr int kScoreSpan = kMaxScore - kMinScore + 1;

constexpr std::uint64_t bottomRow() {
  std::uint64_t m = 0;
  for (int c = 0; c < kWidth; ++c) m |= std::uint64_t(1) << (c * (kHeight + 1));
  return m;
}
constexpr std::uint64_t kBottom = bottomRow();
constexpr std::uint64_t kBoard = kBottom * ((std::uint64_t(1) << kHeight) - 1);
constexpr std::uint64_t columnCells(int c) { return ((std::uint64_t(1) << kHeight) - 1) << (c * (kHeight + 1)); }
// Centre columns take part in more lines, so their moves are tried first.
constexpr int kColumnOrder[kWidth] = {3, 2, 4, 1, 5, 0, 6};

// Keys use 49 bits (current + mask < 2 * kBoard); the top byte of an entry holds its bound.
constexpr std::uint64_t kKeyBits = (std::uint64_t(1) << 56) - 1;

// The empty cells that would complete a line of four for the stones `own` (`mask`: all stones).
std::uint64_t winningCells(std::uint64_t own, std::uint64_t mask) {
  std::uint64_t r = (own << 1) & (own << 2) & (own << 3);  // on top of three in a column
  // Along a row (shift 7) and the two diagonals (6, 8): three on one side, or two and one.
  for (const int shift : {kHeight + 1, kHeight, kHeight + 2}) {
    std::uint64_t pair = (own << shift) & (own << 2 * shift);
    r |= pair & (own << 3 * shift);
    r |= pair & (own >> shift);
    pair = (own >> shift) & (own >> 2 * shift);
    r |= pair & (own << shift);
    r |= pair & (own >> 3 * shift);
  }
  return r & (kBoard ^ mask);
}

void requireConnectFour(const BoardGames& games, int game) {
  const std::optional<BoardGeometry>& b = games.info().board;
  if (!b || b->rows != kHeight || b->columns != kWidth || b->inARow != 4 || !b->dropsInColumns)
    throw std::invalid_argument("the Connect Four solver cannot judge a position of " + games.info().name);
  if (game < 0 || game >= games.size())
    throw std::invalid_argument("game " + std::to_string(game) + " is not one of the " + std::to_string(games.size()) + " games");
}

void requireLimits(const SolveLimits& limits) {
  if (limits.nodes < 0 || !(limits.seconds >= 0) || !std::isfinite(limits.seconds))
    throw std::invalid_argument("solver limits must be non-negative (0: none); got " + std::to_string(limits.nodes) + " nodes, " +
                                std::to_string(limits.seconds) + " seconds");
}

}  // namespace

struct Connect4Solver::Position {
  std::uint64_t current = 0;  // the stones of the player to move
  std::uint64_t mask = 0;     // all stones
  int moves = 0;

  // Unique per position: mask + bottom row marks each column's height, and the mover's stones
  // added to the mask never carry past it.
  std::uint64_t key() const { return current + mask; }
  std::uint64_t possible() const { return (mask + kBottom) & kBoard; }
  bool canWinNext() const { return winningCells(current, mask) & possible(); }
  // The moves (each as the cell it fills) that do not let the opponent win with its next stone:
  // none when the opponent threatens twice, the block when it threatens once, and never the cell
  // under one of its winning cells.
  std::uint64_t nonLosingMoves() const {
    std::uint64_t moves = possible();
    const std::uint64_t threats = winningCells(current ^ mask, mask);
    if (const std::uint64_t forced = moves & threats) {
      if (forced & (forced - 1)) return 0;
      moves = forced;
    }
    return moves & ~(threats >> 1);
  }
  // Ordering: a move that opens more winning cells for the mover is more likely to be best.
  int moveScore(std::uint64_t move) const { return std::popcount(winningCells(current | move, mask)); }
  void play(std::uint64_t move) {
    current ^= mask;  // the opponent's stones become the mover's
    mask |= move;
    ++moves;
  }
};

Connect4Solver::Connect4Solver(std::size_t tableBytes) {
  if (tableBytes < kMinTableBytes)
    throw std::invalid_argument("the Connect Four solver's transposition table needs at least " + std::to_string(kMinTableBytes >> 10) +
                                " KiB; got " + std::to_string(tableBytes) + " bytes");
  const std::size_t entries = std::bit_floor(tableBytes / sizeof(std::uint64_t));
  tableShift_ = 64 - std::countr_zero(entries);
  table_.assign(entries, 0);
}

void Connect4Solver::clearTable() { std::fill(table_.begin(), table_.end(), 0); }

std::uint64_t Connect4Solver::tableIndex(std::uint64_t key) const {
  return (key * 0x9E3779B97F4A7C15ull) >> tableShift_;  // Fibonacci hashing spreads nearby keys
}

bool Connect4Solver::outOfLimits() {
  if (stopped_) return true;
  ++nodes_;
  if (nodeLimit_ > 0 && nodes_ > nodeLimit_) stopped_ = true;
  // The clock is read every 4,096 positions: a few microseconds past the limit at most.
  else if (secondsLimit_ > 0 && (nodes_ & 4095) == 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > secondsLimit_)
    stopped_ = true;
  return stopped_;
}

// The score of `p` within [alpha, beta] (fail-hard: a value <= alpha is an upper bound, >= beta
// a lower bound). The player to move cannot win with its next stone. Once stopped_ is set the
// value means nothing and every caller returns at once without storing it.
int Connect4Solver::negamax(const Position& p, int alpha, int beta) {
  if (outOfLimits()) return 0;
  const std::uint64_t next = p.nonLosingMoves();
  if (!next) return -(kCells - p.moves) / 2;  // the opponent wins with its next stone
  if (p.moves >= kCells - 2) return 0;        // neither side can win with the last two stones
  const int lowest = -(kCells - 2 - p.moves) / 2;  // the opponent cannot win with its next stone
  if (alpha < lowest) {
    alpha = lowest;
    if (alpha >= beta) return alpha;
  }
  const int highest = (kCells - 1 - p.moves) / 2;  // the mover cannot win with this stone
  if (beta > highest) {
    beta = highest;
    if (alpha >= beta) return beta;
  }
  const std::uint64_t key = p.key();
  std::uint64_t& slot = table_[tableIndex(key)];
  if ((slot & kKeyBits) == key && (slot >> 56) != 0) {
    const int code = int(slot >> 56);
    if (code > kScoreSpan) {  // a lower bound
      const int bound = code - kScoreSpan + kMinScore - 1;
      if (alpha < bound) {
        alpha = bound;
        if (alpha >= beta) return alpha;
      }
    } else {  // an upper bound
      const int bound = code + kMinScore - 1;
      if (beta > bound) {
        beta = bound;
        if (alpha >= beta) return beta;
      }
    }
  }
  // Bounds are stored clamped to the possible scores: still true, and they fit the code.
  auto store = [&](int value, bool lower) {
    const int v = std::clamp(value, kMinScore, kMaxScore);
    slot = key | (std::uint64_t(v - kMinScore + 1 + (lower ? kScoreSpan : 0)) << 56);
  };

  // The candidate moves sorted by moveScore, highest first; an insertion keeps equal scores in
  // column order, so ties go to the centre.
  std::uint64_t moves[kWidth];
  int scores[kWidth], count = 0;
  for (const int column : kColumnOrder) {
    const std::uint64_t move = next & columnCells(column);
    if (!move) continue;
    const int score = p.moveScore(move);
    int i = count++;
    for (; i > 0 && scores[i - 1] < score; --i) {
      moves[i] = moves[i - 1];
      scores[i] = scores[i - 1];
    }
    moves[i] = move;
    scores[i] = score;
  }
  for (int i = 0; i < count; ++i) {
    Position child = p;
    child.play(moves[i]);
    const int score = -negamax(child, -beta, -alpha);
    if (stopped_) return 0;
    if (score >= beta) {
      store(score, true);
      return score;
    }
    if (score > alpha) alpha = score;
  }
  store(alpha, false);
  return alpha;
}

Solution Connect4Solver::solve(const BoardGames& games, int game, SolveMode mode, const SolveLimits& limits) {
  requireConnectFour(games, game);
  requireLimits(limits);
  start_ = std::chrono::steady_clock::now();
  nodes_ = 0;
  nodeLimit_ = limits.nodes;
  secondsLimit_ = limits.seconds;
  stopped_ = false;
  const int n = games.moveCount(game);
  auto finish = [&](bool solved, int lower, int upper) {
    Solution s;
    s.solved = solved;
    s.score = lower;
    s.lower = lower;
    s.upper = upper;
    s.nodes = nodes_;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return s;
  };
  auto exact = [&](int score) {
    const int v = mode == SolveMode::Weak ? (score > 0) - (score < 0) : score;
    return finish(true, v, v);
  };
  if (games.terminal(game)) return exact(games.terminalValue(game) < 0 ? -(kCells + 2 - n) / 2 : 0);

  float planes[2 * kCells];
  games.observe(game, planes);
  Position p;
  for (int row = 0; row < kHeight; ++row)
    for (int column = 0; column < kWidth; ++column) {
      const std::uint64_t bit = std::uint64_t(1) << (column * (kHeight + 1) + (kHeight - 1 - row));  // plane row 0 is the top
      if (planes[row * kWidth + column] > 0.5f) p.current |= bit;
      if (planes[row * kWidth + column] > 0.5f || planes[kCells + row * kWidth + column] > 0.5f) p.mask |= bit;
    }
  p.moves = n;
  if (p.canWinNext()) return exact((kCells + 1 - n) / 2);

  int min = -(kCells - n) / 2, max = (kCells + 1 - n) / 2;
  if (mode == SolveMode::Weak) {
    min = std::max(min, -1);
    max = std::min(max, 1);
  }
  while (min < max) {
    // A null window at `med` tells whether the score is above it. Probes nearer the ends than
    // the middle settle quick wins and losses first, which take few positions to prove.
    int med = min + (max - min) / 2;
    if (med <= 0 && min / 2 < med) med = min / 2;
    else if (med >= 0 && max / 2 > med) med = max / 2;
    // A cut-off may return past the window; weak mode's interval is clipped to [-1, 1], so the
    // result is clipped to it too.
    const int r = std::clamp(negamax(p, med, med + 1), min, max);
    if (stopped_) break;
    if (r <= med) max = r;
    else min = r;
  }
  return finish(!stopped_, min, max);
}

}  // namespace cas::env
