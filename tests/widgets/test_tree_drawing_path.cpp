// The search tree's two drawing paths, here without a GPU: the CUDA-GL interop path reached
// through search::DeviceSunburst (DeviceTreeGeometry, InteropProbe, the view's choice) and the
// host snapshot path it falls back to. A host double of DeviceSunburst stands in for the device:
// it writes the studio's exact sunburst mesh (which test_tree_geometry_port and test_tree_interop
// hold the device kernels to, bit for bit) into the GL buffers it is given, says whether the GL
// context runs "on its device" as told, can be made to have laid out a newer tree, or to fail.
// Checked: the interop source draws the same pixels as the host meshes; the view names the path
// in one sentence for each case (interop, a context on another renderer, a superseded layout, a
// failed write, a search without device trees) and draws the device's node count only on the
// interop path; a failed write is not tried again for the same run.
// Needs an OpenGL context (CTest runs gui suites under Xvfb with Mesa); skips and says why without.
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>
#include <QSignalSpy>
#include <QTest>

#include <memory>
#include <stdexcept>

#include "widgets/tree/device_tree_geometry.hpp"
#include "widgets/tree/search_tree_view.hpp"
#include "support/offscreen_gl.hpp"
#include "widgets/tree/tree_renderer.hpp"

using cas::train::TreeSnapshot;
using cas::test::OffscreenGl;
using namespace cas::widgets;

namespace {

// Breadth first, `branching` children per node, visits split unevenly, every node visited.
TreeSnapshot tree(int nodes, int branching) {
  TreeSnapshot s;
  s.environment = "connect4";
  s.cPuct = 1.5f;
  s.nodes.push_back({-1, -1, 100000, 0, 0, 0.1f, 1});
  for (int p = 0; int(s.nodes.size()) < nodes; ++p) {
    const TreeSnapshot::Node parent = s.nodes[size_t(p)];
    const int children = std::min(branching, nodes - int(s.nodes.size()));
    int left = parent.visits - 1;
    for (int k = 0; k < children; ++k) {
      const int visits = std::max(1, k + 1 < children ? left / 2 : left);
      left = std::max(1, left - visits);
      s.nodes.push_back({p, k, visits, 0, parent.depth + 1, float((p * 7 + k * 3) % 11) / 5.5f - 1, 1.0f / float(children)});
    }
  }
  s.treeNodes = nodes;
  s.treeCapacity = 4 * nodes;
  return s;
}

// The first `n` nodes of a breadth-first snapshot: what the host snapshot holds of a tree the
// device laid out further.
TreeSnapshot cut(TreeSnapshot s, int n) {
  s.nodes.resize(size_t(n));
  return s;
}

// DeviceSunburst on the host: the studio's exact sunburst of `full`, written with glBufferSubData.
class HostSunburst final : public cas::search::DeviceSunburst {
 public:
  explicit HostSunburst(const TreeSnapshot& full) : mesh_(buildSunburstMesh(TreeLayout(full))), nodes_(std::int64_t(full.nodes.size())) {}

  bool onDevice = true;
  bool failWrites = false;
  int probes = 0, writes = 0, forgotten = 0;

  bool glContextOnDevice(std::string* why) override {
    ++probes;
    if (!onDevice && why) *why = "the OpenGL context runs on another GPU than the search";
    return onDevice;
  }
  Counts layOut(int, int) override { return {nodes_, std::int64_t(mesh_.vertices.size()), std::int64_t(mesh_.indices.size()), ++generation_}; }
  bool writeGlBuffers(std::uint64_t generation, unsigned vertexBuffer, std::int64_t vertexBytes, unsigned indexBuffer, std::int64_t indexBytes) override {
    if (generation != generation_) return false;
    ++writes;
    if (failWrites) throw std::runtime_error("cuGraphicsGLRegisterBuffer: operation not supported");
    const auto needVertices = std::int64_t(mesh_.vertices.size() * sizeof(cas::search::mesh::TreeVertex));
    const auto needIndices = std::int64_t(mesh_.indices.size() * sizeof(std::uint32_t));
    if (vertexBytes < needVertices || indexBytes < needIndices) throw std::runtime_error("the OpenGL buffers are smaller than the tree's mesh");
    QOpenGLFunctions* gl = QOpenGLContext::currentContext()->functions();
    gl->glBindBuffer(GL_ARRAY_BUFFER, vertexBuffer);
    gl->glBufferSubData(GL_ARRAY_BUFFER, 0, needVertices, mesh_.vertices.data());
    gl->glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, indexBuffer);
    gl->glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, needIndices, mesh_.indices.data());
    return true;
  }
  void forgetGlBuffers() override { ++forgotten; }
  void readMesh(std::vector<cas::search::mesh::TreeVertex>* vertices, std::vector<std::uint32_t>* indices) override {
    *vertices = mesh_.vertices;
    *indices = mesh_.indices;
  }
  Timing timing() const override { return {0.5, 0.25, 0.125}; }

 private:
  TreeMesh mesh_;
  std::int64_t nodes_;
  std::uint64_t generation_ = 0;
};

