// Runs as first-class objects in the studio (issue 15), offscreen: the Runs dock lists a project's
// runs after a restart (and a run added from elsewhere, and not another project's), with
// iterations, last score, differences and status (running, stopped, crashed); the newest run's
// metrics are shown on opening; Metrics, overlays of several runs, Resume, Play, Open Folder, Rename and
// Delete (which asks, and refuses a run being trained) act on the selected run; the Board loads a
// run with its own policy copy, and a run it cannot load is reported in the Log. Tuning: a new run
// starts from project.toml, values changed during a run are bold overrides until Reset or Write to
// project.toml, and saving project.toml reloads the dock. Train with unsaved editor changes asks
// first. QAbstractItemModelTester watches the runs model throughout.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFont>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QCheckBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <QTranslator>
#include <QUrl>
#include <Qsci/qsciscintilla.h>

#include <functional>

#include "widgets/board/episode_view.hpp"
#include "widgets/board/play_panel.hpp"
#include "widgets/editor/pdl_editor.hpp"
#include "widgets/log_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/runs/run_catalog.hpp"
#include "widgets/runs/run_controller.hpp"
#include "widgets/runs/runs_dock.hpp"
#include "widgets/runs/runs_model.hpp"
#include "widgets/tree/search_tree_view.hpp"
#include "widgets/tuning/parameter_table_model.hpp"
#include "widgets/tuning/tuning_panel.hpp"
#include "support/source_dir.hpp"

using cas::widgets::MainWindow;
using cas::widgets::RunsModel;

namespace {

QString readText(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

bool writeText(const QString& path, const QString& text) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(text.toUtf8()) >= 0;
}

// Answers the next modal message box by clicking the button named `button` (or Cancel when it is
// empty), after handing the box to `inspect`. Polls, because the box opens inside a later call.
void answerNextMessageBox(const QString& button, std::function<void(QMessageBox*)> inspect = {}) {
  auto* timer = new QTimer;
  timer->setInterval(10);
  QObject::connect(timer, &QTimer::timeout, [timer, button, inspect] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    if (!box) return;
    timer->stop();
    timer->deleteLater();
    if (inspect) inspect(box);
    QAbstractButton* target = button.isEmpty() ? box->button(QMessageBox::Cancel) : box->findChild<QAbstractButton*>(button);
    if (!target) target = box->button(QMessageBox::Cancel);  // the test then fails on what the click did
    target->click();
  });
  timer->start();
}

int rowOfParameter(const cas::widgets::ParameterTableModel* m, const QString& name) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 0).data().toString() == name) return r;
  return -1;
}

}  // namespace

