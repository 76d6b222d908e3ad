// The device search's code (gpu/search/*.cuh) run on the host against the CPU reference search,
// so that what the kernels compute is checked on every machine, GPU or not: the device games
// against core/env on 100k random moves; whole searches (PUCT with noise, k = 8 with virtual
// loss, Gumbel, both selection kernels, tiny budgets that force recycling, subtree reuse and
// temperature moves over whole games) compared node by node with BatchedSearch under the hashed
// evaluator. On the host both sides compute the same bits, so everything must be equal.
// tests/gpu/test_gpu_search.cpp checks the same on the device.
#include <QTest>

#include <random>

#include "core/env/games.hpp"
#include "core/search/mcts.hpp"
#include "support/search_compare.hpp"
#include "support/search_positions.hpp"
#include "gpu/search_port_host.hpp"

using namespace cas;
using gpu::search::Connect4;
using gpu::search::TicTacToe;

namespace {

using test::statsDifference;
using test::treeDifference;

template <class Game>
const char* envName() {
  return Game::kActions == 7 ? "connect4" : "tictactoe";
}

// Searches every position of `positions` (one game each) on both sides and compares.
template <class Game>
void compareSearches(const std::vector<std::string>& positions, search::SearchConfig config, bool masked, std::uint64_t seed) {
  const int n = int(positions.size());
  const env::EnvironmentInfo& info = *env::findEnvironment(envName<Game>());
  search::BatchedSearch cpu(envName<Game>(), n, config, search::makeCpuEvaluator({search::LeafEvaluator::Kind::Hashed, nullptr}, info), seed);
  test::HostDeviceSearch<Game> device(n, config, seed);
  device.setMasked(masked);
  std::vector<int> all;
  for (int g = 0; g < n; ++g) {
    std::string error;
    QVERIFY2(cpu.setPosition(g, positions[size_t(g)], &error), error.c_str());
    for (char c : positions[size_t(g)]) device.play(g, c - '1');
    all.push_back(g);
  }
  cpu.search(all, config.simulations);
  device.search(all, config.simulations);
  for (int g = 0; g < n; ++g) {
    const QString stats = statsDifference(cpu.rootStats(g), device.rootStats(g));
    QVERIFY2(stats.isEmpty(), qPrintable(QStringLiteral("position '%1': %2").arg(QString::fromStdString(positions[size_t(g)]), stats)));
    const QString tree = treeDifference(cpu.tree(g), device.tree(g));
    QVERIFY2(tree.isEmpty(), qPrintable(QStringLiteral("position '%1': %2").arg(QString::fromStdString(positions[size_t(g)]), tree)));
  }
}

search::SearchConfig config(int simulations, int leaves, bool gumbel) {
  search::SearchConfig c;
  c.simulations = simulations;
  c.leavesPerStep = leaves;
  c.gumbel = gumbel;
  c.gumbelArms = 4;
  c.dirichletFraction = gumbel ? 0.0f : 0.25f;
  c.dirichletAlpha = 0.3f;
  return c;
}

}  // namespace

class TestSearchPort : public QObject {
  Q_OBJECT
 private slots:
  void gamesAgreeOnRandomMoves_data() {
    QTest::addColumn<QString>("env");
    QTest::newRow("tictactoe") << "tictactoe";
    QTest::newRow("connect4") << "connect4";
  }
  void gamesAgreeOnRandomMoves() {
    QFETCH(QString, env);
    if (env == QLatin1String("tictactoe")) playRandomMoves<TicTacToe>();
    else playRandomMoves<Connect4>();
  }

  void searchesAgree_data() {
    QTest::addColumn<int>("simulations");
    QTest::addColumn<int>("leaves");
    QTest::addColumn<bool>("gumbel");
    QTest::addColumn<bool>("masked");
    QTest::newRow("PUCT, k=1, masked") << 64 << 1 << false << true;
    QTest::newRow("PUCT, k=1, branchy") << 64 << 1 << false << false;
    QTest::newRow("PUCT, k=8 with virtual loss") << 64 << 8 << false << true;
    QTest::newRow("Gumbel, 4 arms") << 32 << 1 << true << true;
    QTest::newRow("Gumbel, k=4") << 32 << 4 << true << false;
  }
  void searchesAgree() {
    QFETCH(int, simulations);
    QFETCH(int, leaves);
    QFETCH(bool, gumbel);
    QFETCH(bool, masked);
    compareSearches<Connect4>(test::randomPositions("connect4", 200, 30, 11), config(simulations, leaves, gumbel), masked, 3);
    compareSearches<TicTacToe>(test::randomPositions("tictactoe", 100, 6, 12), config(simulations, leaves, gumbel), masked, 4);
  }

