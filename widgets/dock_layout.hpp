#pragma once
// The main window's dock layout policy: the default arrangement and sizes, View > Reset Layout,
// and where the space goes when the window grows or shrinks.
//   - Default sizes follow the window: the Policy editor gets the width of PdlEditor::kCodeColumns
//     columns of code first, the Project/Tuning column and the Metrics column share the rest,
//     and the Log is a few lines high.
//   - When the window is resized, the Project/Tuning column keeps its width and the Log its
//     height, so the change goes to the editor and the plots. (QMainWindow alone shares it out
//     evenly between the dock areas, which gave a maximised window's space to the side column
//     and the Log.) What the user dragged a separator to is what is kept.
//   - Reset puts every dock back where the window placed it at start-up (areas, tabs, shown,
//     docked) with the default sizes for the current window size.
// Thread-safety: GUI thread only.
#include <QByteArray>
#include <QObject>
#include <QSize>

#include <optional>

class QDockWidget;
class QMainWindow;

namespace cas::widgets {

class PdlEditor;

class DockLayout : public QObject {
  Q_OBJECT
 public:
  struct Docks {
    QDockWidget *project, *tuning, *editor, *metrics, *log;
  };
  // Pixel sizes of the default layout for one window size.
  struct Sizes {
    int sideColumn, editor, metrics;  // widths
    int project, tuning, log;         // heights
  };

  DockLayout(QMainWindow* window, Docks docks, PdlEditor* editor);

  // Remembers the arrangement the window has now as the default one. Call once every dock is
  // placed, before a saved state is restored.
  void captureDefaultArrangement();
  // The default sizes for a window of `windowSize`.
  Sizes defaultSizes(QSize windowSize) const;
  // Applies defaultSizes() for the window's current size.
  void applyDefaultSizes();
  // Every dock back to the default arrangement, shown and docked, with the default sizes.
  void reset();
  // After the window's layout has followed a resize: the side column and the Log back to the
  // sizes they had before it, so the editor and the plots take the change (in proportion to
  // their widths).
  void keepSidePanels();

 protected:
  // Records the docks' sizes whenever they change while the window keeps its size (a separator
  // dragged, a dock shown or hidden): the sizes a resize starts from.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // The dock sizes a resize starts from.
  struct Recorded {
    int sideColumn, editor, metrics;  // widths
    int project, tuning, log;         // heights (0: the dock is hidden)
  };
  // Whether the docks are where the default arrangement puts them (the policy applies only then).
  bool inDefaultAreas() const;
  void record();

  QMainWindow* window_;
  Docks docks_;
  PdlEditor* editor_;
  QByteArray defaultArrangement_;
  QSize laidOutWindowSize_;  // the window size the recorded sizes belong to
  std::optional<Recorded> recorded_;
};

}  // namespace cas::widgets
