// The device sunburst's steps (gpu/search/tree_geometry.cuh) run on the host over a CPU search's
// tree, level by level as tree_geometry.cu's kernels run them, against the studio's own layout of
// the same tree's snapshot (widgets/tree_geometry.cpp's exact sunburst mesh): on the host both
// compute the same bits, so the vertices and indices must be equal, for whole trees and for
// snapshots cut at a node budget. tests/gpu/test_tree_interop.cpp checks the kernels on the device.
#include <QTest>

#include <numeric>

#include "core/exec/backend.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/self_play.hpp"
#include "gpu/search/tree_geometry.cuh"
#include "widgets/tree_geometry.hpp"

using namespace cas;

namespace {

// search::Tree's fields as the steps read them.
struct HostTree {
  const search::Tree& t;
  int visits(std::int32_t s) const { return t.visits[size_t(s)]; }
  float valueSum(std::int32_t s) const { return t.valueSum[size_t(s)]; }
  std::int32_t firstChild(std::int32_t s) const { return t.firstChild[size_t(s)]; }
  int childCount(std::int32_t s) const { return t.childCount[size_t(s)]; }
};

struct HostNodes {
  std::vector<std::int32_t> slot, parent, depth, firstChild, childCount, visits;
  std::vector<float> start, span, q;
  std::vector<std::uint8_t> principal;
  explicit HostNodes(int capacity)
      : slot(size_t(capacity)), parent(size_t(capacity)), depth(size_t(capacity)), firstChild(size_t(capacity)), childCount(size_t(capacity)),
        visits(size_t(capacity)), start(size_t(capacity)), span(size_t(capacity)), q(size_t(capacity)), principal(size_t(capacity)) {}
  gpu::search::SunburstNodes view() {
    return {slot.data(), parent.data(), depth.data(), firstChild.data(), childCount.data(), visits.data(), start.data(), span.data(), q.data(), principal.data()};
  }
};

// The kernels' schedule on the host: levels, the principal variation, the mesh.
widgets::TreeMesh deviceSteps(const search::Tree& tree, int maxNodes) {
  HostTree t{tree};
  HostNodes nodes(maxNodes);
  const gpu::search::SunburstNodes n = nodes.view();
  gpu::search::placeRoot(t, n);
  int begin = 0, end = 1;
  while (end > begin && end < maxNodes) {
    std::vector<std::int32_t> first(size_t(end - begin));
    std::int32_t total = 0;
    for (int p = begin; p < end; ++p) {  // the scan of childrenOf
      first[size_t(p - begin)] = end + total;
      total += gpu::search::childrenOf(t, n.slot[p]);
    }
    for (int p = begin; p < end; ++p) gpu::search::placeChildren(t, n, p, first[size_t(p - begin)], maxNodes);
    begin = end;
    end = std::min(end + total, maxNodes);
  }
  const int count = end;
  gpu::search::markPrincipalVariation(n);
  widgets::TreeMesh mesh;
  std::vector<std::uint32_t> firstVertex(static_cast<size_t>(count)), firstIndex(static_cast<size_t>(count));
  std::uint32_t vertices = 0, indices = 0;
  for (int i = 0; i < count; ++i) {
    firstVertex[size_t(i)] = vertices;
    firstIndex[size_t(i)] = indices;
    vertices += std::uint32_t(gpu::search::nodeVertices(n, i));
    indices += std::uint32_t(gpu::search::nodeIndices(n, i));
  }
  mesh.vertices.resize(vertices);
  mesh.indices.resize(indices);
  for (int i = 0; i < count; ++i) gpu::search::writeNodeSector(n, i, mesh.vertices.data(), mesh.indices.data(), firstVertex[size_t(i)], firstIndex[size_t(i)]);
  return mesh;
}

QString meshDifference(const widgets::TreeMesh& got, const widgets::TreeMesh& want) {
  if (got.vertices.size() != want.vertices.size() || got.indices.size() != want.indices.size())
    return QStringLiteral("%1 vertices and %2 indices, the studio's mesh %3 and %4")
        .arg(got.vertices.size()).arg(got.indices.size()).arg(want.vertices.size()).arg(want.indices.size());
  for (size_t i = 0; i < got.vertices.size(); ++i)
    if (std::memcmp(&got.vertices[i], &want.vertices[i], sizeof(widgets::TreeVertex)) != 0)
      return QStringLiteral("vertex %1: (%2, %3), the studio's (%4, %5)").arg(i).arg(got.vertices[i].x).arg(got.vertices[i].y)
          .arg(want.vertices[i].x).arg(want.vertices[i].y);
  if (got.indices != want.indices) return QStringLiteral("the indices differ");
  return {};
}

}  // namespace

class TestTreeGeometryPort : public QObject {
  Q_OBJECT
 private slots:
  void stepsGiveTheStudiosMesh_data() {
    QTest::addColumn<QString>("environment");
    QTest::addColumn<int>("simulations");
    QTest::addColumn<int>("maxNodes");
    QTest::newRow("tictactoe 50") << QStringLiteral("tictactoe") << 50 << 100000;
    QTest::newRow("tictactoe 2000") << QStringLiteral("tictactoe") << 2000 << 100000;
    QTest::newRow("connect4 3000") << QStringLiteral("connect4") << 3000 << 100000;
    QTest::newRow("connect4 3000, cut at 1000 nodes") << QStringLiteral("connect4") << 3000 << 1000;
    QTest::newRow("connect4 3000, cut at 10 nodes") << QStringLiteral("connect4") << 3000 << 10;
  }
  void stepsGiveTheStudiosMesh() {
    QFETCH(QString, environment);
    QFETCH(int, simulations);
    QFETCH(int, maxNodes);
    search::SearchSetup setup;
    setup.environment = environment.toStdString();
    setup.config.simulations = simulations;
    setup.config.nodeBudget = 200000;
    setup.evaluator.kind = search::LeafEvaluator::Kind::Hashed;
    auto backend = exec::makeCpuBackend();
    std::string note;
    train::SelfPlay selfPlay(search::makeSearch(*backend, setup, "cpu", &note), 1, 64);
    selfPlay.search().search({0}, simulations);
    const widgets::TreeLayout layout(selfPlay.snapshot(0, maxNodes));
    QVERIFY(layout.size() > 1);
    const widgets::TreeMesh want = widgets::buildSunburstMesh(layout);
    const widgets::TreeMesh got = deviceSteps(selfPlay.search().treeSnapshot(0), maxNodes);
    const QString difference = meshDifference(got, want);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
    qInfo("%d nodes: %zu vertices, %zu indices", layout.size(), got.vertices.size(), got.indices.size());
  }
};

QTEST_GUILESS_MAIN(TestTreeGeometryPort)
#include "test_tree_geometry_port.moc"
