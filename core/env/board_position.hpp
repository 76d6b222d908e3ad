#pragma once
// A board game's position as something to draw and to click on: who holds each cell after a
// list of moves from the start, which moves are legal, where a move's stone lands, and the
// result with its winning line. Views (the studio's board) read it; the rules stay in games.hpp.
// Thread-safety: a BoardPosition is a plain value; describePosition may run on any thread.
#include <optional>
#include <string>
#include <vector>

#include "core/env/environments.hpp"

namespace cas::env {

struct BoardPosition {
  std::string environment;
  int rows = 0, columns = 0;
  BoardGeometry::Stones stones = BoardGeometry::Stones::CrossesAndNoughts;  // how to draw them
  std::vector<int> moves;   // actions from the start
  std::vector<int> cells;   // rows * columns, row 0 at the top: -1 empty, else the player (0 first, 1 second)
  std::vector<bool> legal;  // per action
  int toMove = 0;           // the player to move (0 first, 1 second)
  bool over = false;
  int winner = -1;               // when over: the player who won, -1 for a draw
  std::vector<int> winningLine;  // cells of the winning line, when someone won
  int lastCell = -1;             // the cell of the last move, -1 at the start

  int actionCount() const { return int(legal.size()); }
  // True when an action names a cell (tic-tac-toe); false when it names a column the stone
  // drops down (Connect Four).
  bool placesOnCells() const { return actionCount() == rows * columns; }
  // The cell a stone played with `action` would occupy; -1 when the move is not legal.
  int landingCell(int action) const;
  // The action that puts a stone on `cell` (for a dropping game: the cell's column); -1 when
  // that cell cannot be played now.
  int actionForCell(int cell) const;
};

// Replays `moves` (actions, 0-based) in `environment`. nullopt with `error` when the environment
// is not a board game or a move is illegal.
std::optional<BoardPosition> describePosition(const std::string& environment, const std::vector<int>& moves, std::string* error);

// The moves in the notation of `cuda-agent analyze` and AlphaZeroTrainer::analyse: "159".
std::string moveNotation(const std::vector<int>& moves);

}  // namespace cas::env