// A snapshot as the engine delivers it with a device layout: `hostNodes` of `full` in the host
// snapshot, all of it laid out by `sunburst`.
TreeSnapshot withDeviceLayout(const TreeSnapshot& full, int hostNodes, const std::shared_ptr<HostSunburst>& sunburst) {
  TreeSnapshot s = cut(full, hostNodes);
  s.deviceCounts = sunburst->layOut(0, int(full.nodes.size()));
  s.deviceSunburst = sunburst;
  return s;
}

QImage drawn(TreeRenderer& renderer, const TreeLayout& layout, OffscreenGl& gl, QSize size) {
  const float ppu = 0.95f * float(std::min(size.width(), size.height())) / 2 / layout.sunburstRadius();
  renderer.draw(TreeViewMode::Sunburst, {0, 0, ppu, size.width(), size.height()});
  gl.context.functions()->glFinish();
  return gl.target->toImage();
}

}  // namespace

class TestTreeDrawingPath : public QObject {
  Q_OBJECT
 private slots:
  // The interop source's buffers draw what the host's meshes draw, and a superseded layout
  // writes nothing.
  void interopSourceDrawsTheHostPicture() {
    const QSize size(360, 360);
    OffscreenGl gl(size);
    if (!gl.problem.isEmpty()) QSKIP(qPrintable(gl.problem));
    TreeRenderer renderer;
    QString error;
    QVERIFY2(renderer.initialize(&error), qPrintable(error));
    const TreeSnapshot full = tree(400, 4);
    auto sunburst = std::make_shared<HostSunburst>(full);
    const TreeLayout layout(full);
    auto host = std::make_shared<const CpuTreeGeometry>(layout);

    QVERIFY(renderer.upload(*host));
    const QImage reference = drawn(renderer, layout, gl, size);
    const DeviceTreeGeometry device(sunburst, sunburst->layOut(0, 400), host);
    QVERIFY(renderer.upload(device));
    QCOMPARE(renderer.uploaded(TreeViewMode::Sunburst).indices, std::size_t(device.deviceCounts().indices));
    const QImage viaDevice = drawn(renderer, layout, gl, size);
    // The device mesh is the host's finest level of detail, which the host path draws at this
    // size: the same pixels.
    int differ = 0;
    for (int y = 0; y < size.height(); ++y)
      for (int x = 0; x < size.width(); ++x) differ += reference.pixel(x, y) != viaDevice.pixel(x, y);
    qInfo("%d of %d pixels differ between the host meshes and the interop source", differ, size.width() * size.height());
    QCOMPARE(differ, 0);

    // A newer layout replaced this one: nothing is written and nothing drawn from it.
    sunburst->layOut(0, 400);
    const int writes = sunburst->writes;
    QVERIFY(!renderer.upload(device));
    QCOMPARE(sunburst->writes, writes);
    QCOMPARE(renderer.uploaded(TreeViewMode::Sunburst).indices, std::size_t(0));
    renderer.release();
  }

  void probeAsksOncePerSunburstAndNamesTheRenderer() {
    auto sunburst = std::make_shared<HostSunburst>(tree(20, 3));
    sunburst->onDevice = false;
    InteropProbe probe;
    QString sentence;
    QVERIFY(!probe.usable(sunburst, QStringLiteral("llvmpipe (LLVM 15.0.6, 256 bits)"), &sentence));
    QVERIFY(!probe.usable(sunburst, QStringLiteral("llvmpipe (LLVM 15.0.6, 256 bits)"), &sentence));
    QCOMPARE(sunburst->probes, 1);
    QVERIFY2(sentence.startsWith(QStringLiteral("Drawn from a host snapshot:")) && sentence.contains(QStringLiteral("llvmpipe")), qPrintable(sentence));
    probe.forget();  // a new GL context
    sunburst->onDevice = true;
    QVERIFY(probe.usable(sunburst, QString(), &sentence));
    QCOMPARE(sunburst->probes, 2);
    // The engine's message when laying the tree out failed reaches the sentence.
    QVERIFY(hostPathSentence(noDeviceTreeReason("CUDA_ERROR_OUT_OF_MEMORY")).contains(QStringLiteral("CUDA_ERROR_OUT_OF_MEMORY")));
  }

