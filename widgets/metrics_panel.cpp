#include "widgets/metrics_panel.hpp"

#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMap>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>

#include "core/support/atomic_file.hpp"

namespace cas::widgets {
namespace {

const QString kSmoothingKey = QStringLiteral("metrics/smoothing");

// One plotted quantity of an iteration: where it is drawn, its key in metrics.jsonl (so an
// earlier run's file can be overlaid), its legend text and how to read it from a report.
struct Quantity {
  MetricsPanel::Plot plot;
  const char* key;
  const char* name;  // translated in MetricsPanel's context
  QRgb colour;
  double (*fromReport)(const train::IterationReport&);
};

const Quantity kQuantities[] = {
    {MetricsPanel::Loss, "loss", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "total"), qRgb(30, 30, 30),
     [](const train::IterationReport& r) { return double(r.loss); }},
    {MetricsPanel::Loss, "loss_policy", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "policy"), qRgb(31, 119, 180),
     [](const train::IterationReport& r) { return double(r.policyLoss); }},
    {MetricsPanel::Loss, "loss_value", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "value"), qRgb(214, 39, 40),
     [](const train::IterationReport& r) { return double(r.valueLoss); }},
    {MetricsPanel::Loss, "loss_l2", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "L2"), qRgb(127, 127, 127),
     [](const train::IterationReport& r) { return double(r.l2); }},
    {MetricsPanel::Simulations, "simulations_per_second", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "simulations/s"),
     qRgb(44, 160, 44), [](const train::IterationReport& r) { return r.simulationsPerSecond; }},
    {MetricsPanel::Games, "games_per_second", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "games/s"), qRgb(148, 103, 189),
     [](const train::IterationReport& r) { return r.gamesPerSecond; }},
    // Host-device copies of the network's inputs and outputs (the CPU search with a GPU network)
    // are not timed on their own: they are part of the inference time, and the label says so.
    // Data exchange: the samples' moves (recording, committing, drawing batches) and the weights'
    // copy to self-play.
    {MetricsPanel::StageTimes, "seconds_inference", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "inference incl. copies"),
     qRgb(31, 119, 180), [](const train::IterationReport& r) { return r.inferenceSeconds; }},
    {MetricsPanel::StageTimes, "seconds_search", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "tree search"),
     qRgb(255, 127, 14), [](const train::IterationReport& r) { return r.searchSeconds; }},
    {MetricsPanel::StageTimes, "seconds_data", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "data exchange"),
     qRgb(44, 160, 44), [](const train::IterationReport& r) { return r.dataSeconds; }},
    {MetricsPanel::StageTimes, "seconds_train", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "training"),
     qRgb(214, 39, 40), [](const train::IterationReport& r) { return r.trainSeconds; }},
};

const char* const kPlotFileNames[MetricsPanel::PlotCount] = {"loss", "score", "simulations-per-second", "games-per-second",
                                                             "stage-times"};

// metrics.jsonl writes an opponent's name with ':' as '_' ("mcts:200" -> "win_rate_mcts_200");
// keying both runs the same way gives an opponent the same colour in the live run and the overlay.
QString scoreKey(QString opponent) { return QStringLiteral("score:") + opponent.replace(QLatin1Char(':'), QLatin1Char('_')); }

// Each overlaid run has a dash pattern of its own, in the order they were added.
Qt::PenStyle overlayPenStyle(int index) {
  static const Qt::PenStyle styles[] = {Qt::DashLine, Qt::DotLine, Qt::DashDotLine, Qt::DashDotDotLine};
  return styles[std::max(0, index) % int(std::size(styles))];
}

QColor colourOf(const QString& key) {
  for (const Quantity& q : kQuantities)
    if (key == QLatin1String(q.key)) return QColor(q.colour);
  static const QRgb opponents[] = {qRgb(255, 127, 14), qRgb(148, 103, 189), qRgb(23, 190, 207), qRgb(140, 86, 75), qRgb(227, 119, 194)};
  return QColor(opponents[qHash(key) % std::size(opponents)]);
}

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

