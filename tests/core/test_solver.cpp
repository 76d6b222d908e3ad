// The perfect players (core/env/perfect_play, core/env/connect4_solver): Connect Four's exact
// scores against a plain minimax over the games' own rules near the end of the game, weak
// verdicts against the strong scores' signs, published scores, the unsolved path, bad input,
// tic-tac-toe, the move judgements the Board view and evaluation use, and the perfect opponent.
#include <QTest>

#include <chrono>
#include <climits>
#include <random>
#include <unordered_map>

#include "core/env/board_position.hpp"
#include "core/env/connect4_solver.hpp"
#include "core/env/perfect_play.hpp"
#include "core/train/baselines.hpp"

using namespace cas::env;

namespace {

constexpr std::size_t kTable = std::size_t(16) << 20;

// Minimax over BoardGames' rules with no pruning and no move ordering: every move of every
// position is searched. Exact values are cached by position (a cache changes no value), which
// keeps positions with a dozen empty cells to thousands of nodes.
class PlainMinimax {
 public:
  explicit PlainMinimax(const std::string& environment)
      : games_(makeBoardGames(environment, 64)), cells_(games_->info().board->rows * games_->info().board->columns) {}
  int score(const BoardGames& g, int game) {
    g.copy(game, *games_, 0);
    return search(0);
  }

 private:
  int search(int depth) {
    if (games_->terminal(depth)) return games_->terminalValue(depth) < 0 ? -(cells_ + 2 - games_->moveCount(depth)) / 2 : 0;
    const std::uint64_t key = games_->key(depth);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    int best = INT_MIN;
    for (int a = 0; a < games_->actionCount(); ++a) {
      if (!games_->legal(depth, a)) continue;
      games_->copy(depth, *games_, depth + 1);
      games_->play(depth + 1, a);
      best = std::max(best, -search(depth + 1));
    }
    return memo_[key] = best;
  }
  std::unique_ptr<BoardGames> games_;
  int cells_;
  std::unordered_map<std::uint64_t, int> memo_;
};

std::unique_ptr<BoardGames> position(const std::string& environment, const std::vector<int>& moves) {
  auto g = makeBoardGames(environment, 1);
  for (int a : moves) g->play(0, a);
  return g;
}

std::unique_ptr<BoardGames> position(const std::string& environment, const std::string& notation) {
  auto g = makeBoardGames(environment, 1);
  std::string error;
  if (!g->playMoves(0, notation, &error)) qFatal("%s: %s", notation.c_str(), error.c_str());
  return g;
}

int sign(int x) { return (x > 0) - (x < 0); }

}  // namespace

class TestSolver : public QObject {
  Q_OBJECT
 private slots:
  // A few hundred positions of random play with at most 12 empty cells: the solver's exact
  // score, its weak verdict and its per-move scores equal plain minimax, with a large table and
  // with the smallest (where entries replace each other all the time).
  void scoresEqualPlainMinimaxNearTheEnd() {
    Connect4Solver large(kTable), small(Connect4Solver::kMinTableBytes);
    PlainMinimax minimax("connect4");
    auto scratch = makeBoardGames("connect4", 1);
    std::mt19937_64 rng(14);
    int decided = 0;
    for (int i = 0; i < 300; ++i) {
      const int depth = 30 + i % 12;  // 12 to 1 empty cells
      const auto moves = randomPosition(*scratch, depth, rng);
      QVERIFY(moves);
      const auto g = position("connect4", *moves);
      const int expected = minimax.score(*g, 0);
      const QByteArray where = QByteArray::fromStdString(moveNotation(*moves));
      for (Connect4Solver* solver : {&large, &small}) {
        const Solution strong = solver->solve(*g, 0, SolveMode::Strong, {});
        QVERIFY2(strong.solved && strong.score == expected && strong.lower == expected && strong.upper == expected,
                 where + ": " + QByteArray::number(strong.score) + " != " + QByteArray::number(expected));
        const Solution weak = solver->solve(*g, 0, SolveMode::Weak, {});
        QVERIFY2(weak.solved && weak.score == sign(expected), where);
      }
      decided += expected != 0;
      if (i % 10 == 0) {
        const auto perMove = large.solveMoves(*g, 0, SolveMode::Strong, {});
        for (int a = 0; a < 7; ++a) {
          QCOMPARE(perMove[size_t(a)].has_value(), g->legal(0, a));
          if (!perMove[size_t(a)]) continue;
          auto child = position("connect4", *moves);
          child->play(0, a);
          QCOMPARE(perMove[size_t(a)]->score, -minimax.score(*child, 0));
        }
      }
    }
    QVERIFY2(decided > 100, "random play should reach many won or lost endings");
  }

