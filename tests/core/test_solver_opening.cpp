// The empty Connect Four board is a first-player win (Allen and Allis, 1988): the solver proves
// it. This takes minutes (5 to 10 on a shared two-core machine), so the suite skips it unless
// CAS_SLOW_TESTS=1. The positions down the centre column are solved first, deepest first: each
// shallower solve finds the line through them already in the table.
#include <QTest>

#include "core/env/connect4_solver.hpp"

using namespace cas::env;

class TestSolverOpening : public QObject {
  Q_OBJECT
 private slots:
  void emptyBoardIsAFirstPlayerWin() {
    if (qEnvironmentVariableIntValue("CAS_SLOW_TESTS") != 1) QSKIP("solving the empty board takes minutes; run with CAS_SLOW_TESTS=1");
    Connect4Solver solver(std::size_t(512) << 20);
    auto g = makeBoardGames("connect4", 1);
    // Down the centre: after an even number of stones the first player is to move and wins.
    for (const std::string moves : {"4444", "444", "44", "4", ""}) {
      std::string error;
      QVERIFY(g->playMoves(0, moves, &error));
      const Solution s = solver.solve(*g, 0, SolveMode::Weak, {0, 3600});
      qInfo("'%s': %+d in %.1f s, %lld positions", moves.c_str(), s.score, s.seconds, static_cast<long long>(s.nodes));
      QVERIFY(s.solved);
      QCOMPARE(s.score, moves.size() % 2 == 0 ? 1 : -1);
    }
  }
};

// Qt Test stops a test function after 5 minutes unless QTEST_FUNCTION_TIMEOUT says otherwise;
// this one may take longer on a loaded machine.
int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QTEST_FUNCTION_TIMEOUT")) qputenv("QTEST_FUNCTION_TIMEOUT", "3600000");
  QCoreApplication app(argc, argv);
  TestSolverOpening test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_solver_opening.moc"
