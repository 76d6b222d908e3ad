#pragma once
// The Metrics dock: live plots of a run (QCustomPlot) — loss terms, the score against the
// baselines, simulations/s, games/s and the time each stage of an iteration took — one point per
// iteration. Displayed curves can be smoothed (an exponential moving average; the stored values
// stay raw), earlier runs' metrics.jsonl can be drawn beside the live run (several, each with a
// dash pattern of its own), a finished run's can be shown as the main curves, and each plot can be
// saved as PNG or its raw data as CSV (one column per series) from its context menu.
// Bursts of iterations are coalesced: the plots redraw at most once per kRefreshIntervalMs (about
// 30 times a second). Memory is bounded: a series holding more than kMaxPoints points thins its
// older half to every second point, so recent iterations keep full resolution. The plots stand in
// one column, or two once the panel is wide enough (kTwoColumnWidth).
// Thread-safety: GUI thread only.
#include <QMap>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <optional>
#include <vector>

#include "core/train/alphazero.hpp"

class QCustomPlot;
class QCPGraph;
class QDoubleSpinBox;
class QGridLayout;
class QJsonObject;
class QLabel;
class QPushButton;

namespace cas::widgets {

class MetricsPanel : public QWidget {
  Q_OBJECT
 public:
  enum Plot { Loss, Score, Simulations, Games, StageTimes, PlotCount };
  static constexpr int kMaxPoints = 4096;  // per series
  static constexpr int kRefreshIntervalMs = 33;
  static constexpr double kMaxSmoothing = 0.99;
  static constexpr int kTwoColumnWidth = 760;  // from this panel width on, plots stand in two columns

  explicit MetricsPanel(QWidget* parent = nullptr);

  int pointCount() const;  // iterations of the live run with a loss (the total-loss series)
  QCustomPlot* plot(Plot which) const { return plots_[which]; }
  double smoothing() const { return smoothing_; }
  QString overlayName() const { return overlayName_; }  // the last overlay's name; empty when no overlay is shown
  QStringList overlays() const { return overlayKeys_.keys(); }  // the run folders drawn as overlays

  // The raw values of every series of a plot (overlay included): a header row, then one row per
  // iteration, "iteration" first and one column per series; a series without a value there leaves
  // its cell empty.
  QString csv(Plot which) const;
  bool exportCsv(Plot which, const QString& path, QString* error) const;
  bool exportPng(Plot which, const QString& path, QString* error) const;

  // Reads RUN_FOLDER/metrics.jsonl and draws it dashed beside the live run, replacing an earlier
  // overlay. Returns false with a sentence in `error` when the folder holds no readable metrics.
  bool loadOverlay(const QString& runFolder, QString* error);
  // Draws RUN_FOLDER's metrics beside the live run and the other overlays, each overlay with a
  // dash pattern of its own (the Runs dock's check boxes); false with `error` as loadOverlay.
  bool addOverlay(const QString& runFolder, QString* error);
  void removeOverlay(const QString& runFolder);
  // A finished run's metrics as the main (solid) curves, replacing the live ones: what the Runs
  // dock's Metrics shows, and what a resumed run continues. Overlays stay.
  bool showRun(const QString& runFolder, QString* error);

 public slots:
  void clear();  // the live run's points; an overlay stays for comparison
  void addIteration(const cas::train::IterationReport& report);
  void setSmoothing(double weight);  // 0 shows raw values; clamped to [0, kMaxSmoothing]
  void removeOverlay();  // every overlay
  void chooseOverlay();  // asks for a run folder

 signals:
  void overlaysChanged();  // a run was overlaid or removed (overlays() lists them)

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Series {
    QString key;   // identifies the quantity across runs: "loss", "score:perfect", ...
    QString name;  // legend text
    bool overlay = false;
    QString run;  // an overlay's run folder
    QVector<double> x, y;  // raw, at most kMaxPoints
    QCPGraph* graph = nullptr;
  };

  Series& series(Plot plot, const QString& key, const QString& name, bool overlay);
  void append(Plot plot, const QString& key, const QString& name, bool overlay, double x, double y);
  void appendMetricsLine(const QJsonObject& line, bool overlay);
  std::optional<std::vector<QJsonObject>> readMetrics(const QString& runFolder, QString* error) const;
  void scheduleRefresh();
  void refresh();
  void showContextMenu(Plot which, const QPoint& at);
  void saveSmoothing() const;
  void arrangePlots(int columns);

  QLabel* note_;
  QDoubleSpinBox* smoothingBox_;
  QPushButton *overlayButton_, *removeOverlayButton_;
  QCustomPlot* plots_[PlotCount] = {};
  QGridLayout* plotGrid_;
  int plotColumns_ = 0;
  std::vector<Series> series_[PlotCount];
  QMap<QString, QVector<QCPGraph*>> overlayKeys_;  // per overlaid run folder, one legend entry per plot naming it
  QString overlayRun_;  // the run folder whose overlay series are being added
  Qt::PenStyle overlayStyle_ = Qt::DashLine;  // and their dash pattern
  double smoothing_ = 0;
  QString overlayName_;
  QTimer refreshTimer_;
};

}  // namespace cas::widgets
