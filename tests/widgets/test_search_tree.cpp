// The search-tree view's behaviour, none of it needing OpenGL (it passes on the offscreen platform
// too, where the view stays unshown): the sunburst and node-link layouts of a known
// tree (angles proportional to visits, the principal variation), its meshes and levels of
// detail, hit testing, the moves and PUCT terms of a node, a click emitting the node's position,
// pan and zoom, a fit that keeps the tree clear of the legend and the teaching caption, one
// simulation's trace and its animation, the panel's background builds, a
// live tic-tac-toe run: throttled snapshots, then teaching mode stepping the paused run, and
// teaching mode on the position the Board shows, grown by the Board's agent.
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <cmath>
#include <numbers>

#include "core/engine/run_folder.hpp"
#include "core/env/board_position.hpp"
#include "core/train/alphazero.hpp"
#include "widgets/board/board_view.hpp"
#include "widgets/board/play_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/runs/run_controller.hpp"
#include "widgets/translations.hpp"
#include "widgets/tree/search_tree_view.hpp"
#include "widgets/tree/tree_geometry.hpp"
#include "support/source_dir.hpp"

using cas::train::TreeSnapshot;
using namespace cas::widgets;

namespace {

constexpr float kTwoPi = 2 * std::numbers::pi_v<float>;

// root N 10: A (move 0) N 6 with children A1 (move 1) N 4 and A2 (move 2) N 1; B (move 4) N 3;
// C (move 8) never visited. The game reached the root by moves 4 then 0.
TreeSnapshot knownTree() {
  TreeSnapshot s;
  s.environment = "tictactoe";
  s.board = "X X 3\n4 O 6\n7 8 9";
  s.rootMoves = {4, 0};
  s.cPuct = 1.5f;
  s.treeNodes = 6;
  s.treeCapacity = 64;
  s.nodes = {{-1, -1, 10, 0, 0, 0.1f, 1.0f}, {0, 0, 6, 0, 1, 0.5f, 0.5f},  {0, 4, 3, 0, 1, -0.2f, 0.3f},
             {0, 8, 0, 0, 1, 0.0f, 0.2f},    {1, 1, 4, 0, 2, 0.25f, 0.7f}, {1, 2, 1, 0, 2, 0.1f, 0.3f}};
  return s;
}

// The known tree one simulation later: root, A and A2 visited once more; A2 expanded (moves 3
// and 5) and its value -0.6 backed up (A2's sum goes from 0.1 to -0.5).
TreeSnapshot knownTreeAfterOneSimulation() {
  TreeSnapshot s = knownTree();
  s.nodes[0].visits = 11;
  s.nodes[1].visits = 7;
  s.nodes[5].visits = 2;
  s.nodes[5].q = -0.25f;
  s.nodes.push_back({5, 3, 0, 0, 3, 0.0f, 0.6f});
  s.nodes.push_back({5, 5, 0, 0, 3, 0.0f, 0.4f});
  return s;
}

QPointF polar(float r, float angle) { return {r * std::sin(angle), -r * std::cos(angle)}; }
QPointF middleOf(const Sector& s) { return polar((s.inner + s.outer) / 2, s.start + s.span / 2); }

QString quickProject(const QTemporaryDir& dir) {
  const QString folder = dir.filePath(QStringLiteral("ttt"));
  QDir().mkpath(folder);
  QFile::copy(cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero/policy.pdl")), folder + QStringLiteral("/policy.pdl"));
  QFile toml(folder + QStringLiteral("/project.toml"));
  if (!toml.open(QIODevice::WriteOnly)) return {};
  toml.write("name = \"ttt-tree\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n"
             "[search]\nsimulations = 32\n[train]\nparallel_games = 8\ngames_per_iteration = 8\nbatch_size = 32\n"
             "steps_per_iteration = 2\neval_every = 1000\n");
  return folder;
}

// The actions of the root's children in a snapshot, in ascending order.
std::vector<int> rootChildren(const TreeSnapshot& s) {
  std::vector<int> actions;
  for (const TreeSnapshot::Node& n : s.nodes)
    if (n.parent == 0) actions.push_back(n.action);
  std::sort(actions.begin(), actions.end());
  return actions;
}

// The legal moves after `moves` in tic-tac-toe, in ascending order.
std::vector<int> legalMoves(const std::vector<int>& moves) {
  std::string error;
  const auto position = cas::env::describePosition("tictactoe", moves, &error);
  std::vector<int> legal;
  for (int a = 0; position && a < int(position->legal.size()); ++a)
    if (position->legal[size_t(a)]) legal.push_back(a);
  return legal;
}

}  // namespace

class TestSearchTree : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_search_tree"));
    // As the studio starts: English with its plural forms ("1 visit", "4 visits").
    QCOMPARE(cas::widgets::installTranslations(*QCoreApplication::instance(), QStringLiteral("en")), QStringLiteral("en"));
  }

  void sunburstAnglesAreProportionalToVisits() {
    const TreeLayout l(knownTree());
    QCOMPARE(l.size(), 6);
    QCOMPARE(l.maxDepth(), 2);
    QCOMPARE(l.sector(0).span, kTwoPi);
    QCOMPARE(l.sector(0).outer, TreeLayout::kRootRadius);
    // Every visited node's angle over its visits is the same: 2 pi / N(root).
    for (int i = 1; i < l.size(); ++i) QVERIFY(std::abs(l.sector(i).span - kTwoPi * float(l.node(i).visits) / 10) < 1e-5f);
    // Children follow each other clockwise inside their parent, in snapshot order.
    QCOMPARE(l.sector(1).start, 0.0f);
    QVERIFY(std::abs(l.sector(2).start - kTwoPi * 0.6f) < 1e-5f);
    QCOMPARE(l.sector(3).span, 0.0f);
    QCOMPARE(l.sector(4).start, l.sector(1).start);
    QVERIFY(std::abs(l.sector(5).start - (l.sector(4).start + l.sector(4).span)) < 1e-5f);
    // Rings by depth.
    QCOMPARE(l.sector(1).inner, 0.5f);
    QCOMPARE(l.sector(1).outer, 1.5f);
    QCOMPARE(l.sector(5).inner, 1.5f);
    QCOMPARE(l.sector(5).outer, 2.5f);
    QCOMPARE(l.sunburstRadius(), 2.5f);
  }

  void principalVariationIsTheMostVisitedPath() {
    const TreeLayout l(knownTree());
    QCOMPARE(l.principalVariation(), (std::vector<int>{0, 1, 4}));
    QVERIFY(l.onPrincipalVariation(4));
    QVERIFY(!l.onPrincipalVariation(2));
    QVERIFY(!l.onPrincipalVariation(5));
  }

  void meshesDrawVisitedNodesAndOutlineThePrincipalVariation() {
    const TreeLayout l(knownTree());
    const TreeMesh mesh = buildSunburstMesh(l);
    QVERIFY(!mesh.indices.empty());
    QCOMPARE(mesh.indices.size() % 3, size_t(0));
    for (std::uint32_t i : mesh.indices) QVERIFY(i < mesh.vertices.size());
    int gold = 0;
    for (const TreeVertex& v : mesh.vertices) {
      QVERIFY(std::hypot(v.x, v.y) <= 2.5f + 1e-4f);
      QVERIFY(!(v.fill[0] == tree_colours::kUnvisited.r && v.fill[1] == tree_colours::kUnvisited.g));  // C has no sector
      gold += v.outline[0] == tree_colours::kPrincipalVariation.r && v.outline[1] == tree_colours::kPrincipalVariation.g;
    }
    QVERIFY(gold > 0);
    // A PV sector's vertices carry the gold outline and a gold-tinted fill; B's carry Q's colour.
    const Rgba b = qColour(-0.2f);
    QVERIFY(std::any_of(mesh.vertices.begin(), mesh.vertices.end(), [&](const TreeVertex& v) { return v.fill[0] == b.r && v.fill[1] == b.g && v.fill[2] == b.b; }));
    // Q's diverging colours: red for -1, blue for +1, grey at 0.
    QVERIFY(qColour(-1).r > 150 && qColour(-1).b < 80);
    QVERIFY(qColour(1).b > 150 && qColour(1).r < 80);
    QVERIFY(qColour(0).r == qColour(0).b);

    // A small tree has just the exact level: one run per visited sector, clockwise.
    const CpuTreeGeometry geometry(l);
    const SunburstIndex& index = geometry.sunburstIndex();
    QCOMPARE(index.levels.size(), size_t(1));
    QCOMPARE(index.levels[0].rings.size(), size_t(3));
    QCOMPARE(index.levels[0].rings[1].starts.size(), size_t(2));  // A and B
    QCOMPARE(index.levels[0].rings[1].firstIndex.size(), size_t(3));
    QCOMPARE(std::size_t(index.levels[0].rings.back().firstIndex.back()), geometry.counts(TreeViewMode::Sunburst).indices);
    QVERIFY(geometry.counts(TreeViewMode::NodeLink).indices > 0);
  }

  void levelsOfDetailMergeNarrowSectors() {
    // 9 children a node, visits split evenly, 4 full levels: the 6561 leaves are thin.
    TreeSnapshot s;
    s.nodes.push_back({-1, -1, 9 * 9 * 9 * 9 * 10, 0, 0, 0, 1});
    for (int p = 0; s.nodes.size() < 1 + 9 + 81 + 729 + 6561; ++p)
      for (int k = 0; k < 9; ++k) s.nodes.push_back({p, k, s.nodes[size_t(p)].visits / 9 - 1, 0, s.nodes[size_t(p)].depth + 1, 0.1f * float(k - 4), 1.0f / 9});
    const TreeLayout l(s);
    const CpuTreeGeometry geometry(l);
    const SunburstIndex& index = geometry.sunburstIndex();
    QVERIFY2(index.levels.size() >= 2, qPrintable(QString::number(index.levels.size())));
    auto runs = [](const SunburstIndex::Level& level) {
      size_t n = 0;
      for (const auto& r : level.rings) n += r.starts.size();
      return n;
    };
    QCOMPARE(runs(index.levels.back()), size_t(l.size()));  // exact: every sector
    QCOMPARE(index.levels.back().minArc, 0.0f);
    for (size_t k = 0; k + 1 < index.levels.size(); ++k) {
      QVERIFY(runs(index.levels[k]) * 3 <= size_t(l.size()));
      QVERIFY(index.levels[k].minArc > index.levels[k + 1].minArc);
    }
    for (const auto& level : index.levels)
      for (const auto& ring : level.rings) {
        QVERIFY(std::is_sorted(ring.starts.begin(), ring.starts.end()));
        QVERIFY(std::is_sorted(ring.firstIndex.begin(), ring.firstIndex.end()));
      }
  }

  void hitTestingFindsTheNodeUnderAPoint() {
    const TreeLayout l(knownTree());
    auto at = [&](QPointF p) { return l.sunburstNodeAt(float(p.x()), float(p.y())); };
    QCOMPARE(at({0, 0}), 0);
    QCOMPARE(at({0.2, -0.1}), 0);
    QCOMPARE(at(middleOf(l.sector(1))), 1);
    QCOMPARE(at(middleOf(l.sector(2))), 2);
    QCOMPARE(at(middleOf(l.sector(4))), 4);
    QCOMPARE(at(middleOf(l.sector(5))), 5);
    QCOMPARE(at(polar(1.0f, kTwoPi * 0.95f)), -1);  // the root's own evaluation: 1 of its 10 visits
    QCOMPARE(at(polar(2.0f, l.sector(2).start + 0.1f)), -1);  // below B, which has no children
    QCOMPARE(at(polar(3.0f, 0.3f)), -1);                        // outside the tree
    // Sector edges: the first angle belongs to the sector, its end to the next one.
    QCOMPARE(at(polar(1.0f, l.sector(2).start + 1e-4f)), 2);
    QCOMPARE(at(polar(1.0f, l.sector(2).start - 1e-4f)), 1);
  }

  void nodeLinkLayoutShowsTheTopLevels() {
    const TreeLayout l(knownTree());
    // Every child of the root (C, never visited, too), the visited ones below.
    QCOMPARE(l.linkNodes().size(), size_t(6));
    for (int i = 0; i < l.size(); ++i) QVERIFY(l.linkSlot(i) >= 0);
    const auto& nodes = l.linkNodes();
    auto link = [&](int node) { return nodes[size_t(l.linkSlot(node))]; };
    QCOMPARE(link(4).x + 1, link(5).x);                      // leaves one unit apart
    QCOMPARE(link(1).x, (link(4).x + link(5).x) / 2);        // parents centred over their children
    QCOMPARE(link(5).y, 2 * TreeLayout::kLevelSpacing);
    QVERIFY(link(1).radius > link(2).radius);                // more visits, a larger disc
    QCOMPARE(l.linkNodeAt(link(5).x, link(5).y), 5);
    QCOMPARE(l.linkNodeAt(link(5).x + 0.5f, link(5).y + 0.8f), -1);
  }

  void movesAndExplorationTermOfANode() {
    const TreeLayout l(knownTree());
    QCOMPARE(l.pathTo(5), (std::vector<int>{0, 1, 5}));
    QCOMPARE(l.movesFromRoot(5), (std::vector<int>{0, 2}));
    QCOMPARE(l.movesFromStart(5), (std::vector<int>{4, 0, 0, 2}));
    QCOMPARE(l.movesFromStart(0), (std::vector<int>{4, 0}));
    QCOMPARE(l.parentVisits(4), 6);
    // U = c_puct * P * sqrt(N_parent) / (1 + N)
    QVERIFY(std::abs(l.explorationTerm(4) - 1.5f * 0.7f * std::sqrt(6.0f) / 5) < 1e-6f);
    QCOMPARE(l.explorationTerm(0), 0.0f);
  }

  void clickEmitsThePositionOfTheNode() {
    SearchTreeView view;
    view.resize(400, 400);
    view.showTree(prepareTree(knownTree()));
    QSignalSpy positions(&view, &SearchTreeView::positionSelected);
    const TreeLayout& l = *view.layout();
    const QPoint a2 = view.treeToWidget(middleOf(l.sector(5))).toPoint();
    QCOMPARE(view.nodeAt(a2), 5);
    QTest::mouseClick(&view, Qt::LeftButton, {}, a2);
    QCOMPARE(positions.count(), 1);
    QCOMPARE(positions[0][0].toString(), QStringLiteral("tictactoe"));
    QCOMPARE(positions[0][1].value<std::vector<int>>(), (std::vector<int>{4, 0, 0, 2}));
    QCOMPARE(view.selectedNode(), 5);
    // The tooltip's text: N, Q, P, U with its terms, Q + U, virtual loss, the move.
    const QString text = view.nodeDescription(4);
    for (const char* part : {"Move 2", "N = 4 visits", "Q = +0.250", "P = 0.700", "U = c·P·√N", "Q + U = +", "Virtual loss: 0",
                             "principal variation"})
      QVERIFY2(text.contains(QString::fromUtf8(part)), qPrintable(text));

    // The node-link view: a click on a disc selects that node.
    view.setMode(TreeViewMode::NodeLink);
    const LinkNode& c = l.linkNodes()[size_t(l.linkSlot(3))];
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.treeToWidget({c.x, c.y}).toPoint());
    QCOMPARE(positions.count(), 2);
    QCOMPARE(positions[1][1].value<std::vector<int>>(), (std::vector<int>{4, 0, 8}));
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.treeToWidget({l.linkNodes()[size_t(l.linkSlot(5))].x, l.linkNodes()[size_t(l.linkSlot(5))].y}).toPoint());
    QCOMPARE(view.selectedNode(), 5);

    // The tree grows (breadth-first indices shift): the same node stays selected.
    TreeSnapshot grown = knownTreeAfterOneSimulation();
    grown.nodes.insert(grown.nodes.begin() + 4, {0, 6, 0, 0, 1, 0.0f, 0.1f});  // a fourth child of the root
    for (size_t i = 5; i < grown.nodes.size(); ++i)
      if (grown.nodes[i].parent >= 4) ++grown.nodes[i].parent;
    view.showTree(prepareTree(grown));
    QCOMPARE(view.selectedNode(), 6);
    QCOMPARE(view.layout()->movesFromRoot(6), (std::vector<int>{0, 2}));
  }

  void dragPansAndWheelZoomsAboutThePointer() {
    SearchTreeView view;
    view.resize(400, 400);
    view.showTree(prepareTree(knownTree()));
    QSignalSpy positions(&view, &SearchTreeView::positionSelected);
    const QPointF before = view.widgetToTree({200, 200});
    QTest::mousePress(&view, Qt::LeftButton, {}, {200, 200});
    QTest::mouseMove(&view, {260, 230});
    QTest::mouseRelease(&view, Qt::LeftButton, {}, {260, 230});
    QCOMPARE(positions.count(), 0);  // a drag is no click
    const QPointF moved = view.widgetToTree({260, 230});
    QVERIFY(std::abs(moved.x() - before.x()) < 1e-6 && std::abs(moved.y() - before.y()) < 1e-6);  // the tree moved with the pointer

    const QPointF pointer(120, 300);
    const QPointF under = view.widgetToTree(pointer);
    QWheelEvent wheel(pointer, view.mapToGlobal(pointer), {}, {0, 240}, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &wheel);
    const QPointF still = view.widgetToTree(pointer);
    QVERIFY(std::abs(still.x() - under.x()) < 1e-6 && std::abs(still.y() - under.y()) < 1e-6);
    QVERIFY(view.treeToWidget({1, 0}).x() - view.treeToWidget({0, 0}).x() > 0);  // zoomed in, not flipped

    // A new snapshot keeps the user's view; Fit brings the whole tree back.
    const QPointF kept = view.widgetToTree({0, 0});
    view.showTree(prepareTree(knownTree()));
    QCOMPARE(view.widgetToTree({0, 0}), kept);
    view.fitToView();
    QCOMPARE(view.widgetToTree({200, 200}), QPointF(0, 0));
  }

  void traceFindsSelectionExpansionAndBackup() {
    const TreeLayout before(knownTree()), after(knownTreeAfterOneSimulation());
    const auto trace = traceSimulation(before, after);
    QVERIFY(trace);
    QCOMPARE(trace->path, (std::vector<int>{0, 1, 5}));
    QCOMPARE(trace->pathBefore, (std::vector<int>{0, 1, 5}));
    QCOMPARE(trace->expanded, (std::vector<int>{6, 7}));
    QVERIFY(std::abs(trace->leafValue - (-0.25f * 2 - 0.1f)) < 1e-6f);
    // Another position, or no new visit: nothing to trace.
    TreeSnapshot moved = knownTreeAfterOneSimulation();
    moved.rootMoves.push_back(1);
    QVERIFY(!traceSimulation(before, TreeLayout(moved)));
    QVERIFY(!traceSimulation(before, before));
  }

  void teachingAnimationRunsThroughItsPhases() {
    SearchTreeView view;  // not shown: the offscreen platform cannot show OpenGL widgets
    view.resize(400, 400);
    PreparedTree before = prepareTree(knownTree()), after = prepareTree(knownTreeAfterOneSimulation());
    auto trace = traceSimulation(*before.layout, *after.layout);
    QVERIFY(trace);
    view.playSimulation(before, after, *trace);
    QCOMPARE(view.teachingPhase(), SearchTreeView::TeachingPhase::Selection);
    QCOMPARE(view.layout()->size(), 6);  // the tree before the simulation
    QTRY_COMPARE_WITH_TIMEOUT(view.teachingPhase(), SearchTreeView::TeachingPhase::Expansion, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(view.layout()->size(), 8, 5000);  // from the expansion on, the tree after it
    QTRY_COMPARE_WITH_TIMEOUT(view.teachingPhase(), SearchTreeView::TeachingPhase::Backup, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(view.teachingPhase(), SearchTreeView::TeachingPhase::None, 8000);
  }

  void fittedTreeStaysClearOfTheLegendAndTheTeachingCaption() {
    // Three levels below the root in the node-link diagram: A2's first child visited once.
    TreeSnapshot deep = knownTreeAfterOneSimulation();
    deep.nodes[6].visits = 1;
    TreeSnapshot deeper = deep;  // one simulation later, down the same path (no new children)
    for (int node : {0, 1, 5, 6}) ++deeper.nodes[size_t(node)].visits;
    SearchTreeView view;
    view.resize(600, 500);
    view.setMode(TreeViewMode::NodeLink);
    auto discs = [&view](double* top, double* bottom) {
      *top = 1e9;
      *bottom = -1e9;
      for (const LinkNode& n : view.layout()->linkNodes()) {
        const double y = view.treeToWidget({n.x, n.y}).y(), r = view.treeToWidget({n.x, n.y + n.radius}).y() - y;
        *top = std::min(*top, y - r);
        *bottom = std::max(*bottom, y + r);
      }
    };
    double top = 0, bottom = 0;
    // The legend in the bottom-left corner (three lines and a colour bar) is over 60 pixels tall:
    // the lowest level stays above it.
    view.showTree(prepareTree(deep));
    QCOMPARE(view.layout()->linkHeight(), 3 * TreeLayout::kLevelSpacing);
    discs(&top, &bottom);
    QVERIFY2(bottom < 500 - 60, qPrintable(QString::number(bottom)));
    // While a simulation is animated, its caption across the top (a title and two lines at
    // least) is over 60 pixels tall: the root stays below it.
    PreparedTree before = prepareTree(deep), after = prepareTree(deeper);
    auto trace = traceSimulation(*before.layout, *after.layout);
    QVERIFY(trace);
    view.playSimulation(before, after, *trace);  // shows `before` until events run
    discs(&top, &bottom);
    QVERIFY2(top > 60, qPrintable(QString::number(top)));
    QVERIFY2(bottom < 500 - 60, qPrintable(QString::number(bottom)));
  }

  void panelBuildsSnapshotsInTheBackground() {
    SearchTreePanel panel;
    panel.resize(600, 500);
    panel.show();
    TreeSnapshot small = knownTree();
    small.nodes.resize(3);
    panel.showSnapshot(small);
    panel.showSnapshot(knownTree());
    panel.showSnapshot(knownTreeAfterOneSimulation());  // the newest wins
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->layout() && panel.view()->layout()->size() == 8, 5000);
    QVERIFY2(panel.statusText().contains(QStringLiteral("principal variation 1 › 2")), qPrintable(panel.statusText()));
    QVERIFY2(panel.statusText().contains(QStringLiteral("root N 11")), qPrintable(panel.statusText()));
  }

  // A run whose algorithm has no search (PPO) publishes snapshots without nodes: the view draws
  // them (an empty picture) without touching a node that is not there.
  void anEmptySnapshotIsDrawn() {
    SearchTreePanel panel;
    panel.resize(600, 500);
    panel.show();
    panel.showSnapshot(TreeSnapshot{});
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->layout() && panel.view()->layout()->size() == 0, 5000);
    panel.view()->grabFramebuffer();  // paints, labels included
    QTest::qWait(50);
    QVERIFY2(panel.statusText().contains(QStringLiteral("has no search tree")), qPrintable(panel.statusText()));
  }

  void teachingControlsAreWholeInANarrowDock() {
    SearchTreePanel panel;
    panel.resize(330, 400);  // a narrow dock
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setTeachingMode(true);
    auto* hint = panel.findChild<QLabel*>(QStringLiteral("searchTreeHint"));
    auto* step = panel.findChild<QPushButton*>(QStringLiteral("stepSimulationButton"));
    QVERIFY(hint && step);
    QCOMPARE(hint->text(), QStringLiteral("Start a run, then pause it to step."));
    QTRY_VERIFY(hint->isVisible());
    // The hint wraps on a row of its own instead of being cut off; the step button keeps its text.
    auto wholeHintFits = [&] {
      const QFontMetrics metrics(hint->font());
      const QRect needed = metrics.boundingRect(QRect(0, 0, hint->contentsRect().width(), 10000), Qt::TextWordWrap, hint->text());
      int widestWord = 0;
      for (const QString& word : hint->text().split(QLatin1Char(' '))) widestWord = std::max(widestWord, metrics.horizontalAdvance(word));
      return hint->contentsRect().width() >= widestWord && hint->contentsRect().height() >= needed.height();
    };
    QTRY_VERIFY2(wholeHintFits(), qPrintable(QStringLiteral("the hint is %1 x %2 px").arg(hint->width()).arg(hint->height())));
    QVERIFY2(step->width() >= step->sizeHint().width(), qPrintable(QStringLiteral("%1 < %2").arg(step->width()).arg(step->sizeHint().width())));
    panel.setTeachingMode(false);
    QVERIFY(!hint->isVisible());
  }

  void mainWindowShowsThePanelInTheSearchTreeDock() {
    MainWindow w;
    auto* dock = w.findChild<QDockWidget*>(QStringLiteral("searchTreeDock"));
    QVERIFY(dock);
    QCOMPARE(dock->widget(), static_cast<QWidget*>(w.searchTreePanel()));
  }

  void liveRunThenTeachingSteps() {
    RunController run;
    SearchTreePanel panel;
    panel.setRunController(&run);
    panel.resize(700, 500);
    panel.show();
    const auto project = cas::project::loadProject(quickProject(dir_).toStdString());
    QVERIFY(project.project);
    QVERIFY(!panel.followsLive());  // by default the tree holds still while training
    panel.setFollowLive(true);
    QVERIFY(run.startTraining(*project.project, dir_.filePath(QStringLiteral("runs"))));
    int mostInFlight = 0;
    QElapsedTimer clock;
    clock.start();
    int shownTrees = 0;
    const TreeLayout* last = nullptr;
    while (clock.elapsed() < 60000 && shownTrees < 3) {
      QTest::qWait(20);
      mostInFlight = std::max(mostInFlight, panel.requestsInFlight());
      if (panel.view()->layout() != last) {
        last = panel.view()->layout();
        ++shownTrees;
      }
    }
    QVERIFY2(shownTrees >= 3, "the live tree did not update");
    // Throttled: never more than one request at a time. (A request can be made and answered
    // between two polls, so seeing exactly one in flight is not guaranteed.)
    QVERIFY2(mostInFlight <= 1, qPrintable(QString::number(mostInFlight)));
    const TreeSnapshot& live = panel.view()->layout()->snapshot();
    QCOMPARE(live.environment, std::string("tictactoe"));
    QVERIFY(live.treeCapacity > 0 && live.treeNodes <= live.treeCapacity);
    QVERIFY(live.cPuct > 0);
    QCOMPARE(live.game, 0);

    // Not following, the tree holds still while the run goes on; Refresh shows the newest once.
    panel.setFollowLive(false);
    QTRY_COMPARE_WITH_TIMEOUT(panel.requestsInFlight(), 0, 10000);
    QTest::qWait(100);  // a snapshot asked for before may still be building
    const TreeLayout* held = panel.view()->layout();
    QTest::qWait(1500);  // 15 request periods
    QCOMPARE(panel.view()->layout(), held);
    panel.refreshTree();
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->layout() != held, 30000);

    // Another game: its tree is shown (and, below, stepped in teaching mode).
    panel.setGame(1);
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->layout() && panel.view()->layout()->snapshot().game == 1, 30000);
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Self-play game 2, iteration")), qPrintable(panel.statusText()));

    // Pause: it takes effect when the iteration ends; then a step is animated.
    QSignalSpy iterations(&run, &RunController::iterationFinished);
    run.pauseTraining();
    QVERIFY(iterations.wait(60000));
    // The settled tree of the paused run (a tree from before the pause was played on since). A
    // pause asked for just as an iteration ended takes effect after the next one: the run's last
    // iteration is read again while waiting, and a tree asked for before that iteration ended is
    // asked for again (Refresh) now and then.
    auto pausedAt = [&] { return iterations.last().first().value<cas::train::IterationReport>().iteration; };
    QElapsedTimer settling;
    settling.start();
    while (panel.view()->layout()->snapshot().iteration != pausedAt() && settling.elapsed() < 60000) {
      QTest::qWait(200);
      if (settling.elapsed() % 3000 < 200 && panel.requestsInFlight() == 0) panel.refreshTree();
    }
    QCOMPARE(panel.view()->layout()->snapshot().iteration, pausedAt());
    QTRY_COMPARE_WITH_TIMEOUT(panel.requestsInFlight(), 0, 10000);
    // Run > Step outside teaching mode: the new tree at once, the simulation's path marked.
    QVERIFY(panel.view()->highlightedPath().empty());
    run.stepSimulation();
    QTRY_VERIFY_WITH_TIMEOUT(!panel.view()->highlightedPath().empty(), 30000);
    QCOMPARE(panel.view()->teachingPhase(), SearchTreeView::TeachingPhase::None);
    QCOMPARE(panel.view()->highlightedPath().front(), 0);  // from the root
    const TreeLayout* stepped = panel.view()->layout();

    panel.setTeachingMode(true);
    QTRY_COMPARE_WITH_TIMEOUT(panel.requestsInFlight(), 0, 10000);
    panel.stepSimulation();
    // The step waits for the pause, which waits for the iteration in progress: slow on a loaded machine.
    // The animation started, or (the GUI thread starved on a loaded machine) has already run to
    // its end, leaving the simulation's path marked.
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->layout() != stepped && (panel.view()->teachingPhase() != SearchTreeView::TeachingPhase::None ||
                                                                    !panel.view()->highlightedPath().empty()),
                             90000);
    QCOMPARE(panel.view()->layout()->snapshot().game, 1);  // the game chosen, not game 1
    run.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!run.running(), 60000);
  }

  // The game selector's "Board position": the tree is the Board's agent's search from the
  // position the Board shows, following the move list back; Step grows it by one simulation.
  void teachingOnTheBoardsPosition() {
    // A run to load on the Board: one iteration of the quick project, checkpointed.
    const auto loaded = cas::project::loadProject(quickProject(dir_).toStdString());
    QVERIFY(loaded.project);
    cas::project::Project project = *loaded.project;
    const QString folder = dir_.filePath(QStringLiteral("board-run"));
    cas::Diagnostic refused;
    auto runFolder = cas::engine::RunFolder::create(folder.toStdString(), project, &refused, nullptr);
    QVERIFY2(runFolder, refused.message.c_str());
    cas::train::AlphaZeroTrainer trainer(project, cas::exec::makeCpuBackend());
    trainer.runIteration();
    std::string error;
    QVERIFY2(runFolder->writeCheckpoint(trainer.iteration(), trainer.checkpoint(), &error), error.c_str());

    RunController run;  // never started: the Board's agent needs no training run
    PlayPanel board(&run);
    SearchTreePanel panel;
    panel.setRunController(&run);
    panel.setBoard(&board);
    connect(&panel, &SearchTreePanel::positionSelected, board.boardView(), &BoardView::showPosition);  // as the studio connects them
    panel.resize(700, 500);
    panel.show();
    panel.setTeachingMode(true);
    auto* gameBox = panel.findChild<QSpinBox*>(QStringLiteral("searchTreeGame"));
    auto* step = panel.findChild<QPushButton*>(QStringLiteral("stepSimulationButton"));
    QVERIFY(gameBox && step);

    // Without a run on the Board there is nothing to search with, and the hint says so.
    gameBox->setValue(0);
    QCOMPARE(gameBox->text(), QStringLiteral("Board position"));
    QVERIFY(panel.followsBoard());
    QTRY_COMPARE(panel.findChild<QLabel*>(QStringLiteral("searchTreeHint"))->text(),
                 QStringLiteral("Load a run on the Board to search its position."));
    QVERIFY(!step->isEnabled());

    // A game on the Board (set up, then stepped back in its move list): the tree's root is the
    // position shown, its children the legal moves there.
    board.loadRun(folder);
    QTRY_VERIFY_WITH_TIMEOUT(!board.busy() && board.agent(), 60000);
    const std::vector<int> game = {4, 0, 8};
    board.boardView()->showPosition(QStringLiteral("tictactoe"), game);  // taken over as a set-up position
    QCOMPARE(board.moves(), game);
    board.showMovesUpTo(2);
    const std::vector<int> stepped = {4, 0};
    auto rootIs = [&](const std::vector<int>& moves) {
      const TreeLayout* l = panel.view()->layout();
      return l && l->snapshot().rootMoves == moves;
    };
    QTRY_VERIFY_WITH_TIMEOUT(rootIs(stepped), 30000);
    TreeSnapshot shown = panel.view()->layout()->snapshot();
    QCOMPARE(shown.environment, std::string("tictactoe"));
    QCOMPARE(rootChildren(shown), legalMoves(stepped));
    QCOMPARE(int(rootChildren(shown).size()), 7);
    QCOMPARE(shown.nodes[0].visits, 1);  // the root evaluated, no simulation yet
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Board position after 2 moves, checkpoint of iteration 1")), qPrintable(panel.statusText()));

    // Step: one simulation more in that tree, animated (or, on a starved GUI thread, already
    // over with its path marked).
    QTRY_VERIFY_WITH_TIMEOUT(step->isEnabled(), 30000);
    step->click();
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->layout()->snapshot().nodes[0].visits == 2 &&
                                 (panel.view()->teachingPhase() != SearchTreeView::TeachingPhase::None || !panel.view()->highlightedPath().empty()),
                             30000);
    QVERIFY(rootIs(stepped));
    QTRY_VERIFY_WITH_TIMEOUT(step->isEnabled(), 30000);
    step->click();
    QTRY_COMPARE_WITH_TIMEOUT(panel.view()->layout()->snapshot().nodes[0].visits, 3, 30000);

    // A node clicked in the tree shows its position on the Board; the tree stays.
    const TreeLayout* grown = panel.view()->layout();
    const std::vector<int> picked = {4, 0, shown.nodes[1].action};
    emit panel.view()->positionSelected(QStringLiteral("tictactoe"), picked);
    QCOMPARE(board.boardView()->moves(), picked);
    QTest::qWait(200);
    QCOMPARE(panel.view()->layout(), grown);

    // Back to the start of the move list: the tree follows, rooted at the empty board.
    board.showMovesUpTo(0);
    QTRY_VERIFY_WITH_TIMEOUT(rootIs({}), 30000);
    QCOMPARE(rootChildren(panel.view()->layout()->snapshot()), legalMoves({}));

    // Back to a self-play game: the Board's tree goes, and the game selector counts games again.
    gameBox->setValue(1);
    QVERIFY(!panel.followsBoard());
    QCOMPARE(panel.game(), 0);
    QVERIFY(!panel.view()->layout());
  }
};

QTEST_MAIN(TestSearchTree)
#include "test_search_tree.moc"
