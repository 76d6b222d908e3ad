#include "widgets/metrics_panel.hpp"

#include <QLabel>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace cas::widgets {
namespace {

QCustomPlot* makePlot(const QString& title, const QString& yLabel) {
  auto* plot = new QCustomPlot;
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(QString(), 9, QFont::Bold)));
  plot->xAxis->setLabel(QObject::tr("iteration"));
  plot->yAxis->setLabel(yLabel);
  plot->legend->setVisible(true);
  plot->legend->setFont(QFont(QString(), 8));
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setMinimumHeight(140);
  return plot;
}

QCPGraph* makeGraph(QCustomPlot* plot, const QString& name, const QColor& colour) {
  QCPGraph* g = plot->addGraph();
  g->setName(name);
  g->setPen(QPen(colour, 1.6));
  return g;
}

}  // namespace

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent), note_(new QLabel(this)) {
  loss_ = makePlot(tr("Loss"), tr("loss"));
  wins_ = makePlot(tr("Score against the baselines (win 1, draw 0.5, loss 0)"), tr("score"));
  speed_ = makePlot(tr("Self-play throughput"), tr("simulations/s"));
  total_ = makeGraph(loss_, tr("total"), QColor(30, 30, 30));
  policy_ = makeGraph(loss_, tr("policy"), QColor(31, 119, 180));
  value_ = makeGraph(loss_, tr("value"), QColor(214, 39, 40));
  simulations_ = makeGraph(speed_, tr("simulations/s"), QColor(44, 160, 44));
  wins_->yAxis->setRange(0, 1.05);
  note_->setWordWrap(true);
  note_->setText(tr("Press Train to start a run; its curves appear here."));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(note_);
  layout->addWidget(loss_, 2);
  layout->addWidget(wins_, 2);
  layout->addWidget(speed_, 1);
}

int MetricsPanel::pointCount() const { return total_->dataCount(); }

void MetricsPanel::clear() {
  for (QCPGraph* g : {total_, policy_, value_, simulations_}) g->data()->clear();
  for (QCPGraph* g : winGraphs_) wins_->removeGraph(g);
  winGraphs_.clear();
  for (QCustomPlot* p : {loss_, wins_, speed_}) p->replot();
}

QCPGraph* MetricsPanel::winGraph(const QString& opponent) {
  if (QCPGraph* g = winGraphs_.value(opponent)) return g;
  static const QColor colours[] = {QColor(255, 127, 14), QColor(148, 103, 189), QColor(23, 190, 207), QColor(140, 86, 75)};
  QCPGraph* g = makeGraph(wins_, opponent, colours[winGraphs_.size() % 4]);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
  winGraphs_.insert(opponent, g);
  return g;
}

void MetricsPanel::append(QCPGraph* graph, double x, double y) {
  graph->addData(x, y);
  if (graph->dataCount() > kMaxPoints) graph->data()->removeBefore(graph->data()->at(graph->dataCount() - kMaxPoints)->key);
}

void MetricsPanel::addIteration(const train::IterationReport& r) {
  const double x = double(r.iteration);
  if (r.loss > 0) {
    append(total_, x, r.loss);
    append(policy_, x, r.policyLoss);
    append(value_, x, r.valueLoss);
  }
  append(simulations_, x, r.simulationsPerSecond);
  for (const auto& e : r.evaluations)
    if (e.games > 0) append(winGraph(QString::fromStdString(e.opponent)), x, (e.wins + 0.5 * e.draws) / e.games);
  note_->setText(tr("Iteration %1: %2 games played, %3 positions in the replay buffer; stage times: inference %4 s, search %5 s, data %6 s, training %7 s.")
                     .arg(r.iteration)
                     .arg(r.gamesPlayed)
                     .arg(r.positions)
                     .arg(r.inferenceSeconds, 0, 'f', 2)
                     .arg(r.searchSeconds, 0, 'f', 2)
                     .arg(r.dataSeconds, 0, 'f', 2)
                     .arg(r.trainSeconds, 0, 'f', 2));
  for (QCustomPlot* p : {loss_, speed_}) {
    p->rescaleAxes();
    p->yAxis->scaleRange(1.1, p->yAxis->range().center());
  }
  wins_->xAxis->setRange(loss_->xAxis->range());
  for (QCustomPlot* p : {loss_, wins_, speed_}) p->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace cas::widgets
