#pragma once
// The Metrics dock: live plots of a run (QCustomPlot) — loss terms, the score against the
// baselines, and throughput (simulations/s) — one point per iteration, so updates come at most
// once per iteration (far below 30 per second); each series keeps its newest kMaxPoints points.
// GUI thread only.
#include <QMap>
#include <QWidget>

#include "core/train/alphazero.hpp"

class QCustomPlot;
class QCPGraph;
class QLabel;

namespace cas::widgets {

class MetricsPanel : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxPoints = 100000;
  explicit MetricsPanel(QWidget* parent = nullptr);

  int pointCount() const;  // points in the loss plot
  QCustomPlot* lossPlot() const { return loss_; }
  QCustomPlot* winPlot() const { return wins_; }

 public slots:
  void clear();
  void addIteration(const cas::train::IterationReport& report);

 private:
  QCPGraph* winGraph(const QString& opponent);
  static void append(QCPGraph* graph, double x, double y);

  QLabel* note_;
  QCustomPlot *loss_, *wins_, *speed_;
  QCPGraph *total_, *policy_, *value_, *simulations_;
  QMap<QString, QCPGraph*> winGraphs_;
};

}  // namespace cas::widgets
