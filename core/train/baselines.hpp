#pragma once
// Opponents an agent is evaluated against: uniform random, pure Monte Carlo tree search with
// random rollouts (no network), and the perfect player of the games that have a solver
// (EnvironmentInfo::perfectPlayer: tic-tac-toe, Connect Four).
// Thread-safety: each Opponent is used by one thread.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env/games.hpp"

namespace cas::train {

// The perfect player could not solve a position in its time: the sentence, and the board apart,
// so that a message can escape the sentence's input and still print the board on its lines.
class UnsolvedMove : public std::runtime_error {
 public:
  UnsolvedMove(const std::string& sentence, const std::string& board)
      : std::runtime_error(sentence + " The position:\n" + board), sentence(sentence), board(board) {}
  std::string sentence, board;
};

class Opponent {
 public:
  virtual ~Opponent() = default;
  virtual std::string name() const = 0;
  // A legal move in game `game` of `positions` (not terminal).
  virtual int choose(const env::BoardGames& positions, int game) = 0;
  // A move in each of `games`, in that order; an opponent that can decide them together (another
  // agent's search, one batch for all) overrides it.
  virtual std::vector<int> chooseAll(const env::BoardGames& positions, const std::vector<int>& games) {
    std::vector<int> moves;
    moves.reserve(games.size());
    for (int g : games) moves.push_back(choose(positions, g));
    return moves;
  }
  // A match's notices, for an opponent that follows the games itself (another agent's search):
  // game `game` starts afresh; `action` was played in it (by either side).
  virtual void started(int game) { (void)game; }
  virtual void moved(int game, int action) { (void)game, (void)action; }
};

// "random", "mcts:ROLLOUTS", "perfect" or "perfect:SECONDS" (the games with a solver). Returns
// null with `error` set for an unknown or unsupported opponent.
//
// The perfect player picks at random among the moves that keep the best verdict (win, draw or
// loss), solving each move within SECONDS (kPerfectMoveSeconds by default); its table persists
// across moves and games. A move it cannot solve in that time makes choose() throw
// std::runtime_error saying so, since any move it then played would be a guess: Connect Four's
// first moves need minutes.
std::unique_ptr<Opponent> makeOpponent(const std::string& spec, const std::string& environment, std::uint64_t seed, std::string* error);
inline constexpr double kPerfectMoveSeconds = 60;

}  // namespace cas::train
