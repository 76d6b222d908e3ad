#include "core/env/games.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace cas::env {

bool BoardGames::playMoves(int game, const std::string& moves, std::string* error) {
  reset(game);
  int played = 0;
  for (size_t i = 0; i < moves.size(); ++i) {
    const char c = moves[i];
    if (c == ' ' || c == ',') continue;
    const int action = c - '1';
    if (c < '1' || action >= actionCount()) {
      if (error) *error = std::string("'") + c + "' at position " + std::to_string(i + 1) + " is not a move (expected 1-" + std::to_string(actionCount()) + ")";
      return false;
    }
    if (terminal(game)) {
      if (error)
        *error = "the game is already over before move " + std::to_string(played + 1) + " ('" + c + "' at position " + std::to_string(i + 1) + ")";
      return false;
    }
    if (!legal(game, action)) {
      if (error) *error = "move " + std::string(1, c) + " at position " + std::to_string(i + 1) + " is illegal";
      return false;
    }
    play(game, action);
    ++played;
  }
  return true;
}

namespace {

// --- tic-tac-toe ------------------------------------------------------------------------------

class TicTacToe final : public BoardGames {
 public:
  explicit TicTacToe(int n) : BoardGames(n), mine_(size_t(n)), theirs_(size_t(n)), moves_(size_t(n)) {}
  const EnvironmentInfo& info() const override { return *findEnvironment("tictactoe"); }

  void reset(int g) override { mine_[size_t(g)] = theirs_[size_t(g)] = 0; moves_[size_t(g)] = 0; }
  void copy(int from, BoardGames& to, int toGame) const override {
    auto& t = static_cast<TicTacToe&>(to);
    t.mine_[size_t(toGame)] = mine_[size_t(from)];
    t.theirs_[size_t(toGame)] = theirs_[size_t(from)];
    t.moves_[size_t(toGame)] = moves_[size_t(from)];
  }
  bool legal(int g, int a) const override { return a >= 0 && a < 9 && !(((mine_[size_t(g)] | theirs_[size_t(g)]) >> a) & 1) && !terminal(g); }
  void play(int g, int a) override {
    // The mover's stones become the opponent's from the next mover's point of view.
    const std::uint16_t placed = std::uint16_t(mine_[size_t(g)] | (1u << a));
    mine_[size_t(g)] = theirs_[size_t(g)];
    theirs_[size_t(g)] = placed;
    ++moves_[size_t(g)];
  }
  bool terminal(int g) const override { return wins(theirs_[size_t(g)]) || moves_[size_t(g)] == 9; }
  float terminalValue(int g) const override { return wins(theirs_[size_t(g)]) ? -1.0f : 0.0f; }
  int moveCount(int g) const override { return moves_[size_t(g)]; }
  int toMove(int g) const override { return moves_[size_t(g)] % 2; }
  void observe(int g, float* p) const override {
    for (int i = 0; i < 9; ++i) {
      p[i] = float((mine_[size_t(g)] >> i) & 1);
      p[9 + i] = float((theirs_[size_t(g)] >> i) & 1);
    }
  }
  std::string render(int g) const override {
    const bool xToMove = toMove(g) == 0;
    std::string s;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        const int i = r * 3 + c;
        const bool m = (mine_[size_t(g)] >> i) & 1, t = (theirs_[size_t(g)] >> i) & 1;
        s += m ? (xToMove ? 'X' : 'O') : t ? (xToMove ? 'O' : 'X') : char('1' + i);
        s += c < 2 ? " " : "\n";
      }
    }
    return s;
  }
  std::uint64_t key(int g) const override { return mine_[size_t(g)] | (std::uint64_t(theirs_[size_t(g)]) << 9); }
  int symmetryCount() const override { return 8; }
  void applySymmetry(int sym, float* planes, float* policy) const override {
    float p[18], q[9];
    std::copy(planes, planes + 18, p);
    std::copy(policy, policy + 9, q);
    for (int i = 0; i < 9; ++i) {
      const int j = mapCell(sym, i);
      planes[j] = p[i];
      planes[9 + j] = p[9 + i];
      policy[j] = q[i];
    }
  }

 private:
  static bool wins(std::uint16_t b) {
    static constexpr std::uint16_t lines[] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};
    for (std::uint16_t l : lines)
      if ((b & l) == l) return true;
    return false;
  }
  static int mapCell(int sym, int i) {
    int r = i / 3, c = i % 3;
    for (int k = 0; k < sym % 4; ++k) {  // rotate 90 degrees
      const int nr = c, nc = 2 - r;
      r = nr;
      c = nc;
    }
    if (sym >= 4) c = 2 - c;  // mirror
    return r * 3 + c;
  }
  std::vector<std::uint16_t> mine_, theirs_;
  std::vector<std::uint8_t> moves_;
};

// --- Connect Four -------------------------------------------------------------------------------

class Connect4 final : public BoardGames {
 public:
  explicit Connect4(int n) : BoardGames(n), mine_(size_t(n)), all_(size_t(n)), moves_(size_t(n)), won_(size_t(n)) {}
  const EnvironmentInfo& info() const override { return *findEnvironment("connect4"); }

