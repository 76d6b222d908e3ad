// Training from the studio, offscreen: Train starts a tic-tac-toe run on the engine thread, the
// plots receive points, a c_puct change made in the tuning table is applied and logged with its
// iteration, an invalid value is refused, and Stop ends the run with a checkpoint.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "widgets/log_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/metrics_panel.hpp"
#include "widgets/parameter_table_model.hpp"
#include "widgets/run_controller.hpp"

using cas::widgets::MainWindow;

class TestTraining : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  QString quickProject() {
    const QString folder = dir_.filePath(QStringLiteral("ttt"));
    QDir().mkpath(folder);
    QFile::copy(QStringLiteral(CAS_SOURCE_DIR "/projects/tictactoe-alphazero/policy.pdl"), folder + QStringLiteral("/policy.pdl"));
    QFile toml(folder + QStringLiteral("/project.toml"));
    if (!toml.open(QIODevice::WriteOnly)) return {};
    toml.write("name = \"ttt-quick\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n"
               "[search]\nsimulations = 16\n[train]\nparallel_games = 8\ngames_per_iteration = 8\nbatch_size = 32\n"
               "steps_per_iteration = 2\neval_every = 1\neval_games = 2\n");
    return folder;
  }

  static int rowOf(const cas::widgets::ParameterTableModel* m, const QString& name) {
    for (int r = 0; r < m->rowCount(); ++r)
      if (m->index(r, 0).data().toString() == name) return r;
    return -1;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_training"));
  }

  void trainTuneAndStop() {
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(quickProject()));
    auto* model = w.parameterModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const int cpuct = rowOf(model, QStringLiteral("search.c_puct"));
    QVERIFY(cpuct >= 0);
    QVERIFY(!(model->flags(model->index(cpuct, 1)) & Qt::ItemIsEditable));  // not before a run

    w.startTraining();
    QVERIFY(w.runController()->running());
    QTRY_VERIFY_WITH_TIMEOUT(w.metricsPanel()->pointCount() >= 2, 60000);
    QVERIFY(model->flags(model->index(cpuct, 1)) & Qt::ItemIsEditable);
    QVERIFY(!(model->flags(model->index(rowOf(model, QStringLiteral("search.node_budget")), 1)) & Qt::ItemIsEditable));

    model->setData(model->index(cpuct, 1), QStringLiteral("abc"), Qt::EditRole);
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("Refused: search.c_puct: 'abc' is not valid: expected a number in [0, 100]")),
             qPrintable(w.logPanel()->toPlainText()));
    QCOMPARE(model->index(cpuct, 1).data().toString(), QStringLiteral("1.5"));

    model->setData(model->index(cpuct, 1), QStringLiteral("3.5"), Qt::EditRole);
    QTRY_VERIFY_WITH_TIMEOUT(!w.changeLog().isEmpty(), 60000);
    const QString change = w.changeLog().first();
    QVERIFY2(change.startsWith(QStringLiteral("search.c_puct = 3.5 (was 1.5), applied at iteration ")), qPrintable(change));
    QCOMPARE(model->index(cpuct, 1).data().toString(), QStringLiteral("3.5"));
    QVERIFY(w.logPanel()->toPlainText().contains(change));
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("against perfect:")));

    const QString runFolder = w.runController()->runFolder();
    w.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 60000);
    QVERIFY(!QDir(runFolder + QStringLiteral("/checkpoints")).entryList({QStringLiteral("*.ckpt")}, QDir::Files).isEmpty());
    QFile changes(runFolder + QStringLiteral("/changes.jsonl"));
    QVERIFY(changes.open(QIODevice::ReadOnly));
    QVERIFY(changes.readAll().contains("\"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"3.5\""));
  }
};

QTEST_MAIN(TestTraining)
#include "test_training.moc"
