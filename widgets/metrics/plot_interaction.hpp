#pragma once
// The mouse on one of the Metrics dock's plots, as TensorBoard users expect: the wheel scrolls the
// dock (the plot hands it to the scroll area around it), Ctrl+wheel zooms around the cursor,
// dragging pans, and a double-click goes back to following the data. While the user has zoomed or
// panned, the plot holds still as points arrive (followsData() is false). A crosshair follows the
// cursor, snapped to the nearest point, with a read-out of the curves' values there (a tooltip),
// which the owner composes. The legend wraps into as many columns as the plot's width holds, so no entry is
// cut off.
// Thread-safety: GUI thread only.
#include <QObject>
#include <QString>

#include <functional>

class QCustomPlot;
class QCPItemStraightLine;
class QMouseEvent;
class QWheelEvent;

namespace cas::widgets {

class PlotInteraction : public QObject {
  Q_OBJECT
 public:
  struct Reading {
    double x = 0;  // where the crosshair snaps to, in plot coordinates
    QString text;  // empty: nothing under the cursor, no crosshair
  };
  // Given the plot coordinate under the cursor and the width of a pixel in plot coordinates.
  using ReadOut = std::function<Reading(double cursorX, double pixelWidth)>;

  static constexpr int kPlotHeight = 220;  // the plot's minimum height, legend excluded
  static constexpr int kLegendRow = 2;     // the legend's row in the plot's layout: title, axes, legend

  PlotInteraction(QCustomPlot* plot, ReadOut readOut);

  bool followsData() const { return followsData_; }
  // Follows the data again (a new run, or a double-click); the owner rescales the axes.
  void followData() { followsData_ = true; }
  QString readOutText() const { return readOutText_; }
  // Shows the crosshair and the read-out at a point of the plot widget, as a mouse move does.
  void hoverAt(const QPoint& widgetPos);
  void hideCrosshair();
  // Wraps the legend's entries into columns that fit the plot's width, and grows the plot's
  // minimum height by the legend's rows.
  void fitLegend();

 signals:
  void followDataRequested();  // a double-click: the owner rescales the axes to the data

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  bool handleWheel(QWheelEvent* event);

  QCustomPlot* plot_;
  ReadOut readOut_;
  QCPItemStraightLine* crosshair_;
  QString readOutText_;
  bool followsData_ = true;
};

}  // namespace cas::widgets