  // Random play stopped at depths 14 to 30: the weak verdict is the sign of the exact score.
  void weakVerdictAgreesWithStrongScore() {
    Connect4Solver solver(std::size_t(64) << 20);
    auto scratch = makeBoardGames("connect4", 1);
    std::mt19937_64 rng(20);
    int wins = 0, draws = 0, losses = 0;
    for (int i = 0; i < 200; ++i) {
      const auto moves = randomPosition(*scratch, 14 + 4 * (i % 5), rng);
      QVERIFY(moves);
      const auto g = position("connect4", *moves);
      const Solution weak = solver.solve(*g, 0, SolveMode::Weak, {});
      const Solution strong = solver.solve(*g, 0, SolveMode::Strong, {});
      QVERIFY(weak.solved && strong.solved);
      QVERIFY2(weak.score == sign(strong.score), QByteArray::fromStdString(moveNotation(*moves)));
      QCOMPARE(weak.verdict(), strong.verdict());
      (strong.score > 0 ? wins : strong.score < 0 ? losses : draws) += 1;
    }
    QVERIFY(wins > 0 && losses > 0);
  }

  // Scores published with Pascal Pons' benchmark (Test_L3_R1 and others), and positions whose
  // values follow from the rules.
  void knownPositions_data() {
    QTest::addColumn<QString>("moves");
    QTest::addColumn<int>("score");
    QTest::newRow("Pons 1") << "2252576253462244111563365343671351441" << -1;
    QTest::newRow("Pons 2") << "7422341735647741166133573473242566" << 1;
    QTest::newRow("Pons 3") << "23163416124767223154467471272416755633" << 0;
    QTest::newRow("Pons 4") << "65214673556155731566316327373221417" << -1;
    QTest::newRow("Pons 5") << "67152117737262713366376314254" << 6;
    QTest::newRow("Pons 6") << "2762751722231276466633475674533" << 5;
    QTest::newRow("Pons 7") << "3575316255751336464276636772271112" << -3;
    QTest::newRow("Pons 8") << "427566236745127177115664464254" << 2;
    // The first player completes column 1 with its fourth stone: (43 - 6) / 2.
    QTest::newRow("win at once") << "121212" << 18;
    // Red holds columns 2, 3 and 4 of the bottom row with both ends open: yellow cannot stop
    // red's fourth stone, the seventh move: -(42 - 5) / 2.
    QTest::newRow("double threat") << "27374" << -18;
    QTest::newRow("finished: the mover lost") << "1212121" << -18;
  }
  void knownPositions() {
    QFETCH(QString, moves);
    QFETCH(int, score);
    Connect4Solver solver(kTable);
    const auto g = position("connect4", moves.toStdString());
    const Solution s = solver.solve(*g, 0, SolveMode::Strong, {});
    QVERIFY(s.solved);
    QCOMPARE(s.score, score);
    QCOMPARE(solver.solve(*g, 0, SolveMode::Weak, {}).score, sign(score));
  }

  // Past a node or time limit the position is unsolved, with bounds that hold; the table stays
  // sound for the searches after it.
  void stopsAtItsLimitsUnsolved() {
    Connect4Solver solver(kTable);
    const auto empty = makeBoardGames("connect4", 1);
    empty->reset(0);
    const Solution byNodes = solver.solve(*empty, 0, SolveMode::Weak, {100000, 0});
    QVERIFY(!byNodes.solved);
    QVERIFY(byNodes.lower <= 1 && byNodes.upper >= 1);  // the first player wins (CAS_SLOW_TESTS in test_solver_opening)
    QVERIFY(byNodes.nodes <= 100001);
    const auto start = std::chrono::steady_clock::now();
    const Solution byTime = solver.solve(*empty, 0, SolveMode::Strong, {0, 0.05});
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY(!byTime.solved);
    QVERIFY(byTime.lower <= 1 && byTime.upper >= 1);
    QVERIFY2(took < 0.5, qPrintable(QString::number(took)));

    // Per move: the limits bound the whole call; the moves left come back unsolved, so no move
    // is proven perfect and none is judged.
    const auto moves = solver.solveMoves(*empty, 0, SolveMode::Weak, {20000, 0});
    for (const auto& m : moves) QVERIFY(m && !m->solved && m->lower <= m->upper);
    QVERIFY(perfectMoves(moves).empty());
    QVERIFY(!isMistake(moves, 0).has_value());

    // The same solver after the stops: still exact.
    PlainMinimax minimax("connect4");
    const auto late = position("connect4", std::string("2252576253462244111563365343671351441"));
    QCOMPARE(solver.solve(*late, 0, SolveMode::Strong, {}).score, minimax.score(*late, 0));
  }

