// The Metrics dock's plots as a TensorBoard user handles them, offscreen: the raw curve faded
// behind the smoothed one; three overlaid runs in distinct colours with every legend entry inside
// its plot; a finished run shown as the main curves and continued; the wheel scrolling the dock while Ctrl+wheel zooms, a zoomed plot holding still as
// points arrive, and a double-click or a new run resetting it; the crosshair's read-out; the
// iteration, training-time and wall-clock axes; the log scale; and parameter-change markers from
// an overlay's changes.jsonl and from the live run.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <qcustomplot.h>

#include <set>

#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/metrics/plot_interaction.hpp"

using cas::widgets::MetricsPanel;

namespace {

cas::train::IterationReport report(std::int64_t iteration, float loss) {
  cas::train::IterationReport r;
  r.iteration = iteration;
  r.gamesPlayed = iteration * 8;
  r.loss = loss;
  r.batchSize = 32;
  r.trainingSteps = 2;
  r.policyLoss = 1.0f;
  r.valueLoss = 0.5f;
  r.l2 = 0.25f;
  r.simulationsPerSecond = 1000.0;
  r.gamesPerSecond = 2.0;
  r.inferenceSeconds = 0.5;
  r.searchSeconds = 0.25;
  r.dataSeconds = 0;  // left out on a log scale
  r.trainSeconds = 1.0;
  r.wallSeconds = 2.0;
  return r;
}

QCPGraph* graphNamed(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->graphCount(); ++i)
    if (plot->graph(i)->name() == name) return plot->graph(i);
  return nullptr;
}

int graphIndex(QCustomPlot* plot, QCPGraph* graph) {
  for (int i = 0; i < plot->graphCount(); ++i)
    if (plot->graph(i) == graph) return i;
  return -1;
}

QVector<double> keys(QCPGraph* graph) {
  QVector<double> out;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) out << it->key;
  return out;
}

QVector<double> values(QCPGraph* graph) {
  QVector<double> out;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) out << it->value;
  return out;
}

QStringList itemTexts(QCustomPlot* plot) {
  QStringList texts;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && text->visible()) texts << text->text();
  return texts;
}

// One metrics.jsonl line as the engine writes it; `time` 0 leaves the field out, as older runs did.
QByteArray metricsLine(int iteration, double loss, double secondsWall, double time) {
  QString line = QStringLiteral("{\"iteration\": %1, \"loss\": %2, \"loss_policy\": 1.5, \"loss_value\": 0.5, \"loss_l2\": 0.01, "
                                "\"simulations_per_second\": 500, \"games_per_second\": 3, \"seconds_inference\": 0.2, "
                                "\"seconds_search\": 0.3, \"seconds_data\": 0.05, \"seconds_train\": 0.4, \"seconds_wall\": %3")
                     .arg(iteration)
                     .arg(loss)
                     .arg(secondsWall);
  if (time > 0) line += QStringLiteral(", \"time\": %1").arg(time, 0, 'f', 3);
  return (line + QStringLiteral(", \"win_rate_random\": 0.5, \"draw_rate_random\": 0.25}\n")).toUtf8();
}

void sendWheel(QWidget* target, int angle, Qt::KeyboardModifiers modifiers) {
  const QPoint at = target->rect().center();
  QWheelEvent wheel(at, target->mapToGlobal(at), QPoint(), QPoint(0, angle), Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
  QApplication::sendEvent(target, &wheel);
}

void sendMouse(QWidget* target, QEvent::Type type, const QPoint& at, Qt::MouseButton button = Qt::NoButton) {
  QMouseEvent event(type, QPointF(at), QPointF(target->mapToGlobal(at)), button, button, Qt::NoModifier);
  QApplication::sendEvent(target, &event);
}

}  // namespace

