// The device sunburst's steps (gpu/search/tree_geometry.cuh) run on the host over a CPU search's
// tree, level by level as tree_geometry.cu's kernels run them, against the studio's own layout of
// the same tree's snapshot (widgets/tree/tree_geometry.cpp's exact sunburst mesh): on the host both
// compute the same bits, so the vertices and indices must be equal, for whole trees and for
// snapshots cut at a node budget. tests/gpu/test_tree_interop.cpp checks the kernels on the device.
#include <QTest>

#include <numeric>

#include "core/exec/backend.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/self_play.hpp"
#include "support/sunburst_host.hpp"
#include "widgets/tree/tree_geometry.hpp"

using namespace cas;

namespace {

QString meshDifference(const test::HostMesh& got, const widgets::TreeMesh& want) {
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
    const test::HostMesh got = test::sunburstOnHost(selfPlay.search().treeSnapshot(0), maxNodes);
    const QString difference = meshDifference(got, want);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
    qInfo("%d nodes: %zu vertices, %zu indices", layout.size(), got.vertices.size(), got.indices.size());
  }
};

QTEST_GUILESS_MAIN(TestTreeGeometryPort)
#include "test_tree_geometry_port.moc"