  void refusesBadInput() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Connect4Solver(1024));
    Connect4Solver solver(kTable);
    const auto ticTacToe = makeBoardGames("tictactoe", 1);
    ticTacToe->reset(0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, solver.solve(*ticTacToe, 0, SolveMode::Weak, {}));
    const auto connect4 = makeBoardGames("connect4", 1);
    connect4->reset(0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, solver.solve(*connect4, 1, SolveMode::Weak, {}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, solver.solve(*connect4, 0, SolveMode::Weak, {-1, 0}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TicTacToeSolver().solve(*connect4, 0, SolveMode::Weak, {}));
    const auto full = position("connect4", std::string("444444"));
    const auto moves = solver.solveMoves(*full, 0, SolveMode::Weak, {100000, 0});
    QVERIFY(!moves[3]);  // the full column is no move
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, isMistake(moves, 3));
  }

  // Tic-tac-toe: a draw from the start, every reachable position as plain minimax says.
  void ticTacToeIsExact() {
    TicTacToeSolver solver;
    PlainMinimax minimax("tictactoe");
    auto scratch = makeBoardGames("tictactoe", 1);
    std::mt19937_64 rng(9);
    for (int i = 0; i < 300; ++i) {
      const auto moves = randomPosition(*scratch, i % 9, rng);
      QVERIFY(moves);
      const auto g = position("tictactoe", *moves);
      QCOMPARE(solver.solve(*g, 0, SolveMode::Strong, {}).score, minimax.score(*g, 0));
    }
    const auto empty = position("tictactoe", std::vector<int>{});
    QCOMPARE(solver.solve(*empty, 0, SolveMode::Strong, {}).score, 0);
    QCOMPARE(perfectMoves(solver.solveMoves(*empty, 0, SolveMode::Weak, {})).size(), size_t(9));  // every first move draws
    // X on 1 and 2, O on 4 and 5: cell 3 wins at once ((11 - 5) / 2); a move that does not
    // keep the win is a mistake.
    const auto g = position("tictactoe", std::string("1425"));
    const auto moves = solver.solveMoves(*g, 0, SolveMode::Strong, {});
    QCOMPARE(moves[2]->score, 3);
    QCOMPARE(perfectMoves(moves), std::vector<int>{2});
    for (int a = 0; a < 9; ++a)
      if (moves[size_t(a)]) QCOMPARE(isMistake(moves, a), std::optional<bool>(moves[size_t(a)]->verdict() < 1));
    QCOMPARE(isMistake(moves, 8), std::optional<bool>(true));  // O completes 4-5-6
  }

  // How the Board view and the perfect opponent read a position's moves.
  void judgesMoves() {
    Connect4Solver solver(kTable);
    // Red to move with three in column 1, yellow with three in column 2: red wins at once on
    // column 1 (the only move scoring (43 - 6) / 2); any move but 1 and 2 lets yellow win.
    const auto g = position("connect4", std::string("121212"));
    const auto moves = solver.solveMoves(*g, 0, SolveMode::Strong, {});
    QCOMPARE(moves[0]->score, 18);
    QCOMPARE(perfectMoves(moves), std::vector<int>{0});
    for (int a = 0; a < 7; ++a) QCOMPARE(isMistake(moves, a), std::optional<bool>(moves[size_t(a)]->verdict() < 1));
    for (int a = 2; a < 7; ++a) QCOMPARE(isMistake(moves, a), std::optional<bool>(true));
  }

  void perfectOpponentPlaysConnectFour() {
    std::string error;
    auto perfect = cas::train::makeOpponent("perfect", "connect4", 3, &error);
    QVERIFY2(perfect, error.c_str());
    QCOMPARE(perfect->name(), std::string("perfect"));
    const auto g = position("connect4", std::string("121212"));
    Connect4Solver solver(kTable);
    const auto moves = solver.solveMoves(*g, 0, SolveMode::Weak, {});
    for (int i = 0; i < 10; ++i) QCOMPARE(isMistake(moves, perfect->choose(*g, 0)), std::optional<bool>(false));
    QCOMPARE(cas::train::makeOpponent("perfect:0.5", "connect4", 3, &error)->name(), std::string("perfect:0.5"));
    // Out of time: an error saying so, never a guessed move.
    auto hurried = cas::train::makeOpponent("perfect:0.01", "connect4", 3, &error);
    const auto empty = position("connect4", std::vector<int>{});
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, hurried->choose(*empty, 0));
    QVERIFY(!cas::train::makeOpponent("perfect:abc", "connect4", 3, &error));
    QVERIFY2(error.find("perfect:SECONDS") != std::string::npos, error.c_str());
    QVERIFY(!cas::train::makeOpponent("perfect", "cartpole", 3, &error));
    QCOMPARE(error, std::string("'cartpole' has no perfect player; tictactoe, connect4 have one"));
  }

  // Environment facts come from the catalogue.
  void catalogueCarriesTheFacts() {
    const EnvironmentInfo& c4 = *findEnvironment("connect4");
    QVERIFY(c4.board && c4.board->dropsInColumns && c4.board->inARow == 4 && c4.perfectPlayer);
    QCOMPARE(std::string(c4.board->moveNoun()), std::string("column"));
    QCOMPARE(c4.evaluationOpponent, std::string("mcts:200"));
    const EnvironmentInfo& ttt = *findEnvironment("tictactoe");
    QVERIFY(ttt.board && !ttt.board->dropsInColumns && ttt.board->inARow == 3 && ttt.perfectPlayer);
    QCOMPARE(ttt.evaluationOpponent, std::string("perfect"));
    QCOMPARE(ttt.actionCount, 9);
    QVERIFY(!findEnvironment("cartpole")->board && !findEnvironment("cartpole")->perfectPlayer);
  }
};

QTEST_GUILESS_MAIN(TestSolver)
#include "test_solver.moc"
