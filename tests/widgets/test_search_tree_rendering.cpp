// The search tree drawn with OpenGL on an offscreen surface: a known tree's pixels (sector
// colours by Q, the principal variation's gold outline), the Dear ImGui overlay over it, and the
// 100,000-node tree, uploaded once and drawn frame after frame while zooming in (every node
// drawn, levels of detail, the viewport culling the zoomed frames). No clock is asserted here: a
// busy machine slows any frame; the frame rates are bench/tree_view's (cas-bench-tree-view) and
// the results' (docs/results.md). The frame times are printed for the log.
// Needs an OpenGL context (CTest runs gui suites under Xvfb with Mesa, platform xcb); without one
// every function skips and says why. The widget's own frame rate needs a platform that shows
// OpenGL widgets (xcb, not offscreen).
#include <QElapsedTimer>
#include <QImage>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "widgets/tree/imgui_overlay.hpp"
#include "widgets/tree/search_tree_view.hpp"
#include "widgets/tree/tree_geometry.hpp"
#include "support/offscreen_gl.hpp"
#include "widgets/tree/tree_renderer.hpp"

using cas::train::TreeSnapshot;
using cas::test::OffscreenGl;
using namespace cas::widgets;

namespace {

// `nodes` nodes breadth first, `branching` children per node, every node visited (the worst case
// for drawing: each node is a sector), visits split unevenly among children as a search would.
TreeSnapshot syntheticSnapshot(int nodes, int branching, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0, 1);
  TreeSnapshot s;
  s.environment = "connect4";
  s.cPuct = 1.5f;
  s.nodes.push_back({-1, -1, 4'000'000, 0, 0, 0.05f, 1});
  for (int p = 0; int(s.nodes.size()) < nodes; ++p) {
    const TreeSnapshot::Node parent = s.nodes[size_t(p)];
    const int children = std::min(branching, nodes - int(s.nodes.size()));
    std::vector<float> weight(static_cast<size_t>(children));
    for (float& w : weight) w = std::pow(unit(rng), 3.0f) + 0.01f;
    const float total = std::accumulate(weight.begin(), weight.end(), 0.0f);
    const int share = std::max(children, parent.visits - 1);
    for (int k = 0; k < children; ++k) {
      const int visits = std::max(1, int(float(share - children) * weight[size_t(k)] / total) + 1);
      const float q = std::clamp(-0.6f * parent.q + 0.5f * (unit(rng) - 0.5f), -1.0f, 1.0f);
      s.nodes.push_back({p, k, visits, 0, parent.depth + 1, q, weight[size_t(k)] / total});
    }
  }
  s.treeNodes = nodes;
  return s;
}

TreeSnapshot knownTree() {
  TreeSnapshot s;
  s.environment = "tictactoe";
  s.cPuct = 1.5f;
  s.nodes = {{-1, -1, 10, 0, 0, 0.0f, 1.0f}, {0, 0, 6, 0, 1, 0.9f, 0.5f}, {0, 4, 3, 0, 1, -0.9f, 0.4f}, {1, 1, 5, 0, 2, 0.2f, 0.7f}};
  return s;
}

TreeRenderer::Viewport fit(const TreeLayout& layout, QSize size) {
  return {0, 0, 0.95f * float(std::min(size.width(), size.height())) / 2 / layout.sunburstRadius(), size.width(), size.height()};
}

QColor colourOf(Rgba c) { return QColor(c.r, c.g, c.b); }

bool near(QColor a, QColor b, int tolerance = 12) {
  return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance && std::abs(a.blue() - b.blue()) <= tolerance;
}

}  // namespace

