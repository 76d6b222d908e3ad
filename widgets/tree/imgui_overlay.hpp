#pragma once
// A Dear ImGui debug overlay drawn over a GL view (the search tree; any QOpenGLWidget can host
// one): a window of named sections of label/value rows and a plot of recent frame times. Dear
// ImGui 1.86 comes from the system (pkg-config imgui) with its OpenGL3 renderer backend; it has no
// Qt platform backend, so the host forwards its Qt events to handleEvent(), which bridges mouse,
// wheel, keyboard, text and focus into ImGuiIO. Each overlay owns its ImGui context, so several
// views can host one each. Text outside Latin-1 (the zh_CN interface) is drawn with glyphs merged
// from a system CJK font when one is installed; otherwise ImGui shows '?' for them.
// Thread-safety: GUI thread only; initialize(), render() and release() need the host's GL
// context current.
#include <QElapsedTimer>
#include <QSize>
#include <QString>

#include <utility>
#include <vector>

class QEvent;
struct ImGuiContext;

namespace cas::widgets {

class ImGuiOverlay {
 public:
  struct Section {
    QString title;
    std::vector<std::pair<QString, QString>> rows;  // label, value
  };

  ImGuiOverlay();
  ImGuiOverlay(const ImGuiOverlay&) = delete;
  ImGuiOverlay& operator=(const ImGuiOverlay&) = delete;
  ~ImGuiOverlay();  // the GL objects must have been freed by release()

  // Creates the renderer backend's GL objects; false with a sentence in `error` when it cannot.
  bool initialize(QString* error);
  bool initialized() const { return initialized_; }
  void release();

  // Feeds a Qt event of the host widget to ImGui (coordinates in the widget's logical pixels).
  // Returns true when the overlay takes it: the pointer is over the overlay's window, or the
  // overlay has keyboard focus; the host then does not act on the event itself.
  bool handleEvent(QEvent* event);

  // Draws one frame of the overlay into the bound framebuffer, `logicalSize` in the host's
  // logical pixels.
  void render(QSize logicalSize, qreal devicePixelRatio, const std::vector<Section>& sections, const std::vector<float>& frameTimesMs);

 private:
  void loadGlyphsFor(const QString& text);

  ImGuiContext* context_;
  bool initialized_ = false;
  QElapsedTimer clock_;
  QString glyphsLoaded_;  // the non-Latin-1 characters the font atlas holds
  std::vector<unsigned short> glyphRanges_;  // must outlive the atlas built from it
};

}  // namespace cas::widgets
