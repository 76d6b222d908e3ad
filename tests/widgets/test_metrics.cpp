// The Metrics and Kernels docks offscreen, fed directly (no run): plots receive points, smoothing
// changes the displayed values but not the stored ones, redraws are coalesced, stored points are
// bounded, CSV and PNG export, an earlier run folder's metrics.jsonl as a dashed overlay (more in
// test_plot_interaction.cpp), the kernel and stage-time models under QAbstractItemModelTester,
// "n/a" for unmeasured kernel values, the kernel source pane, the CPU backend's explanation, and
// the baselines' legend names in Chinese.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <qcustomplot.h>

#include "widgets/metrics/kernel_view.hpp"
#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/metrics/sm_timeline.hpp"

using cas::widgets::KernelTableModel;
using cas::widgets::KernelView;
using cas::widgets::MetricsPanel;
using cas::widgets::StageTimeModel;

namespace {

cas::train::IterationReport report(std::int64_t iteration, float loss) {
  cas::train::IterationReport r;
  r.iteration = iteration;
  r.gamesPlayed = iteration * 8;
  r.loss = loss;
  r.batchSize = 32;
  r.trainingSteps = loss > 0 ? 2 : 0;  // a loss of 0 here stands for "no training step yet"
  r.policyLoss = 1.0f;
  r.valueLoss = 0.5f;
  r.l2 = 0.25f;
  r.simulationsPerSecond = 1000.0 * double(iteration);
  r.gamesPerSecond = 2.0;
  r.inferenceSeconds = 0.5;
  r.searchSeconds = 0.25;
  r.dataSeconds = 0.125;
  r.trainSeconds = 1.0;
  return r;
}

cas::train::EvaluationResult evaluation(const char* opponent, int wins, int draws, int losses) {
  cas::train::EvaluationResult e;
  e.opponent = opponent;
  e.wins = wins;
  e.draws = draws;
  e.losses = losses;
  e.games = wins + draws + losses;
  return e;
}

QCPGraph* graphNamed(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->graphCount(); ++i)
    if (plot->graph(i)->name() == name) return plot->graph(i);
  return nullptr;
}

QVector<double> displayed(QCPGraph* graph) {
  QVector<double> values;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) values << it->value;
  return values;
}

// What the engine writes (core/engine/engine.cpp), one iteration per line.
QByteArray metricsLine(int iteration, double loss, double winRandom, double drawRandom) {
  return QStringLiteral("{\"iteration\": %1, \"games\": %2, \"positions\": 100, \"loss\": %3, \"loss_policy\": 1.5, \"loss_value\": 0.5, "
                        "\"loss_l2\": 0.01, \"policy_entropy\": 1.2, \"simulations_per_second\": 500, \"games_per_second\": 3, "
                        "\"seconds_inference\": 0.2, \"seconds_search\": 0.3, \"seconds_data\": 0.05, \"seconds_train\": 0.4, "
                        "\"recycled_nodes\": 0, \"win_rate_random\": %4, \"draw_rate_random\": %5, \"loss_rate_random\": 0}\n")
      .arg(iteration)
      .arg(iteration * 8)
      .arg(loss)
      .arg(winRandom)
      .arg(drawRandom)
      .toUtf8();
}

cas::exec::KernelReport generatedKernel() {
  cas::exec::KernelReport k;
  k.name = "k0_MatMul_Add_Tanh";
  k.kind = "generated";
  k.label = "hidden";
  k.source = "extern \"C\" __global__ void k0_MatMul_Add_Tanh(float* out) {}\n";
  k.launch = "grid 4 x block 256";
  k.nodes = 3;
  k.timeUs = 7.5;
  k.registers = 32;
  k.sharedBytes = 0;
  k.theoreticalOccupancy = 0.75;
  return k;  // achievedOccupancy stays -1: not measured
}

