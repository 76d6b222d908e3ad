#include "widgets/tree/tree_renderer.hpp"

#include <QCoreApplication>
#include <QOpenGLContext>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "widgets/studio_resources.hpp"

namespace cas::widgets {

namespace {

constexpr unsigned kVertexRecord = sizeof(TreeVertex);

}  // namespace

bool TreeRenderer::initialize(QString* error) {
  QOpenGLContext* context = QOpenGLContext::currentContext();
  initializeOpenGLFunctions();
  const bool es = context->isOpenGLES();
  // The version the driver gave, which may be above the one the format asked for.
  GLint major = 0, minor = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &major);
  glGetIntegerv(GL_MINOR_VERSION, &minor);
  glVersion_ = QString::fromLatin1(reinterpret_cast<const char*>(glGetString(GL_VERSION)));
  rendererName_ = QString::fromLatin1(reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  if (std::pair(major, minor) < (es ? std::pair(3, 0) : std::pair(3, 3))) {
    *error = QCoreApplication::translate("cas::widgets::TreeRenderer", "The search tree needs OpenGL 3.3 or OpenGL ES 3.0; this context is %1.")
                 .arg(description());
    return false;
  }
  const QByteArray header = es ? QByteArrayLiteral("#version 300 es\nprecision highp float;\n") : QByteArrayLiteral("#version 330 core\n");
  auto compile = [&](GLenum type, const QString& file) -> GLuint {
    const GLuint shader = glCreateShader(type);
    const QByteArray source = header + studioResource(file);
    const char* text = source.constData();
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
      char log[1024] = {};
      glGetShaderInfoLog(shader, sizeof log, nullptr, log);
      *error = QCoreApplication::translate("cas::widgets::TreeRenderer", "The search tree's shader did not compile: %1").arg(QString::fromLatin1(log));
      glDeleteShader(shader);
      return 0;
    }
    return shader;
  };
  const GLuint vertex = compile(GL_VERTEX_SHADER, QStringLiteral("shaders/search_tree.vert"));
  const GLuint fragment = vertex ? compile(GL_FRAGMENT_SHADER, QStringLiteral("shaders/search_tree.frag")) : 0;
  if (!fragment) {
    if (vertex) glDeleteShader(vertex);
    return false;
  }
  const GLuint program = glCreateProgram();
  glAttachShader(program, vertex);
  glAttachShader(program, fragment);
  glLinkProgram(program);
  glDeleteShader(vertex);
  glDeleteShader(fragment);
  GLint linked = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &linked);
  if (!linked) {
    char log[1024] = {};
    glGetProgramInfoLog(program, sizeof log, nullptr, log);
    *error = QCoreApplication::translate("cas::widgets::TreeRenderer", "The search tree's shader did not link: %1").arg(QString::fromLatin1(log));
    glDeleteProgram(program);
    return false;
  }
  program_ = program;
  centreLocation_ = glGetUniformLocation(program_, "centre");
  scaleLocation_ = glGetUniformLocation(program_, "scale");
  pixelsPerUnitLocation_ = glGetUniformLocation(program_, "pixelsPerUnit");
  antialiasLocation_ = glGetUniformLocation(program_, "antialias");
  for (Buffers& b : modes_) createBuffers(b);
  createBuffers(overlay_);
  return true;
}

void TreeRenderer::createBuffers(Buffers& b) {
  glGenVertexArrays(1, &b.vertexArray);
  glGenBuffers(1, &b.vertices);
  glGenBuffers(1, &b.indices);
  glBindVertexArray(b.vertexArray);
  glBindBuffer(GL_ARRAY_BUFFER, b.vertices);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, b.indices);  // recorded in the vertex array
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, kVertexRecord, reinterpret_cast<void*>(offsetof(TreeVertex, x)));
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, kVertexRecord, reinterpret_cast<void*>(offsetof(TreeVertex, edge)));
  glEnableVertexAttribArray(2);
  glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, kVertexRecord, reinterpret_cast<void*>(offsetof(TreeVertex, fill)));
  glEnableVertexAttribArray(3);
  glVertexAttribPointer(3, 4, GL_UNSIGNED_BYTE, GL_TRUE, kVertexRecord, reinterpret_cast<void*>(offsetof(TreeVertex, outline)));
  glEnableVertexAttribArray(4);
  glVertexAttribPointer(4, 1, GL_FLOAT, GL_FALSE, kVertexRecord, reinterpret_cast<void*>(offsetof(TreeVertex, outlineWidth)));
  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
}