  void reset(int g) override { mine_[size_t(g)] = all_[size_t(g)] = 0; moves_[size_t(g)] = 0; won_[size_t(g)] = 0; }
  void copy(int from, BoardGames& to, int toGame) const override {
    auto& t = static_cast<Connect4&>(to);
    t.mine_[size_t(toGame)] = mine_[size_t(from)];
    t.all_[size_t(toGame)] = all_[size_t(from)];
    t.moves_[size_t(toGame)] = moves_[size_t(from)];
    t.won_[size_t(toGame)] = won_[size_t(from)];
  }
  bool legal(int g, int a) const override {
    return a >= 0 && a < 7 && !terminal(g) && !(all_[size_t(g)] & topCell(a));
  }
  void play(int g, int a) override {
    const std::uint64_t all = all_[size_t(g)];
    const std::uint64_t moved = all ^ mine_[size_t(g)];  // the opponent's stones become "mine" next
    const std::uint64_t newAll = all | (all + bottomCell(a));
    const std::uint64_t placedBy = mine_[size_t(g)] | (newAll ^ all);
    won_[size_t(g)] = fourInARow(placedBy);
    mine_[size_t(g)] = moved;
    all_[size_t(g)] = newAll;
    ++moves_[size_t(g)];
  }
  bool terminal(int g) const override { return won_[size_t(g)] || moves_[size_t(g)] == 42; }
  float terminalValue(int g) const override { return won_[size_t(g)] ? -1.0f : 0.0f; }
  int moveCount(int g) const override { return moves_[size_t(g)]; }
  int toMove(int g) const override { return moves_[size_t(g)] % 2; }
  void observe(int g, float* p) const override {
    const std::uint64_t mine = mine_[size_t(g)], theirs = all_[size_t(g)] ^ mine;
    for (int row = 0; row < 6; ++row)
      for (int col = 0; col < 7; ++col) {
        const int bit = col * 7 + (5 - row);  // plane row 0 is the top row
        p[row * 7 + col] = float((mine >> bit) & 1);
        p[42 + row * 7 + col] = float((theirs >> bit) & 1);
      }
  }
  std::string render(int g) const override {
    const bool firstToMove = toMove(g) == 0;
    const std::uint64_t mine = mine_[size_t(g)], theirs = all_[size_t(g)] ^ mine;
    std::string s;
    for (int row = 5; row >= 0; --row) {
      for (int col = 0; col < 7; ++col) {
        const int bit = col * 7 + row;
        s += (mine >> bit) & 1 ? (firstToMove ? 'X' : 'O') : (theirs >> bit) & 1 ? (firstToMove ? 'O' : 'X') : '.';
        s += col < 6 ? " " : "\n";
      }
    }
    return s + "1 2 3 4 5 6 7\n";
  }
  std::uint64_t key(int g) const override { return mine_[size_t(g)] + all_[size_t(g)] + (std::uint64_t(moves_[size_t(g)] & 1) << 63); }
  int symmetryCount() const override { return 2; }
  void applySymmetry(int sym, float* planes, float* policy) const override {
    if (sym == 0) return;
    for (int plane = 0; plane < 2; ++plane)
      for (int row = 0; row < 6; ++row) std::reverse(planes + plane * 42 + row * 7, planes + plane * 42 + row * 7 + 7);
    std::reverse(policy, policy + 7);
  }

 private:
  static std::uint64_t bottomCell(int col) { return 1ull << (col * 7); }
  static std::uint64_t topCell(int col) { return 1ull << (col * 7 + 5); }
  static bool fourInARow(std::uint64_t b) {
    for (int shift : {1, 7, 6, 8}) {  // vertical, horizontal, two diagonals
      const std::uint64_t m = b & (b >> shift);
      if (m & (m >> (2 * shift))) return true;
    }
    return false;
  }
  std::vector<std::uint64_t> mine_, all_;
  std::vector<std::uint8_t> moves_, won_;
};

}  // namespace

std::unique_ptr<BoardGames> makeBoardGames(const std::string& environment, int size) {
  if (environment == "tictactoe") return std::make_unique<TicTacToe>(size);
  if (environment == "connect4") return std::make_unique<Connect4>(size);
  throw std::invalid_argument("'" + environment + "' is not a two-player board game");
}

std::optional<std::vector<int>> randomPosition(BoardGames& scratch, int depth, std::mt19937_64& rng, int tries) {
  std::vector<int> moves, legal;
  for (int t = 0; t < tries; ++t) {
    moves.clear();
    scratch.reset(0);
    while (int(moves.size()) < depth && !scratch.terminal(0)) {
      legal.clear();
      for (int a = 0; a < scratch.actionCount(); ++a)
        if (scratch.legal(0, a)) legal.push_back(a);
      moves.push_back(legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)]);
      scratch.play(0, moves.back());
    }
    if (!scratch.terminal(0)) return moves;
  }
  return std::nullopt;
}

}  // namespace cas::env
