// Batched MCTS on tic-tac-toe and Connect Four with a uniform evaluator (no network: every
// prior equal, every value 0), so what the search finds comes from the game's terminal values.
#include <QTest>

#include <algorithm>
#include <set>

#include "core/search/mcts.hpp"

using namespace cas::search;

namespace {

Evaluator uniform(int actions) {
  return [actions](const float*, int n, float* logits, float* values) {
    std::fill(logits, logits + n * actions, 0.0f);
    std::fill(values, values + n, 0.0f);
  };
}

SearchConfig noNoise(int simulations) {
  SearchConfig c;
  c.simulations = simulations;
  c.dirichletFraction = 0;
  return c;
}

// Every expanded node's visits are one more than its children's (its own evaluation), except
// where recycling collapsed a subtree (such nodes are leaves again).
void checkVisitSums(const Tree& t, std::int32_t s = 0) {
  if (!t.expanded(s)) return;
  int sum = 0;
  for (int k = 0; k < t.childCount[size_t(s)]; ++k) {
    sum += t.visits[size_t(t.child(s, k))];
    checkVisitSums(t, t.child(s, k));
  }
  QVERIFY2(t.visits[size_t(s)] >= sum, "a node has fewer visits than its children together");
}

}  // namespace

class TestSearch : public QObject {
  Q_OBJECT
 private slots:
  void findsImmediateWins_data() {
    QTest::addColumn<QString>("env");
    QTest::addColumn<QString>("moves");
    QTest::addColumn<int>("winning");
    QTest::newRow("tictactoe: complete the top row") << "tictactoe" << "1425" << 2;
    QTest::newRow("tictactoe: O completes the middle row") << "tictactoe" << "14259" << 5;
    QTest::newRow("connect4: complete column 1") << "connect4" << "121212" << 0;
    QTest::newRow("connect4: complete the bottom row") << "connect4" << "112233" << 3;
  }
  void findsImmediateWins() {
    QFETCH(QString, env);
    QFETCH(QString, moves);
    QFETCH(int, winning);
    const int actions = env == QLatin1String("tictactoe") ? 9 : 7;
    BatchedSearch s(env.toStdString(), 1, noNoise(400), uniform(actions), 1);
    std::string error;
    QVERIFY2(s.setPosition(0, moves.toStdString(), &error), error.c_str());
    s.search({0});
    const RootStats r = s.rootStats(0);
    QCOMPARE(r.chosen, winning);
    QVERIFY(r.q[size_t(winning)] > 0.99f);  // a won game, from the mover's point of view
    checkVisitSums(s.tree(0));
  }

  void findsTheDefenceInConnectFour() {
    // X has three in column 4; O must block it.
    BatchedSearch s("connect4", 1, noNoise(800), uniform(7), 1);
    std::string error;
    QVERIFY(s.setPosition(0, "41414", &error));
    s.search({0});
    QCOMPARE(s.rootStats(0).chosen, 3);
  }

  void findsTheOnlyDefence() {
    // X threatens 1-5-9; O to move must take 9.
    BatchedSearch s("tictactoe", 1, noNoise(800), uniform(9), 1);
    std::string error;
    QVERIFY(s.setPosition(0, "152", &error));  // X 1, O 5, X 2: X threatens 3
    s.search({0});
    QCOMPARE(s.rootStats(0).chosen, 2);
  }

  void virtualLossSpreadsLeaves() {
    SearchConfig c = noNoise(8);
    c.leavesPerStep = 8;
    BatchedSearch s("tictactoe", 1, c, uniform(9), 1);
    s.search({0});  // one step of 8 leaves after the root's expansion
    const RootStats r = s.rootStats(0);
    int distinct = 0;
    for (int v : r.visits) distinct += v > 0;
    QCOMPARE(distinct, 8);  // without virtual loss all 8 would go down the same edge
  }

  void batchesGamesTogether() {
    int calls = 0, largest = 0;
    Evaluator counting = [&](const float*, int n, float* logits, float* values) {
      ++calls;
      largest = std::max(largest, n);
      std::fill(logits, logits + n * 9, 0.0f);
      std::fill(values, values + n, 0.0f);
    };
    BatchedSearch s("tictactoe", 16, noNoise(10), counting, 1);
    std::vector<int> all(16);
    for (int g = 0; g < 16; ++g) all[size_t(g)] = g;
    s.search(all);
    QCOMPARE(largest, 16);
    QVERIFY(calls <= 11);  // the roots, then one batch per simulation step
  }

  void subtreeReuseKeepsStatistics() {
    BatchedSearch s("tictactoe", 1, noNoise(300), uniform(9), 1);
    s.search({0});
    const Tree before = s.tree(0);
    std::int32_t child = -1;
    for (int k = 0; k < before.childCount[0]; ++k)
      if (before.action[size_t(before.child(0, k))] == 4) child = before.child(0, k);
    QVERIFY(child >= 0 && before.expanded(child));
    const int childVisits = before.visits[size_t(child)];
    const float childValue = before.valueSum[size_t(child)];
    std::vector<int> grandchildVisits;
    for (int k = 0; k < before.childCount[size_t(child)]; ++k) grandchildVisits.push_back(before.visits[size_t(before.child(child, k))]);
    s.play(0, 4);
    const Tree& after = s.tree(0);
    QCOMPARE(after.visits[0], childVisits);
    QCOMPARE(after.valueSum[0], childValue);
    QCOMPARE(int(after.childCount[0]), int(grandchildVisits.size()));
    for (int k = 0; k < after.childCount[0]; ++k) QCOMPARE(after.visits[size_t(after.child(0, k))], grandchildVisits[size_t(k)]);
    checkVisitSums(after);
  }

  void recyclingUnderATinyBudgetStaysCorrect() {
    SearchConfig c = noNoise(2000);
    c.nodeBudget = 64;  // 7 blocks of 9 children
    BatchedSearch s("tictactoe", 1, c, uniform(9), 1);
    std::string error;
    QVERIFY(s.setPosition(0, "1425", &error));
    s.search({0});
    QVERIFY2(s.metrics().recycledNodes > 0, "the tiny budget should have forced recycling");
    QVERIFY(s.tree(0).nodesInUse() <= 64);
    QCOMPARE(s.rootStats(0).chosen, 2);
    checkVisitSums(s.tree(0));
  }

  void gumbelPicksTheBestArmWithFewSimulations() {
    int right = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      SearchConfig c = noNoise(8);
      c.gumbel = true;
      c.gumbelArms = 4;
      BatchedSearch s("tictactoe", 1, c, uniform(9), seed);
      std::string error;
      QVERIFY(s.setPosition(0, "1425", &error));
      s.search({0});
      right += s.rootStats(0).chosen == 2;
    }
    // With 8 simulations over the 5 legal moves (4 arms sampled), the winning move must be
    // chosen whenever it is sampled among the arms.
    QVERIFY2(right >= 14, qPrintable(QStringLiteral("the winning move was chosen in %1 of 20 searches").arg(right)));
  }

  void deterministicForASeed() {
    auto visits = [](std::uint64_t seed) {
      SearchConfig c;
      c.simulations = 200;  // with Dirichlet noise at the root
      c.leavesPerStep = 4;
      BatchedSearch s("connect4", 3, c, uniform(7), seed);
      s.search({0, 1, 2});
      std::vector<int> all;
      for (int g = 0; g < 3; ++g)
        for (int v : s.rootStats(g).visits) all.push_back(v);
      return all;
    };
    QCOMPARE(visits(5), visits(5));
    QVERIFY(visits(5) != visits(6));
  }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "test_search.moc"
