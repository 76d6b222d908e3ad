#include "widgets/metrics/metrics_panel.hpp"

#include <QBuffer>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMap>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>

#include "core/support/atomic_file.hpp"

namespace cas::widgets {
namespace {

const QString kSmoothingKey = QStringLiteral("metrics/smoothing");
const QString kAxisKey = QStringLiteral("metrics/axis");
const QString kLogScaleKey = QStringLiteral("metrics/logScale");

const char* const kPlotFileNames[MetricsPanel::PlotCount] = {"loss", "score", "simulations-per-second", "games-per-second",
                                                             "stage-times"};

// One colour per overlaid run, none of them a quantity colour of the live run (tab10's).
const QRgb kOverlayColours[MetricsPanel::kMaxOverlays] = {qRgb(0, 150, 136), qRgb(170, 150, 0),  qRgb(40, 60, 160), qRgb(160, 30, 90),
                                                          qRgb(110, 70, 20), qRgb(200, 60, 200), qRgb(90, 120, 60), qRgb(60, 140, 220)};
// An overlaid run's quantities in one plot, told apart by dashes (all dashed: not the live run).
const Qt::PenStyle kOverlayDashes[] = {Qt::DashLine, Qt::DotLine, Qt::DashDotLine, Qt::DashDotDotLine};

QVector<double> smoothed(const QVector<double>& values, double weight) {
  if (weight <= 0) return values;
  QVector<double> out(values.size());
  double average = values.value(0);
  for (qsizetype i = 0; i < values.size(); ++i) {
    average = i == 0 ? values[i] : weight * average + (1 - weight) * values[i];
    out[i] = average;
  }
  return out;
}

// The index of the point whose x is nearest `x` in an ascending list (NaNs, unknown times, skipped).
std::optional<qsizetype> nearestIndex(const QVector<double>& xs, double x) {
  const qsizetype at = std::lower_bound(xs.begin(), xs.end(), x) - xs.begin();
  std::optional<qsizetype> best;
  for (qsizetype i : {at - 1, at})
    if (i >= 0 && i < xs.size() && std::isfinite(xs[i]) && (!best || std::abs(xs[i] - x) < std::abs(xs[*best] - x))) best = i;
  return best;
}

QString number(double v) { return QString::number(v, 'g', 4); }

QString csvField(QString text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
  return QLatin1Char('"') + text.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
}

QCustomPlot* makePlot(const QString& title, const QString& yLabel) {
  auto* plot = new QCustomPlot;
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(QString(), 9, QFont::Bold)));
  plot->yAxis->setLabel(yLabel);
  plot->legend->setVisible(true);
  plot->legend->setFont(QFont(QString(), 8));
  plot->legend->setBorderPen(Qt::NoPen);
  // Below the axes rather than over the curves; PlotInteraction wraps it to the plot's width.
  plot->plotLayout()->addElement(PlotInteraction::kLegendRow, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(PlotInteraction::kLegendRow, 0.001);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->setMinimumHeight(PlotInteraction::kPlotHeight);
  plot->setContextMenuPolicy(Qt::CustomContextMenu);
  plot->setToolTip(MetricsPanel::tr("Wheel: scroll. Ctrl+wheel: zoom. Drag: pan. Double-click: follow the data again. "
                                    "Right-click to save the plot as PNG or its data as CSV."));
  return plot;
}

}  // namespace

MetricsPanel::MetricsPanel(QWidget* parent)
    : QWidget(parent),
      note_(new QLabel),
      axisNote_(new QLabel),
      smoothingBox_(new QDoubleSpinBox),
      axisBox_(new QComboBox),
      logScaleBox_(new QCheckBox(tr("&Log scale"))),
      overlayButton_(new QPushButton(tr("Overlay Run..."))),
      removeOverlayButton_(new QToolButton) {
  createControls();
  createLayout();
  // The smoothing, axis and scale the last session left, before the boxes are connected.
  QSettings settings;
  setSmoothing(settings.value(kSmoothingKey, 0.0).toDouble());
  setAxis(Axis(std::clamp(settings.value(kAxisKey, int(IterationAxis)).toInt(), 0, int(AxisCount) - 1)));
  setLogScale(settings.value(kLogScaleKey, false).toBool());
  connectSignals();
}

