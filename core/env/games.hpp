#pragma once
// Batched two-player board games with struct-of-arrays state: one array per field, one entry per
// game, so a batch of games steps in tight loops (and maps one-to-one onto GPU kernels).
//
//   TicTacToe  cells 0-8 row by row; bitboards of 9 bits per player
//   Connect4   columns 0-6; bitboards of 7 bits per column (6 rows + a sentinel), 49 bits
//
// Values are from the perspective of the player to move. observe() writes two planes: the
// mover's stones, then the opponent's. Deterministic: no randomness inside the games.
// Thread-safety: a batch is not synchronised; distinct games may be stepped from distinct
// threads.
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/env/environments.hpp"

namespace cas::env {

class BoardGames {
 public:
  virtual ~BoardGames() = default;
  virtual const EnvironmentInfo& info() const = 0;
  int size() const { return size_; }
  int actionCount() const { return info().actionCount; }

  virtual void reset(int game) = 0;
  virtual void copy(int fromGame, BoardGames& to, int toGame) const = 0;  // `to` is the same game type
  virtual bool legal(int game, int action) const = 0;
  virtual void play(int game, int action) = 0;  // a legal action
  virtual bool terminal(int game) const = 0;
  // For a terminal position: +1 the mover has won, -1 lost, 0 draw (the mover never has won in
  // these games: the last player to move did).
  virtual float terminalValue(int game) const = 0;
  virtual int moveCount(int game) const = 0;
  virtual int toMove(int game) const = 0;  // 0 first player, 1 second
  virtual void observe(int game, float* planes) const = 0;
  virtual std::string render(int game) const = 0;
  // A number that identifies the position (for transposition tables).
  virtual std::uint64_t key(int game) const = 0;
  // A symmetry of the board for augmentation: maps observation planes and policy vectors.
  virtual int symmetryCount() const = 0;
  virtual void applySymmetry(int symmetry, float* planes, float* policy) const = 0;
  // Parses "MOVES" in the game's notation (tictactoe cells 1-9, connect4 columns 1-7) into
  // actions; returns false with `error` on a bad or illegal move.
  bool playMoves(int game, const std::string& moves, std::string* error);
  std::string actionName(int action) const { return std::to_string(action + 1); }

 protected:
  explicit BoardGames(int size) : size_(size) {}
  int size_;
};

std::unique_ptr<BoardGames> makeBoardGames(const std::string& environment, int size);

// The moves of a random game (each move uniform over the legal ones) stopped after `depth`
// moves with the game not over: games that end sooner are drawn again, up to `tries` games in
// all (nullopt then: the depth is out of reach). For solver benchmarks and judged positions.
std::optional<std::vector<int>> randomPosition(BoardGames& scratch, int depth, std::mt19937_64& rng, int tries = 100000);

}  // namespace cas::env
