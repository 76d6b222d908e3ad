// Training from the studio, offscreen: Train starts a tic-tac-toe run on the engine thread, the
// plots and the kernel view's stage times receive points, a c_puct change made in the tuning table
// is applied and logged with its iteration (and the panel says so), an invalid value is refused,
// a kernel profile asked for comes back from the engine thread (empty on the CPU backend), Stop
// ends the run with a checkpoint, and the finished run folder loads as an overlay. Step is
// enabled only while paused; c_puct and simulations changed while paused take effect at the next
// iteration. An iteration budget shows "iteration N of M" with an ETA and ends the run. The
// studio's run folder is locked against the CLI.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include "widgets/log_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/metrics/kernel_view.hpp"
#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/runs/run_controller.hpp"
#include "widgets/tuning/parameter_table_model.hpp"
#include "support/source_dir.hpp"

using cas::widgets::MainWindow;

class TestTraining : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  QString quickProject() {
    const QString folder = dir_.filePath(QStringLiteral("ttt"));
    QDir().mkpath(folder);
    QFile::copy(cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero/policy.pdl")), folder + QStringLiteral("/policy.pdl"));
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

  static QString applies(const cas::widgets::ParameterTableModel* m, const QString& name) {
    return m->index(rowOf(m, name), cas::widgets::ParameterTableModel::Applies).data().toString();
  }

  static int lineCount(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return -1;
    return int(file.readAll().count('\n'));
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
    QCOMPARE(applies(model, QStringLiteral("search.node_budget")), QStringLiteral("on restart (fixed for this run)"));
    QCOMPARE(applies(model, QStringLiteral("search.c_puct")), QStringLiteral("live"));
    // The studio's run holds the same lock as the CLI's (issue 13, item 4): a CLI resume is refused.
    QProcess resume;
    const QString folder = w.runController()->runFolder();
    resume.start(QStringLiteral(CAS_BIN_DIR "/cuda-agent"), {QStringLiteral("train"), QStringLiteral("--resume"), folder});
    QVERIFY(resume.waitForFinished(60000));
    QCOMPARE(resume.exitCode(), 1);
    QCOMPARE(QString::fromUtf8(resume.readAllStandardError()),
             QStringLiteral("error: %1 is in use by process %2 (it holds %1/lock); wait for that run to end, or stop it\n")
                 .arg(folder)
                 .arg(QCoreApplication::applicationPid()));
    // On the CPU backend the kernel view explains why there are no kernels and shows stage times.
    QVERIFY(!w.kernelView()->showsKernels());
    QVERIFY2(w.kernelView()->explanation().startsWith(QStringLiteral("GPU kernel metrics need the CUDA backend.")),
             qPrintable(w.kernelView()->explanation()));
    QVERIFY(w.kernelView()->stageModel()->rowCount() >= 2);
    QVERIFY2(w.runProgressText().contains(QStringLiteral("iterations/min")), qPrintable(w.runProgressText()));
    // Kernel profiles are taken on the engine thread after an iteration; the CPU backend has no kernels.
    QSignalSpy profiles(w.runController(), &cas::widgets::RunController::kernelsProfiled);
    w.runController()->requestKernelProfile(3);
    QTRY_COMPARE_WITH_TIMEOUT(profiles.count(), 1, 60000);
    const auto profile = profiles.first().first().value<cas::widgets::KernelProfile>();
    QCOMPARE(profile.runs, 3);
    QCOMPARE(profile.batch, qint64(8));  // parallel_games x leaves_per_step
    QVERIFY(!profile.graph.isEmpty());
    QVERIFY(profile.kernels.empty());

    model->setData(model->index(cpuct, 1), QStringLiteral("abc"), Qt::EditRole);
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("Refused: search.c_puct: 'abc' is not valid: expected a number in [0, 100]")),
             qPrintable(w.logPanel()->toPlainText()));
    QCOMPARE(model->index(cpuct, 1).data().toString(), QStringLiteral("1.5"));