// The plots with their interactions, the view's boxes, the overlay buttons and the notes.
void MetricsPanel::createControls() {
  plots_[Loss] = makePlot(tr("Loss"), tr("loss"));
  for (int p = Score; p < PlotCount; ++p) plots_[p] = makePlot(QString(), QString());
  interactionHelp_ = plots_[Loss]->toolTip();
  titlePlots(false);
  for (int p = 0; p < PlotCount; ++p)
    interactions_[p] = new PlotInteraction(plots_[p], [this, p](double x, double pixel) { return readOut(Plot(p), x, pixel); });

  smoothingBox_->setObjectName(QStringLiteral("smoothing"));
  smoothingBox_->setRange(0, kMaxSmoothing);
  smoothingBox_->setSingleStep(0.05);
  smoothingBox_->setDecimals(2);
  smoothingBox_->setToolTip(tr("Weight of the exponential moving average drawn for every curve: 0 draws the raw values, "
                               "0.9 a smooth trend over the raw curve, which stays drawn faded. Exported data stays raw."));
  axisBox_->setObjectName(QStringLiteral("xAxis"));
  axisBox_->addItem(tr("Iteration"), int(IterationAxis));
  axisBox_->addItem(tr("Training time"), int(TrainingTimeAxis));
  axisBox_->addItem(tr("Wall clock"), int(WallClockAxis));
  axisBox_->setToolTip(tr("The horizontal axis: iterations; training time (the iterations' durations added up, pauses left "
                          "out); or the time of day each iteration ended."));
  logScaleBox_->setObjectName(QStringLiteral("logScale"));
  logScaleBox_->setToolTip(tr("Logarithmic vertical axes (not the score's, which has zeros); points at or below zero are left out."));
  overlayButton_->setObjectName(QStringLiteral("overlayRun"));
  overlayButton_->setToolTip(tr("Draw an earlier run's metrics (its run folder's metrics.jsonl) beside this run, in a colour of its own."));
  removeOverlayButton_->setObjectName(QStringLiteral("removeOverlay"));
  removeOverlayButton_->setText(tr("Remove Overlay"));
  removeOverlayButton_->setPopupMode(QToolButton::InstantPopup);
  removeOverlayButton_->setMenu(new QMenu(removeOverlayButton_));
  rebuildOverlayMenu();
  note_->setWordWrap(true);
  note_->setText(tr("Press Train to start a run; its curves appear here. Right-click a plot to export it."));
  axisNote_->setObjectName(QStringLiteral("axisNote"));
  axisNote_->setWordWrap(true);
  axisNote_->hide();
  refreshTimer_.setSingleShot(true);
  refreshTimer_.setInterval(kRefreshIntervalMs);
}