void TreeRenderer::release() {
  if (!program_) return;
  for (Buffers* b : {&modes_[0], &modes_[1], &overlay_}) {
    glDeleteVertexArrays(1, &b->vertexArray);
    glDeleteBuffers(1, &b->vertices);
    glDeleteBuffers(1, &b->indices);
    *b = {};
  }
  glDeleteProgram(program_);
  program_ = 0;
}

void TreeRenderer::reserve(Buffers& b, TreeGeometrySource::Counts counts) {
  glBindVertexArray(b.vertexArray);
  // Grown by a quarter more than asked, so a tree that grows snapshot by snapshot reallocates
  // rarely.
  if (counts.vertices > b.vertexCapacity) {
    b.vertexCapacity = counts.vertices + counts.vertices / 4;
    glBindBuffer(GL_ARRAY_BUFFER, b.vertices);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(b.vertexCapacity * sizeof(TreeVertex)), nullptr, GL_DYNAMIC_DRAW);
  }
  if (counts.indices > b.indexCapacity) {
    b.indexCapacity = counts.indices + counts.indices / 4;
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, b.indices);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, GLsizeiptr(b.indexCapacity * sizeof(std::uint32_t)), nullptr, GL_DYNAMIC_DRAW);
  }
  b.used = counts;
}

bool TreeRenderer::upload(const TreeGeometrySource& source) {
  bool written = true;
  for (TreeViewMode mode : {TreeViewMode::Sunburst, TreeViewMode::NodeLink}) {
    Buffers& b = modes_[size_t(mode)];
    reserve(b, source.counts(mode));
    const TreeGeometrySource::Target target{b.vertices, b.indices, b.vertexCapacity * sizeof(TreeVertex), b.indexCapacity * sizeof(std::uint32_t)};
    if (written && b.used.indices > 0) written = source.writeBuffers(mode, target);
  }
  sunburstIndex_ = source.sunburstIndex();
  if (!written) {  // what the buffers hold is not this source's
    for (Buffers& b : modes_) b.used = {};
    sunburstIndex_ = {};
  }
  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  return written;
}

void TreeRenderer::setOverlay(const TreeMesh& overlay) {
  reserve(overlay_, {overlay.vertices.size(), overlay.indices.size()});
  if (!overlay.indices.empty()) {
    glBindBuffer(GL_ARRAY_BUFFER, overlay_.vertices);
    glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(overlay.vertices.size() * sizeof(TreeVertex)), overlay.vertices.data());
    glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, GLsizeiptr(overlay.indices.size() * sizeof(std::uint32_t)), overlay.indices.data());
  }
  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
}

TreeGeometrySource::Counts TreeRenderer::uploaded(TreeViewMode mode) const { return modes_[size_t(mode)].used; }

void TreeRenderer::drawBuffers(const Buffers& b) {
  if (b.used.indices == 0) return;
  glBindVertexArray(b.vertexArray);
  glDrawElements(GL_TRIANGLES, GLsizei(b.used.indices), GL_UNSIGNED_INT, nullptr);
  drawnIndices_ += b.used.indices;
}

void TreeRenderer::drawRange(std::uint32_t firstIndex, std::uint32_t endIndex) {
  if (endIndex <= firstIndex) return;
  glDrawElements(GL_TRIANGLES, GLsizei(endIndex - firstIndex), GL_UNSIGNED_INT,
                 reinterpret_cast<void*>(std::uintptr_t(firstIndex) * sizeof(std::uint32_t)));
  drawnIndices_ += endIndex - firstIndex;
}

namespace {

constexpr float kTwoPi = 6.28318530718f;

float angleOf(float x, float y) {
  const float a = std::atan2(x, -y);  // clockwise from 12 o'clock, as the layout's angles
  return a < 0 ? a + kTwoPi : a;
}

}  // namespace

