#pragma once
// The Metrics dock: live plots of a run (QCustomPlot) — loss terms, the score against the
// baselines, simulations/s, games/s and the time each stage of an iteration took — one point per
// iteration, beside up to kMaxOverlays earlier runs read from their run folders.
// What a TensorBoard user expects: smoothing (an exponential moving average) draws the trend over
// the raw curve, which stays drawn faded behind it; the horizontal axis shows iterations, training
// time or the time of day; the vertical axis can be logarithmic (not the score's, which has 0s);
// a marker stands on the first point that ran with a changed parameter (the live run's changes,
// and each overlay's changes.jsonl); hovering shows a crosshair with the values there; the wheel
// scrolls the dock, Ctrl+wheel zooms, dragging pans and a double-click (or a new run) goes back to
// following the data. The live run is drawn in one colour per quantity; each overlaid run has a
// colour of its own, its quantities told apart by dash patterns, and every curve has its own legend
// entry. Each plot can be saved as PNG or its raw data as CSV (one column per series) from its
// context menu.
// Bursts of iterations are coalesced: the plots redraw at most once per kRefreshIntervalMs (about
// 30 times a second). Memory is bounded (RunMetrics::kMaxPoints per series). The plots stand in
// one column, or two once the panel is wide enough (kTwoColumnWidth).
// Thread-safety: GUI thread only.
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <vector>

#include "core/train/reports.hpp"
#include "widgets/metrics/plot_interaction.hpp"
#include "widgets/metrics/run_metrics.hpp"

class QCustomPlot;
class QCPGraph;
class QCPAbstractItem;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QPushButton;
class QToolButton;

namespace cas::widgets {

class MetricsPanel : public QWidget, public MetricPlots {
  Q_OBJECT
 public:
  static constexpr int kMaxPoints = RunMetrics::kMaxPoints;  // per series
  static constexpr int kRefreshIntervalMs = 33;
  static constexpr double kMaxSmoothing = 0.99;
  static constexpr int kTwoColumnWidth = 760;  // from this panel width on, plots stand in two columns
  static constexpr int kMaxOverlays = 8;       // one distinct colour each

  explicit MetricsPanel(QWidget* parent = nullptr);

  int pointCount() const;  // iterations of the live run with a loss (the total-loss series)
  QCustomPlot* plot(Plot which) const { return plots_[which]; }
  PlotInteraction* interaction(Plot which) const { return interactions_[which]; }
  double smoothing() const { return smoothing_; }
  Axis axis() const { return axis_; }
  bool logScale() const { return logScale_; }

  // The raw values of every series of a plot (overlays included): a header row, then one row per
  // iteration, "iteration" first and one column per series; a series without a value there leaves
  // its cell empty.
  QString csv(Plot which) const;
  bool exportCsv(Plot which, const QString& path, QString* error) const;
  bool exportPng(Plot which, const QString& path, QString* error) const;

  // Overlays: earlier runs drawn beside the live one, each named by its folder. addOverlay reads
  // RUN_FOLDER/metrics.jsonl and changes.jsonl (again, when the folder is already overlaid: a run
  // still training has grown). False with a sentence in `error` when the folder holds no readable
  // metrics, or kMaxOverlays runs are overlaid already.
  bool addOverlay(const QString& runFolder, QString* error);
  void removeOverlay(const QString& runFolder);
  QStringList overlays() const;  // the overlaid run folders (absolute), in the order they were added
  QString overlayName(const QString& runFolder) const;  // its legend name; empty when not overlaid

  // A finished run's metrics (and changes) as the main curves, replacing the live run's: what a
  // run picked elsewhere (the Runs dock) shows, and what a resumed run's iterations continue.
  // Overlays stay. False with a sentence in `error` as addOverlay.
  bool showRun(const QString& runFolder, QString* error);
  // The parameter changes of the main curves' run: the live run's, after showRun that run's.
  const std::vector<MetricChange>& liveChanges() const { return live_.changes(); }
  // Whether the main curves' run is a single-agent one (PPO).
  bool showsSingleAgentRun() const { return live_.singleAgent(); }

  // The one-overlay calls of earlier versions: loadOverlay replaces every overlay by this run,
  // removeOverlay() removes them all, overlayName() names the newest overlay (empty when none).
  bool loadOverlay(const QString& runFolder, QString* error);
  void removeOverlay() { removeAllOverlays(); }
  QString overlayName() const;

 signals:
  void overlaysChanged();  // an overlay was added, reloaded or removed

 public slots:
  void clear();  // the live run's points and changes; overlays stay for comparison; plots follow the data again
  void addIteration(const cas::train::IterationReport& report);
  // A parameter change of the live run; `iteration` is the first iteration that ran with `to`.
  void addParameterChange(qint64 iteration, const QString& parameter, const QString& from, const QString& to);
  void setSmoothing(double weight);  // 0 shows raw values; clamped to [0, kMaxSmoothing]
  void setAxis(cas::widgets::MetricPlots::Axis axis);
  void setLogScale(bool on);
  void removeAllOverlays();
  void chooseOverlay();  // asks for a run folder
  void followData();     // every plot rescales to the data and follows it again

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Overlay {
    QString folder, name;
    QColor colour;
    RunMetrics metrics;
  };
  // A series on screen: its smoothed curve (in the legend) and its raw curve faded behind it.
  struct Curve {
    QString run;  // the overlay's folder; empty for the live run
    QString key;
    QCPGraph *raw = nullptr, *smoothed = nullptr;
  };
  struct RunView {
    const RunMetrics* metrics;
    QString folder, name;  // empty for the live run
    QColor colour;         // invalid for the live run: its colours are the quantities'
  };

  void createControls();
  void createLayout();
  void connectSignals();
  std::vector<RunView> runViews() const;
  Curve& curveFor(Plot plot, const RunView& run, const MetricSeries& series);
  void removeCurves(const QString& run);
  void scheduleRefresh();
  void refresh();
  void drawMarkers(Plot plot, const std::vector<RunView>& runs);
  void rescale(Plot plot, double firstX, double lastX);
  void applyAxes();
  PlotInteraction::Reading readOut(Plot plot, double cursorX, double pixelWidth) const;
  QString formatX(double x) const;
  void showContextMenu(Plot which, const QPoint& at);
  void rebuildOverlayMenu();
  void arrangePlots(int columns);
  // The plots' titles, axis labels and tooltips for a self-play run or a single-agent one.
  void titlePlots(bool singleAgent);

  QLabel *note_, *axisNote_;
  QDoubleSpinBox* smoothingBox_;
  QComboBox* axisBox_;
  QCheckBox* logScaleBox_;
  QPushButton* overlayButton_;
  QToolButton* removeOverlayButton_;
  QCustomPlot* plots_[PlotCount] = {};
  PlotInteraction* interactions_[PlotCount] = {};
  QGridLayout* plotGrid_;
  int plotColumns_ = 0;
  RunMetrics live_;
  std::vector<Overlay> overlays_;
  std::vector<Curve> curves_[PlotCount];
  std::vector<QCPAbstractItem*> markers_[PlotCount];
  double smoothing_ = 0;
  Axis axis_ = IterationAxis;
  bool logScale_ = false;
  bool singleAgentTitles_ = false;
  QString interactionHelp_;  // every plot's tooltip ends with how to zoom, pan and save
  QTimer refreshTimer_;
};

}  // namespace cas::widgets