class TestSearchTreeRendering : public QObject {
  Q_OBJECT
 private slots:
  void drawsSectorsColouredByQWithThePrincipalVariationOutlined() {
    const QSize size(400, 400);
    OffscreenGl gl(size);
    if (!gl.problem.isEmpty()) QSKIP(qPrintable(gl.problem));
    TreeRenderer renderer;
    QString error;
    QVERIFY2(renderer.initialize(&error), qPrintable(error));
    const TreeLayout layout(knownTree());
    renderer.upload(CpuTreeGeometry(layout));
    const TreeRenderer::Viewport view = fit(layout, size);
    renderer.draw(TreeViewMode::Sunburst, view);
    gl.context.functions()->glFinish();
    const QImage image = gl.target->toImage();
    auto pixelAt = [&](int node, float radialFraction, float angularFraction) {
      const Sector& s = layout.sector(node);
      const float r = s.inner + (s.outer - s.inner) * radialFraction, a = s.start + s.span * angularFraction;
      return image.pixelColor(int(float(size.width()) / 2 + r * std::sin(a) * view.pixelsPerUnit),
                              int(float(size.height()) / 2 - r * std::cos(a) * view.pixelsPerUnit));
    };
    // Node 2 (Q -0.9, off the principal variation) is red inside; node 1 (Q +0.9, on it) blue
    // tinted gold, with a gold outline at its outer rim.
    QVERIFY2(near(pixelAt(2, 0.5f, 0.5f), colourOf(qColour(-0.9f))), qPrintable(pixelAt(2, 0.5f, 0.5f).name()));
    QVERIFY2(near(pixelAt(1, 0.5f, 0.5f), colourOf(nodeFill(layout, 1))), qPrintable(pixelAt(1, 0.5f, 0.5f).name()));
    QVERIFY2(near(pixelAt(1, 0.995f, 0.5f), colourOf(tree_colours::kPrincipalVariation), 40), qPrintable(pixelAt(1, 0.995f, 0.5f).name()));
    // The remainder of the root's ring (its own evaluation: 1 of 10 visits) is background.
    QVERIFY2(near(pixelAt(2, 0.5f, 1.2f), colourOf(tree_colours::kBackground)), qPrintable(pixelAt(2, 0.5f, 1.2f).name()));
    renderer.release();
  }

  void debugOverlayDrawsOverTheTree() {
    const QSize size(500, 400);
    OffscreenGl gl(size);
    if (!gl.problem.isEmpty()) QSKIP(qPrintable(gl.problem));
    TreeRenderer renderer;
    QString error;
    QVERIFY2(renderer.initialize(&error), qPrintable(error));
    ImGuiOverlay overlay;
    QVERIFY2(overlay.initialize(&error), qPrintable(error));
    renderer.draw(TreeViewMode::Sunburst, {0, 0, 10, size.width(), size.height()});
    const QImage before = gl.target->toImage();
    const std::vector<ImGuiOverlay::Section> sections = {{QStringLiteral("Frame"), {{QStringLiteral("Frame time"), QStringLiteral("4.2 ms")}}}};
    // ImGui sizes an auto-resizing window on its first frame and shows it from the second.
    for (int frame = 0; frame < 2; ++frame) {
      renderer.draw(TreeViewMode::Sunburst, {0, 0, 10, size.width(), size.height()});
      overlay.render(size, 1.0, sections, {4.0f, 4.2f, 4.1f});
    }
    gl.context.functions()->glFinish();
    const QImage after = gl.target->toImage();
    QCOMPARE(gl.context.functions()->glGetError(), GLenum(GL_NO_ERROR));
    int changed = 0;
    for (int y = 0; y < size.height(); y += 4)
      for (int x = 0; x < size.width(); x += 4) changed += before.pixel(x, y) != after.pixel(x, y);
    QVERIFY2(changed > 200, qPrintable(QString::number(changed)));  // the overlay's window
    overlay.release();
    renderer.release();
  }