  // The view itself, on a platform that shows OpenGL widgets: which path drew each snapshot, in
  // one sentence, and how many nodes.
  void viewNamesItsPathForEachCase() {
    if (const QString reason = openGlWidgetUnavailableReason(); !reason.isEmpty()) QSKIP(qPrintable(reason));
    auto view = std::make_unique<SearchTreeView>();
    checkPaths(*view);
    if (QTest::currentTestFailed()) return;
    // The view's GL context goes with it: the sunburst that wrote into its buffers forgets them
    // first (a later buffer could get the same name).
    auto sunburst = lastWriter_;
    const int before = sunburst->forgotten;
    view.reset();
    QCOMPARE(sunburst->forgotten, before + 1);
  }

 private:
  std::shared_ptr<HostSunburst> lastWriter_;

  void checkPaths(SearchTreeView& view) {
    view.resize(480, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy frames(&view, &QOpenGLWidget::frameSwapped);
    auto show = [&](TreeSnapshot s) {
      view.showTree(prepareTree(std::move(s)));
      view.update();
      QVERIFY(frames.wait(5000));
    };
    const TreeSnapshot full = tree(3000, 5);

    // No device layout: the search keeps its trees on the host.
    show(cut(full, 500));
    QVERIFY(!view.drawingPath().interop);
    QCOMPARE(view.drawingPath().sentence, QStringLiteral("Drawn from a host snapshot: the search keeps its trees in host memory."));
    QCOMPARE(view.drawnNodes(), qint64(500));

    // A device layout this context can take: 3000 nodes drawn, 500 of them in the host snapshot.
    auto sunburst = std::make_shared<HostSunburst>(full);
    show(withDeviceLayout(full, 500, sunburst));
    QVERIFY2(view.drawingPath().interop, qPrintable(view.drawingPath().sentence));
    QVERIFY2(view.drawingPath().sentence.startsWith(QStringLiteral("Drawn from device memory through CUDA-GL interop: 3,000 nodes")),
             qPrintable(view.drawingPath().sentence));
    QCOMPARE(view.drawnNodes(), qint64(3000));
    QCOMPARE(sunburst->writes, 1);
    lastWriter_ = sunburst;

    // The engine laid out a newer tree before this one reached the screen: the host's meshes.
    TreeSnapshot stale = withDeviceLayout(full, 500, sunburst);
    sunburst->layOut(0, 3000);
    show(stale);
    QVERIFY(!view.drawingPath().interop);
    QCOMPARE(view.drawingPath().sentence, QStringLiteral("Drawn from a host snapshot: the device had already laid out a newer tree."));
    QCOMPARE(view.drawnNodes(), qint64(500));

    // A write that fails: said once, and not tried again for the same sunburst.
    sunburst->failWrites = true;
    show(withDeviceLayout(full, 500, sunburst));
    QVERIFY(!view.drawingPath().interop);
    QVERIFY2(view.drawingPath().sentence.contains(QStringLiteral("CUDA could not write the OpenGL buffers (cuGraphicsGLRegisterBuffer")),
             qPrintable(view.drawingPath().sentence));
    QVERIFY(view.interopRefused());  // the panel stops asking for device layouts
    const int writes = sunburst->writes;
    show(withDeviceLayout(full, 500, sunburst));
    QCOMPARE(sunburst->writes, writes);
    QVERIFY(view.drawingPath().sentence.contains(QStringLiteral("CUDA could not write")));
    show(cut(full, 500));  // without a device layout the reason is still the refusal
    QVERIFY(view.drawingPath().sentence.contains(QStringLiteral("CUDA could not write")));
    view.resetInterop();  // a new run
    QVERIFY(!view.interopRefused());

    // A GL context that no CUDA device runs (Mesa here): the probe's sentence names the renderer.
    auto elsewhere = std::make_shared<HostSunburst>(full);
    elsewhere->onDevice = false;
    show(withDeviceLayout(full, 500, elsewhere));
    QVERIFY(!view.drawingPath().interop);
    QVERIFY2(view.drawingPath().sentence.contains(QStringLiteral("does not run on the CUDA device that holds the tree")),
             qPrintable(view.drawingPath().sentence));
    QCOMPARE(elsewhere->writes, 0);
    QVERIFY(view.interopRefused());
  }
};

QTEST_MAIN(TestTreeDrawingPath)
#include "test_tree_drawing_path.moc"
