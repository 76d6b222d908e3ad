#include "widgets/plot_interaction.hpp"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QMouseEvent>
#include <QWheelEvent>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace cas::widgets {

PlotInteraction::PlotInteraction(QCustomPlot* plot, ReadOut readOut)
    : QObject(plot), plot_(plot), readOut_(std::move(readOut)), crosshair_(new QCPItemStraightLine(plot)), readOutLabel_(new QCPItemText(plot)) {
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setMouseTracking(true);  // the crosshair follows the cursor without a button held
  plot_->installEventFilter(this);

  // Above the curves and the axes: on the legend's layer.
  for (QCPAbstractItem* item : {static_cast<QCPAbstractItem*>(crosshair_), static_cast<QCPAbstractItem*>(readOutLabel_)}) {
    item->setLayer(QStringLiteral("legend"));
    item->setSelectable(false);
    item->setVisible(false);
  }
  crosshair_->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
  readOutLabel_->position->setTypeX(QCPItemPosition::ptPlotCoords);
  readOutLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  readOutLabel_->position->setAxisRect(plot_->axisRect());
  readOutLabel_->setFont(QFont(QString(), 8));
  readOutLabel_->setTextAlignment(Qt::AlignLeft);
  readOutLabel_->setPadding(QMargins(4, 2, 4, 2));
  readOutLabel_->setBrush(QColor(255, 255, 255, 225));
  readOutLabel_->setPen(QPen(QColor(160, 160, 160)));
}

bool PlotInteraction::eventFilter(QObject* watched, QEvent* event) {
  if (watched != plot_) return false;
  switch (event->type()) {
    case QEvent::Wheel:
      return handleWheel(static_cast<QWheelEvent*>(event));
    case QEvent::MouseMove: {
      auto* move = static_cast<QMouseEvent*>(event);
      if (move->buttons() & Qt::LeftButton) followsData_ = false;  // a drag pans: hold the view where the user put it
      hoverAt(move->position().toPoint());
      return false;
    }
    case QEvent::MouseButtonDblClick:
      followsData_ = true;
      emit followDataRequested();
      return true;
    case QEvent::Leave:
      hideCrosshair();
      return false;
    case QEvent::Resize:
      fitLegend();
      return false;
    default:
      return false;
  }
}

bool PlotInteraction::handleWheel(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    followsData_ = false;
    // QCustomPlot zooms at the cursor, and only reads the vertical turn of the wheel.
    return false;
  }
  // A plain wheel scrolls the dock. The event goes to the nearest scroll area's viewport itself:
  // an ignored event would reach it only when spontaneous (Qt does not propagate synthetic wheel
  // events), and the dock should scroll however the event came.
  for (QWidget* w = plot_->parentWidget(); w; w = w->parentWidget()) {
    auto* area = qobject_cast<QAbstractScrollArea*>(w);
    if (!area) continue;
    const QPointF at = area->viewport()->mapFromGlobal(event->globalPosition());
    QWheelEvent forwarded(at, event->globalPosition(), event->pixelDelta(), event->angleDelta(), event->buttons(), event->modifiers(),
                          event->phase(), event->inverted(), event->source());
    QCoreApplication::sendEvent(area->viewport(), &forwarded);
    return true;
  }
  event->ignore();  // no scroll area: let a spontaneous event travel to the parent
  return true;
}

void PlotInteraction::hoverAt(const QPoint& widgetPos) {
  QCPAxisRect* rect = plot_->axisRect();
  if (!rect->rect().contains(widgetPos)) {
    hideCrosshair();
    return;
  }
  QCPAxis* x = plot_->xAxis;
  const double cursorX = x->pixelToCoord(widgetPos.x());
  const double pixelWidth = std::abs(x->pixelToCoord(widgetPos.x() + 1) - cursorX);
  const Reading reading = readOut_(cursorX, pixelWidth);
  if (reading.text.isEmpty()) {
    hideCrosshair();
    return;
  }
  readOutText_ = reading.text;
  crosshair_->point1->setCoords(reading.x, 0);
  crosshair_->point2->setCoords(reading.x, 1);
  readOutLabel_->setText(reading.text);
  // Beside the crosshair, on the side with more room, so the read-out does not cover the point.
  const bool rightHalf = x->coordToPixel(reading.x) > rect->center().x();
  readOutLabel_->setPositionAlignment(Qt::AlignTop | (rightHalf ? Qt::AlignRight : Qt::AlignLeft));
  readOutLabel_->position->setCoords(reading.x, 0.02);
  readOutLabel_->setPadding(rightHalf ? QMargins(4, 2, 8, 2) : QMargins(8, 2, 4, 2));
  crosshair_->setVisible(true);
  readOutLabel_->setVisible(true);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void PlotInteraction::hideCrosshair() {
  readOutText_.clear();
  if (!crosshair_->visible()) return;
  crosshair_->setVisible(false);
  readOutLabel_->setVisible(false);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void PlotInteraction::fitLegend() {
  QCPLegend* legend = plot_->legend;
  // The legend is a grid: a removed curve leaves an empty cell (a null item) until the rearrangement.
  int widest = 1, tallest = 1, entries = 0;
  for (int i = 0; i < legend->itemCount(); ++i)
    if (QCPAbstractLegendItem* item = legend->item(i)) {
      const QSize size = item->minimumOuterSizeHint();
      widest = std::max(widest, size.width());
      tallest = std::max(tallest, size.height());
      ++entries;
    }
  const QMargins margins = legend->margins();
  const int available = plot_->width() - margins.left() - margins.right() - 8;
  const int columns = std::max(1, (available + legend->columnSpacing()) / (widest + legend->columnSpacing()));
  const int rows = (entries + columns - 1) / columns;
  // setWrap alone leaves the entries where they are; rearranging also closes the gaps that
  // removed curves leave.
  legend->setWrap(columns);
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  plot_->setMinimumHeight(kPlotHeight + rows * (tallest + legend->rowSpacing()));
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace cas::widgets