  void drawsHundredThousandNodesFromOneUpload() {
    const QSize size(1024, 768);
    OffscreenGl gl(size);
    if (!gl.problem.isEmpty()) QSKIP(qPrintable(gl.problem));
    TreeRenderer renderer;
    QString error;
    QVERIFY2(renderer.initialize(&error), qPrintable(error));
    QElapsedTimer clock;
    clock.start();
    const TreeLayout layout(syntheticSnapshot(100'000, 7, 1));
    const CpuTreeGeometry geometry(layout);
    const qint64 buildMs = clock.restart();
    renderer.upload(geometry);
    gl.context.functions()->glFinish();
    const qint64 uploadMs = clock.restart();
    const std::size_t uploadedVertices = renderer.uploaded(TreeViewMode::Sunburst).vertices;
    const std::size_t uploadedIndices = renderer.uploaded(TreeViewMode::Sunburst).indices;
    int drawn = 0;
    for (int i = 0; i < layout.size(); ++i) drawn += layout.sector(i).span > 0;
    QCOMPARE(drawn, 100'000);
    const TreeRenderer::Viewport view = fit(layout, size);
    renderer.draw(TreeViewMode::Sunburst, view);  // warm-up: shader variants, first touch of the buffers
    gl.context.functions()->glFinish();
    auto framesPerSecond = [](int frames, const QElapsedTimer& c) { return frames / (double(c.nsecsElapsed()) / 1e9); };
    constexpr int kWholeFrames = 60;
    clock.restart();
    for (int f = 0; f < kWholeFrames; ++f) {
      renderer.draw(TreeViewMode::Sunburst, view);
      gl.context.functions()->glFinish();
    }
    const double wholeFps = framesPerSecond(kWholeFrames, clock);
    const std::size_t wholeIndices = renderer.drawnIndices();
    constexpr int kFrames = 120;
    clock.restart();
    // From the whole tree to 30 times closer, towards the principal variation's end: every
    // level of detail and the viewport culling take part.
    const QPointF target = [&] {
      const Sector& s = layout.sector(layout.principalVariation().back());
      const float r = (s.inner + s.outer) / 2, a = s.start + s.span / 2;
      return QPointF(r * std::sin(a), -r * std::cos(a));
    }();
    std::size_t mostIndices = 0, closestIndices = 0;
    for (int f = 0; f < kFrames; ++f) {
      const float t = float(f) / (kFrames - 1);
      TreeRenderer::Viewport v = view;
      v.pixelsPerUnit *= std::pow(30.0f, t);
      v.centreX = float(target.x()) * t;
      v.centreY = float(target.y()) * t;
      renderer.draw(TreeViewMode::Sunburst, v);
      gl.context.functions()->glFinish();
      mostIndices = std::max(mostIndices, renderer.drawnIndices());
      closestIndices = renderer.drawnIndices();
    }
    const double zoomFps = framesPerSecond(kFrames, clock);
    const auto counts = renderer.uploaded(TreeViewMode::Sunburst);
    QCOMPARE(gl.context.functions()->glGetError(), GLenum(GL_NO_ERROR));
    qInfo("100000 nodes at %dx%d on %s: whole tree %.1f frames/s (%zu indices a frame), zooming 1x to 30x %.1f frames/s (at most %zu "
          "indices a frame); uploaded once: %zu vertices, %zu indices in %d levels of detail (layout and meshes %lld ms, upload %lld ms)",
          size.width(), size.height(), qPrintable(renderer.description()), wholeFps, wholeIndices, zoomFps, mostIndices, counts.vertices,
          counts.indices, renderer.levels(), buildMs, uploadMs);
    // One upload served every frame: the buffers hold the same meshes, in several levels of
    // detail, and the closest frame draws only what its viewport shows.
    QCOMPARE(counts.vertices, uploadedVertices);
    QCOMPARE(counts.indices, uploadedIndices);
    QVERIFY2(renderer.levels() >= 2, qPrintable(QString::number(renderer.levels())));
    QVERIFY(wholeIndices > 0);
    QVERIFY2(closestIndices > 0 && closestIndices < wholeIndices, qPrintable(QStringLiteral("%1 of %2").arg(closestIndices).arg(wholeIndices)));
    renderer.release();
  }

  // The same tree in the studio's widget: QOpenGLWidget's frame, the labels and legend drawn
  // over it, and the window's composition, on a platform that can show OpenGL widgets (xcb):
  // every requested repaint reaches the screen.
  void searchTreeViewRepaintsHundredThousandNodes() {
    if (const QString reason = openGlWidgetUnavailableReason(); !reason.isEmpty()) QSKIP(qPrintable(reason));
    SearchTreeView view;
    view.resize(1024, 768);
    view.showTree(prepareTree(syntheticSnapshot(100'000, 7, 1)));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy frames(&view, &QOpenGLWidget::frameSwapped);  // after the window's composition
    view.update();
    QVERIFY(frames.wait(5000));  // the first frame uploads the tree
    constexpr int kFrames = 60;
    QElapsedTimer clock;
    clock.start();
    for (int f = 0; f < kFrames; ++f) {
      view.update();
      QVERIFY(frames.wait(5000));
    }
    qInfo("SearchTreeView, 100000 nodes at %dx%d on the %s platform: %.1f frames/s (printed, not asserted)", view.width(), view.height(),
          qPrintable(QGuiApplication::platformName()), kFrames / (double(clock.nsecsElapsed()) / 1e9));
  }
};

QTEST_MAIN(TestSearchTreeRendering)
#include "test_search_tree_rendering.moc"
