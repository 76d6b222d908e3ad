#pragma once
// An OpenGL context current on an offscreen surface, drawing into a framebuffer object of the
// given size, for the tree view's rendering tests. `problem` says why there is none (the test then
// skips): the offscreen platform has OpenGL only through GLX, with a display (CTest runs gui
// suites under Xvfb).
#include <QGuiApplication>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QString>

#include <memory>

namespace cas::test {

struct OffscreenGl {
  QOffscreenSurface surface;
  QOpenGLContext context;
  std::unique_ptr<QOpenGLFramebufferObject> target;
  QString problem;

  explicit OffscreenGl(QSize size) {
    surface.create();
    if (!context.create()) {
      problem = QStringLiteral("no OpenGL context on the '%1' platform (the offscreen platform has OpenGL only through GLX, with a display)")
                    .arg(QGuiApplication::platformName());
      return;
    }
    if (!context.makeCurrent(&surface)) {
      problem = QStringLiteral("the OpenGL context cannot be made current");
      return;
    }
    target = std::make_unique<QOpenGLFramebufferObject>(size);
    target->bind();
  }
};

}  // namespace cas::test