    model->setData(model->index(cpuct, 1), QStringLiteral("3.5"), Qt::EditRole);
    QTRY_VERIFY_WITH_TIMEOUT(!w.changeLog().isEmpty(), 60000);
    const QString change = w.changeLog().first();
    QVERIFY2(change.startsWith(QStringLiteral("search.c_puct = 3.5 (was 1.5), applied at iteration ")), qPrintable(change));
    QCOMPARE(model->index(cpuct, 1).data().toString(), QStringLiteral("3.5"));
    const QString appliedAt = change.section(QLatin1Char(' '), -1);
    QCOMPARE(applies(model, QStringLiteral("search.c_puct")), QStringLiteral("live: applied at iteration ") + appliedAt);
    QVERIFY(w.logPanel()->toPlainText().contains(change));
    // The Metrics dock marks the change on its plots.
    QCustomPlot* loss = w.metricsPanel()->plot(cas::widgets::MetricsPanel::Loss);
    auto marked = [&] {
      for (int i = 0; i < loss->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(loss->item(i)); text && text->text() == QStringLiteral("search.c_puct = 3.5")) return true;
      return false;
    };
    QTRY_VERIFY(marked());
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("against perfect:")));

    const QString runFolder = w.runController()->runFolder();
    w.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 60000);
    QVERIFY(!QDir(runFolder + QStringLiteral("/checkpoints")).entryList({QStringLiteral("*.ckpt")}, QDir::Files).isEmpty());
    QFile changes(runFolder + QStringLiteral("/changes.jsonl"));
    QVERIFY(changes.open(QIODevice::ReadOnly));
    QVERIFY(changes.readAll().contains("\"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"3.5\""));
    QVERIFY2(w.runProgressText().startsWith(QStringLiteral("The run ended after ")), qPrintable(w.runProgressText()));

    // The finished run, drawn dashed beside the next one: one overlay point per metrics line.
    QString error;
    QVERIFY2(w.metricsPanel()->loadOverlay(runFolder, &error), qPrintable(error));
    const QString name = w.metricsPanel()->overlayName() + QStringLiteral(": simulations/s");
    QCustomPlot* speed = w.metricsPanel()->plot(cas::widgets::MetricsPanel::Simulations);
    auto overlayPoints = [&] {
      for (int i = 0; i < speed->graphCount(); ++i)
        if (speed->graph(i)->name() == name) return speed->graph(i)->dataCount();
      return -1;
    };
    QTRY_COMPARE(overlayPoints(), lineCount(runFolder + QStringLiteral("/metrics.jsonl")));
  }

  void stepWhilePausedAndTuneAtTheNextIteration() {
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(quickProject()));
    auto* run = w.runController();
    auto* model = w.parameterModel();
    QAction* step = w.findChild<QAction*>(QStringLiteral("stepAction"));
    QVERIFY(step);
    QVERIFY(!step->isEnabled());  // no run

    QSignalSpy iterations(run, &cas::widgets::RunController::iterationFinished);
    QSignalSpy stepped(run, &cas::widgets::RunController::simulationStepped);
    w.startTraining();
    QVERIFY(run->running());
    QVERIFY(!step->isEnabled());  // running, not paused
    QTRY_VERIFY_WITH_TIMEOUT(iterations.count() >= 1, 60000);
    w.togglePause();
    QVERIFY(step->isEnabled());
    QVERIFY2(w.runProgressText().endsWith(QStringLiteral("(paused)")), qPrintable(w.runProgressText()));
    step->trigger();
    // The engine serves a step only where it waits, paused: once it has, no iteration is running.
    QTRY_COMPARE_WITH_TIMEOUT(stepped.count(), 1, 60000);
    QCOMPARE(stepped.first().first().toLongLong(), 1);
    const qint64 last = iterations.last().first().value<cas::train::IterationReport>().iteration;

    model->setData(model->index(rowOf(model, QStringLiteral("search.simulations")), 1), QStringLiteral("0"), Qt::EditRole);
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("Refused: search.simulations")), qPrintable(w.logPanel()->toPlainText()));
    QCOMPARE(model->index(rowOf(model, QStringLiteral("search.simulations")), 1).data().toString(), QStringLiteral("16"));
    model->setData(model->index(rowOf(model, QStringLiteral("search.c_puct")), 1), QStringLiteral("2.50"), Qt::EditRole);
    model->setData(model->index(rowOf(model, QStringLiteral("search.simulations")), 1), QStringLiteral("24"), Qt::EditRole);
    QCOMPARE(applies(model, QStringLiteral("search.c_puct")), QStringLiteral("live: 2.5 requested, applies at the next iteration"));
    QCOMPARE(applies(model, QStringLiteral("search.simulations")), QStringLiteral("live: 24 requested, applies at the next iteration"));
    QCOMPARE(model->index(rowOf(model, QStringLiteral("search.c_puct")), 1).data().toString(), QStringLiteral("1.5"));  // not yet

    w.togglePause();
    QVERIFY(!step->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(w.changeLog().size(), 2, 60000);
    const QString next = QString::number(last + 1);
    QCOMPARE(w.changeLog(), (QStringList{QStringLiteral("search.c_puct = 2.5 (was 1.5), applied at iteration ") + next,
                                         QStringLiteral("search.simulations = 24 (was 16), applied at iteration ") + next}));
    QCOMPARE(applies(model, QStringLiteral("search.c_puct")), QStringLiteral("live: applied at iteration ") + next);
    QCOMPARE(applies(model, QStringLiteral("search.simulations")), QStringLiteral("live: applied at iteration ") + next);
    QCOMPARE(model->index(rowOf(model, QStringLiteral("search.simulations")), 1).data().toString(), QStringLiteral("24"));
    for (const QString& line : w.changeLog()) QVERIFY(w.logPanel()->toPlainText().contains(line));
    // The search itself runs with the new constant. (The search-tree dock asks for snapshots too;
    // every one delivered from here on was taken after the change applied.)
    QSignalSpy trees(run, &cas::widgets::RunController::treeSnapshotReady);
    run->requestTreeSnapshot(0, 16);
    QTRY_VERIFY_WITH_TIMEOUT(trees.count() >= 1, 60000);
    for (const QList<QVariant>& snapshot : trees) QCOMPARE(snapshot.first().value<cas::train::TreeSnapshot>().cPuct, 2.5f);

    const QString runFolder = run->runFolder();
    w.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!run->running(), 60000);
    QFile changes(runFolder + QStringLiteral("/changes.jsonl"));
    QVERIFY(changes.open(QIODevice::ReadOnly));
    const QByteArray recorded = changes.readAll();
    QVERIFY(recorded.contains("{\"iteration\": " + next.toUtf8() + ", \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2.5\"}"));
    QVERIFY(recorded.contains("{\"iteration\": " + next.toUtf8() + ", \"parameter\": \"search.simulations\", \"from\": \"16\", \"to\": \"24\"}"));
    QVERIFY(!step->isEnabled());
  }

  void budgetShowsProgressAndEta() {
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(quickProject()));
    auto* budget = w.findChild<QSpinBox*>(QStringLiteral("iterationBudget"));
    auto* bar = w.findChild<QProgressBar*>(QStringLiteral("runProgressBar"));
    QVERIFY(budget && bar);
    budget->setValue(3);
    QSignalSpy iterations(w.runController(), &cas::widgets::RunController::iterationFinished);
    w.startTraining();
    QVERIFY(!budget->isEnabled());
    QVERIFY(bar->isVisible());
    QCOMPARE(bar->maximum(), 3);
    QStringList seen;
    connect(w.runController(), &cas::widgets::RunController::iterationFinished, this, [&] { seen << w.runProgressText(); });
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 60000);  // the engine stops at the budget
    QCOMPARE(iterations.count(), 3);
    QVERIFY2(seen.value(0).startsWith(QStringLiteral("Iteration 1 of 3, about ")) && seen.value(0).contains(QStringLiteral(" left (")),
             qPrintable(seen.join(QLatin1Char('|'))));
    QVERIFY2(seen.value(2).startsWith(QStringLiteral("Iteration 3 of 3, about 0.0 s left")), qPrintable(seen.join(QLatin1Char('|'))));
    QVERIFY2(w.runProgressText().startsWith(QStringLiteral("The run ended after 3 iterations in ")), qPrintable(w.runProgressText()));
    QVERIFY(!bar->isVisible());
    QVERIFY(budget->isEnabled());
  }
};

QTEST_MAIN(TestTraining)
#include "test_training.moc"
