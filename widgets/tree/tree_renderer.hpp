#pragma once
// Draws the search-tree meshes (tree_geometry.hpp) with one shader program, GLSL 3.30 core on
// desktop OpenGL or GLSL ES 3.00 on OpenGL ES, so it runs on Mesa's llvmpipe under Xvfb. The
// meshes of a snapshot are uploaded once, through TreeGeometrySource::writeBuffers, into buffers
// that only grow. A sunburst frame picks the level of detail for its zoom and draws, ring by ring,
// the index range of the runs inside the viewport's angles (SunburstIndex), so its cost follows
// what is on screen rather than the tree's size; then the small overlay mesh (hover and teaching
// highlights), which is rewritten whenever the highlights change.
// Outlines are drawn by the fragment shader from TreeVertex::edge, so they stay a fixed number of
// pixels wide at any zoom without new geometry.
// Used by SearchTreeView inside a QOpenGLWidget, and directly on an offscreen surface by tests
// and benchmarks.
// Thread-safety: every call needs the renderer's GL context current on the calling thread.
#include <QOpenGLExtraFunctions>
#include <QString>

#include <array>
#include <cstddef>
#include <cstdint>

#include "widgets/tree/tree_geometry.hpp"

namespace cas::widgets {

class TreeRenderer : protected QOpenGLExtraFunctions {
 public:
  // What the frame shows: the tree point at the centre of the target and the zoom, in device
  // pixels.
  struct Viewport {
    float centreX = 0, centreY = 0;
    float pixelsPerUnit = 1;
    int pixelWidth = 1, pixelHeight = 1;
  };

  TreeRenderer() = default;
  TreeRenderer(const TreeRenderer&) = delete;
  TreeRenderer& operator=(const TreeRenderer&) = delete;
  // GL objects are freed by release(), which needs the context; a renderer destroyed without it
  // leaves them to the context's own destruction.
  ~TreeRenderer() = default;

  // Compiles the program and creates the buffers; false with a sentence in `error` when the
  // context cannot run the shaders (desktop OpenGL before 3.3, OpenGL ES before 3.0).
  bool initialize(QString* error);
  bool initialized() const { return program_ != 0; }
  void release();

  // Both modes' meshes of a new snapshot. False when the source had nothing to write any more
  // (TreeGeometrySource::writeBuffers): then nothing is drawn until the next upload.
  bool upload(const TreeGeometrySource& source);
  void setOverlay(const TreeMesh& overlay);
  // Clears to the background colour and draws `mode`'s mesh, then the overlay, into the bound
  // framebuffer.
  void draw(TreeViewMode mode, const Viewport& viewport);

  TreeGeometrySource::Counts uploaded(TreeViewMode mode) const;
  // What the last draw() drew: indices and, for the sunburst, the level of detail (0 coarsest).
  std::size_t drawnIndices() const { return drawnIndices_; }
  int drawnLevel() const { return drawnLevel_; }
  int levels() const { return int(sunburstIndex_.levels.size()); }
  // "4.5 (Core Profile) Mesa 22.3.6" (GL_VERSION) and "llvmpipe (LLVM 15.0.6, 256 bits)" (GL_RENDERER),
  // and both as "VERSION — RENDERER"
  QString glVersion() const { return glVersion_; }
  QString rendererName() const { return rendererName_; }
  QString description() const { return glVersion_ + QStringLiteral(" — ") + rendererName_; }

 private:
  struct Buffers {
    unsigned vertexArray = 0, vertices = 0, indices = 0;
    std::size_t vertexCapacity = 0, indexCapacity = 0;  // records the buffers can hold
    TreeGeometrySource::Counts used;
  };
  void createBuffers(Buffers& b);
  // Grows b's buffers to hold `counts`; leaves b's vertex array bound.
  void reserve(Buffers& b, TreeGeometrySource::Counts counts);
  void drawBuffers(const Buffers& b);
  void drawSunburst(const Viewport& v);
  void drawRange(std::uint32_t firstIndex, std::uint32_t endIndex);

  unsigned program_ = 0;
  int centreLocation_ = -1, scaleLocation_ = -1, pixelsPerUnitLocation_ = -1, antialiasLocation_ = -1;
  std::array<Buffers, 2> modes_;  // indexed by TreeViewMode
  Buffers overlay_;
  SunburstIndex sunburstIndex_;
  std::size_t drawnIndices_ = 0;
  int drawnLevel_ = -1;
  QString glVersion_, rendererName_;
};

}  // namespace cas::widgets