// Keeps every second point of the older half, so memory stays bounded while the newest points
// keep full resolution and the first point (where the run began) stays.
void thinOlderHalf(QVector<double>& x, QVector<double>& y) {
  const qsizetype half = x.size() / 2;
  qsizetype kept = 0;
  for (qsizetype i = 0; i < x.size(); ++i) {
    if (i < half && i % 2 == 1) continue;
    x[kept] = x[i];
    y[kept] = y[i];
    ++kept;
  }
  x.resize(kept);
  y.resize(kept);
}

QString csvField(QString text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
  return QLatin1Char('"') + text.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
}

QCustomPlot* makePlot(const QString& title, const QString& yLabel) {
  auto* plot = new QCustomPlot;
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(QString(), 9, QFont::Bold)));
  plot->xAxis->setLabel(MetricsPanel::tr("iteration"));
  plot->yAxis->setLabel(yLabel);
  plot->legend->setVisible(true);
  plot->legend->setFont(QFont(QString(), 8));
  plot->legend->setBorderPen(Qt::NoPen);
  // Below the axes rather than over the curves, in rows of three entries.
  plot->plotLayout()->addElement(2, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(2, 0.001);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->legend->setWrap(3);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setMinimumHeight(190);
  plot->setContextMenuPolicy(Qt::CustomContextMenu);
  plot->setToolTip(MetricsPanel::tr("Right-click to save the plot as PNG or its data as CSV."));
  return plot;
}

}  // namespace

MetricsPanel::MetricsPanel(QWidget* parent)
    : QWidget(parent),
      note_(new QLabel),
      smoothingBox_(new QDoubleSpinBox),
      overlayButton_(new QPushButton(tr("Overlay Run..."))),
      removeOverlayButton_(new QPushButton(tr("Remove Overlay"))) {
  // Short titles: a title's width is the plot's minimum width, and the dock is often narrow.
  plots_[Loss] = makePlot(tr("Loss"), tr("loss"));
  plots_[Score] = makePlot(tr("Score against the baselines"), tr("score"));
  plots_[Simulations] = makePlot(tr("Self-play simulations per second"), tr("simulations/s"));
  plots_[Games] = makePlot(tr("Self-play games per second"), tr("games/s"));
  plots_[StageTimes] = makePlot(tr("Time per stage in an iteration"), tr("seconds"));
  plots_[Score]->yAxis->setRange(0, 1.05);
  plots_[Score]->setToolTip(tr("A win scores 1, a draw 0.5, a loss 0. Right-click to save the plot as PNG or its data as CSV."));
  plots_[StageTimes]->setToolTip(tr("Self-play inference (copies of the network's inputs and outputs included), tree search, "
                                    "recording games into the replay buffer, and training steps. Right-click to save the plot as "
                                    "PNG or its data as CSV."));

  smoothingBox_->setObjectName(QStringLiteral("smoothing"));
  smoothingBox_->setRange(0, kMaxSmoothing);
  smoothingBox_->setSingleStep(0.05);
  smoothingBox_->setDecimals(2);
  smoothingBox_->setToolTip(tr("Weight of the exponential moving average drawn for every curve: 0 draws the raw values, "
                               "0.9 a smooth trend. Exported data stays raw."));
  overlayButton_->setObjectName(QStringLiteral("overlayRun"));
  overlayButton_->setToolTip(tr("Draw an earlier run's metrics (its run folder's metrics.jsonl) dashed beside this run."));
  removeOverlayButton_->setObjectName(QStringLiteral("removeOverlay"));
  removeOverlayButton_->setEnabled(false);
  note_->setWordWrap(true);
  note_->setText(tr("Press Train to start a run; its curves appear here. Right-click a plot to export it."));

  auto* controls = new QHBoxLayout;
  auto* smoothingLabel = new QLabel(tr("&Smoothing:"));
  smoothingLabel->setBuddy(smoothingBox_);
  controls->addWidget(smoothingLabel);
  controls->addWidget(smoothingBox_);
  controls->addStretch(1);
  controls->addWidget(overlayButton_);
  controls->addWidget(removeOverlayButton_);

  auto* plotsWidget = new QWidget;
  plotGrid_ = new QGridLayout(plotsWidget);
  plotGrid_->setContentsMargins(0, 0, 0, 0);
  arrangePlots(1);
  for (int p = 0; p < PlotCount; ++p) {
    connect(plots_[p], &QWidget::customContextMenuRequested, this, [this, p](const QPoint& at) { showContextMenu(Plot(p), at); });
  }
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(plotsWidget);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(controls);
  layout->addWidget(note_);
  layout->addWidget(scroll, 1);

  refreshTimer_.setSingleShot(true);
  refreshTimer_.setInterval(kRefreshIntervalMs);
  connect(&refreshTimer_, &QTimer::timeout, this, &MetricsPanel::refresh);
  connect(overlayButton_, &QPushButton::clicked, this, &MetricsPanel::chooseOverlay);
  connect(removeOverlayButton_, &QPushButton::clicked, this, [this] { removeOverlay(); });

  setSmoothing(QSettings().value(kSmoothingKey, 0.0).toDouble());
  connect(smoothingBox_, &QDoubleSpinBox::valueChanged, this, [this](double w) {
    setSmoothing(w);
    saveSmoothing();
  });
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
  for (const Series& s : series_[Loss])
    if (!s.overlay && s.key == QLatin1String("loss")) return int(s.x.size());
  return 0;
}