class TestRunsDock : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QUrl opened_;  // what Open Folder asked the desktop to open

 public slots:
  void openUrl(const QUrl& url) { opened_ = url; }

  QString quickProject(const QString& name) {
    const QString folder = dir_.filePath(name);
    QDir().mkpath(folder);
    QFile::copy(cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero/policy.pdl")), folder + QStringLiteral("/policy.pdl"));
    writeText(folder + QStringLiteral("/project.toml"),
              QStringLiteral("name = \"%1\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n"
                             "[search]\nsimulations = 16\nc_puct = 1.5\n[train]\nparallel_games = 8\ngames_per_iteration = 8\nbatch_size = 32\n"
                             "steps_per_iteration = 2\neval_every = 1\neval_games = 2\n")
                  .arg(name));
    return folder;
  }

  // Trains `iterations` iterations in `w` and waits for the run to end; returns its folder.
  static QString train(MainWindow& w, int iterations) {
    w.findChild<QSpinBox*>(QStringLiteral("iterationBudget"))->setValue(iterations);
    w.startTraining();
    if (!w.runController()->running()) return {};
    const QString folder = w.runController()->runFolder();
    if (!QTest::qWaitFor([&] { return !w.runController()->running(); }, 120000)) return {};
    return folder;
  }

  static int metricsRows(MainWindow& w) {
    // One CSV row per iteration drawn (the header line aside, and the trailing newline).
    return int(w.metricsPanel()->csv(cas::widgets::MetricsPanel::Simulations).count(QLatin1Char('\n'))) - 1;
  }

 private slots:
  // The last score names the baselines in the user's language, as the Metrics legend does
  // ("random" and "perfect" stayed English in zh_CN); another opponent keeps its name.
  void lastScoresNameBaselinesInTheUsersLanguage() {
    const QString run = dir_.filePath(QStringLiteral("scored-run"));
    QProcess cli;
    cli.start(QStringLiteral(CAS_BIN_DIR "/cuda-agent"), {QStringLiteral("train"), quickProject(QStringLiteral("scored")), QStringLiteral("--device"),
                                                         QStringLiteral("cpu"), QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run});
    QVERIFY(cli.waitForFinished(120000) && cli.exitCode() == 0);
    QFile metrics(run + QStringLiteral("/metrics.jsonl"));  // the scores of its one line replaced
    QVERIFY(metrics.open(QIODevice::WriteOnly));
    metrics.write("{\"iteration\": 1, \"win_rate_perfect\": 0.5, \"draw_rate_perfect\": 0.5, \"win_rate_random\": 1.0, "
                  "\"draw_rate_random\": 0.0, \"win_rate_mcts_200\": 0.25, \"draw_rate_mcts_200\": 0.0}\n");
    metrics.close();
    QCOMPARE(cas::widgets::readRunSummary(run, nullptr).lastScore, QStringLiteral("mcts_200 0.25, perfect 0.75, random 1.00"));
    QTranslator chinese;
    QVERIFY(chinese.load(QStringLiteral(":/i18n/cuda-agent-studio_zh_CN.qm")));
    QVERIFY(QCoreApplication::installTranslator(&chinese));  // until the test ends
    QCOMPARE(cas::widgets::readRunSummary(run, nullptr).lastScore, QStringLiteral("mcts_200 0.25, 完美玩家 0.75, 随机玩家 1.00"));
  }

  // A run with no opponents (PPO, MuZero) shows its last mean episode return, in the user's
  // language.
  void lastScoreOfAnEpisodicRunIsItsReturn() {
    const QString run = dir_.filePath(QStringLiteral("scored-run"));  // a run folder, made by the test before
    QVERIFY(QFile::exists(run + QStringLiteral("/config.toml")));
    QFile metrics(run + QStringLiteral("/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::WriteOnly));
    metrics.write("{\"iteration\": 1, \"episode_return_mean\": 38.879}\n{\"iteration\": 2, \"loss\": 1.0}\n");
    metrics.close();
    QCOMPARE(cas::widgets::readRunSummary(run, nullptr).lastScore, QStringLiteral("return 38.9"));
    QTranslator chinese;
    QVERIFY(chinese.load(QStringLiteral(":/i18n/cuda-agent-studio_zh_CN.qm")));
    QVERIFY(QCoreApplication::installTranslator(&chinese));  // until the test ends
    QCOMPARE(cas::widgets::readRunSummary(run, nullptr).lastScore, QStringLiteral("回报 38.9"));
  }

  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_runs"));
    QSettings().clear();
    QDir(cas::widgets::studioRunsRoot()).removeRecursively();
  }

  void runsListAfterRestart() {
    const QString project = quickProject(QStringLiteral("listed"));
    QString first, second;
    {
      MainWindow w;
      w.show();
      QVERIFY(w.openProject(project));
      QCOMPARE(w.runsDock()->model()->rowCount(), 0);
      first = train(w, 2);
      QVERIFY(!first.isEmpty());
      second = train(w, 1);
      QVERIFY(!second.isEmpty());
    }
    // Another project's run in the same folder is not listed; a run from elsewhere is, once added.
    const QString foreign = cas::widgets::studioRunsRoot() + QStringLiteral("/foreign-run");
    QVERIFY(QDir().mkpath(foreign));
    QVERIFY(writeText(foreign + QStringLiteral("/config.toml"), QStringLiteral("project = \"%1\"\n").arg(quickProject(QStringLiteral("other")))));
    const QString elsewhere = dir_.filePath(QStringLiteral("elsewhere/cli-run"));
    QVERIFY(QDir().mkpath(elsewhere + QStringLiteral("/checkpoints")));
    for (const QString& file : {QStringLiteral("config.toml"), QStringLiteral("project.toml"), QStringLiteral("policy.pdl"), QStringLiteral("metrics.jsonl")})
      QVERIFY(QFile::copy(first + QLatin1Char('/') + file, elsewhere + QLatin1Char('/') + file));

    MainWindow w;
    RunsModel* runs = w.runsDock()->model();
    QAbstractItemModelTester tester(runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.show();
    QVERIFY(w.openProject(project));
    QCOMPARE(runs->rowCount(), 2);
    QCOMPARE(runs->run(0).folder, second);  // newest first
    QCOMPARE(runs->run(1).folder, first);
    QCOMPARE(runs->index(0, RunsModel::Iterations).data().toLongLong(), 1);
    QCOMPARE(runs->index(1, RunsModel::Iterations).data().toLongLong(), 2);
    QCOMPARE(runs->index(1, RunsModel::Status).data().toString(), QStringLiteral("stopped"));
    QCOMPARE(runs->index(1, RunsModel::Differences).data().toString(), QStringLiteral("none"));
    QVERIFY2(runs->index(1, RunsModel::LastScore).data().toString().startsWith(QStringLiteral("perfect ")),
             qPrintable(runs->index(1, RunsModel::LastScore).data().toString()));
    QCOMPARE(runs->index(1, RunsModel::Name).data().toString(), QFileInfo(first).fileName());
    // After the restart the Metrics dock shows the newest run's iterations.
    QCOMPARE(metricsRows(w), 1);
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("The Metrics dock shows the newest run")));

    // The project changes: the runs' differences say how.
    QString toml = readText(project + QStringLiteral("/project.toml"));
    QVERIFY(writeText(project + QStringLiteral("/project.toml"), toml.replace(QStringLiteral("c_puct = 1.5"), QStringLiteral("c_puct = 2.0"))));
    w.reloadProjectFile();
    QCOMPARE(runs->index(1, RunsModel::Differences).data().toString(), QStringLiteral("search.c_puct = 1.5 (project: 2)"));

    // A killed trainer leaves its process id in the lock: the run is listed as crashed.
    QProcess gone;
    gone.start(QStringLiteral("true"), {});
    QVERIFY(gone.waitForStarted());
    const qint64 deadPid = gone.processId();
    QVERIFY(gone.waitForFinished());
    QVERIFY(writeText(first + QStringLiteral("/lock"), QString::number(deadPid) + QLatin1Char('\n')));
    w.runsDock()->refresh();
    QCOMPARE(runs->index(1, RunsModel::Status).data().toString(), QStringLiteral("crashed"));

    QString problem;
    QVERIFY(!runs->addRunFolder(dir_.filePath(QStringLiteral("elsewhere")), &problem));  // not a run folder
    QVERIFY2(problem.contains(QStringLiteral("is not a run folder")), qPrintable(problem));
    QVERIFY2(runs->addRunFolder(elsewhere, &problem), qPrintable(problem));
    QCOMPARE(runs->rowCount(), 3);
    QVERIFY(runs->rowOf(elsewhere) >= 0);
    QVERIFY(runs->rowOf(foreign) < 0);
    // Remembered: a new window lists it too.
    MainWindow again;
    QVERIFY(again.openProject(project));
    QVERIFY(again.runsDock()->model()->rowOf(elsewhere) >= 0);
  }

  void resumeOverlayRenameDelete() {
    const QString project = quickProject(QStringLiteral("acted"));
    MainWindow w;
    RunsModel* runs = w.runsDock()->model();
    QAbstractItemModelTester tester(runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.show();
    QVERIFY(w.openProject(project));
    const int elsewhere = runs->rowCount();  // the runs added from elsewhere by the test before stay listed
    const QString older = train(w, 2);
    const QString newer = train(w, 1);
    QVERIFY(!older.isEmpty() && !newer.isEmpty());
    QCOMPARE(runs->rowCount(), elsewhere + 2);

    // Metrics: the selected run's iterations as the main curves.
    w.runsDock()->selectRun(older);
    w.findChild<QAction*>(QStringLiteral("runMetricsAction"))->trigger();
    QCOMPARE(metricsRows(w), 2);

    // Overlays of several runs, each ticked in the list.
    QVERIFY(runs->setData(runs->index(runs->rowOf(older), RunsModel::Name), Qt::Checked, Qt::CheckStateRole));
    QVERIFY(runs->setData(runs->index(runs->rowOf(newer), RunsModel::Name), Qt::Checked, Qt::CheckStateRole));
    QCOMPARE(w.metricsPanel()->overlays().size(), 2);
    QCOMPARE(runs->index(runs->rowOf(older), RunsModel::Name).data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
    QVERIFY(runs->setData(runs->index(runs->rowOf(newer), RunsModel::Name), Qt::Unchecked, Qt::CheckStateRole));
    QCOMPARE(w.metricsPanel()->overlays(), QStringList{older});
    QCOMPARE(runs->index(runs->rowOf(newer), RunsModel::Name).data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));

    // Resume: the run goes on from its checkpoint, with its recorded iterations as the curves' start.
    w.findChild<QSpinBox*>(QStringLiteral("iterationBudget"))->setValue(1);
    w.runsDock()->selectRun(older);
    w.findChild<QAction*>(QStringLiteral("runResumeAction"))->trigger();
    QVERIFY(w.runController()->running());
    QCOMPARE(w.runController()->runFolder(), older);
    QCOMPARE(w.runController()->resumedFrom(), 2);
    QCOMPARE(runs->index(runs->rowOf(older), RunsModel::Status).data().toString(), QStringLiteral("running"));
    // A run being trained can be neither deleted nor renamed.
    QVERIFY(!w.runsDock()->renameRun(older, QStringLiteral("while-running")));
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("was not renamed: process %1 is training it now").arg(QCoreApplication::applicationPid())),
             qPrintable(w.logPanel()->toPlainText()));
    w.runsDock()->selectRun(older);
    QVERIFY(!w.findChild<QAction*>(QStringLiteral("runDeleteAction"))->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 120000);
    QCOMPARE(runs->index(runs->rowOf(older), RunsModel::Iterations).data().toLongLong(), 3);
    QCOMPARE(metricsRows(w), 3);
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("Resumed %1 from iteration 2").arg(older)));

    // Rename: the folder moves, the run stays listed, selected and overlaid.
    QVERIFY(!w.runsDock()->renameRun(older, QFileInfo(newer).fileName()));  // taken
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("already exists; choose another name")));
    QVERIFY(!w.runsDock()->renameRun(older, QStringLiteral("a/b")));
    QVERIFY(w.runsDock()->renameRun(older, QStringLiteral("c_puct-baseline")));
    const QString renamed = QFileInfo(older).absolutePath() + QStringLiteral("/c_puct-baseline");
    QVERIFY(QFileInfo(renamed + QStringLiteral("/config.toml")).isFile());
    QVERIFY(!QFileInfo::exists(older));
    QCOMPARE(w.runsDock()->selectedRun(), renamed);
    QCOMPARE(w.metricsPanel()->overlays(), QStringList{renamed});
    // The Metrics dock's Remove Overlay menu clears the ticks too (its first entry: this run).
    auto* removeOverlay = w.metricsPanel()->findChild<QToolButton*>(QStringLiteral("removeOverlay"));
    QVERIFY(removeOverlay && removeOverlay->menu() && !removeOverlay->menu()->actions().isEmpty());
    removeOverlay->menu()->actions().first()->trigger();
    QVERIFY(w.metricsPanel()->overlays().isEmpty());
    QCOMPARE(runs->index(runs->rowOf(renamed), RunsModel::Name).data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));

    // Open Folder hands the folder to the desktop (here, to this test).
    QDesktopServices::setUrlHandler(QStringLiteral("file"), this, "openUrl");
    w.findChild<QAction*>(QStringLiteral("runOpenFolderAction"))->trigger();
    QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
    QCOMPARE(opened_, QUrl::fromLocalFile(renamed));

    // Play loads the run on the Board (once the Board has loaded the run that just stopped).
    QTRY_VERIFY_WITH_TIMEOUT(!w.playPanel()->busy(), 60000);
    w.findChild<QAction*>(QStringLiteral("runPlayAction"))->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(w.playPanel()->agent() && w.playPanel()->agent()->runFolder == renamed, 60000);

    // Delete asks: Cancel keeps the run, Delete removes it.
    answerNextMessageBox(QString());
    QVERIFY(!w.runsDock()->deleteSelected());
    QVERIFY(QFileInfo::exists(renamed));
    QString question;
    answerNextMessageBox(QStringLiteral("confirmDelete"), [&](QMessageBox* box) { question = box->text(); });
    QVERIFY(w.runsDock()->deleteSelected());
    QVERIFY2(question.startsWith(QStringLiteral("Delete the run c_puct-baseline?")), qPrintable(question));
    QVERIFY(!QFileInfo::exists(renamed));
    QCOMPARE(runs->rowCount(), elsewhere + 1);
    QVERIFY(w.metricsPanel()->overlays().isEmpty());
  }

  // A single-agent run (PPO) has no board: Play records an episode of it in the Episode dock,
  // and Analyse, which sets up board positions, is off and says why. Its project has no search
  // tree: the Search tree's controls are off and its status says why.
  void singleAgentRunsPlayAnEpisode() {
    const QString project = dir_.filePath(QStringLiteral("episodic"));
    QDir().mkpath(project);
    QFile::copy(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/policy.pdl")), project + QStringLiteral("/policy.pdl"));
    QVERIFY(writeText(project + QStringLiteral("/project.toml"),
                      QStringLiteral("name = \"episodic\"\nenvironment = \"cartpole\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n"
                                     "[ppo]\nenvs = 4\nrollout_steps = 16\nminibatches = 2\nepochs = 1\n")));
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(project));
    // The Search tree has nothing to show for it: its controls are off and it says why.
    auto* tree = w.searchTreePanel();
    QVERIFY2(tree->statusText().contains(QStringLiteral("PPO")), qPrintable(tree->statusText()));
    QVERIFY(!tree->findChild<QCheckBox*>(QStringLiteral("searchTreeFollow"))->isEnabled());
    QVERIFY(!tree->findChild<QSpinBox*>(QStringLiteral("searchTreeGame"))->isEnabled());
    const QString run = train(w, 1);
    QVERIFY(!run.isEmpty());
    QVERIFY2(tree->statusText().contains(QStringLiteral("PPO")), qPrintable(tree->statusText()));
    // A board-game project turns them on again.
    QVERIFY(w.openProject(quickProject(QStringLiteral("boardgame"))));
    QVERIFY(tree->findChild<QCheckBox*>(QStringLiteral("searchTreeFollow"))->isEnabled());
    QVERIFY(!tree->statusText().contains(QStringLiteral("PPO")));
    QVERIFY(w.openProject(project));
    w.runsDock()->selectRun(run);
    auto* play = w.findChild<QAction*>(QStringLiteral("runPlayAction"));
    auto* analyse = w.findChild<QAction*>(QStringLiteral("runAnalyseAction"));
    QVERIFY(play->isEnabled());
    QVERIFY(!analyse->isEnabled());
    QVERIFY2(analyse->toolTip().contains(QStringLiteral("board-game runs only")), qPrintable(analyse->toolTip()));
    QVERIFY2(play->toolTip().contains(QStringLiteral("Episode dock")), qPrintable(play->toolTip()));
    play->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!w.episodeView()->busy() && !w.episodeView()->episode().frames.empty(), 60000);
    QCOMPARE(QString::fromStdString(w.episodeView()->episode().environment), QStringLiteral("cartpole"));
    QVERIFY(!w.playPanel()->agent());  // the Board was left alone
  }

  void boardUsesTheRunsOwnPolicyAndReportsFailures() {
    const QString project = quickProject(QStringLiteral("edited"));
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(project));
    const QString run = train(w, 1);
    QVERIFY(!run.isEmpty());
    // The project's network changes after the run: the run still loads, with its own copy.
    const QString policy = project + QStringLiteral("/policy.pdl");
    QString source = readText(policy);
    QVERIFY(writeText(policy, source.replace(QStringLiteral("const width = 32"), QStringLiteral("const width = 16"))));
    w.runsDock()->refresh();
    w.runsDock()->selectRun(run);
    QTRY_VERIFY_WITH_TIMEOUT(!w.playPanel()->busy(), 60000);  // the Board loads a run that stops by itself
    QSignalSpy loaded(w.playPanel(), &cas::widgets::PlayPanel::agentLoaded);
    w.findChild<QAction*>(QStringLiteral("runAnalyseAction"))->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
    QCOMPARE(loaded.first().first().toString(), run);
    QCOMPARE(w.playPanel()->mode(), cas::widgets::PlayPanel::Mode::SetUp);
    // A run whose own policy no longer fits its checkpoint is refused, and the Log says why.
    QString copy = readText(run + QStringLiteral("/policy.pdl"));
    QVERIFY(writeText(run + QStringLiteral("/policy.pdl"), copy.replace(QStringLiteral("const width = 32"), QStringLiteral("const width = 8"))));
    QTRY_VERIFY_WITH_TIMEOUT(!w.playPanel()->busy(), 60000);
    w.findChild<QAction*>(QStringLiteral("runPlayAction"))->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(w.logPanel()->toPlainText().contains(QStringLiteral("The Board could not load %1: ").arg(run)), 60000);
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("; checkpoints passed over: iter-")), qPrintable(w.logPanel()->toPlainText()));
    // So is Resume, and the run folder is left as it was.
    const QString metricsBefore = readText(run + QStringLiteral("/metrics.jsonl"));
    w.resumeRun(run);
    QVERIFY(!w.runController()->running());
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("%1 cannot be resumed: ").arg(run)), qPrintable(w.logPanel()->toPlainText()));
    QCOMPARE(readText(run + QStringLiteral("/metrics.jsonl")), metricsBefore);
  }

  void tuningOverridesResetAndWrite() {
    const QString project = quickProject(QStringLiteral("tuned"));
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(project));
    auto* model = w.parameterModel();
    cas::widgets::TuningPanel* tuning = w.tuningPanel();
    const QString cpuct = QStringLiteral("search.c_puct");
    const int row = rowOfParameter(model, cpuct);
    QVERIFY(tuning->sourceText().startsWith(QStringLiteral("Values from project.toml")));
    QVERIFY(model->overrides().isEmpty());

    // A live change during a run is an override of that run: bold, and the tooltip says so.
    QSignalSpy iterations(w.runController(), &cas::widgets::RunController::iterationFinished);
    w.findChild<QSpinBox*>(QStringLiteral("iterationBudget"))->setValue(0);
    w.startTraining();
    QTRY_VERIFY_WITH_TIMEOUT(iterations.count() >= 1, 60000);
    const QString firstRun = w.runController()->runFolder();
    model->setData(model->index(row, 1), QStringLiteral("3.5"), Qt::EditRole);
    QTRY_VERIFY_WITH_TIMEOUT(model->isOverride(cpuct), 60000);
    QVERIFY(model->index(row, 1).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY2(model->index(row, 1).data(Qt::ToolTipRole).toString().contains(QStringLiteral("differs from project.toml, which has 1.5")),
             qPrintable(model->index(row, 1).data(Qt::ToolTipRole).toString()));
    QVERIFY(!model->index(rowOfParameter(model, QStringLiteral("search.simulations")), 1).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY2(tuning->sourceText().contains(QStringLiteral("differs from project.toml")), qPrintable(tuning->sourceText()));
    // Reset during the run asks for project.toml's value, which applies at the next iteration.
    QVERIFY(model->resetToProject(cpuct));
    QCOMPARE(model->index(row, cas::widgets::ParameterTableModel::Applies).data().toString(),
             QStringLiteral("live: 1.5 requested, applies at the next iteration"));
    QTRY_VERIFY_WITH_TIMEOUT(!model->isOverride(cpuct), 60000);
    QCOMPARE(model->index(row, 1).data().toString(), QStringLiteral("1.5"));
    model->setData(model->index(row, 1), QStringLiteral("3.5"), Qt::EditRole);
    QTRY_VERIFY_WITH_TIMEOUT(model->isOverride(cpuct), 60000);
    w.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 60000);
    QCOMPARE(model->index(row, 1).data().toString(), QStringLiteral("3.5"));  // still shown as that run's override
    const QStringList firstRunChanges = w.changeLog();
    QCOMPARE(firstRunChanges.size(), 3);  // 3.5, back to 1.5, 3.5 again

    // The next run starts from project.toml, not from the last run's values, with no changes yet.
    const QString secondRun = train(w, 1);
    QVERIFY(!secondRun.isEmpty() && secondRun != firstRun);
    QVERIFY(readText(secondRun + QStringLiteral("/config.toml")).contains(QStringLiteral("c_puct = 1.5\n")));
    QVERIFY(model->overrides().isEmpty());
    QVERIFY(w.changeLog().isEmpty());

    // A resumed run lists the changes it made before, read from its changes.jsonl.
    w.findChild<QSpinBox*>(QStringLiteral("iterationBudget"))->setValue(1);
    w.resumeRun(firstRun);
    QVERIFY(w.runController()->running());
    QVERIFY(w.runController()->resumedFrom() > 0);
    QCOMPARE(w.changeLog(), firstRunChanges);
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->running(), 120000);

    // Reset after a run: back to project.toml's value.
    model->showRunValues([&] {
      cas::params::ParameterSet v = model->values();
      v.set("search.c_puct", 2.5);
      return v;
    }(), QFileInfo(secondRun).fileName());
    QVERIFY(model->isOverride(cpuct));
    tuning->table()->selectRow(row);
    auto* reset = tuning->findChild<QPushButton*>(QStringLiteral("resetOverrides"));
    QVERIFY(reset->isEnabled());
    reset->click();
    QVERIFY(!model->isOverride(cpuct));
    QCOMPARE(model->index(row, 1).data().toString(), QStringLiteral("1.5"));

    // Write to project.toml: the file takes the value in place, and the dock reads it back.
    model->showRunValues([&] {
      cas::params::ParameterSet v = model->values();
      v.set("search.c_puct", 2.5);
      return v;
    }(), QFileInfo(secondRun).fileName());
    tuning->table()->clearSelection();
    tuning->table()->selectRow(row);
    tuning->findChild<QPushButton*>(QStringLiteral("writeOverrides"))->click();
    const QString toml = readText(project + QStringLiteral("/project.toml"));
    QVERIFY2(toml.contains(QStringLiteral("[search]\nsimulations = 16\nc_puct = 2.5\n[train]")), qPrintable(toml));
    QVERIFY(!model->isOverride(cpuct));
    QCOMPARE(cas::params::formatValue(model->projectValues().get("search.c_puct")), std::string("2.5"));
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("Wrote search.c_puct = 2.5 to ")));

    // Saving project.toml in the editor reloads the dock.
    QVERIFY(w.policyEditor()->openFile(project + QStringLiteral("/project.toml")));
    QString text = w.policyEditor()->editor()->text();
    w.policyEditor()->editor()->setText(text.replace(QStringLiteral("c_puct = 2.5"), QStringLiteral("c_puct = 0.75")));
    QVERIFY(w.policyEditor()->save());
    QCOMPARE(cas::params::formatValue(model->projectValues().get("search.c_puct")), std::string("0.75"));
    QVERIFY(model->isOverride(cpuct));  // the run shown had 2.5
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("the Tuning dock shows its values")));
  }

  void trainWithUnsavedEditorChangesAsks() {
    const QString project = quickProject(QStringLiteral("unsaved"));
    const QString policy = project + QStringLiteral("/policy.pdl");
    const QString saved = readText(policy);
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(project));
    QsciScintilla* text = w.policyEditor()->editor();
    text->setText(saved + QStringLiteral("# tried a wider net\n"));
    QVERIFY(w.policyEditor()->isModified());

    // Cancel: no run.
    QString question;
    answerNextMessageBox(QString(), [&](QMessageBox* box) { question = box->text(); });
    w.startTraining();
    QVERIFY(!w.runController()->running());
    QVERIFY2(question.startsWith(QStringLiteral("policy.pdl has changes that are not saved")), qPrintable(question));

    // Train the saved file: the run has the file on disk, the editor keeps its changes.
    answerNextMessageBox(QStringLiteral("trainSavedFile"));
    QString run = train(w, 1);
    QVERIFY(!run.isEmpty());
    QCOMPARE(readText(run + QStringLiteral("/policy.pdl")), saved);
    QVERIFY(w.policyEditor()->isModified());
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("the editor's unsaved changes are not in this run")));

    // Save and train: the run has the edit.
    answerNextMessageBox(QStringLiteral("saveAndTrain"));
    run = train(w, 1);
    QVERIFY(!run.isEmpty());
    QVERIFY(readText(run + QStringLiteral("/policy.pdl")).endsWith(QStringLiteral("# tried a wider net\n")));
    QVERIFY(!w.policyEditor()->isModified());

    // Changes that do not compile cannot be saved for training: only the saved file is offered.
    text->setText(readText(policy).replace(QStringLiteral("units=action_dim"), QStringLiteral("units=")));
    bool offeredSave = true;
    answerNextMessageBox(QString(), [&](QMessageBox* box) {
      question = box->text();
      offeredSave = box->findChild<QAbstractButton*>(QStringLiteral("saveAndTrain")) != nullptr;
    });
    w.startTraining();
    QVERIFY(!w.runController()->running());
    QVERIFY(!offeredSave);
    QVERIFY2(question.contains(QStringLiteral("The changes do not compile (line ")), qPrintable(question));
    QVERIFY(!readText(policy).contains(QStringLiteral("units=)")));  // nothing was saved
  }
};

QTEST_MAIN(TestRunsDock)
#include "test_runs_dock.moc"
