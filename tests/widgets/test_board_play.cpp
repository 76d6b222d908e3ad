// The Board dock, offscreen. A tic-tac-toe run trained for a few iterations through core is
// loaded in the Play panel; whole games are played by clicks on the board, with the human moving
// first and second, and every agent move is checked to be legal and the result to be shown; a
// set-up position is analysed; a position shown from outside (as the search tree does) is taken
// over; the board maps clicks to cells and columns and draws both games; the move list carries the
// agent's value after each move and steps back and forth through a game; and a run trained in
// the studio is loaded by itself when it stops.
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QToolButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "core/engine/run_folder.hpp"
#include "core/env/board_position.hpp"
#include "core/train/alphazero.hpp"
#include "widgets/board/board_view.hpp"
#include "widgets/board/move_list.hpp"
#include "widgets/board/play_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/runs/run_controller.hpp"
#include "support/source_dir.hpp"

using cas::widgets::BoardView;
using cas::widgets::PlayPanel;

namespace {

// Small enough that an iteration takes a fraction of a second on two cores.
const char* const kQuickSettings[] = {"train.parallel_games=8", "train.games_per_iteration=8", "search.simulations=16",
                                      "train.batch_size=32",    "train.steps_per_iteration=2",  "train.eval_games=0"};
constexpr int kTrainedIterations = 3;

// Every move of the list was legal in the position before it.
bool everyMoveLegal(const std::vector<int>& moves, QString* why) {
  for (size_t n = 0; n < moves.size(); ++n) {
    std::string error;
    auto before = cas::env::describePosition("tictactoe", std::vector<int>(moves.begin(), moves.begin() + long(n)), &error);
    if (!before || !before->legal[size_t(moves[n])]) {
      *why = QStringLiteral("move %1 (cell %2) was not legal").arg(n + 1).arg(moves[n] + 1);
      return false;
    }
  }
  return true;
}

template <typename T>
T* child(QObject& parent, const char* name) {
  T* found = parent.findChild<T*>(QLatin1String(name));
  if (!found) qFatal("no child %s", name);
  return found;
}

}  // namespace