cas::exec::KernelReport libraryCall() {
  cas::exec::KernelReport k;
  k.name = "cublas_MatMul";
  k.kind = "cuBLAS";
  k.label = "policy_head";
  k.nodes = 1;
  k.timeUs = 2.5;
  return k;  // registers, shared memory and occupancy unknown for a library call
}

// An instrumented device-search kernel: its SIMT efficiency and its blocks (SM, start, end in µs).
cas::exec::KernelReport searchKernel(const char* name, double simt, std::vector<cas::exec::BlockSpan> blocks) {
  cas::exec::KernelReport k;
  k.name = name;
  k.kind = "search";
  k.label = "per step";
  k.timeUs = 4;
  k.simtEfficiency = simt;
  k.timeline = std::move(blocks);
  return k;
}

}  // namespace

class TestMetrics : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_metrics"));
    QSettings().clear();
  }

  // Before any data, each plot's axes fill its width (not drawn at the size it was made with).
  void emptyPlotsFillTheDock() {
    MetricsPanel panel;
    panel.resize(400, 900);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::qWait(300);
    const auto plots = panel.findChildren<QCustomPlot*>();
    QVERIFY(!plots.isEmpty());
    for (QCustomPlot* plot : plots) {
      QVERIFY2(plot->axisRect()->width() > plot->width() / 2, qPrintable(QString::number(plot->axisRect()->width())));
    }
  }

  void plotsReceivePoints() {
    MetricsPanel panel;
    panel.addIteration(report(1, 0));  // no training step yet: no loss point
    auto r = report(2, 1.5f);
    r.evaluations = {evaluation("random", 3, 1, 0), evaluation("perfect", 0, 2, 2)};
    panel.addIteration(r);
    QCOMPARE(panel.pointCount(), 1);
    QTRY_VERIFY(graphNamed(panel.plot(MetricsPanel::Simulations), QStringLiteral("simulations/s")));
    QTRY_COMPARE(graphNamed(panel.plot(MetricsPanel::Simulations), QStringLiteral("simulations/s"))->dataCount(), 2);
    QCOMPARE(graphNamed(panel.plot(MetricsPanel::Games), QStringLiteral("games/s"))->dataCount(), 2);
    QCOMPARE(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"))->dataCount(), 1);
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("random"))), (QVector<double>{0.875}));
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("perfect"))), (QVector<double>{0.25}));
    for (const char* stage : {"inference incl. copies", "tree search", "data exchange", "training"})
      QVERIFY2(graphNamed(panel.plot(MetricsPanel::StageTimes), QLatin1String(stage)), stage);
    panel.clear();
    QCOMPARE(panel.pointCount(), 0);
    QTRY_COMPARE(panel.plot(MetricsPanel::Loss)->graphCount(), 0);
  }

  void smoothingChangesDisplayedValues() {
    MetricsPanel panel;
    panel.setSmoothing(0);
    for (int i = 1; i <= 3; ++i) panel.addIteration(report(i, i == 2 ? 3.0f : 1.0f));
    QTRY_VERIFY(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total")));
    QCPGraph* total = graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"));
    QTRY_COMPARE(displayed(total), (QVector<double>{1, 3, 1}));
    panel.setSmoothing(0.5);
    QTRY_COMPARE(displayed(total), (QVector<double>{1, 2, 1.5}));  // s = 0.5 s + 0.5 y
    QVERIFY(panel.csv(MetricsPanel::Loss).contains(QStringLiteral("\n2,3,")));  // the exported data stays raw
    panel.setSmoothing(5);
    QCOMPARE(panel.smoothing(), MetricsPanel::kMaxSmoothing);
    panel.setSmoothing(0);
    QTRY_COMPARE(displayed(total), (QVector<double>{1, 3, 1}));
  }

  void redrawsAreCoalesced() {
    MetricsPanel panel;
    panel.resize(400, 900);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy replots(panel.plot(MetricsPanel::Loss), &QCustomPlot::afterReplot);
    QElapsedTimer clock;
    clock.start();
    for (int i = 1; i <= 400; ++i) {
      panel.addIteration(report(i, 1.0f));
      QCoreApplication::processEvents();
    }
    QTest::qWait(3 * MetricsPanel::kRefreshIntervalMs);
    const qint64 elapsed = clock.elapsed();
    QVERIFY2(replots.count() >= 1, "the plot was never redrawn");
    QVERIFY2(replots.count() <= elapsed / MetricsPanel::kRefreshIntervalMs + 2,
             qPrintable(QStringLiteral("%1 redraws in %2 ms").arg(replots.count()).arg(elapsed)));
    QCOMPARE(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"))->dataCount(), 400);
  }

  void storedPointsAreBounded() {
    MetricsPanel panel;
    const int n = MetricsPanel::kMaxPoints + 500;
    for (int i = 1; i <= n; ++i) panel.addIteration(report(i, 1.0f));
    QVERIFY2(panel.pointCount() <= MetricsPanel::kMaxPoints, qPrintable(QString::number(panel.pointCount())));
    QVERIFY(panel.pointCount() > MetricsPanel::kMaxPoints / 2);
    QTRY_VERIFY(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total")));
    QCPGraph* total = graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"));
    QTRY_COMPARE(total->dataCount(), panel.pointCount());
    QCOMPARE(total->data()->constBegin()->key, 1.0);  // where the run began
    QCOMPARE((total->data()->constEnd() - 1)->key, double(n));
    QCOMPARE((total->data()->constEnd() - 2)->key, double(n - 1));  // recent points at full resolution
  }

  void csvHasOneColumnPerSeries() {
    MetricsPanel panel;
    panel.addIteration(report(1, 1.5f));
    auto r = report(2, 2.0f);
    r.evaluations = {evaluation("random", 1, 1, 0), evaluation("mcts:200", 0, 0, 2)};
    panel.addIteration(r);
    QCOMPARE(panel.csv(MetricsPanel::Loss), QStringLiteral("iteration,total,policy,value,L2\n1,1.5,1,0.5,0.25\n2,2,1,0.5,0.25\n"));
    QCOMPARE(panel.csv(MetricsPanel::Score), QStringLiteral("iteration,random,mcts:200\n2,0.75,0\n"));
    QCOMPARE(panel.csv(MetricsPanel::StageTimes),
             QStringLiteral("iteration,inference incl. copies,tree search,data exchange,training\n1,0.5,0.25,0.125,1\n2,0.5,0.25,0.125,1\n"));
    const QString path = dir_.filePath(QStringLiteral("loss.csv"));
    QString error;
    QVERIFY2(panel.exportCsv(MetricsPanel::Loss, path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(file.readAll()), panel.csv(MetricsPanel::Loss));
    QVERIFY(!panel.exportCsv(MetricsPanel::Loss, dir_.filePath(QStringLiteral("no/such/folder/loss.csv")), &error));
    QVERIFY2(error.contains(QStringLiteral("could not be written")), qPrintable(error));
  }

  void pngExport() {
    MetricsPanel panel;
    for (int i = 1; i <= 5; ++i) panel.addIteration(report(i, 1.0f / float(i)));
    const QString path = dir_.filePath(QStringLiteral("loss.png"));
    QString error;
    QVERIFY2(panel.exportPng(MetricsPanel::Loss, path, &error), qPrintable(error));
    const QImage image(path);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 400 && image.height() >= 200);
  }

  void overlayLoadsARunFolder() {
    const QString run = dir_.filePath(QStringLiteral("earlier-run"));
    QVERIFY(QDir().mkpath(run));
    QFile metrics(run + QStringLiteral("/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::WriteOnly));
    metrics.write(metricsLine(1, 0, 0.5, 0.5));  // the replay buffer was filling: no loss point
    metrics.write(metricsLine(2, 2.5, 1, 0));
    metrics.write(metricsLine(3, 1.5, 0.5, 0));
    metrics.write("{\"iteration\": 4, \"loss\": 1.");  // cut short when that run was killed
    metrics.close();

    MetricsPanel panel;
    panel.addIteration(report(1, 1.0f));
    QString error;
    QVERIFY2(panel.loadOverlay(run, &error), qPrintable(error));
    QCOMPARE(panel.overlayName(), QStringLiteral("earlier-run"));
    QTRY_VERIFY(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("earlier-run: total")));
    QCPGraph* overlayLoss = graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("earlier-run: total"));
    QTRY_COMPARE(displayed(overlayLoss), (QVector<double>{2.5, 1.5}));
    QCOMPARE(overlayLoss->pen().style(), Qt::DashLine);
    QCOMPARE(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"))->pen().style(), Qt::SolidLine);
    // An overlaid run has a colour of its own, not the live run's colour of the quantity.
    QVERIFY(overlayLoss->pen().color() != graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"))->pen().color());
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("earlier-run: random"))), (QVector<double>{0.75, 1, 0.5}));
    QCOMPARE(graphNamed(panel.plot(MetricsPanel::Simulations), QStringLiteral("earlier-run: simulations/s"))->dataCount(), 3);
    QVERIFY(panel.csv(MetricsPanel::Loss).startsWith(QStringLiteral("iteration,total,policy,value,L2,earlier-run: total,")));

    panel.clear();  // a new live run keeps the overlay for comparison
    QVERIFY(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("earlier-run: total")));
    panel.removeOverlay();
    QVERIFY(panel.overlayName().isEmpty());
    for (int p = 0; p < MetricsPanel::PlotCount; ++p) QCOMPARE(panel.plot(MetricsPanel::Plot(p))->graphCount(), 0);
  }

  // A PPO run: the live episodes (returns, lengths, environment steps/s) and a PPO run folder's
  // metrics.jsonl fill the self-play plots, whose titles then say what they show; an iteration
  // in which no episode ended draws no return.
  void singleAgentRunsPlotTheirEpisodes() {
    MetricsPanel panel;
    auto ppoReport = [](qint64 iteration, std::int64_t episodes, double returnMean) {
      cas::train::IterationReport r;
      r.iteration = iteration;
      r.trainingSteps = 16;
      r.loss = -0.5f;  // PPO's total loss may be negative
      cas::train::EpisodeReport e;
      e.episodes = episodes;
      e.returnMean = returnMean;
      e.lengthMean = returnMean;
      e.stepsPerSecond = 50000;
      r.episodes = e;
      return r;
    };
    panel.addIteration(ppoReport(1, 10, 20));
    panel.addIteration(ppoReport(2, 0, 0));
    panel.addIteration(ppoReport(3, 2, 480));
    QTRY_VERIFY(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("mean return")));
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("mean return"))), (QVector<double>{20, 480}));
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Loss), QStringLiteral("total"))), (QVector<double>{-0.5, -0.5, -0.5}));
    QCOMPARE(graphNamed(panel.plot(MetricsPanel::Simulations), QStringLiteral("environment steps/s"))->dataCount(), 3);
    auto title = [&](MetricsPanel::Plot p) { return static_cast<QCPTextElement*>(panel.plot(p)->plotLayout()->element(0, 0))->text(); };
    QCOMPARE(title(MetricsPanel::Score), QStringLiteral("Episode return"));
    QCOMPARE(title(MetricsPanel::Games), QStringLiteral("Episode length"));
    QVERIFY(panel.plot(MetricsPanel::Score)->yAxis->range().upper >= 480);  // not the score's 0..1

    const QString run = dir_.filePath(QStringLiteral("ppo-run"));
    QVERIFY(QDir().mkpath(run));
    QFile metrics(run + QStringLiteral("/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::WriteOnly));
    metrics.write("{\"iteration\": 1, \"env_steps\": 512, \"episodes\": 22, \"episodes_in_iteration\": 22, \"episode_return_mean\": 18.8, "
                  "\"episode_length_mean\": 18.8, \"loss\": 19.9, \"loss_policy\": -0.01, \"loss_value\": 40, \"training_steps\": 16, "
                  "\"env_steps_per_second\": 72150, \"seconds_rollout\": 0.004, \"seconds_train\": 0.003, \"seconds_wall\": 0.007}\n");
    metrics.close();
    MetricsPanel fresh;
    QString error;
    QVERIFY2(fresh.showRun(run, &error), qPrintable(error));
    QTRY_VERIFY(graphNamed(fresh.plot(MetricsPanel::Score), QStringLiteral("mean return")));
    QCOMPARE(displayed(graphNamed(fresh.plot(MetricsPanel::Score), QStringLiteral("mean return"))), (QVector<double>{18.8}));
    QCOMPARE(static_cast<QCPTextElement*>(fresh.plot(MetricsPanel::Simulations)->plotLayout()->element(0, 0))->text(),
             QStringLiteral("Environment steps per second"));
  }

  // The score plot's baselines are named in the user's language, live and in an overlaid run;
  // another opponent keeps the name that gives its settings.
  void baselineNamesAreTranslated() {
    QTranslator chinese;
    QVERIFY(chinese.load(QStringLiteral(":/i18n/cuda-agent-studio_zh_CN.qm")));
    QVERIFY(QCoreApplication::installTranslator(&chinese));  // until the test ends: QTranslator's destructor removes it
    const QString run = dir_.filePath(QStringLiteral("scored-run"));
    QVERIFY(QDir().mkpath(run));
    QFile metrics(run + QStringLiteral("/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::WriteOnly));
    metrics.write(metricsLine(1, 1.5, 0.5, 0.5));
    metrics.close();

    MetricsPanel panel;
    auto r = report(1, 1.5f);
    r.evaluations = {evaluation("random", 3, 1, 0), evaluation("perfect", 0, 2, 2), evaluation("mcts:200", 1, 0, 1)};
    panel.addIteration(r);
    QString error;
    QVERIFY2(panel.addOverlay(run, &error), qPrintable(error));
    QTRY_VERIFY(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("随机玩家")));
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("随机玩家"))), (QVector<double>{0.875}));
    QCOMPARE(displayed(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("完美玩家"))), (QVector<double>{0.25}));
    QVERIFY(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("mcts:200")));
    QVERIFY(graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("scored-run：随机玩家")));
    QVERIFY(!graphNamed(panel.plot(MetricsPanel::Score), QStringLiteral("random")));
  }

  void overlayRefusesAFolderWithoutMetrics() {
    MetricsPanel panel;
    QString error;
    QVERIFY(!panel.loadOverlay(dir_.path(), &error));
    QVERIFY2(error.contains(QStringLiteral("metrics.jsonl")), qPrintable(error));
    QVERIFY(panel.overlayName().isEmpty());
  }

  void kernelModelPassesTester() {
    KernelTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setKernels({generatedKernel(), libraryCall()});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(KernelTableModel::ColumnCount));
    auto cell = [&](int row, int column) { return model.index(row, column).data().toString(); };
    QCOMPARE(cell(0, KernelTableModel::Kernel), QStringLiteral("k0_MatMul_Add_Tanh"));
    QCOMPARE(cell(0, KernelTableModel::Time), QStringLiteral("7.50"));
    QCOMPARE(cell(0, KernelTableModel::Share), QStringLiteral("75%"));
    QCOMPARE(cell(0, KernelTableModel::Registers), QStringLiteral("32"));
    QCOMPARE(cell(0, KernelTableModel::SharedMemory), QStringLiteral("0"));
    QCOMPARE(cell(0, KernelTableModel::TheoreticalOccupancy), QStringLiteral("75%"));
    QCOMPARE(cell(0, KernelTableModel::AchievedOccupancy), QStringLiteral("n/a"));
    QCOMPARE(cell(0, KernelTableModel::SimtEfficiency), QStringLiteral("n/a"));  // not instrumented
    QCOMPARE(cell(0, KernelTableModel::Launch), QStringLiteral("grid 4 x block 256"));
    QCOMPARE(cell(0, KernelTableModel::Nodes), QStringLiteral("3"));
    QCOMPARE(cell(1, KernelTableModel::Kind), QStringLiteral("cuBLAS"));
    for (int column : {KernelTableModel::Registers, KernelTableModel::SharedMemory, KernelTableModel::TheoreticalOccupancy,
                       KernelTableModel::AchievedOccupancy})
      QCOMPARE(cell(1, column), QStringLiteral("n/a"));
    QCOMPARE(model.index(0, KernelTableModel::Time).data(KernelTableModel::SortRole).toDouble(), 7.5);
    QCOMPARE(model.totalMicroseconds(), 10.0);
    model.setKernels({});
    QCOMPARE(model.rowCount(), 0);
  }

  void kernelViewShowsAProfileAndSources() {
    KernelView view;
    QSignalSpy requested(&view, &KernelView::profileRequested);
    view.runStarted(QStringLiteral("cuda"));
    QVERIFY(view.showsKernels());
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.first().first().toInt(), KernelView::kProfileRuns);
    cas::widgets::KernelProfile profile;
    profile.iteration = 3;
    profile.runs = 20;
    profile.batch = 64;
    profile.graph = QStringLiteral("policy_forward");
    profile.kernels = {generatedKernel(), libraryCall()};
    profile.runtimeStats = {{"graph", "captured: %1 graph nodes, replayed per run", {"12"}}, {"buffers", "%1", {"1.5 MiB"}}};
    view.showProfile(profile);
    QVERIFY2(view.explanation().contains(QStringLiteral("'policy_forward' at batch 64, after iteration 3: 2 kernels, 10.0 µs")),
             qPrintable(view.explanation()));
    QVERIFY2(view.explanation().contains(QStringLiteral("graph: captured: 12 graph nodes, replayed per run\nbuffers: 1.5 MiB")),
             qPrintable(view.explanation()));
    QVERIFY2(view.selectedSource().contains(QStringLiteral("__global__ void k0_MatMul_Add_Tanh")), qPrintable(view.selectedSource()));
    auto* table = view.findChild<QTableView*>(QStringLiteral("kernelTable"));
    QVERIFY(table);
    table->selectRow(1);
    QCOMPARE(view.selectedSource(), QStringLiteral("cublas_MatMul is a cuBLAS call; it has no generated source."));
    table->sortByColumn(KernelTableModel::Time, Qt::AscendingOrder);  // numeric: 2.5 before 7.5
    QCOMPARE(table->model()->index(0, KernelTableModel::Kernel).data().toString(), QStringLiteral("cublas_MatMul"));
  }

  // The backend's runtime lines in the interface's language: the name and the template come from
  // the catalogue, the arguments (numbers, a folder whose name holds "%1") are shown as given.
  void runtimeLinesAreTranslated() {
    QTranslator chinese;
    QVERIFY(chinese.load(QStringLiteral(":/i18n/cuda-agent-studio_zh_CN.qm")));
    QVERIFY(QCoreApplication::installTranslator(&chinese));
    KernelView view;
    view.runStarted(QStringLiteral("cuda"));
    cas::widgets::KernelProfile profile;
    profile.runs = 20;
    profile.batch = 64;
    profile.graph = QStringLiteral("policy_forward");
    profile.kernels = {generatedKernel()};
    profile.runtimeStats = {{"kernel cache", "%1 hits, %2 compiled, %3 rebuilt (%4)", {"3", "1", "0", "/tmp/cache%1"}},
                            {"module", "hit (loaded from the kernel cache)", {}}};
    view.showProfile(profile);
    QVERIFY2(view.explanation().contains(QStringLiteral("内核缓存：命中 3 次，编译 1 次，重建 0 次（/tmp/cache%1）\n模块：命中（从内核缓存加载）")),
             qPrintable(view.explanation()));
  }

  void searchKernelsShowTheirDivergenceAndTheSmTimeline() {
    KernelView view;
    view.resize(900, 700);
    view.runStarted(QStringLiteral("cuda"));
    cas::widgets::KernelProfile profile;
    profile.iteration = 2;
    profile.runs = 20;
    profile.batch = 64;
    profile.graph = QStringLiteral("policy_forward");
    profile.kernels = {generatedKernel()};
    profile.searchSteps = 20;
    profile.searchKernels = {searchKernel("search_select_branchy", 0.41, {{0, 0, 3}, {1, 0.5, 4}, {3, 1, 2.5}}),
                             searchKernel("search_expand_backup", 0.97, {{0, 0, 6}, {2, 0.5, 5}})};
    view.showProfile(profile);
    auto* table = view.findChild<QTableView*>(QStringLiteral("kernelTable"));
    QVERIFY(table);
    QCOMPARE(table->model()->rowCount(), 3);
    auto rowOf = [&](const QString& name) {
      for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, KernelTableModel::Kernel).data().toString() == name) return r;
      return -1;
    };
    QCOMPARE(table->model()->index(rowOf(QStringLiteral("search_select_branchy")), KernelTableModel::SimtEfficiency).data().toString(),
             QStringLiteral("41%"));
    QCOMPARE(table->model()->index(rowOf(QStringLiteral("search_expand_backup")), KernelTableModel::SimtEfficiency).data().toString(),
             QStringLiteral("97%"));
    // Shares within each group: the search's step, the inference graph's run.
    QCOMPARE(table->model()->index(rowOf(QStringLiteral("search_expand_backup")), KernelTableModel::Share).data().toString(), QStringLiteral("50%"));
    QCOMPARE(table->model()->index(rowOf(QStringLiteral("k0_MatMul_Add_Tanh")), KernelTableModel::Share).data().toString(), QStringLiteral("100%"));
    // Without the English catalogue (the studio loads it) the source's "(s)" shows.
    QVERIFY2(view.explanation().contains(QStringLiteral("1 kernels, 7.5 µs per run")), qPrintable(view.explanation()));  // the inference graph's alone
    QVERIFY2(view.explanation().contains(QStringLiteral("Then the device search's 2 kernel(s), instrumented, each timed per simulation step over 20 steps")),
             qPrintable(view.explanation()));

    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const cas::widgets::SmTimeline* timeline = view.timeline();
    QVERIFY(timeline && timeline->hasTimeline() && timeline->isVisible());
    QVERIFY2(timeline->height() >= 100, qPrintable(QString::number(timeline->height())));
    QCOMPARE(timeline->smCount(), 4);  // SMs 0-3 seen
    QCOMPARE(timeline->blockCount(), 5);
    QCOMPARE(timeline->spanMicroseconds(), 10.0);  // 4 µs, then 6 µs laid after it
    QCOMPARE(timeline->summary(), QStringLiteral("SM timeline of one simulation step: 2 kernel(s), 5 blocks on 4 SMs over 10.0 µs"));
    // The second kernel's blocks start where the first one ended, in its own colour.
    const QRectF first = timeline->blockRect(0, 1, 0.5, 4), second = timeline->blockRect(1, 2, 0.5, 5);
    QVERIFY(second.left() > first.right() - 1);
    QVERIFY(second.top() > first.top());
    QImage image(timeline->size(), QImage::Format_ARGB32);
    const_cast<cas::widgets::SmTimeline*>(timeline)->render(&image);
    QCOMPARE(QColor(image.pixel(first.center().toPoint())), cas::widgets::SmTimeline::colourOf(0));
    QCOMPARE(QColor(image.pixel(second.center().toPoint())), cas::widgets::SmTimeline::colourOf(1));

    // The history: SIMT efficiency weighted by the kernels' times (4 µs each), no occupancy measured.
    QCOMPARE(view.history().size(), size_t(1));
    QCOMPARE(view.history()[0].iteration, qint64(2));
    QVERIFY(std::abs(view.history()[0].simtEfficiency - 0.69) < 1e-12);
    QCOMPARE(view.history()[0].occupancy, -1.0);
    QVERIFY(view.historyPlot()->isVisible());
    // Mask-based selection after a live change: the next profile shows less divergence.
    profile.iteration = 5;
    profile.searchKernels[0].name = "search_select_masked";
    profile.searchKernels[0].simtEfficiency = 0.93;
    profile.searchKernels[0].theoreticalOccupancy = 0.5;
    view.showProfile(profile);
    QCOMPARE(view.history().size(), size_t(2));
    QVERIFY(view.history()[1].simtEfficiency > view.history()[0].simtEfficiency);
    QCOMPARE(view.history()[1].occupancy, 0.5);  // the one kernel whose occupancy is known
    QCOMPARE(view.historyPlot()->graph(0)->dataCount(), 2);
    QCOMPARE(view.historyPlot()->graph(1)->dataCount(), 1);
    QCOMPARE(view.historyPlot()->graph(0)->data()->at(1)->value, 95.0);

    profile.searchKernels.clear();  // the CPU search's profile: no timeline, nothing to add
    view.showProfile(profile);
    QVERIFY(!timeline->hasTimeline() && !timeline->isVisible());
    QCOMPARE(view.history().size(), size_t(2));
    view.runStarted(QStringLiteral("cuda"));  // a new run starts a new history
    QVERIFY(view.history().empty() && !view.historyPlot()->isVisible());
  }

  void liveProfilesAtABoundedRateWhileACudaRunTrains() {
    KernelView view;
    view.setLiveInterval(20);
    auto* live = view.findChild<QCheckBox*>(QStringLiteral("liveKernels"));
    QVERIFY(live);
    view.runStarted(QStringLiteral("cpu"));
    live->setChecked(true);
    QVERIFY(!view.liveProfiling());  // the CPU backend has no kernels to time
    view.runStarted(QStringLiteral("cuda"));
    QVERIFY(view.liveProfiling());
    QSignalSpy requested(&view, &KernelView::profileRequested);
    QTRY_VERIFY(requested.count() >= 2);
    view.runFinished();
    QVERIFY(!view.liveProfiling());
    live->setChecked(false);
    view.runStarted(QStringLiteral("cuda"));
    QVERIFY(!view.liveProfiling());
  }

  void cpuBackendExplainsAndShowsStageTimes() {
    KernelView view;
    view.setDevice(QStringLiteral("cpu"));
    QVERIFY(!view.showsKernels());
    const QString status = QString::fromStdString(cas::exec::BackendRegistry::instance().statusLine("cpu"));
    QVERIFY2(view.explanation().startsWith(QStringLiteral("GPU kernel metrics need the CUDA backend. Backend in use: ") + status),
             qPrintable(view.explanation()));
    QSignalSpy requested(&view, &KernelView::profileRequested);
    view.runStarted(QStringLiteral("cpu"));
    QCOMPARE(requested.count(), 0);  // the CPU backend has no kernels to time

    StageTimeModel* stages = view.stageModel();
    QAbstractItemModelTester tester(stages, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (int i = 1; i <= StageTimeModel::kMaxRows + 10; ++i) view.addIteration(report(i, 1.0f));
    QCOMPARE(stages->rowCount(), StageTimeModel::kMaxRows);
    QCOMPARE(stages->index(0, StageTimeModel::Iteration).data().toInt(), StageTimeModel::kMaxRows + 10);  // newest first
    QCOMPARE(stages->index(0, StageTimeModel::Inference).data().toString(), QStringLiteral("0.500"));
    QCOMPARE(stages->index(0, StageTimeModel::Total).data().toString(), QStringLiteral("1.875"));
    view.runStarted(QStringLiteral("cpu"));
    QCOMPARE(stages->rowCount(), 0);
  }
};

QTEST_MAIN(TestMetrics)
#include "test_metrics.moc"
