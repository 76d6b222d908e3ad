#pragma once
// One run's plotted data for the Metrics dock, without any drawing: its series per plot (each
// point with its iteration, its training time and its wall-clock time), and its parameter changes.
// Filled live from the engine's iteration reports, or read from a run folder (metrics.jsonl,
// changes.jsonl) to overlay an earlier run. Values stay raw; smoothing is the view's business.
// Memory is bounded: a series holding more than kMaxPoints points thins its older half to every
// second point, so recent iterations keep full resolution.
// Thread-safety: none; a RunMetrics is owned and used by one thread (the GUI thread).
#include <QColor>
#include <QString>
#include <QVector>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "core/train/reports.hpp"

class QJsonObject;

namespace cas::widgets {

// The Metrics dock's plots, shared by the data and the view.
struct MetricPlots {
  enum Plot { Loss, Score, Simulations, Games, StageTimes, PlotCount };
  // What the horizontal axis measures. Training time adds up the iterations' wall times, so a
  // pause or a gap between a run and its resumption takes no room; wall clock is the time of day.
  enum Axis { IterationAxis, TrainingTimeAxis, WallClockAxis, AxisCount };
};

struct MetricSeries {
  QString key;   // identifies the quantity across runs: "loss", "score:perfect", ...
  QString name;  // the quantity's legend text, without the run's name
  int order = 0;  // its place among the run's series in the same plot (0 first): the overlays' dash pattern
  // One entry per point; a time that is not known (an older metrics.jsonl without "time") is NaN.
  QVector<double> iteration, trainingSeconds, wallClock, y;

  const QVector<double>& x(MetricPlots::Axis axis) const;
};

struct MetricChange {
  qint64 iteration = 0;  // the first iteration that ran with the new value
  QString parameter, from, to;
};

class RunMetrics {
 public:
  static constexpr int kMaxPoints = 4096;  // per series
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

  // `wallClock`: when the iteration ended, seconds since 1970 (the report's finishedAt, or the
  // time it reached the view when the engine did not stamp it).
  void addIteration(const train::IterationReport& report, double wallClock);
  void addChange(const MetricChange& change) { changes_.push_back(change); }

  // Reads RUN_FOLDER/metrics.jsonl (and changes.jsonl when present). False with a sentence in
  // `error` when the folder holds no readable metrics. A line cut short (a run killed while
  // writing) is skipped rather than failing the whole file.
  bool load(const QString& runFolder, QString* error);

  const std::vector<MetricSeries>& series(MetricPlots::Plot plot) const { return series_[plot]; }
  const std::vector<MetricChange>& changes() const { return changes_; }
  bool empty() const;
  // Whether the run is a single-agent one (PPO): its plots show episodes, not self-play.
  bool singleAgent() const { return singleAgent_; }
  // Where iteration `iteration`'s point stands on `axis`; NaN when the run has no point there.
  double position(qint64 iteration, MetricPlots::Axis axis) const;

 private:
  MetricSeries& seriesFor(MetricPlots::Plot plot, const QString& key, const QString& name);
  void append(MetricPlots::Plot plot, const QString& key, const QString& name, double y);
  void appendMetricsLine(const QJsonObject& line);
  // A single-agent iteration: the loss terms (when it trained), the episodes' mean return and
  // length in the Score and Games plots, environment steps/s in the Simulations plot, the rollout
  // and update times in the stage plot.
  void appendEpisodes(std::optional<double> loss, double policyLoss, double valueLoss, std::int64_t episodes, double returnMean, double lengthMean,
                      double stepsPerSecond, double rolloutSeconds, double trainSeconds);
  void beginPoint(double iteration, double iterationSeconds, double wallClock);

  std::vector<MetricSeries> series_[MetricPlots::PlotCount];
  std::vector<MetricChange> changes_;
  // The point being added: every series appended to until the next beginPoint shares it.
  double iteration_ = 0, trainingSeconds_ = 0, wallClock_ = kUnknown;
  bool singleAgent_ = false;
};

// A quantity's colour in the live run (overlaid runs have one colour each).
QColor quantityColour(const QString& key);

// An opponent as the user reads it: the baselines every run is scored against, "random" and
// "perfect", in the user's language; any other opponent ("mcts:200") by its name as given, which
// says its settings. The Metrics legend and the Runs dock's last score use it.
QString opponentName(const QString& opponent);

}  // namespace cas::widgets