class TestBoardPlay : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString trainedRun_;

  // Loads the trained run into a fresh panel and waits for it.
  bool loadTrainedRun(PlayPanel& panel) {
    panel.loadRun(trainedRun_);
    if (!panel.busy()) return false;  // loading runs on the worker thread
    return QTest::qWaitFor([&] { return !panel.busy(); }, 60000) && panel.agent().has_value();
  }

  // Plays one game by clicking the first free cell whenever it is the human's turn.
  void playGame(PlayPanel& panel, int humanSide) {
    BoardView* board = panel.boardView();
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
    for (int guard = 0; guard < 9 && !board->position()->over; ++guard) {
      QCOMPARE(board->position()->toMove, humanSide);
      QVERIFY(board->isEnabled());
      int action = 0;
      while (!board->position()->legal[size_t(action)]) ++action;
      const size_t before = panel.moves().size();
      QTest::mouseClick(board, Qt::LeftButton, {}, board->actionCentre(action));
      QCOMPARE(panel.moves().size(), before + 1);
      QCOMPARE(panel.moves().back(), action);
      if (board->position()->over) break;
      // The agent searches on its thread; the board takes no clicks meanwhile.
      QVERIFY(panel.busy());
      QVERIFY(!board->isEnabled());
      QTest::mouseClick(board, Qt::LeftButton);
      QCOMPARE(panel.moves().size(), before + 1);
      QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
      QCOMPARE(panel.moves().size(), before + 2);
      // The table holds the agent's search, its chosen move in bold.
      QTableWidget* table = panel.statisticsTable();
      QVERIFY(table->rowCount() > 0);
      bool shownChosen = false;
      for (int row = 0; row < table->rowCount(); ++row)
        if (table->item(row, 0)->font().bold()) shownChosen = table->item(row, 0)->text() == QString::number(panel.moves().back() + 1);
      QVERIFY(shownChosen);
    }
    const auto& position = *board->position();
    QVERIFY(position.over);
    QString why;
    QVERIFY2(everyMoveLegal(panel.moves(), &why), qPrintable(why));
    QVERIFY(!board->isEnabled());  // the game is over
    const QString expected = position.winner < 0 ? QStringLiteral("Draw.")
                             : position.winner == humanSide ? QStringLiteral("You win!")
                                                            : QStringLiteral("The agent wins.");
    QVERIFY2(panel.statusText().startsWith(expected), qPrintable(panel.statusText()));
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_board_play"));
    QVERIFY(dir_.isValid());
    auto loaded = cas::project::loadProject(cas::test::sourceFile("projects/tictactoe-alphazero"));
    QVERIFY(loaded.project);
    cas::project::Project project = *loaded.project;
    for (const char* setting : kQuickSettings) QVERIFY(!project.parameters.assign(setting));
    trainedRun_ = dir_.filePath(QStringLiteral("ttt-run"));
    cas::Diagnostic refused;
    auto run = cas::engine::RunFolder::create(trainedRun_.toStdString(), project, &refused, nullptr);
    QVERIFY2(run, refused.message.c_str());
    std::string error;
    cas::train::AlphaZeroTrainer trainer(project, cas::exec::makeCpuBackend());
    for (int i = 0; i < kTrainedIterations; ++i) trainer.runIteration();
    QVERIFY2(run->writeCheckpoint(trainer.iteration(), trainer.checkpoint(), &error), error.c_str());
  }

  void boardMapsClicksToMoves() {
    BoardView board;
    board.resize(320, 320);
    board.show();
    QSignalSpy clicked(&board, &BoardView::actionClicked);
    board.showPosition(QStringLiteral("tictactoe"), {4, 0});
    QVERIFY(board.position());
    QCOMPARE(board.position()->cells[4], 0);  // X in the centre
    QCOMPARE(board.position()->cells[0], 1);  // O in the corner
    QCOMPARE(board.position()->toMove, 0);
    QTest::mouseClick(&board, Qt::LeftButton, {}, board.actionCentre(8));
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.takeFirst().at(0).toInt(), 8);
    QVERIFY(board.actionCentre(4).isNull());  // taken
    QCOMPARE(board.actionAt(QPoint(board.width() / 2, board.height() / 2)), -1);
    QTest::mouseClick(&board, Qt::LeftButton, {}, QPoint(board.width() / 2, board.height() / 2));
    QCOMPARE(clicked.count(), 0);

    // A win: the line is marked and nothing more can be played.
    board.showPosition(QStringLiteral("tictactoe"), {0, 3, 1, 4, 2});
    QVERIFY(board.position()->over);
    QCOMPARE(board.position()->winner, 0);
    std::vector<int> line = board.position()->winningLine;
    std::sort(line.begin(), line.end());
    QCOMPARE(line, (std::vector<int>{0, 1, 2}));
    QCOMPARE(board.actionAt(board.rect().center()), -1);

    // An impossible list of moves is refused with the reason, and the view says so.
    board.showPosition(QStringLiteral("tictactoe"), {0, 0});
    QVERIFY(!board.position());
    QVERIFY(!board.grab().isNull());

    // Connect Four: a click anywhere in a column drops into it; the stone lands on the stack.
    board.showPosition(QStringLiteral("connect4"), {3, 3, 3});
    QCOMPARE(board.position()->rows, 6);
    QCOMPARE(board.position()->landingCell(3), 2 * 7 + 3);
    const int column3 = board.actionCentre(3).x();
    QCOMPARE(board.actionAt(QPoint(column3, 2)), -1);  // above the board
    const int cell = (board.actionCentre(0).y() - board.actionCentre(3).y()) / 3;  // column 0 is empty, column 3 holds three
    QTest::mouseClick(&board, Qt::LeftButton, {}, QPoint(column3, board.actionCentre(3).y() - 2 * cell));  // the top row
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.takeFirst().at(0).toInt(), 3);
    QCOMPARE(BoardView::playerName(QStringLiteral("connect4"), 1), QStringLiteral("yellow"));

    // Statistics belong to the position they were shown for.
    cas::search::RootStats stats;
    stats.visits = {1, 2, 3, 10, 2, 1, 1};
    stats.q = {0, 0.1f, -0.2f, 0.4f, 0, 0, 0};
    stats.prior = {0.1f, 0.1f, 0.1f, 0.4f, 0.1f, 0.1f, 0.1f};
    stats.chosen = 3;
    board.showSearchStatistics(stats);
    QVERIFY(board.hasSearchStatistics());
    QVERIFY(!board.grab().isNull());  // paints the overlay
    board.showPosition(QStringLiteral("connect4"), {3, 3, 3});
    QVERIFY(board.hasSearchStatistics());  // the same position
    board.showPosition(QStringLiteral("connect4"), {3, 3, 3, 2});
    QVERIFY(!board.hasSearchStatistics());

    // The perfect player's marks stay for the position judged and the move after it.
    board.showPosition(QStringLiteral("connect4"), {3, 3, 3});
    board.showPerfectPlay({{3, 3, 3}, {3}, 2});
    QVERIFY(board.perfectPlay());
    board.showPosition(QStringLiteral("connect4"), {3, 3, 3, 2});
    QVERIFY(board.perfectPlay());
    QVERIFY(!board.grab().isNull());  // paints the rings and the mistake's mark
    board.showPosition(QStringLiteral("connect4"), {3, 3, 3, 2, 1});
    QVERIFY(!board.perfectPlay());
    board.showPerfectPlay({{0, 0}, {}, -1});  // not the position shown: ignored
    QVERIFY(!board.perfectPlay());
  }

  void playsWholeGamesAgainstTheTrainedRun() {
    cas::widgets::RunController controller;
    PlayPanel panel(&controller);
    panel.resize(440, 720);
    panel.show();
    QVERIFY(!child<QPushButton>(panel, "newGame")->isEnabled());  // nothing to play against yet
    QVERIFY(!panel.boardView()->isEnabled());
    QVERIFY(loadTrainedRun(panel));
    QCOMPARE(panel.agent()->iteration, qint64(kTrainedIterations));
    QCOMPARE(panel.agent()->environment, QStringLiteral("tictactoe"));
    QCOMPARE(child<QSpinBox>(panel, "playSimulations")->value(), 16);  // the run's search.simulations
    QVERIFY2(panel.runText().contains(QStringLiteral("ttt-run")), qPrintable(panel.runText()));
    QVERIFY2(panel.runText().contains(QStringLiteral("iteration 3")), qPrintable(panel.runText()));

    // Loading started a game with the human first.
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Your move: you play X.")), qPrintable(panel.statusText()));
    playGame(panel, 0);

    child<QComboBox>(panel, "firstPlayer")->setCurrentIndex(1);
    QTest::mouseClick(child<QPushButton>(panel, "newGame"), Qt::LeftButton);
    QVERIFY(panel.busy());  // the agent opens
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
    QCOMPARE(panel.moves().size(), size_t(1));
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Your move: you play O.")), qPrintable(panel.statusText()));
    // Every first move of tic-tac-toe draws: the agent's is judged perfect.
    QVERIFY2(panel.perfectPlayText().startsWith(QStringLiteral("The agent's move %1 is perfect: it keeps the draw.").arg(panel.moves()[0] + 1)),
             qPrintable(panel.perfectPlayText()));
    playGame(panel, 1);

    // Undo in a game goes back to the human's previous turn.
    const std::vector<int> finished = panel.moves();
    QTest::mouseClick(child<QPushButton>(panel, "undo"), Qt::LeftButton);
    QVERIFY(panel.moves().size() < finished.size());
    QCOMPARE(int(panel.moves().size()) % 2, 1);
    QVERIFY(panel.boardView()->isEnabled());
  }

  void moveListStepsThroughAGameWithValues() {
    cas::widgets::RunController controller;
    PlayPanel panel(&controller);
    panel.resize(440, 720);
    panel.show();
    QVERIFY(loadTrainedRun(panel));
    playGame(panel, 0);
    const std::vector<int> game = panel.moves();
    const int n = int(game.size());
    QTableWidget* list = panel.moveList()->table();
    QCOMPARE(list->rowCount(), n + 1);  // the start, then each move
    QCOMPARE(list->item(0, 0)->text(), QStringLiteral("Start"));
    QCOMPARE(list->item(1, 0)->text(), QStringLiteral("1. X %1").arg(game[0] + 1));
    QCOMPARE(list->item(2, 0)->text(), QStringLiteral("2. O %1").arg(game[1] + 1));
    // Every move has a value: the agent's own from its search, the human's from the agent's
    // search for its reply, and the last one the game's result.
    QCOMPARE(int(panel.moveValues().size()), n);
    for (int m = 0; m + 1 < n; ++m) {
      QVERIFY2(panel.moveValues()[size_t(m)], qPrintable(QStringLiteral("move %1 has no value").arg(m + 1)));
      const float v = *panel.moveValues()[size_t(m)];
      QVERIFY(v >= -1 && v <= 1);
      QCOMPARE(list->item(m + 1, 1)->text(), cas::widgets::signedValue(v));
    }
    const auto& end = *panel.boardView()->position();
    const int lastMover = (n - 1) % 2;
    const float result = end.winner < 0 ? 0.0f : end.winner == lastMover ? 1.0f : -1.0f;
    QVERIFY(panel.moveValues().back());
    QCOMPARE(*panel.moveValues().back(), result);
    QCOMPARE(list->item(n, 1)->text(), end.winner < 0 ? QStringLiteral("draw") : QStringLiteral("wins"));
    QCOMPARE(list->currentRow(), n);

    // Stepping back shows earlier positions without changing the game or taking moves.
    BoardView* board = panel.boardView();
    QTest::mouseClick(child<QToolButton>(panel, "moveListBack"), Qt::LeftButton);
    QCOMPARE(panel.shownMoves(), n - 1);
    QCOMPARE(board->moves(), std::vector<int>(game.begin(), game.end() - 1));
    QCOMPARE(panel.moves(), game);
    QCOMPARE(panel.mode(), PlayPanel::Mode::Play);  // not taken over as a set-up position
    QVERIFY(!board->isEnabled());
    QVERIFY(!child<QPushButton>(panel, "undo")->isEnabled());
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Move %1 of %2 is shown.").arg(n - 1).arg(n)), qPrintable(panel.statusText()));
    QCOMPARE(list->currentRow(), n - 1);
    QTest::mouseClick(child<QToolButton>(panel, "moveListStart"), Qt::LeftButton);
    QVERIFY(board->moves().empty());
    QVERIFY(!child<QToolButton>(panel, "moveListBack")->isEnabled());
    list->setCurrentCell(2, 0);  // picking a row
    QCOMPARE(board->moves(), std::vector<int>(game.begin(), game.begin() + 2));
    QTest::mouseClick(child<QToolButton>(panel, "moveListForward"), Qt::LeftButton);
    QCOMPARE(panel.shownMoves(), 3);
    QTest::mouseClick(child<QToolButton>(panel, "moveListEnd"), Qt::LeftButton);
    QCOMPARE(board->moves(), game);
    QVERIFY(!child<QToolButton>(panel, "moveListForward")->isEnabled());
    QVERIFY(child<QPushButton>(panel, "undo")->isEnabled());
    QVERIFY2(!panel.statusText().startsWith(QStringLiteral("Move ")), qPrintable(panel.statusText()));

    // Undo drops the values of the moves it takes back.
    QTest::mouseClick(child<QPushButton>(panel, "undo"), Qt::LeftButton);
    QCOMPARE(panel.moveValues().size(), panel.moves().size());
    QCOMPARE(list->rowCount(), int(panel.moves().size()) + 1);
  }

  void analysesASetUpPosition() {
    cas::widgets::RunController controller;
    PlayPanel panel(&controller);
    panel.resize(440, 720);
    panel.show();
    QVERIFY(loadTrainedRun(panel));
    QTest::mouseClick(child<QRadioButton>(panel, "setUpMode"), Qt::LeftButton);
    QCOMPARE(panel.mode(), PlayPanel::Mode::SetUp);
    QVERIFY(panel.statusText().startsWith(QStringLiteral("Set up a position")));
    BoardView* board = panel.boardView();
    // X on 1 and 2, O on 4 and 5: X to move, and 3 wins at once.
    for (int action : {0, 3, 1, 4}) QTest::mouseClick(board, Qt::LeftButton, {}, board->actionCentre(action));
    QCOMPARE(panel.moves(), (std::vector<int>{0, 3, 1, 4}));
    QVERIFY(!panel.busy());  // set-up clicks never start the agent
    child<QSpinBox>(panel, "playSimulations")->setValue(200);

    QTest::mouseClick(child<QPushButton>(panel, "analyse"), Qt::LeftButton);
    QVERIFY(panel.busy());
    QVERIFY(!board->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
    QCOMPARE(panel.moves(), (std::vector<int>{0, 3, 1, 4}));  // analysing plays nothing
    // X wins at once: O's last move is worth little to O, and the move list says so.
    QVERIFY(panel.moveValues().back());
    QVERIFY2(*panel.moveValues().back() < 0, qPrintable(QString::number(double(*panel.moveValues().back()))));
    QCOMPARE(panel.moveList()->table()->item(4, 1)->text(), cas::widgets::signedValue(*panel.moveValues().back()));
    QTableWidget* table = panel.statisticsTable();
    QCOMPARE(table->rowCount(), 5);  // the free cells 3, 6, 7, 8, 9
    int visits = 0;
    for (int row = 0; row < table->rowCount(); ++row) {
      const int cell = table->item(row, 0)->text().toInt();
      QVERIFY2(board->position()->legal[size_t(cell - 1)], qPrintable(table->item(row, 0)->text()));
      visits += table->item(row, 1)->text().toInt();
    }
    QVERIFY2(visits > 100 && visits <= 200, qPrintable(QString::number(visits)));
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("3"));  // the winning move has the most visits
    QVERIFY(table->item(0, 0)->font().bold());
    QVERIFY(board->hasSearchStatistics());
    QVERIFY(!board->grab().isNull());
    // The perfect player's verdicts: cell 3 wins, in the table, the sentence and on the board.
    QCOMPARE(table->item(0, 4)->text(), QStringLiteral("win"));
    QVERIFY(!table->isColumnHidden(4));
    QCOMPARE(panel.perfectPlayText(), QStringLiteral("Perfect play: 3 (win)."));
    QVERIFY(board->perfectPlay());
    QCOMPARE(board->perfectPlay()->perfect, std::vector<int>{2});

    QTest::mouseClick(child<QPushButton>(panel, "undo"), Qt::LeftButton);
    QCOMPARE(panel.moves().size(), size_t(3));
    QVERIFY(!board->hasSearchStatistics());
    QCOMPARE(table->rowCount(), 0);

    // Back to Play: the human takes the side to move (O) and the agent answers.
    QTest::mouseClick(child<QRadioButton>(panel, "playMode"), Qt::LeftButton);
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Your move: you play O.")), qPrintable(panel.statusText()));
    QTest::mouseClick(board, Qt::LeftButton, {}, board->actionCentre(2));
    QVERIFY(panel.busy());
    QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
    QCOMPARE(panel.moves().size(), size_t(5));
    QString why;
    QVERIFY2(everyMoveLegal(panel.moves(), &why), qPrintable(why));
  }

  void takesOverAPositionShownFromOutside() {
    cas::widgets::RunController controller;
    PlayPanel panel(&controller);
    panel.show();
    panel.boardView()->showPosition(QStringLiteral("tictactoe"), {4, 0, 8});  // as the search tree does for a node
    QCOMPARE(panel.mode(), PlayPanel::Mode::SetUp);
    QCOMPARE(panel.moves(), (std::vector<int>{4, 0, 8}));
    QVERIFY(panel.boardView()->isEnabled());
    QVERIFY(!child<QPushButton>(panel, "analyse")->isEnabled());  // no run loaded
  }

  void studioTrainsThenLoadsTheRunForPlay() {
    const QString project = dir_.filePath(QStringLiteral("ttt-project"));
    QVERIFY(QDir().mkpath(project));
    QVERIFY(QFile::copy(cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero/policy.pdl")), project + QStringLiteral("/policy.pdl")));
    QFile toml(project + QStringLiteral("/project.toml"));
    QVERIFY(toml.open(QIODevice::WriteOnly));
    toml.write("name = \"ttt-quick\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n"
               "[search]\nsimulations = 16\n[train]\nparallel_games = 8\ngames_per_iteration = 8\nbatch_size = 32\n"
               "steps_per_iteration = 2\neval_games = 0\n");
    toml.close();

    cas::widgets::MainWindow w;
    w.show();
    auto* dock = w.findChild<QDockWidget*>(QStringLiteral("boardDock"));
    QVERIFY(dock);
    QCOMPARE(dock->widget(), static_cast<QWidget*>(w.playPanel()));
    QVERIFY(w.tabifiedDockWidgets(w.findChild<QDockWidget*>(QStringLiteral("metricsDock"))).contains(dock));

    QVERIFY(w.openProject(project));
    w.startTraining();
    QTRY_VERIFY_WITH_TIMEOUT(w.metricsPanel()->pointCount() >= 2, 60000);
    auto* loadCurrent = child<QPushButton>(*w.playPanel(), "loadCurrentRun");
    QVERIFY(loadCurrent->isEnabled());
    w.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(w.playPanel()->agent().has_value() && !w.playPanel()->busy(), 60000);
    QCOMPARE(w.playPanel()->agent()->runFolder, w.runController()->runFolder());
    QVERIFY(w.playPanel()->boardView()->isEnabled());  // the human's move in a new game
  }
};

QTEST_MAIN(TestBoardPlay)
#include "test_board_play.moc"
