#pragma once
// Opponents an agent is evaluated against: uniform random, pure Monte Carlo tree search with
// random rollouts (no network), and the perfect player for tic-tac-toe (exact negamax).
// Thread-safety: each Opponent is used by one thread.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

#include "core/env/games.hpp"

namespace cas::train {

class Opponent {
 public:
  virtual ~Opponent() = default;
  virtual std::string name() const = 0;
  // A legal move in game `game` of `positions` (not terminal).
  virtual int choose(const env::BoardGames& positions, int game) = 0;
};

// "random", "mcts:ROLLOUTS" or "perfect" (tic-tac-toe only). Returns null with `error` set for
// an unknown or unsupported opponent.
std::unique_ptr<Opponent> makeOpponent(const std::string& spec, const std::string& environment, std::uint64_t seed, std::string* error);

// The exact value of a tic-tac-toe position for the player to move (+1 win, 0 draw, -1 loss),
// and the moves that achieve it.
class PerfectTicTacToe {
 public:
  PerfectTicTacToe();
  int value(const env::BoardGames& positions, int game);
  std::vector<int> bestMoves(const env::BoardGames& positions, int game);

 private:
  int negamax(int depth);
  std::unique_ptr<env::BoardGames> scratch_;  // one slot per depth
  std::unordered_map<std::uint64_t, int> memo_;
};

}  // namespace cas::train