  void recyclingUnderATinyBudgetAgrees() {
    search::SearchConfig c = config(400, 4, false);
    c.nodeBudget = 64;
    compareSearches<TicTacToe>(test::randomPositions("tictactoe", 20, 3, 5), c, true, 9);
    c.nodeBudget = 120;
    compareSearches<Connect4>(test::randomPositions("connect4", 20, 10, 6), c, false, 10);
    search::BatchedSearch probe("connect4", 1, c, search::makeCpuEvaluator({search::LeafEvaluator::Kind::Hashed, nullptr}, *env::findEnvironment("connect4")), 10);
    probe.search({0});
    QVERIFY2(probe.metrics().recycledNodes > 0, "the budget should have forced recycling");
  }

  // Whole self-play games: search, the temperature move, subtree reuse, over and over.
  void selfPlayGamesAgree() {
    search::SearchConfig c = config(48, 2, false);
    c.temperature = 1.0f;
    c.temperatureMoves = 6;
    c.nodeBudget = 800;  // reuse and recycling together
    const int games = 16;
    const env::EnvironmentInfo& info = *env::findEnvironment("connect4");
    search::BatchedSearch cpu("connect4", games, c, search::makeCpuEvaluator({search::LeafEvaluator::Kind::Hashed, nullptr}, info), 21);
    test::HostDeviceSearch<Connect4> device(games, c, 21);
    std::vector<int> all(games);
    for (int g = 0; g < games; ++g) all[size_t(g)] = g;
    int moves = 0;
    for (int ply = 0; ply < 60; ++ply) {
      cpu.search(all, c.simulations);
      device.search(all, c.simulations);
      for (int g = 0; g < games; ++g) {
        const search::RootStats a = cpu.rootStats(g), b = device.rootStats(g);
        const QString stats = statsDifference(a, b);
        QVERIFY2(stats.isEmpty(), qPrintable(QStringLiteral("ply %1, game %2: %3").arg(ply).arg(g).arg(stats)));
        cpu.play(g, a.played);
        device.play(g, b.played);
        ++moves;
        const QString tree = treeDifference(cpu.tree(g), device.tree(g));
        QVERIFY2(tree.isEmpty(), qPrintable(QStringLiteral("ply %1, game %2 after the move: %3").arg(ply).arg(g).arg(tree)));
        if (cpu.positions().terminal(g)) {
          cpu.resetGame(g);
          device.reset(g);
        }
      }
    }
    QVERIFY(moves == 60 * games);
  }

 private:
  template <class Game>
  void playRandomMoves() {
    const int games = 64;
    auto cpu = env::makeBoardGames(envName<Game>(), games);
    std::vector<typename Game::State> device(games, Game::start());
    std::mt19937 rng(17);
    std::vector<float> a(Game::kObsSize), b(Game::kObsSize);
    for (int g = 0; g < games; ++g) cpu->reset(g);
    for (int move = 0; move < 100000; ++move) {
      const int g = move % games;
      std::uint32_t legal = 0;
      for (int x = 0; x < Game::kActions; ++x) legal |= std::uint32_t(cpu->legal(g, x)) << x;
      QCOMPARE(Game::legalMask(device[size_t(g)]), legal);
      QCOMPARE(Game::terminal(device[size_t(g)]), cpu->terminal(g));
      if (cpu->terminal(g)) {
        QCOMPARE(Game::terminalValue(device[size_t(g)]), cpu->terminalValue(g));
        cpu->reset(g);
        device[size_t(g)] = Game::start();
        continue;
      }
      std::vector<int> moves;
      for (int x = 0; x < Game::kActions; ++x)
        if ((legal >> x) & 1u) moves.push_back(x);
      const int action = moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng)];
      cpu->play(g, action);
      Game::play(device[size_t(g)], action);
      QCOMPARE(Game::moveCount(device[size_t(g)]), cpu->moveCount(g));
      cpu->observe(g, a.data());
      Game::encode(device[size_t(g)], b.data());
      QVERIFY2(a == b, "observations differ");
    }
  }
};

QTEST_GUILESS_MAIN(TestSearchPort)
#include "test_search_port.moc"