class TestPlotInteraction : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  // A run folder with `iterations` lines of metrics, iteration i taking 10 s and ending at
  // `start` + 10 i (no "time" when start is 0), and optionally a change log.
  QString writeRun(const QString& name, int iterations, double lossScale, double start = 0, const QByteArray& changes = {}) {
    const QString run = dir_.filePath(name);
    if (!QDir().mkpath(run)) qFatal("cannot make %s", qPrintable(run));
    QFile metrics(run + QStringLiteral("/metrics.jsonl"));
    if (!metrics.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(metrics.fileName()));
    for (int i = 1; i <= iterations; ++i) metrics.write(metricsLine(i, lossScale / i, 10, start > 0 ? start + 10 * i : 0));
    if (!changes.isEmpty()) {
      QFile log(run + QStringLiteral("/changes.jsonl"));
      if (!log.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(log.fileName()));
      log.write(changes);
    }
    return run;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_plot_interaction"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
  }

  void rawCurveFadedBehindTheSmoothedOne() {
    MetricsPanel panel;
    panel.setSmoothing(0.5);
    for (int i = 1; i <= 3; ++i) panel.addIteration(report(i, i == 2 ? 3.0f : 1.0f));
    QCustomPlot* loss = panel.plot(MetricsPanel::Loss);
    QTRY_VERIFY(graphNamed(loss, QStringLiteral("total (raw)")));
    QCPGraph* raw = graphNamed(loss, QStringLiteral("total (raw)"));
    QCPGraph* trend = graphNamed(loss, QStringLiteral("total"));
    QVERIFY(trend);
    QTRY_COMPARE(values(trend), (QVector<double>{1, 2, 1.5}));
    QCOMPARE(values(raw), (QVector<double>{1, 3, 1}));
    QVERIFY(raw->visible());
    QVERIFY2(raw->pen().color().alpha() < 128, "the raw curve is not faded");
    QCOMPARE(raw->pen().color().rgb(), trend->pen().color().rgb());  // the same hue
    QVERIFY2(graphIndex(loss, raw) < graphIndex(loss, trend), "the raw curve is drawn over the smoothed one");
    QVERIFY(!loss->legend->hasItemWithPlottable(raw));
    QVERIFY(loss->legend->hasItemWithPlottable(trend));
    panel.setSmoothing(0);
    QTRY_VERIFY(!raw->visible());  // with nothing smoothed the two would coincide
  }

  void threeOverlaysInDistinctColoursWithWholeLegends() {
    const QStringList runs{writeRun(QStringLiteral("overlay-a"), 4, 2), writeRun(QStringLiteral("overlay-b"), 6, 3),
                           writeRun(QStringLiteral("overlay-c"), 5, 4)};
    MetricsPanel panel;
    panel.resize(320, 900);  // a narrow dock
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    // Empty plots (an empty legend included) fill the dock's width, no more and no less.
    QWidget* viewport = panel.findChild<QScrollArea*>(QStringLiteral("plotScroll"))->viewport();
    for (int p = 0; p < MetricsPanel::PlotCount; ++p)
      QTRY_COMPARE(panel.plot(MetricsPanel::Plot(p))->width(), viewport->width());
    panel.addIteration(report(1, 1.0f));
    QSignalSpy changed(&panel, &MetricsPanel::overlaysChanged);
    QString error;
    for (const QString& run : runs) QVERIFY2(panel.addOverlay(run, &error), qPrintable(error));
    QCOMPARE(changed.count(), 3);
    QCOMPARE(panel.overlays(), runs);
    QCOMPARE(panel.overlayName(runs[1]), QStringLiteral("overlay-b"));

    QCustomPlot* loss = panel.plot(MetricsPanel::Loss);
    QTRY_VERIFY(graphNamed(loss, QStringLiteral("overlay-c: L2")));
    std::set<QRgb> colours{graphNamed(loss, QStringLiteral("total"))->pen().color().rgb()};
    for (const char* run : {"overlay-a", "overlay-b", "overlay-c"}) {
      QCPGraph* total = graphNamed(loss, QStringLiteral("%1: total").arg(QLatin1String(run)));
      QVERIFY2(total, run);
      colours.insert(total->pen().color().rgb());
      QCOMPARE(graphNamed(loss, QStringLiteral("%1: policy").arg(QLatin1String(run)))->pen().color(), total->pen().color());
      QVERIFY(graphNamed(loss, QStringLiteral("%1: policy").arg(QLatin1String(run)))->pen().style() != total->pen().style());
      for (const char* term : {"total", "policy", "value", "L2"})
        QVERIFY2(loss->legend->hasItemWithPlottable(graphNamed(loss, QStringLiteral("%1: %2").arg(QLatin1String(run), QLatin1String(term)))), term);
    }
    QCOMPARE(colours.size(), size_t(4));  // the live run and three overlays, each its own colour
    QTRY_COMPARE(graphNamed(loss, QStringLiteral("overlay-b: total"))->dataCount(), 6);

    // Every legend entry lies inside its plot, and the plot inside the dock's width: none is cut
    // off, however many runs are overlaid.
    QTest::qWait(3 * MetricsPanel::kRefreshIntervalMs);
    for (int p = 0; p < MetricsPanel::PlotCount; ++p) {
      QCustomPlot* plot = panel.plot(MetricsPanel::Plot(p));
      QVERIFY2(plot->mapTo(viewport, QPoint(plot->width(), 0)).x() <= viewport->width(),
               qPrintable(QStringLiteral("plot %1 is %2 px wide in a %3 px dock").arg(p).arg(plot->width()).arg(viewport->width())));
      plot->replot();
      int entries = 0;
      for (int i = 0; i < plot->legend->itemCount(); ++i) {
        if (!plot->legend->item(i)) continue;  // an empty cell of the legend's grid
        ++entries;
        const QRect entry = plot->legend->item(i)->outerRect();
        QVERIFY2(plot->rect().contains(entry), qPrintable(QStringLiteral("plot %1, entry %2 at %3,%4 %5x%6 outside %7x%8")
                                                              .arg(p)
                                                              .arg(i)
                                                              .arg(entry.x())
                                                              .arg(entry.y())
                                                              .arg(entry.width())
                                                              .arg(entry.height())
                                                              .arg(plot->width())
                                                              .arg(plot->height())));
      }
      QVERIFY(entries >= 3);  // the overlays' own entries at least
    }

    panel.removeOverlay(runs[1]);
    QCOMPARE(changed.count(), 4);
    QCOMPARE(panel.overlays(), (QStringList{runs[0], runs[2]}));
    QVERIFY(!graphNamed(loss, QStringLiteral("overlay-b: total")));
    QVERIFY(graphNamed(loss, QStringLiteral("overlay-a: total")));
    QVERIFY(panel.csv(MetricsPanel::Loss).startsWith(QStringLiteral("iteration,total,policy,value,L2,overlay-a: total,")));

    // The one-overlay call replaces them all.
    QVERIFY2(panel.loadOverlay(runs[1], &error), qPrintable(error));
    QCOMPARE(panel.overlays(), QStringList{runs[1]});
    QCOMPARE(panel.overlayName(), QStringLiteral("overlay-b"));
    panel.removeAllOverlays();
    QVERIFY(panel.overlays().isEmpty());
  }

  void aFinishedRunShownAsTheMainCurves() {
    const QString run = writeRun(QStringLiteral("finished"), 2, 2, 0,
                                 "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2\"}\n");
    MetricsPanel panel;
    panel.addIteration(report(1, 9.0f));
    QString error;
    QVERIFY2(panel.showRun(run, &error), qPrintable(error));
    QVERIFY(panel.overlays().isEmpty());  // not an overlay: the main, solid curves
    QCustomPlot* loss = panel.plot(MetricsPanel::Loss);
    QTRY_VERIFY(graphNamed(loss, QStringLiteral("total")));
    QTRY_COMPARE(values(graphNamed(loss, QStringLiteral("total"))), (QVector<double>{2, 1}));
    QCOMPARE(graphNamed(loss, QStringLiteral("total"))->pen().style(), Qt::SolidLine);
    QTRY_VERIFY(itemTexts(loss).contains(QStringLiteral("search.c_puct = 2")));
    QCOMPARE(panel.pointCount(), 2);
    // A resumed run's iterations continue its curves.
    panel.addIteration(report(3, 0.5f));
    QTRY_COMPARE(values(graphNamed(loss, QStringLiteral("total"))), (QVector<double>{2, 1, 0.5}));
    QVERIFY(!panel.showRun(dir_.filePath(QStringLiteral("no-such-run")), &error));
    QVERIFY2(error.contains(QStringLiteral("metrics.jsonl")), qPrintable(error));
    QCOMPARE(panel.pointCount(), 3);  // a refused folder leaves the curves as they were
  }

  void overlaysAreBoundedAndSameNamesToldApart() {
    MetricsPanel panel;
    QString error;
    QStringList names;
    for (int i = 0; i < MetricsPanel::kMaxOverlays; ++i) {
      const QString run = writeRun(QStringLiteral("many/%1/ttt").arg(i), 2, 1);
      QVERIFY2(panel.addOverlay(run, &error), qPrintable(error));
      names << panel.overlayName(run);
    }
    QCOMPARE(names.first(), QStringLiteral("ttt"));
    QCOMPARE(names.at(1), QStringLiteral("1/ttt"));
    QVERIFY(!panel.addOverlay(writeRun(QStringLiteral("many/extra"), 2, 1), &error));
    QVERIFY2(error.contains(QString::number(MetricsPanel::kMaxOverlays)), qPrintable(error));
    QCOMPARE(panel.overlays().size(), MetricsPanel::kMaxOverlays);
    QVERIFY2(panel.addOverlay(panel.overlays().first(), &error), qPrintable(error));  // a reload, not a ninth
  }

  void wheelScrollsCtrlWheelZoomsDoubleClickResets() {
    MetricsPanel panel;
    panel.resize(400, 500);  // the five plots do not fit: the dock scrolls
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    for (int i = 1; i <= 20; ++i) panel.addIteration(report(i, 1.0f / float(i)));
    QCustomPlot* loss = panel.plot(MetricsPanel::Loss);
    QTRY_COMPARE(loss->xAxis->range().upper, 20.5);
    auto* scroll = panel.findChild<QScrollArea*>(QStringLiteral("plotScroll"));
    QVERIFY(scroll);
    QScrollBar* bar = scroll->verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    QCOMPARE(bar->value(), 0);

    sendWheel(loss, -120, Qt::NoModifier);
    QVERIFY2(bar->value() > 0, "the wheel did not scroll the dock");
    QCOMPARE(loss->xAxis->range(), QCPRange(0.5, 20.5));  // and did not zoom
    QVERIFY(panel.interaction(MetricsPanel::Loss)->followsData());

    const int scrolled = bar->value();
    sendWheel(loss, 120, Qt::ControlModifier);
    QCOMPARE(bar->value(), scrolled);
    QVERIFY2(loss->xAxis->range().size() < 19.5, "Ctrl+wheel did not zoom");
    QVERIFY(!panel.interaction(MetricsPanel::Loss)->followsData());
    const QCPRange zoomed = loss->xAxis->range();

    // A zoomed plot holds still as points arrive; the others follow them.
    panel.addIteration(report(21, 0.05f));
    QTRY_COMPARE(panel.plot(MetricsPanel::Games)->xAxis->range().upper, 21.5);
    QCOMPARE(loss->xAxis->range(), zoomed);

    sendMouse(loss, QEvent::MouseButtonDblClick, loss->rect().center(), Qt::LeftButton);
    QVERIFY(panel.interaction(MetricsPanel::Loss)->followsData());
    QTRY_COMPARE(loss->xAxis->range(), QCPRange(0.5, 21.5));

    // A zoom does not carry into the next run.
    sendWheel(loss, 120, Qt::ControlModifier);
    QVERIFY(!panel.interaction(MetricsPanel::Loss)->followsData());
    panel.clear();
    QVERIFY(panel.interaction(MetricsPanel::Loss)->followsData());
    for (int i = 1; i <= 5; ++i) panel.addIteration(report(i, 1.0f));
    QTRY_COMPARE(loss->xAxis->range(), QCPRange(0.5, 5.5));
  }

  void hoverShowsACrosshairWithValues() {
    MetricsPanel panel;
    panel.resize(400, 1200);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setSmoothing(0.5);
    for (int i = 1; i <= 3; ++i) panel.addIteration(report(i, i == 2 ? 3.0f : 1.0f));
    QCustomPlot* loss = panel.plot(MetricsPanel::Loss);
    QTRY_COMPARE(loss->xAxis->range().upper, 3.5);
    loss->replot();  // lays the axes out, so that pixels map to coordinates
    const int y = loss->axisRect()->rect().center().y();
    // A little off iteration 2: the crosshair snaps to it.
    sendMouse(loss, QEvent::MouseMove, QPoint(int(loss->xAxis->coordToPixel(2.2)), y));
    const QString text = panel.interaction(MetricsPanel::Loss)->readOutText();
    QVERIFY2(text.startsWith(QStringLiteral("iteration 2\n")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("total: 2 (raw 3)")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("value: 0.5 (raw 0.5)")), qPrintable(text));
    QCOMPARE(QToolTip::text(), text);  // shown beside the cursor
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(loss, &leave);
    QVERIFY(panel.interaction(MetricsPanel::Loss)->readOutText().isEmpty());
    QTRY_VERIFY(!QToolTip::isVisible());
  }

  void timeAxesAndLogScale() {
    const double start = 1.7e9;
    const QString timed = writeRun(QStringLiteral("timed"), 3, 2, start);
    const QString untimed = writeRun(QStringLiteral("untimed"), 3, 2);
    MetricsPanel panel;
    QString error;
    QVERIFY2(panel.addOverlay(timed, &error), qPrintable(error));
    QVERIFY2(panel.addOverlay(untimed, &error), qPrintable(error));
    QCustomPlot* speed = panel.plot(MetricsPanel::Simulations);
    QTRY_VERIFY(graphNamed(speed, QStringLiteral("timed: simulations/s")));
    QCPGraph* timedSpeed = graphNamed(speed, QStringLiteral("timed: simulations/s"));
    QCPGraph* untimedSpeed = graphNamed(speed, QStringLiteral("untimed: simulations/s"));
    QTRY_COMPARE(keys(timedSpeed), (QVector<double>{1, 2, 3}));

    panel.setAxis(MetricsPanel::TrainingTimeAxis);
    QTRY_COMPARE(keys(timedSpeed), (QVector<double>{10, 20, 30}));  // the iterations' seconds added up
    QCOMPARE(keys(untimedSpeed), (QVector<double>{10, 20, 30}));
    QVERIFY(speed->xAxis->ticker().dynamicCast<QCPAxisTickerTime>());

    panel.setAxis(MetricsPanel::WallClockAxis);
    QTRY_COMPARE(keys(timedSpeed), (QVector<double>{start + 10, start + 20, start + 30}));
    QCOMPARE(untimedSpeed->dataCount(), 0);  // no times recorded: not drawn, and the panel says why
    auto* note = panel.findChild<QLabel*>(QStringLiteral("axisNote"));
    QVERIFY(note);
    QVERIFY(!note->isHidden());
    QVERIFY2(note->text().contains(QStringLiteral("untimed")) && !note->text().contains(QStringLiteral("timed,")), qPrintable(note->text()));
    QVERIFY(speed->xAxis->ticker().dynamicCast<QCPAxisTickerDateTime>());
    QVERIFY(!QSettings().contains(QStringLiteral("metrics/axis")));  // only a choice made in the dock is remembered

    panel.setAxis(MetricsPanel::IterationAxis);
    panel.addIteration(report(1, 1.0f));
    panel.setLogScale(true);
    QCOMPARE(panel.plot(MetricsPanel::Loss)->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(panel.plot(MetricsPanel::Score)->yAxis->scaleType(), QCPAxis::stLinear);  // scores of 0 have no logarithm
    QCustomPlot* stages = panel.plot(MetricsPanel::StageTimes);
    QTRY_VERIFY(graphNamed(stages, QStringLiteral("data exchange")));
    QTRY_COMPARE(graphNamed(stages, QStringLiteral("data exchange"))->dataCount(), 0);  // 0 s: left out
    QCOMPARE(graphNamed(stages, QStringLiteral("training"))->dataCount(), 1);
    QVERIFY(stages->yAxis->range().lower > 0);
    panel.setLogScale(false);
    QTRY_COMPARE(graphNamed(stages, QStringLiteral("data exchange"))->dataCount(), 1);
  }

  void parameterChangesAreMarked() {
    const QString run = writeRun(QStringLiteral("tuned"), 4, 2, 0,
                                 "{\"iteration\": 3, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"3.5\"}\n");
    MetricsPanel panel;
    panel.resize(400, 1200);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QString error;
    QVERIFY2(panel.addOverlay(run, &error), qPrintable(error));
    for (int i = 1; i <= 4; ++i) panel.addIteration(report(i, 1.0f));
    panel.addParameterChange(2, QStringLiteral("train.learning_rate"), QStringLiteral("0.01"), QStringLiteral("0.001"));
    QCustomPlot* loss = panel.plot(MetricsPanel::Loss);
    QTRY_VERIFY(itemTexts(loss).contains(QStringLiteral("search.c_puct = 3.5")));
    QVERIFY(itemTexts(loss).contains(QStringLiteral("train.learning_rate = 0.001")));
    QVERIFY(itemTexts(panel.plot(MetricsPanel::Games)).contains(QStringLiteral("search.c_puct = 3.5")));  // on every plot
    // The marker stands on the first point that ran with the new value.
    std::set<double> markerXs;
    for (int i = 0; i < loss->itemCount(); ++i)
      if (auto* line = qobject_cast<QCPItemStraightLine*>(loss->item(i)); line && line->visible())
        markerXs.insert(line->point1->coords().x());
    QVERIFY(markerXs.count(2.0) && markerXs.count(3.0));

    loss->replot();
    const int y = loss->axisRect()->rect().center().y();
    sendMouse(loss, QEvent::MouseMove, QPoint(int(loss->xAxis->coordToPixel(3)), y));
    QString text = panel.interaction(MetricsPanel::Loss)->readOutText();
    QVERIFY2(text.contains(QStringLiteral("tuned changed: search.c_puct 1.5 → 3.5")), qPrintable(text));
    sendMouse(loss, QEvent::MouseMove, QPoint(int(loss->xAxis->coordToPixel(2)), y));
    text = panel.interaction(MetricsPanel::Loss)->readOutText();
    QVERIFY2(text.contains(QStringLiteral("changed: train.learning_rate 0.01 → 0.001")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("c_puct")), qPrintable(text));

    panel.clear();  // the live run's changes go with it; the overlay's stay
    QTRY_VERIFY(!itemTexts(loss).contains(QStringLiteral("train.learning_rate = 0.001")));
    QVERIFY(itemTexts(loss).contains(QStringLiteral("search.c_puct = 3.5")));
  }
};

QTEST_MAIN(TestPlotInteraction)
#include "test_plot_interaction.moc"