MetricsPanel::Series& MetricsPanel::series(Plot plot, const QString& key, const QString& name, bool overlay) {
  std::vector<Series>& list = series_[plot];
  for (Series& s : list)
    if (s.key == key && s.overlay == overlay && (!overlay || s.run == overlayRun_)) return s;
  Series s;
  s.key = key;
  s.overlay = overlay;
  if (overlay) s.run = overlayRun_;
  s.name = overlay ? tr("%1: %2").arg(overlayName_, name) : name;
  s.graph = plots_[plot]->addGraph();
  s.graph->setName(s.name);
  QPen pen(colourOf(key), overlay ? 1.3 : 1.6);
  if (overlay) pen.setStyle(overlayStyle_);
  s.graph->setPen(pen);
  if (overlay) s.graph->removeFromLegend();  // one legend entry per plot says what dashes mean
  if (plot == Score) s.graph->setScatterStyle(QCPScatterStyle(overlay ? QCPScatterStyle::ssCircle : QCPScatterStyle::ssDisc, 5));
  list.push_back(std::move(s));
  return list.back();
}

void MetricsPanel::append(Plot plot, const QString& key, const QString& name, bool overlay, double x, double y) {
  Series& s = series(plot, key, name, overlay);
  s.x.push_back(x);
  s.y.push_back(y);
  if (s.x.size() > kMaxPoints) thinOlderHalf(s.x, s.y);
}

void MetricsPanel::addIteration(const train::IterationReport& r) {
  const double x = double(r.iteration);
  for (const Quantity& q : kQuantities) {
    if (q.plot == Loss && r.trainingSteps == 0) continue;  // no training step yet (the replay buffer is filling)
    append(q.plot, QLatin1String(q.key), tr(q.name), false, x, q.fromReport(r));
  }
  for (const auto& e : r.evaluations)
    if (e.games > 0) {
      const QString opponent = QString::fromStdString(e.opponent);
      append(Score, scoreKey(opponent), opponent, false, x, (e.wins + 0.5 * e.draws) / e.games);
    }
  note_->setText(tr("Iteration %1: %2 games played, %3 positions in the replay buffer.").arg(r.iteration).arg(r.gamesPlayed).arg(r.positions));
  scheduleRefresh();
}

void MetricsPanel::appendMetricsLine(const QJsonObject& line, bool overlay) {
  const double x = line.value(QLatin1String("iteration")).toDouble();
  const bool trained = line.value(QLatin1String("loss")).toDouble() > 0;
  for (const Quantity& q : kQuantities) {
    const QJsonValue v = line.value(QLatin1String(q.key));
    if (v.isDouble() && (q.plot != Loss || trained)) append(q.plot, QLatin1String(q.key), tr(q.name), overlay, x, v.toDouble());
  }
  const QLatin1String winPrefix("win_rate_");
  for (auto it = line.begin(); it != line.end(); ++it) {
    if (!it.key().startsWith(winPrefix) || !it.value().isDouble()) continue;
    const QString opponent = it.key().mid(winPrefix.size());
    const double draws = line.value(QStringLiteral("draw_rate_") + opponent).toDouble();
    append(Score, scoreKey(opponent), opponent, overlay, x, it.value().toDouble() + 0.5 * draws);
  }
}