void TreeRenderer::drawSunburst(const Viewport& v) {
  const Buffers& b = modes_[size_t(TreeViewMode::Sunburst)];
  if (b.used.indices == 0 || sunburstIndex_.levels.empty()) return;
  // The coarsest level whose merged runs are at most a pixel long.
  const auto& levels = sunburstIndex_.levels;
  size_t l = 0;
  while (l + 1 < levels.size() && levels[l].minArc * v.pixelsPerUnit > 1.0f) ++l;
  drawnLevel_ = int(l);
  // The viewport in tree space.
  const float halfW = float(v.pixelWidth) / 2 / v.pixelsPerUnit, halfH = float(v.pixelHeight) / 2 / v.pixelsPerUnit;
  const float x0 = v.centreX - halfW, x1 = v.centreX + halfW, y0 = v.centreY - halfH, y1 = v.centreY + halfH;
  const bool containsCentre = x0 <= 0 && 0 <= x1 && y0 <= 0 && 0 <= y1;
  const float nearest = std::hypot(std::max({x0, 0.0f, -x1}), std::max({y0, 0.0f, -y1}));
  float farthest = 0;
  for (float x : {x0, x1})
    for (float y : {y0, y1}) farthest = std::max(farthest, std::hypot(x, y));
  // Seen from the centre, a rectangle that does not contain it spans less than half a turn:
  // the angles of its corners, unwrapped around the angle of its middle.
  float from = 0, to = kTwoPi;
  if (!containsCentre) {
    const float middle = angleOf(v.centreX, v.centreY);
    float lo = 0, hi = 0;
    for (float x : {x0, x1})
      for (float y : {y0, y1}) {
        float d = angleOf(x, y) - middle;
        if (d > kTwoPi / 2) d -= kTwoPi;
        if (d < -kTwoPi / 2) d += kTwoPi;
        lo = std::min(lo, d);
        hi = std::max(hi, d);
      }
    from = middle + lo;
    to = middle + hi;
  }
  glBindVertexArray(b.vertexArray);
  for (const SunburstIndex::Ring& ring : levels[l].rings) {
    if (ring.starts.empty() || ring.outer < nearest || ring.inner > farthest) continue;
    // Runs overlapping [a, b] within [0, 2 pi): from the last run starting at or before a to the
    // first starting after b.
    auto drawAngles = [&](float a, float bEnd) {
      const auto begin = ring.starts.begin(), end = ring.starts.end();
      auto first = std::upper_bound(begin, end, a);
      if (first != begin) --first;
      const auto last = std::upper_bound(first, end, bEnd);
      drawRange(ring.firstIndex[size_t(first - begin)], ring.firstIndex[size_t(last - begin)]);
    };
    if (to - from >= kTwoPi) {
      drawAngles(0, kTwoPi);
    } else if (from < 0) {
      drawAngles(from + kTwoPi, kTwoPi);
      drawAngles(0, to);
    } else if (to > kTwoPi) {
      drawAngles(from, kTwoPi);
      drawAngles(0, to - kTwoPi);
    } else {
      drawAngles(from, to);
    }
  }
}

void TreeRenderer::draw(TreeViewMode mode, const Viewport& v) {
  constexpr Rgba bg = tree_colours::kBackground;
  glViewport(0, 0, v.pixelWidth, v.pixelHeight);
  glClearColor(float(bg.r) / 255, float(bg.g) / 255, float(bg.b) / 255, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  if (!program_) return;
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glUseProgram(program_);
  glUniform2f(centreLocation_, v.centreX, v.centreY);
  glUniform2f(scaleLocation_, 2 * v.pixelsPerUnit / float(v.pixelWidth), -2 * v.pixelsPerUnit / float(v.pixelHeight));
  glUniform1f(pixelsPerUnitLocation_, v.pixelsPerUnit);
  drawnIndices_ = 0;
  drawnLevel_ = -1;
  if (mode == TreeViewMode::Sunburst) {
    // Opaque sectors that meet edge to edge: no blending, which would cost a software renderer a
    // read of every pixel.
    glDisable(GL_BLEND);
    glUniform1f(antialiasLocation_, 0);
    drawSunburst(v);
  } else {
    glEnable(GL_BLEND);
    glUniform1f(antialiasLocation_, 1);
    drawBuffers(modes_[size_t(mode)]);
  }
  // Highlights fade in and out.
  glEnable(GL_BLEND);
  glUniform1f(antialiasLocation_, 1);
  drawBuffers(overlay_);
  // Leave the state a QPainter or Dear ImGui drawing next expects.
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
}

}  // namespace cas::widgets
