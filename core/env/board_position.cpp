#include "core/env/board_position.hpp"

#include <memory>
#include <stdexcept>

#include "core/env/games.hpp"

namespace cas::env {
namespace {

// The cells of every line through `cell` of at least `needed` stones of its owner.
std::vector<int> winningLineThrough(const BoardPosition& p, int cell, int needed) {
  const int owner = p.cells[size_t(cell)];
  const int row = cell / p.columns, column = cell % p.columns;
  std::vector<int> line;
  for (const auto& [dr, dc] : {std::pair{0, 1}, {1, 0}, {1, 1}, {1, -1}}) {
    std::vector<int> run{cell};
    for (const int sign : {1, -1}) {
      for (int r = row + sign * dr, c = column + sign * dc; r >= 0 && r < p.rows && c >= 0 && c < p.columns; r += sign * dr, c += sign * dc) {
        if (p.cells[size_t(r * p.columns + c)] != owner) break;
        run.push_back(r * p.columns + c);
      }
    }
    if (int(run.size()) >= needed) line.insert(line.end(), run.begin(), run.end());
  }
  return line;
}

}  // namespace

int BoardPosition::landingCell(int action) const {
  if (action < 0 || action >= actionCount() || !legal[size_t(action)]) return -1;
  if (placesOnCells()) return action;
  for (int row = rows - 1; row >= 0; --row)
    if (cells[size_t(row * columns + action)] < 0) return row * columns + action;
  return -1;
}

int BoardPosition::actionForCell(int cell) const {
  if (cell < 0 || cell >= rows * columns) return -1;
  const int action = placesOnCells() ? cell : cell % columns;
  return legal[size_t(action)] ? action : -1;
}

std::optional<BoardPosition> describePosition(const std::string& environment, const std::vector<int>& moves, std::string* error) {
  std::unique_ptr<BoardGames> game;
  try {
    game = makeBoardGames(environment, 1);
  } catch (const std::invalid_argument& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
  const EnvironmentInfo& info = game->info();
  const BoardGeometry& board = *info.board;  // every BoardGames has one
  BoardPosition p;
  p.environment = environment;
  p.rows = board.rows;
  p.columns = board.columns;
  p.stones = board.stones;
  p.cells.assign(size_t(p.rows * p.columns), -1);
  p.legal.assign(size_t(info.actionCount), false);
  game->reset(0);
  for (size_t i = 0; i < moves.size(); ++i) {
    const int action = moves[i];
    if (!game->legal(0, action)) {
      if (error)
        *error = game->terminal(0) ? "the game is already over before move " + std::to_string(i + 1)
                                   : "move " + std::to_string(i + 1) + " (" + std::to_string(action + 1) + ") is illegal";
      return std::nullopt;
    }
    for (int a = 0; a < info.actionCount; ++a) p.legal[size_t(a)] = game->legal(0, a);
    p.lastCell = p.landingCell(action);
    p.cells[size_t(p.lastCell)] = game->toMove(0);
    game->play(0, action);
  }
  p.moves = moves;
  p.toMove = game->toMove(0);
  for (int a = 0; a < info.actionCount; ++a) p.legal[size_t(a)] = game->legal(0, a);
  p.over = game->terminal(0);
  if (p.over && game->terminalValue(0) < 0) {  // the player to move has lost: the last mover won
    p.winner = 1 - p.toMove;
    p.winningLine = winningLineThrough(p, p.lastCell, board.inARow);
  }
  return p;
}

std::string moveNotation(const std::vector<int>& moves) {
  std::string text;
  for (int action : moves) text += std::to_string(action + 1);
  return text;
}

}  // namespace cas::env