void MetricsPanel::clear() {
  for (int p = 0; p < PlotCount; ++p) {
    std::vector<Series>& list = series_[p];
    for (const Series& s : list)
      if (!s.overlay) plots_[p]->removeGraph(s.graph);
    list.erase(std::remove_if(list.begin(), list.end(), [](const Series& s) { return !s.overlay; }), list.end());
  }
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

void MetricsPanel::saveSmoothing() const { QSettings().setValue(kSmoothingKey, smoothing_); }

std::optional<std::vector<QJsonObject>> MetricsPanel::readMetrics(const QString& runFolder, QString* error) const {
  const QString path = QDir(runFolder).filePath(QStringLiteral("metrics.jsonl"));
  std::string problem;
  const auto text = readFile(path.toStdString(), kRunLogLimit, &problem);  // a regular file of bounded size
  if (!text) {
    if (error)
      *error = tr("%1 cannot be read (%2); choose a run folder, the one holding config.toml and metrics.jsonl.")
                   .arg(QDir::toNativeSeparators(path), QString::fromStdString(problem));
    return std::nullopt;
  }
  std::vector<QJsonObject> lines;
  for (const QByteArray& line : QByteArray::fromRawData(text->data(), qsizetype(text->size())).split('\n')) {
    const QJsonDocument doc = QJsonDocument::fromJson(line);
    // A line cut short (a run killed while writing) is skipped rather than failing the whole file.
    if (doc.isObject() && doc.object().value(QLatin1String("iteration")).isDouble()) lines.push_back(doc.object());
  }
  if (lines.empty()) {
    if (error) *error = tr("%1 holds no metrics yet.").arg(QDir::toNativeSeparators(path));
    return std::nullopt;
  }
  return lines;
}

bool MetricsPanel::loadOverlay(const QString& runFolder, QString* error) {
  if (!readMetrics(runFolder, error)) return false;  // an overlay shown stays when the new one cannot be read
  removeOverlay();
  return addOverlay(runFolder, error);
}

bool MetricsPanel::addOverlay(const QString& runFolder, QString* error) {
  const auto lines = readMetrics(runFolder, error);
  if (!lines) return false;
  removeOverlay(runFolder);
  overlayName_ = QFileInfo(QDir::cleanPath(runFolder)).fileName();
  overlayRun_ = runFolder;
  overlayStyle_ = overlayPenStyle(int(overlayKeys_.size()));
  QVector<QCPGraph*>& keys = overlayKeys_[runFolder];
  for (const QJsonObject& line : *lines) appendMetricsLine(line, true);
  for (int p = 0; p < PlotCount; ++p) {
    // A graph without data, only for the legend: the overlay's curves share the live colours.
    keys << plots_[p]->addGraph();
    keys.back()->setName(tr("dashed: %1").arg(overlayName_));
    keys.back()->setPen(QPen(QColor(90, 90, 90), 1.3, overlayStyle_));
  }
  overlayRun_.clear();
  emit overlaysChanged();
  removeOverlayButton_->setEnabled(true);
  removeOverlayButton_->setToolTip(tr("Remove the dashed curves of every overlaid run."));
  scheduleRefresh();
  return true;
}

void MetricsPanel::removeOverlay(const QString& runFolder) {
  if (!overlayKeys_.contains(runFolder)) return;
  for (int p = 0; p < PlotCount; ++p) {
    std::vector<Series>& list = series_[p];
    for (const Series& s : list)
      if (s.overlay && s.run == runFolder) plots_[p]->removeGraph(s.graph);
    list.erase(std::remove_if(list.begin(), list.end(), [&](const Series& s) { return s.overlay && s.run == runFolder; }), list.end());
  }
  for (QCPGraph* key : overlayKeys_.take(runFolder)) key->parentPlot()->removeGraph(key);
  emit overlaysChanged();
  if (overlayKeys_.isEmpty()) {
    overlayName_.clear();
    removeOverlayButton_->setEnabled(false);
    removeOverlayButton_->setToolTip(QString());
  }
  scheduleRefresh();
}

void MetricsPanel::removeOverlay() {
  for (const QString& run : overlayKeys_.keys()) removeOverlay(run);
}

bool MetricsPanel::showRun(const QString& runFolder, QString* error) {
  const auto lines = readMetrics(runFolder, error);
  if (!lines) return false;
  clear();
  for (const QJsonObject& line : *lines) appendMetricsLine(line, false);
  note_->setText(tr("%1: %n iteration(s) recorded.", nullptr, int(lines->size())).arg(QFileInfo(QDir::cleanPath(runFolder)).fileName()));
  scheduleRefresh();
  return true;
}

void MetricsPanel::chooseOverlay() {
  const QString runs = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/runs");
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Overlay Run"), runs);
  if (folder.isEmpty()) return;
  QString error;
  if (!loadOverlay(folder, &error)) QMessageBox::warning(this, tr("Overlay Run"), error);
}

void MetricsPanel::scheduleRefresh() {
  if (!refreshTimer_.isActive()) refreshTimer_.start();
}

void MetricsPanel::refresh() {
  double first = std::numeric_limits<double>::max(), last = std::numeric_limits<double>::lowest();
  for (int p = 0; p < PlotCount; ++p)
    for (const Series& s : series_[p]) {
      s.graph->setData(s.x, smoothed(s.y, smoothing_), !s.overlay);
      if (!s.x.isEmpty()) {
        first = std::min(first, *std::min_element(s.x.begin(), s.x.end()));
        last = std::max(last, *std::max_element(s.x.begin(), s.x.end()));
      }
    }
  for (int p = 0; p < PlotCount; ++p) {
    QCustomPlot* plot = plots_[p];
    // Every plot shows the same iterations, so that a point can be compared across plots.
    if (first <= last) plot->xAxis->setRange(first - 0.5, last + 0.5);
    if (p != Score && plot->graphCount() > 0) {
      plot->yAxis->rescale();
      const QCPRange r = plot->yAxis->range();
      const double pad = std::max(0.05 * r.size(), 1e-3 * std::max(1.0, std::abs(r.upper)));
      // Rates and times start at zero, so that their size can be read off; the loss zooms in.
      plot->yAxis->setRange(p == Loss ? r.lower - pad : 0.0, r.upper + pad);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

QString MetricsPanel::csv(Plot which) const {
  const std::vector<Series>& list = series_[which];
  QMap<double, QVector<std::optional<double>>> rows;
  for (size_t column = 0; column < list.size(); ++column) {
    const Series& s = list[column];
    for (qsizetype i = 0; i < s.x.size(); ++i) {
      QVector<std::optional<double>>& row = rows[s.x[i]];
      row.resize(qsizetype(list.size()));
      row[qsizetype(column)] = s.y[i];
    }
  }
  QStringList header{tr("iteration")};
  for (const Series& s : list) header << csvField(s.name);
  QString text = header.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (auto it = rows.cbegin(); it != rows.cend(); ++it) {
    QStringList cells{QString::number(it.key(), 'g', 12)};
    for (const std::optional<double>& v : it.value()) cells << (v ? QString::number(*v, 'g', 10) : QString());
    text += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return text;
}

bool MetricsPanel::exportCsv(Plot which, const QString& path, QString* error) const {
  QSaveFile file(path);
  if (file.open(QIODevice::WriteOnly | QIODevice::Text) && file.write(csv(which).toUtf8()) >= 0 && file.commit()) return true;
  if (error) *error = tr("%1 could not be written: %2").arg(QDir::toNativeSeparators(path), file.errorString());
  return false;
}

bool MetricsPanel::exportPng(Plot which, const QString& path, QString* error) const {
  QCustomPlot* plot = plots_[which];
  // A plot that was never laid out (a hidden dock) has no size of its own; give it a readable one.
  const bool laidOut = plot->isVisible() && plot->width() > 0;
  if (plot->savePng(path, laidOut ? 0 : 800, laidOut ? 0 : 400)) return true;
  if (error) *error = tr("%1 could not be written.").arg(QDir::toNativeSeparators(path));
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
  menu.addSeparator();
  menu.addAction(tr("Overlay Run..."), this, &MetricsPanel::chooseOverlay);
  menu.addAction(tr("Remove Overlay"), this, [this] { removeOverlay(); })->setEnabled(!overlayName_.isEmpty());
  menu.exec(plots_[which]->mapToGlobal(at));
}

}  // namespace cas::widgets
