#include "widgets/metrics/plot_interaction.hpp"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace cas::widgets {

PlotInteraction::PlotInteraction(QCustomPlot* plot, ReadOut readOut)
    : QObject(plot), plot_(plot), readOut_(std::move(readOut)), crosshair_(new QCPItemStraightLine(plot)) {
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setMouseTracking(true);  // the crosshair follows the cursor without a button held
  plot_->installEventFilter(this);

  // Above the curves and the axes: on the legend's layer.
  crosshair_->setLayer(QStringLiteral("legend"));
  crosshair_->setSelectable(false);
  crosshair_->setVisible(false);
  crosshair_->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
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
    case QEvent::ToolTip:
      return !readOutText_.isEmpty();  // the read-out stands in for the plot's own tooltip
    case QEvent::Resize:
    case QEvent::Show:
      // After QCustomPlot has taken the new size: fitting changes the minimum height, which
      // resizes the plot again.
      QMetaObject::invokeMethod(this, &PlotInteraction::fitLegend, Qt::QueuedConnection);
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
  crosshair_->setVisible(true);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  // A tooltip rather than text in the plot: with several runs the read-out is taller than a plot.
  QToolTip::showText(plot_->mapToGlobal(widgetPos) + QPoint(18, 12), reading.text, plot_, QRect(), 60 * 60 * 1000);
}

void PlotInteraction::hideCrosshair() {
  if (!readOutText_.isEmpty()) QToolTip::hideText();
  readOutText_.clear();
  if (!crosshair_->visible()) return;
  crosshair_->setVisible(false);
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
  // An empty legend is a grid whose largest width is its margins, and a layout column is no wider
  // than the narrowest largest width in it: in the plot's layout it would squeeze the axes to a
  // sliver. It is there only while it has entries.
  QCPLayoutGrid* layout = plot_->plotLayout();
  const bool placed = layout->hasElement(kLegendRow, 0) && layout->element(kLegendRow, 0) == legend;
  if (entries == 0 && placed) {
    layout->take(legend);
    legend->setVisible(false);
  } else if (entries > 0 && !placed) {
    layout->addElement(kLegendRow, 0, legend);
    legend->setVisible(true);
  }
  const QMargins margins = legend->margins();
  const int available = plot_->width() - margins.left() - margins.right() - 8;
  // No more columns than entries: an empty column still takes its spacing, and widens the plot.
  const int columns = std::clamp((available + legend->columnSpacing()) / (widest + legend->columnSpacing()), 1, std::max(1, entries));
  const int rows = (entries + columns - 1) / columns;
  // setWrap alone leaves the entries where they are; rearranging also closes the gaps that
  // removed curves leave.
  legend->setWrap(columns);
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  // A plot laid out while its dock was hidden can miss the resize that tells QCustomPlot its
  // size, and would draw at the size it was created with, in a corner of the widget.
  if (plot_->viewport() != plot_->rect()) plot_->setViewport(plot_->rect());
  const int height = kPlotHeight + rows * (tallest + legend->rowSpacing());
  if (plot_->minimumHeight() != height) plot_->setMinimumHeight(height);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace cas::widgets
