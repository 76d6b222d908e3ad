#include "widgets/dock_layout.hpp"

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QStyle>

#include <algorithm>

#include "widgets/editor/code_editor.hpp"
#include "widgets/editor/pdl_editor.hpp"

namespace cas::widgets {

namespace {
// The side column and the Metrics column never go below these in the default layout: the
// tuning table's key and value and a readable plot need them.
constexpr int kMinSideColumn = 190, kMaxSideColumn = 340;
constexpr int kMinMetrics = 280, kMaxMetrics = 640;
// The Policy dock's frame around the code editor.
constexpr int kEditorDockFrame = 4;
}  // namespace

DockLayout::DockLayout(QMainWindow* window, Docks docks, PdlEditor* editor)
    : QObject(window), window_(window), docks_(docks), editor_(editor) {
  for (QDockWidget* dock : {docks_.project, docks_.tuning, docks_.editor, docks_.metrics, docks_.log}) dock->installEventFilter(this);
}

void DockLayout::captureDefaultArrangement() { defaultArrangement_ = window_->saveState(); }

DockLayout::Sizes DockLayout::defaultSizes(QSize windowSize) const {
  const int separator = window_->style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, window_);
  const int editorNeeds = editor_->codeEditor()->widthForColumns(PdlEditor::kCodeColumns) + kEditorDockFrame;
  const int width = windowSize.width() - 2 * separator;
  // The Metrics dock's tab group cannot be narrower than the widest minimum of its tabs.
  int minMetrics = std::max(kMinMetrics, docks_.metrics->minimumSizeHint().width());
  for (const QDockWidget* tab : window_->tabifiedDockWidgets(docks_.metrics)) minMetrics = std::max(minMetrics, tab->minimumSizeHint().width());
  Sizes s{};
  s.sideColumn = std::clamp(int(width * 0.19), kMinSideColumn, kMaxSideColumn);
  s.metrics = std::clamp(int(width * 0.30), minMetrics, std::max(minMetrics, kMaxMetrics));
  int shortfall = editorNeeds - (width - s.sideColumn - s.metrics);
  if (shortfall > 0) {  // the editor's columns come first: the plots give way, then the side column
    const int fromMetrics = std::min(shortfall, s.metrics - minMetrics);
    s.metrics -= fromMetrics;
    shortfall -= fromMetrics;
    s.sideColumn -= std::min(shortfall, s.sideColumn - kMinSideColumn);
  }
  s.editor = width - s.sideColumn - s.metrics;
  // A few lines of Log; the Project summary and file list above the tuning table.
  s.log = std::clamp(int(windowSize.height() * 0.11), 72, 150);
  const int column = windowSize.height() - s.log;
  s.project = column * 3 / 10;
  s.tuning = column - s.project;
  return s;
}

void DockLayout::applyDefaultSizes() {
  const Sizes s = defaultSizes(window_->size());
  laidOutWindowSize_ = window_->size();
  window_->resizeDocks({docks_.project, docks_.editor, docks_.metrics}, {s.sideColumn, s.editor, s.metrics}, Qt::Horizontal);
  window_->resizeDocks({docks_.project, docks_.tuning, docks_.log}, {s.project, s.tuning, s.log}, Qt::Vertical);
}

void DockLayout::reset() {
  for (QDockWidget* dock : window_->findChildren<QDockWidget*>()) {
    dock->setFloating(false);
    dock->show();
  }
  window_->restoreState(defaultArrangement_);
  docks_.editor->raise();
  docks_.metrics->raise();
  applyDefaultSizes();
}

namespace {
// The dock of `dock`'s tab group that is in front, or null when the group is closed or floats.
QDockWidget* inFront(QMainWindow* window, QDockWidget* dock) {
  if (dock->isVisible() && !dock->isFloating()) return dock;
  for (QDockWidget* other : window->tabifiedDockWidgets(dock))
    if (other->isVisible() && !other->isFloating()) return other;
  return nullptr;
}
}  // namespace

bool DockLayout::inDefaultAreas() const {
  auto docked = [this](QDockWidget* dock, Qt::DockWidgetArea area) {
    return dock->isVisible() && !dock->isFloating() && window_->dockWidgetArea(dock) == area;
  };
  const QDockWidget* editor = inFront(window_, docks_.editor);
  const QDockWidget* metrics = inFront(window_, docks_.metrics);
  return (docked(docks_.project, Qt::LeftDockWidgetArea) || docked(docks_.tuning, Qt::LeftDockWidgetArea)) && editor && metrics &&
         window_->dockWidgetArea(docks_.editor) == Qt::RightDockWidgetArea && window_->dockWidgetArea(docks_.metrics) == Qt::RightDockWidgetArea &&
         editor->y() == metrics->y() && docked(docks_.log, Qt::BottomDockWidgetArea);
}

void DockLayout::record() {
  if (!inDefaultAreas()) {
    recorded_.reset();
    return;
  }
  const QDockWidget* side = docks_.project->isVisible() ? docks_.project : docks_.tuning;
  const QDockWidget* editor = inFront(window_, docks_.editor);
  recorded_ = Recorded{side->width(),
                       editor->width(),
                       inFront(window_, docks_.metrics)->width(),
                       docks_.project->isVisible() ? docks_.project->height() : 0,
                       docks_.tuning->isVisible() ? docks_.tuning->height() : 0,
                       docks_.log->height()};
}

bool DockLayout::eventFilter(QObject* watched, QEvent* event) {
  // A window resize lays the docks out before the window's own resizeEvent runs, with the window
  // already at its new size: those dock resizes are not recorded, so keepSidePanels() still has
  // the sizes from before.
  if (event->type() == QEvent::Resize && window_->size() == laidOutWindowSize_) record();
  return QObject::eventFilter(watched, event);
}

void DockLayout::keepSidePanels() {
  const bool resized = laidOutWindowSize_.isValid() && window_->size() != laidOutWindowSize_;
  laidOutWindowSize_ = window_->size();
  if (!resized || !recorded_ || !inDefaultAreas()) return;
  // QMainWindow shares a change of size evenly between the dock areas; every size is set here
  // instead, as the default layout does.
  const Recorded before = *recorded_;
  QDockWidget* side = docks_.project->isVisible() ? docks_.project : docks_.tuning;
  const QDockWidget* editor = inFront(window_, docks_.editor);
  const int width = side->width() + editor->width() + inFront(window_, docks_.metrics)->width();
  const int mainBefore = std::max(1, before.editor + before.metrics);
  const int main = std::max(0, width - before.sideColumn);
  const int editorWidth = int(qint64(main) * before.editor / mainBefore);
  window_->resizeDocks({side, docks_.editor, docks_.metrics}, {before.sideColumn, editorWidth, main - editorWidth}, Qt::Horizontal);
  // The column above the Log (the side docks, or the editor's tab group with its tab bar) takes
  // what the Log gives back.
  const int separator = window_->style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, window_);
  const int top = docks_.project->isVisible() ? docks_.project->y() : docks_.tuning->y();
  const int column = std::max(0, docks_.log->y() + docks_.log->height() - before.log - separator - top);
  const bool both = before.project > 0 && before.tuning > 0;
  const int sides = both ? column - separator : column;
  const int project = before.project == 0 ? 0 : both ? int(qint64(sides) * before.project / (before.project + before.tuning)) : sides;
  window_->resizeDocks({docks_.project, docks_.tuning, docks_.editor, docks_.log}, {project, sides - project, column, before.log},
                       Qt::Vertical);
}

}  // namespace cas::widgets