// The view's row and the overlays' over the notes and the plots, which scroll.
void MetricsPanel::createLayout() {
  auto* view = new QHBoxLayout;
  auto* smoothingLabel = new QLabel(tr("&Smoothing:"));
  smoothingLabel->setBuddy(smoothingBox_);
  view->addWidget(smoothingLabel);
  view->addWidget(smoothingBox_);
  auto* axisLabel = new QLabel(tr("&X axis:"));
  axisLabel->setBuddy(axisBox_);
  view->addWidget(axisLabel);
  view->addWidget(axisBox_);
  view->addWidget(logScaleBox_);
  view->addStretch(1);
  auto* runs = new QHBoxLayout;
  runs->addWidget(overlayButton_);
  runs->addWidget(removeOverlayButton_);
  runs->addStretch(1);

  auto* plotsWidget = new QWidget;
  plotGrid_ = new QGridLayout(plotsWidget);
  plotGrid_->setContentsMargins(0, 0, 0, 0);
  arrangePlots(1);
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("plotScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(plotsWidget);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(view);
  layout->addLayout(runs);
  layout->addWidget(note_);
  layout->addWidget(axisNote_);
  layout->addWidget(scroll, 1);
}

// The plots' double-clicks and context menus, the refresh timer, Overlay Run..., and the view's
// boxes, whose values are kept for the next session.
void MetricsPanel::connectSignals() {
  for (int p = 0; p < PlotCount; ++p) {
    connect(interactions_[p], &PlotInteraction::followDataRequested, this, &MetricsPanel::scheduleRefresh);
    connect(plots_[p], &QWidget::customContextMenuRequested, this, [this, p](const QPoint& at) { showContextMenu(Plot(p), at); });
  }
  connect(&refreshTimer_, &QTimer::timeout, this, &MetricsPanel::refresh);
  connect(overlayButton_, &QPushButton::clicked, this, &MetricsPanel::chooseOverlay);
  connect(smoothingBox_, &QDoubleSpinBox::valueChanged, this, [this](double w) {
    setSmoothing(w);
    QSettings().setValue(kSmoothingKey, smoothing_);
  });
  connect(axisBox_, &QComboBox::currentIndexChanged, this, [this] {
    setAxis(Axis(axisBox_->currentData().toInt()));
    QSettings().setValue(kAxisKey, int(axis_));
  });
  connect(logScaleBox_, &QCheckBox::toggled, this, [this](bool on) {
    setLogScale(on);
    QSettings().setValue(kLogScaleKey, on);
  });
}

void MetricsPanel::titlePlots(bool singleAgent) {
  singleAgentTitles_ = singleAgent;
  // Short titles: a title's width is the plot's minimum width, and the dock is often narrow.
  struct Titles {
    QString title, axis, about;
  };
  const Titles titles[PlotCount] = {
      {},
      singleAgent ? Titles{tr("Episode return"), tr("return"), tr("The mean return of the episodes that ended in each iteration's rollout (sampled actions). ")}
                  : Titles{tr("Score against the baselines"), tr("score"), tr("A win scores 1, a draw 0.5, a loss 0. ")},
      singleAgent ? Titles{tr("Environment steps per second"), tr("steps/s"), tr("Rollout and update together. ")}
                  : Titles{tr("Self-play simulations per second"), tr("simulations/s"), {}},
      singleAgent ? Titles{tr("Episode length"), tr("steps"), tr("The mean length of the episodes that ended in each iteration's rollout. ")}
                  : Titles{tr("Self-play games per second"), tr("games/s"), {}},
      singleAgent ? Titles{tr("Time per stage in an iteration"), tr("seconds"), tr("The rollout (policy, sampling, environments) and the update. ")}
                  : Titles{tr("Time per stage in an iteration"), tr("seconds"),
                           tr("Self-play inference (copies of the network's inputs and outputs included), tree search, "
                              "recording games into the replay buffer, and training steps. ")},
  };
  for (int p = Score; p < PlotCount; ++p) {
    static_cast<QCPTextElement*>(plots_[p]->plotLayout()->element(0, 0))->setText(titles[p].title);
    plots_[p]->yAxis->setLabel(titles[p].axis);
    plots_[p]->setToolTip(titles[p].about + interactionHelp_);
    plots_[p]->replot(QCustomPlot::rpQueuedReplot);
  }
}

void MetricsPanel::arrangePlots(int columns) {
  plotColumns_ = columns;
  for (int p = 0; p < PlotCount; ++p) {
    plotGrid_->removeWidget(plots_[p]);
    const bool lastAlone = p == PlotCount - 1 && p % columns == 0;  // an odd last plot takes the whole row
    plotGrid_->addWidget(plots_[p], p / columns, p % columns, 1, lastAlone ? columns : 1);
  }
  for (int c = 0; c < 2; ++c) plotGrid_->setColumnStretch(c, c < columns ? 1 : 0);
}

void MetricsPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Side by side once two plots fit in the width, so that a wide dock shows more of them at once.
  const int columns = width() >= kTwoColumnWidth ? 2 : 1;
  if (columns != plotColumns_) arrangePlots(columns);
}

int MetricsPanel::pointCount() const {
  for (const MetricSeries& s : live_.series(Loss))
    if (s.key == QLatin1String("loss")) return int(s.y.size());
  return 0;
}

void MetricsPanel::addIteration(const train::IterationReport& r) {
  live_.addIteration(r, double(QDateTime::currentMSecsSinceEpoch()) / 1000);
  if (r.episodes)
    note_->setText(tr("Iteration %1: %2 environment steps, %3 episodes finished.").arg(r.iteration).arg(r.episodes->environmentSteps).arg(r.gamesPlayed));
  else
    note_->setText(tr("Iteration %1: %2 games played, %3 positions in the replay buffer.").arg(r.iteration).arg(r.gamesPlayed).arg(r.positions));
  scheduleRefresh();
}

void MetricsPanel::addParameterChange(qint64 iteration, const QString& parameter, const QString& from, const QString& to) {
  live_.addChange({iteration, parameter, from, to});
  scheduleRefresh();
}

void MetricsPanel::clear() {
  live_ = RunMetrics();
  removeCurves(QString());
  followData();  // a new run's curves are seen whole, whatever the last one was zoomed to
}

void MetricsPanel::followData() {
  for (PlotInteraction* i : interactions_) i->followData();
  scheduleRefresh();
}

void MetricsPanel::setSmoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, kMaxSmoothing);
  if (smoothingBox_->value() != smoothing_) {
    const QSignalBlocker quiet(smoothingBox_);
    smoothingBox_->setValue(smoothing_);
  }
  scheduleRefresh();
}

void MetricsPanel::setAxis(Axis axis) {
  axis_ = axis;
  const QSignalBlocker quiet(axisBox_);
  axisBox_->setCurrentIndex(axisBox_->findData(int(axis)));
  applyAxes();
  followData();  // the old range means nothing on the new axis
}

void MetricsPanel::setLogScale(bool on) {
  logScale_ = on;
  const QSignalBlocker quiet(logScaleBox_);
  logScaleBox_->setChecked(on);
  applyAxes();
  followData();
}

void MetricsPanel::applyAxes() {
  for (QCustomPlot* plot : plots_) {
    switch (axis_) {
      case IterationAxis:
        plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        plot->xAxis->setLabel(tr("iteration"));
        break;
      case TrainingTimeAxis: {
        QSharedPointer<QCPAxisTickerTime> ticker(new QCPAxisTickerTime);
        ticker->setTimeFormat(QStringLiteral("%h:%m:%s"));
        plot->xAxis->setTicker(ticker);
        plot->xAxis->setLabel(tr("training time (h:mm:ss)"));
        break;
      }
      default: {
        QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
        ticker->setDateTimeFormat(QStringLiteral("hh:mm:ss"));
        plot->xAxis->setTicker(ticker);
        plot->xAxis->setLabel(tr("time of day"));
      }
    }
    const bool log = logScale_ && plot != plots_[Score];
    plot->yAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    plot->yAxis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
}

std::vector<MetricsPanel::RunView> MetricsPanel::runViews() const {
  std::vector<RunView> runs{{&live_, QString(), QString(), QColor()}};
  for (const Overlay& o : overlays_) runs.push_back({&o.metrics, o.folder, o.name, o.colour});
  return runs;
}

MetricsPanel::Curve& MetricsPanel::curveFor(Plot plot, const RunView& run, const MetricSeries& series) {
  std::vector<Curve>& list = curves_[plot];
  for (Curve& c : list)
    if (c.run == run.folder && c.key == series.key) return c;
  Curve c{run.folder, series.key};
  const QString name = run.name.isEmpty() ? series.name : tr("%1: %2").arg(run.name, series.name);
  const bool live = run.folder.isEmpty();
  const QColor colour = live ? quantityColour(series.key) : run.colour;
  // The raw curve first, so that it is drawn behind the smoothed one.
  c.raw = plots_[plot]->addGraph();
  c.raw->setName(tr("%1 (raw)").arg(name));
  QColor faded = colour;
  faded.setAlpha(70);
  c.raw->setPen(QPen(faded, 1));
  c.raw->removeFromLegend();
  c.smoothed = plots_[plot]->addGraph();
  c.smoothed->setName(name);
  QPen pen(colour, live ? 1.6 : 1.4);
  if (!live) pen.setStyle(kOverlayDashes[series.order % int(std::size(kOverlayDashes))]);
  c.smoothed->setPen(pen);
  if (plot == Score && !singleAgentTitles_) c.smoothed->setScatterStyle(QCPScatterStyle(live ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssCircle, 5));
  list.push_back(c);
  return list.back();
}

void MetricsPanel::removeCurves(const QString& run) {
  for (int p = 0; p < PlotCount; ++p) {
    std::vector<Curve>& list = curves_[p];
    for (const Curve& c : list)
      if (c.run == run) {
        plots_[p]->removeGraph(c.raw);
        plots_[p]->removeGraph(c.smoothed);
      }
    list.erase(std::remove_if(list.begin(), list.end(), [&](const Curve& c) { return c.run == run; }), list.end());
    interactions_[p]->fitLegend();
  }
}

void MetricsPanel::scheduleRefresh() {
  if (!refreshTimer_.isActive()) refreshTimer_.start();
}

void MetricsPanel::refresh() {
  const std::vector<RunView> runs = runViews();
  // A single-agent run (PPO) fills the self-play plots with its episodes: titles that say so.
  const bool singleAgent = std::any_of(runs.begin(), runs.end(), [](const RunView& r) { return r.metrics->singleAgent(); });
  if (singleAgent != singleAgentTitles_) titlePlots(singleAgent);
  double first = std::numeric_limits<double>::max(), last = std::numeric_limits<double>::lowest();
  QStringList timeless;  // runs that cannot be drawn against this axis
  for (const RunView& run : runs) {
    bool drawn = run.metrics->empty();
    for (int p = 0; p < PlotCount; ++p)
      for (const MetricSeries& s : run.metrics->series(Plot(p))) {
        Curve& c = curveFor(Plot(p), run, s);
        const QVector<double>& xs = s.x(axis_);
        const QVector<double> trend = smoothed(s.y, smoothing_);  // over every value, as the read-out computes it
        const bool log = logScale_ && p != Score;
        QVector<double> x, raw, smooth;
        for (qsizetype i = 0; i < xs.size(); ++i) {
          if (!std::isfinite(xs[i]) || (log && (s.y[i] <= 0 || trend[i] <= 0))) continue;
          x << xs[i];
          raw << s.y[i];
          smooth << trend[i];
          first = std::min(first, xs[i]);
          last = std::max(last, xs[i]);
        }
        drawn = drawn || !x.isEmpty();
        const bool sorted = axis_ != WallClockAxis;  // a resumed run's clock may have gone back
        c.raw->setData(x, raw, sorted);
        c.smoothed->setData(x, smooth, sorted);
        c.raw->setVisible(smoothing_ > 0);
      }
    if (!drawn) timeless << (run.name.isEmpty() ? tr("this run") : run.name);
  }
  axisNote_->setVisible(!timeless.isEmpty());
  axisNote_->setText(tr("Not drawn against this axis, for want of recorded times: %1.").arg(timeless.join(QStringLiteral(", "))));
  for (int p = 0; p < PlotCount; ++p) {
    drawMarkers(Plot(p), runs);
    // Every plot that follows the data shows the same span, so that a point can be compared across plots.
    if (interactions_[p]->followsData()) rescale(Plot(p), first, last);
    interactions_[p]->fitLegend();
    plots_[p]->replot(QCustomPlot::rpQueuedReplot);
  }
}

void MetricsPanel::rescale(Plot p, double first, double last) {
  QCustomPlot* plot = plots_[p];
  if (first <= last) {
    const double pad = axis_ == IterationAxis ? 0.5 : std::max(1.0, 0.02 * (last - first));
    plot->xAxis->setRange(first - pad, last + pad);
  }
  if (p == Score && !singleAgentTitles_) {  // scores are 0..1; returns take their own range
    plot->yAxis->setRange(0, 1.05);
    return;
  }
  if (plot->graphCount() == 0) return;
  plot->yAxis->rescale();
  const QCPRange r = plot->yAxis->range();
  if (logScale_) {
    plot->yAxis->setRange(r.lower / 1.25, r.upper * 1.25);
    return;
  }
  const double pad = std::max(0.05 * r.size(), 1e-3 * std::max(1.0, std::abs(r.upper)));
  // Rates and times start at zero, so that their size can be read off; the loss zooms in.
  plot->yAxis->setRange(p == Loss ? r.lower - pad : 0.0, r.upper + pad);
}

void MetricsPanel::drawMarkers(Plot p, const std::vector<RunView>& runs) {
  QCustomPlot* plot = plots_[p];
  for (QCPAbstractItem* item : markers_[p]) plot->removeItem(item);
  markers_[p].clear();
  for (const RunView& run : runs) {
    const QColor colour = run.colour.isValid() ? run.colour : QColor(100, 100, 100);
    for (const MetricChange& change : run.metrics->changes()) {
      double x = run.metrics->position(change.iteration, axis_);
      // A change applied to an iteration still running: on the iteration axis its place is known.
      if (!std::isfinite(x) && axis_ == IterationAxis) x = double(change.iteration);
      if (!std::isfinite(x)) continue;
      auto* line = new QCPItemStraightLine(plot);
      line->point1->setCoords(x, 0);
      line->point2->setCoords(x, 1);
      line->setPen(QPen(colour, 1, Qt::DotLine));
      line->setSelectable(false);
      // Written upwards along the line, ending at the plot's top, on the line's left.
      auto* label = new QCPItemText(plot);
      label->position->setTypeX(QCPItemPosition::ptPlotCoords);
      label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
      label->position->setAxisRect(plot->axisRect());
      label->position->setCoords(x, 0.01);
      label->setRotation(-90);
      label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
      label->setText(tr("%1 = %2").arg(change.parameter, change.to));
      label->setFont(QFont(QString(), 7));
      label->setColor(colour);
      label->setSelectable(false);
      markers_[p].push_back(line);
      markers_[p].push_back(label);
    }
  }
}

QString MetricsPanel::formatX(double x) const {
  switch (axis_) {
    case IterationAxis: return tr("iteration %1").arg(qint64(std::llround(x)));
    case TrainingTimeAxis: {
      const qint64 s = std::llround(x);
      return tr("training time %1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
    }
    default: return QDateTime::fromMSecsSinceEpoch(std::llround(x * 1000)).toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"));
  }
}

PlotInteraction::Reading MetricsPanel::readOut(Plot p, double cursorX, double pixelWidth) const {
  const std::vector<RunView> runs = runViews();
  // Snap to the point nearest the cursor, whichever run it belongs to.
  std::optional<double> snapped;
  for (const RunView& run : runs)
    for (const MetricSeries& s : run.metrics->series(p))
      if (const auto i = nearestIndex(s.x(axis_), cursorX); i && (!snapped || std::abs(s.x(axis_)[*i] - cursorX) < std::abs(*snapped - cursorX)))
        snapped = s.x(axis_)[*i];
  if (!snapped) return {};
  // Runs share iterations exactly; on a time axis each run's nearest point within a few pixels.
  const double tolerance = axis_ == IterationAxis ? 0.0 : 4 * pixelWidth;
  QStringList lines{formatX(*snapped)};
  for (const RunView& run : runs) {
    std::optional<double> iteration;
    for (const MetricSeries& s : run.metrics->series(p)) {
      const auto i = nearestIndex(s.x(axis_), *snapped);
      if (!i || std::abs(s.x(axis_)[*i] - *snapped) > tolerance) continue;
      iteration = s.iteration[*i];
      double trend = s.y[0];
      for (qsizetype k = 1; k <= *i; ++k) trend = smoothing_ * trend + (1 - smoothing_) * s.y[k];
      const QString name = run.name.isEmpty() ? s.name : tr("%1: %2").arg(run.name, s.name);
      lines << (smoothing_ > 0 ? tr("%1: %2 (raw %3)").arg(name, number(trend), number(s.y[*i])) : tr("%1: %2").arg(name, number(s.y[*i])));
    }
    if (!iteration) continue;
    for (const MetricChange& c : run.metrics->changes())
      if (double(c.iteration) == *iteration)
        lines << (run.name.isEmpty() ? tr("changed: %1 %2 → %3").arg(c.parameter, c.from, c.to)
                                     : tr("%1 changed: %2 %3 → %4").arg(run.name, c.parameter, c.from, c.to));
  }
  return {*snapped, lines.join(QLatin1Char('\n'))};
}

bool MetricsPanel::showRun(const QString& runFolder, QString* error) {
  RunMetrics metrics;
  if (!metrics.load(runFolder, error)) return false;
  live_ = std::move(metrics);
  removeCurves(QString());
  note_->setText(tr("The curves are those of %1.").arg(QFileInfo(QDir::cleanPath(runFolder)).fileName()));
  followData();
  return true;
}

bool MetricsPanel::addOverlay(const QString& runFolder, QString* error) {
  const QString folder = QDir::cleanPath(QFileInfo(runFolder).absoluteFilePath());
  RunMetrics metrics;
  if (!metrics.load(folder, error)) return false;
  auto existing = std::find_if(overlays_.begin(), overlays_.end(), [&](const Overlay& o) { return o.folder == folder; });
  if (existing != overlays_.end()) {
    existing->metrics = std::move(metrics);
  } else {
    if (int(overlays_.size()) >= kMaxOverlays) {
      if (error) *error = tr("At most %1 runs can be overlaid; remove one first.").arg(kMaxOverlays);
      return false;
    }
    Overlay o{folder, QFileInfo(folder).fileName(), QColor(), std::move(metrics)};
    // Two runs of the same name (runs/a/ttt, runs/b/ttt) are told apart by their parent folders.
    const QString parent = QFileInfo(QFileInfo(folder).path()).fileName();
    if (std::any_of(overlays_.begin(), overlays_.end(), [&](const Overlay& other) { return other.name == o.name; }))
      o.name = parent + QLatin1Char('/') + o.name;
    for (QRgb candidate : kOverlayColours)
      if (std::none_of(overlays_.begin(), overlays_.end(), [&](const Overlay& other) { return other.colour == QColor(candidate); })) {
        o.colour = QColor(candidate);
        break;
      }
    overlays_.push_back(std::move(o));
  }
  rebuildOverlayMenu();
  scheduleRefresh();
  emit overlaysChanged();
  return true;
}

void MetricsPanel::removeOverlay(const QString& runFolder) {
  const QString folder = QDir::cleanPath(QFileInfo(runFolder).absoluteFilePath());
  const auto at = std::find_if(overlays_.begin(), overlays_.end(), [&](const Overlay& o) { return o.folder == folder; });
  if (at == overlays_.end()) return;
  overlays_.erase(at);
  removeCurves(folder);
  rebuildOverlayMenu();
  scheduleRefresh();
  emit overlaysChanged();
}

void MetricsPanel::removeAllOverlays() {
  if (overlays_.empty()) return;
  for (const Overlay& o : overlays_) removeCurves(o.folder);
  overlays_.clear();
  rebuildOverlayMenu();
  scheduleRefresh();
  emit overlaysChanged();
}

QStringList MetricsPanel::overlays() const {
  QStringList folders;
  for (const Overlay& o : overlays_) folders << o.folder;
  return folders;
}

QString MetricsPanel::overlayName(const QString& runFolder) const {
  const QString folder = QDir::cleanPath(QFileInfo(runFolder).absoluteFilePath());
  for (const Overlay& o : overlays_)
    if (o.folder == folder) return o.name;
  return QString();
}

QString MetricsPanel::overlayName() const { return overlays_.empty() ? QString() : overlays_.back().name; }

bool MetricsPanel::loadOverlay(const QString& runFolder, QString* error) {
  RunMetrics check;  // refuse before removing anything, as the one-overlay call always did
  if (!check.load(runFolder, error)) return false;
  removeAllOverlays();
  return addOverlay(runFolder, error);
}

void MetricsPanel::chooseOverlay() {
  const QString runs = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/runs");
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Overlay Run"), runs);
  if (folder.isEmpty()) return;
  QString error;
  if (!addOverlay(folder, &error)) QMessageBox::warning(this, tr("Overlay Run"), error);
}

void MetricsPanel::rebuildOverlayMenu() {
  QMenu* menu = removeOverlayButton_->menu();
  menu->clear();
  for (const Overlay& o : overlays_) {
    QAction* remove = menu->addAction(o.name, this, [this, folder = o.folder] { removeOverlay(folder); });
    QPixmap swatch(12, 12);
    swatch.fill(o.colour);
    remove->setIcon(QIcon(swatch));
    remove->setToolTip(QDir::toNativeSeparators(o.folder));
  }
  menu->addSeparator();
  menu->addAction(tr("Remove All"), this, &MetricsPanel::removeAllOverlays);
  removeOverlayButton_->setEnabled(!overlays_.empty());
  removeOverlayButton_->setToolTip(overlays_.empty() ? QString() : tr("Remove one overlaid run, or all of them."));
}

QString MetricsPanel::csv(Plot which) const {
  struct Column {
    QString name;
    const MetricSeries* series;
  };
  std::vector<Column> columns;
  for (const RunView& run : runViews())
    for (const MetricSeries& s : run.metrics->series(which))
      columns.push_back({run.name.isEmpty() ? s.name : tr("%1: %2").arg(run.name, s.name), &s});
  QMap<double, QVector<std::optional<double>>> rows;
  for (size_t column = 0; column < columns.size(); ++column) {
    const MetricSeries& s = *columns[column].series;
    for (qsizetype i = 0; i < s.y.size(); ++i) {
      QVector<std::optional<double>>& row = rows[s.iteration[i]];
      row.resize(qsizetype(columns.size()));
      row[qsizetype(column)] = s.y[i];
    }
  }
  QStringList header{tr("iteration")};
  for (const Column& c : columns) header << csvField(c.name);
  QString text = header.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (auto it = rows.cbegin(); it != rows.cend(); ++it) {
    QStringList cells{QString::number(it.key(), 'g', 12)};
    for (const std::optional<double>& v : it.value()) cells << (v ? QString::number(*v, 'g', 10) : QString());
    text += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return text;
}

// Through the one write the product uses (core/support/atomic_file.hpp): a FIFO, a device or a
// folder at `path` is refused, not replaced.
bool MetricsPanel::exportCsv(Plot which, const QString& path, QString* error) const {
  std::string problem;
  if (writeFileAtomic(path.toStdString(), csv(which).toStdString(), &problem)) return true;
  if (error) *error = tr("%1 could not be written: %2").arg(QDir::toNativeSeparators(path), QString::fromStdString(problem));
  return false;
}

bool MetricsPanel::exportPng(Plot which, const QString& path, QString* error) const {
  QCustomPlot* plot = plots_[which];
  // A plot that was never laid out (a hidden dock) has no size of its own; give it a readable one.
  const bool laidOut = plot->isVisible() && plot->width() > 0;
  QByteArray png;
  QBuffer buffer(&png);
  std::string problem = "the plot could not be drawn as a PNG image";
  if (buffer.open(QIODevice::WriteOnly) && plot->toPixmap(laidOut ? 0 : 800, laidOut ? 0 : 400).save(&buffer, "PNG") &&
      writeFileAtomic(path.toStdString(), std::string_view(png.constData(), size_t(png.size())), &problem))
    return true;
  if (error) *error = tr("%1 could not be written: %2").arg(QDir::toNativeSeparators(path), QString::fromStdString(problem));
  return false;
}

void MetricsPanel::showContextMenu(Plot which, const QPoint& at) {
  QMenu menu(this);
  const QString base = QString::fromLatin1(kPlotFileNames[which]);
  menu.addAction(tr("Save Plot as PNG..."), this, [this, which, base] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Plot as PNG"), base + QStringLiteral(".png"), tr("PNG images (*.png)"));
    QString error;
    if (!path.isEmpty() && !exportPng(which, path, &error)) QMessageBox::warning(this, tr("Save Plot as PNG"), error);
  });
  menu.addAction(tr("Export Data as CSV..."), this, [this, which, base] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Data as CSV"), base + QStringLiteral(".csv"), tr("CSV files (*.csv)"));
    QString error;
    if (!path.isEmpty() && !exportCsv(which, path, &error)) QMessageBox::warning(this, tr("Export Data as CSV"), error);
  });
  menu.addAction(tr("Follow the Data (double-click)"), this, [this, which] {
    interactions_[which]->followData();
    scheduleRefresh();
  })->setEnabled(!interactions_[which]->followsData());
  menu.addSeparator();
  menu.addAction(tr("Overlay Run..."), this, &MetricsPanel::chooseOverlay);
  QMenu* remove = menu.addMenu(tr("Remove Overlay"));
  remove->addActions(removeOverlayButton_->menu()->actions());
  remove->setEnabled(!overlays_.empty());
  menu.exec(plots_[which]->mapToGlobal(at));
}

}  // namespace cas::widgets
