// The device search (gpu/search) on a real device against the CPU reference search: the same
// root statistics for fixed seeds on 1000 Connect Four positions from random play at depths
// 0-30, with the hashed evaluator (computed bit-identically on both sides: all must agree) and
// with a real network (the CUDA and CPU backends' float differences: at least 95%), for PUCT
// with noise at k = 1, PUCT at k = 8 with virtual loss, and Gumbel; the device games on 100k
// random moves; forced wins and defences; recycling under a tiny budget; subtree reuse; whole
// self-play games; no device allocation while searching; the trainer, analysis and Step on the
// device search.
#include <QTest>

#include <numeric>

#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/project/project.hpp"
#include "core/search/mcts.hpp"
#include "core/train/alphazero.hpp"
#include "core/train/benchmark_nets.hpp"
#include "support/search_compare.hpp"
#include "support/search_positions.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

std::shared_ptr<exec::Backend> backend(const char* id) { return exec::BackendRegistry::instance().find(id)->backend; }

std::vector<int> range(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

search::SearchConfig config(int simulations, int leaves, bool gumbel) {
  search::SearchConfig c;
  c.simulations = simulations;
  c.leavesPerStep = leaves;
  c.gumbel = gumbel;
  c.gumbelArms = 4;
  c.dirichletFraction = gumbel ? 0.0f : 0.25f;
  c.nodeBudget = 2048;
  return c;
}

std::unique_ptr<search::SelfPlaySearch> deviceSearch(const std::string& environment, int games, const search::SearchConfig& c, std::uint64_t seed,
                                                     search::LeafEvaluator evaluator) {
  search::SearchSetup setup{environment, games, c, seed, evaluator};
  std::string reason;
  auto s = backend("cuda")->deviceServices()->createSearch(setup, &reason);
  if (!s) throw std::runtime_error("no device search: " + reason);
  return s;
}

std::unique_ptr<search::SelfPlaySearch> cpuSearch(const std::string& environment, int games, const search::SearchConfig& c, std::uint64_t seed,
                                                  search::LeafEvaluator evaluator) {
  return std::make_unique<search::BatchedSearch>(environment, games, c, search::makeCpuEvaluator(evaluator, *env::findEnvironment(environment)), seed);
}

// connect4_mlp256 with AlphaZero's heads, the same weights on any backend.
std::unique_ptr<exec::Executable> network(exec::Backend& b, std::int64_t batch) {
  const train::BenchmarkNet& net = *train::findBenchmarkNet("connect4_mlp256");
  pdl::CompileOptions o;
  o.observationShape = {2, 6, 7};
  o.actionCount = 7;
  o.algorithm = "alphazero";
  o.batch = batch;
  auto compiled = pdl::compile(net.alphaZeroSource, o);
  if (!compiled.policy) throw std::runtime_error("the network does not compile");
  ir::Graph g = compiled.policy->graph;
  ir::runPasses(g, ir::defaultPipeline());
  auto exe = b.compile(g);
  for (const ir::Node& n : exe->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
      auto v = exec::initialValues(n, 7);
      exe->setInput(n.attrs.name, v.data(), v.size());
    }
  return exe;
}

// Searches the positions on both sides; returns how many roots got the same visit counts, and
// lists the others.
int agreeingRoots(search::SelfPlaySearch& cpu, search::SelfPlaySearch& device, const std::vector<std::string>& positions, bool wholeTrees) {
  const int n = int(positions.size());
  for (int g = 0; g < n; ++g) {
    std::string error;
    if (!cpu.setPosition(g, positions[size_t(g)], &error) || !device.setPosition(g, positions[size_t(g)], &error)) throw std::runtime_error(error);
  }
  cpu.search(range(n));
  device.search(range(n));
  const auto a = cpu.rootStats(range(n)), b = device.rootStats(range(n));
  int same = 0;
  for (int g = 0; g < n; ++g) {
    if (a[size_t(g)].visits == b[size_t(g)].visits) {
      ++same;
      if (wholeTrees) {
        const QString tree = test::treeDifference(cpu.treeSnapshot(g), device.treeSnapshot(g));
        if (!tree.isEmpty()) qWarning("position '%s': equal root visits but the trees differ: %s", positions[size_t(g)].c_str(), qPrintable(tree));
      }
      continue;
    }
    QString cv, dv;
    for (int v : a[size_t(g)].visits) cv += QString::number(v) + QLatin1Char(' ');
    for (int v : b[size_t(g)].visits) dv += QString::number(v) + QLatin1Char(' ');
    qInfo("differs: position '%s': CPU visits %s| device %s| CPU chosen %d, device %d", positions[size_t(g)].c_str(), qPrintable(cv), qPrintable(dv),
          a[size_t(g)].chosen, b[size_t(g)].chosen);
  }
  return same;
}

}  // namespace

class TestGpuSearch : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    const auto* entry = exec::BackendRegistry::instance().find("cuda");
    QVERIFY(entry);
    if (!entry->available()) QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(entry->unavailableReason)));
  }

  void hashedStatisticsEqualTheCpu_data() {
    QTest::addColumn<int>("leaves");
    QTest::addColumn<bool>("gumbel");
    QTest::addColumn<bool>("masked");
    QTest::newRow("PUCT, k=1, masked selection") << 1 << false << true;
    QTest::newRow("PUCT, k=1, branchy selection") << 1 << false << false;
    QTest::newRow("PUCT, k=8, virtual loss") << 8 << false << true;
    QTest::newRow("Gumbel, k=1") << 1 << true << true;
  }
  void hashedStatisticsEqualTheCpu() {
    QFETCH(int, leaves);
    QFETCH(bool, gumbel);
    QFETCH(bool, masked);
    const auto positions = test::randomPositions("connect4", 1000, 30, 101);
    search::SearchConfig c = config(64, leaves, gumbel);
    c.selection = masked ? search::SelectionKernel::Masked : search::SelectionKernel::Branchy;
    const search::LeafEvaluator hashed{search::LeafEvaluator::Kind::Hashed, nullptr};
    auto cpu = cpuSearch("connect4", 1000, c, 5, hashed);
    auto device = deviceSearch("connect4", 1000, c, 5, hashed);
    const int same = agreeingRoots(*cpu, *device, positions, true);
    qInfo("hashed evaluator: %d of 1000 roots have the CPU's visit counts", same);
    QVERIFY2(same >= 990, qPrintable(QStringLiteral("%1 of 1000 roots agree (at least 990 must)").arg(same)));
  }

  void networkStatisticsNearlyEqualTheCpu_data() { hashedStatisticsEqualTheCpu_data(); }
  void networkStatisticsNearlyEqualTheCpu() {
    QFETCH(int, leaves);
    QFETCH(bool, gumbel);
    QFETCH(bool, masked);
    const auto positions = test::randomPositions("connect4", 1000, 30, 202);
    search::SearchConfig c = config(64, leaves, gumbel);
    c.selection = masked ? search::SelectionKernel::Masked : search::SelectionKernel::Branchy;
    auto cpuNet = network(*backend("cpu"), 1000);
    auto gpuNet = network(*backend("cuda"), 1000 * leaves);
    auto cpu = cpuSearch("connect4", 1000, c, 6, {search::LeafEvaluator::Kind::Network, cpuNet.get()});
    auto device = deviceSearch("connect4", 1000, c, 6, {search::LeafEvaluator::Kind::Network, gpuNet.get()});
    const int same = agreeingRoots(*cpu, *device, positions, false);
    qInfo("connect4_mlp256: %d of 1000 roots have the CPU's visit counts", same);
    QVERIFY2(same >= 950, qPrintable(QStringLiteral("%1 of 1000 roots agree (at least 950 must)").arg(same)));
  }

  // 1024 games x ~98 rounds of random moves; after each round a one-simulation search with the
  // hashed evaluator shows each root's legal moves (priors) and its observation (the hash).
  void deviceGamesFollowTheCpuOnRandomMoves() {
    const int games = 1024;
    const search::LeafEvaluator hashed{search::LeafEvaluator::Kind::Hashed, nullptr};
    search::SearchConfig c = config(1, 1, false);
    c.dirichletFraction = 0;
    for (const char* environment : {"connect4", "tictactoe"}) {
      auto cpu = cpuSearch(environment, games, c, 1, hashed);
      auto device = deviceSearch(environment, games, c, 1, hashed);
      std::mt19937 rng(3);
      int moves = 0;
      while (moves < 100000) {
        std::vector<int> gs, actions, over;
        for (int g = 0; g < games; ++g) {
          const env::BoardGames& pos = cpu->positions();
          if (pos.terminal(g)) {
            over.push_back(g);
            continue;
          }
          std::vector<int> legal;
          for (int a = 0; a < pos.actionCount(); ++a)
            if (pos.legal(g, a)) legal.push_back(a);
          gs.push_back(g);
          actions.push_back(legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)]);
        }
        cpu->resetGames(over);
        device->resetGames(over);
        cpu->play(gs, actions);
        device->play(gs, actions);
        moves += int(gs.size());
        cpu->search(range(games));
        device->search(range(games));
        const auto a = cpu->rootStats(range(games)), b = device->rootStats(range(games));
        for (int g = 0; g < games; ++g) {
          const QString d = test::statsDifference(a[size_t(g)], b[size_t(g)]);
          QVERIFY2(d.isEmpty(), qPrintable(QStringLiteral("%1 game %2 after %3 moves: %4").arg(QLatin1String(environment)).arg(g).arg(moves).arg(d)));
        }
      }
    }
  }

  void findsForcedWinsAndDefences_data() {
    QTest::addColumn<QString>("env");
    QTest::addColumn<QString>("moves");
    QTest::addColumn<int>("best");
    QTest::newRow("tictactoe: complete the top row") << "tictactoe" << "1425" << 2;
    QTest::newRow("tictactoe: the only defence") << "tictactoe" << "152" << 2;
    QTest::newRow("connect4: complete column 1") << "connect4" << "121212" << 0;
    QTest::newRow("connect4: complete the bottom row") << "connect4" << "112233" << 3;
    QTest::newRow("connect4: block column 4") << "connect4" << "41414" << 3;
  }
  void findsForcedWinsAndDefences() {
    QFETCH(QString, env);
    QFETCH(QString, moves);
    QFETCH(int, best);
    search::SearchConfig c = config(800, 1, false);
    c.dirichletFraction = 0;
    auto s = deviceSearch(env.toStdString(), 1, c, 1, {search::LeafEvaluator::Kind::Uniform, nullptr});
    std::string error;
    QVERIFY(s->setPosition(0, moves.toStdString(), &error));
    s->search({0});
    QCOMPARE(s->rootStats(0).chosen, best);
  }

  void recyclingUnderATinyBudgetAgrees() {
    search::SearchConfig c = config(1500, 4, false);
    c.nodeBudget = 120;
    const search::LeafEvaluator hashed{search::LeafEvaluator::Kind::Hashed, nullptr};
    const auto positions = test::randomPositions("connect4", 64, 12, 303);
    auto cpu = cpuSearch("connect4", 64, c, 8, hashed);
    auto device = deviceSearch("connect4", 64, c, 8, hashed);
    QCOMPARE(agreeingRoots(*cpu, *device, positions, true), 64);
    QVERIFY2(device->metrics().recycledNodes > 0, "the budget should have forced recycling");
    QCOMPARE(device->metrics().recycledNodes, cpu->metrics().recycledNodes);
    // And the search stays right: the win in one is found with the budget full.
    c.dirichletFraction = 0;
    auto tiny = deviceSearch("connect4", 1, c, 8, {search::LeafEvaluator::Kind::Uniform, nullptr});
    std::string error;
    QVERIFY(tiny->setPosition(0, "121212", &error));
    tiny->search({0});
    QCOMPARE(tiny->rootStats(0).chosen, 0);
    QVERIFY(tiny->treeSnapshot(0).nodesInUse() <= 120);
  }

  void subtreeReuseKeepsVisitsAndValues() {
    auto s = deviceSearch("connect4", 4, config(300, 1, false), 2, {search::LeafEvaluator::Kind::Hashed, nullptr});
    s->search(range(4));
    const search::Tree before = s->treeSnapshot(2);
    const int action = s->rootStats(2).chosen;
    std::int32_t child = -1;
    for (int k = 0; k < before.childCount[0]; ++k)
      if (before.action[size_t(before.child(0, k))] == action) child = before.child(0, k);
    QVERIFY(child > 0);
    s->play(2, action);
    const search::Tree after = s->treeSnapshot(2);
    QCOMPARE(after.visits[0], before.visits[size_t(child)]);
    QCOMPARE(after.valueSum[0], before.valueSum[size_t(child)]);
    QCOMPARE(int(after.childCount[0]), int(before.childCount[size_t(child)]));
  }

  void selfPlayGamesAgree() {
    search::SearchConfig c = config(64, 2, false);
    c.temperature = 1.0f;
    c.temperatureMoves = 8;
    c.nodeBudget = 1000;
    const int games = 256;
    const search::LeafEvaluator hashed{search::LeafEvaluator::Kind::Hashed, nullptr};
    auto cpu = cpuSearch("connect4", games, c, 12, hashed);
    auto device = deviceSearch("connect4", games, c, 12, hashed);
    for (int ply = 0; ply < 50; ++ply) {
      cpu->search(range(games));
      device->search(range(games));
      const auto a = cpu->rootStats(range(games)), b = device->rootStats(range(games));
      std::vector<int> moves, over;
      for (int g = 0; g < games; ++g) {
        const QString d = test::statsDifference(a[size_t(g)], b[size_t(g)]);
        QVERIFY2(d.isEmpty(), qPrintable(QStringLiteral("ply %1, game %2: %3").arg(ply).arg(g).arg(d)));
        moves.push_back(a[size_t(g)].played);
      }
      cpu->play(range(games), moves);
      device->play(range(games), moves);
      for (int g = 0; g < games; ++g)
        if (cpu->positions().terminal(g)) over.push_back(g);
      cpu->resetGames(over);
      device->resetGames(over);
    }
    const QString tree = test::treeDifference(cpu->treeSnapshot(7), device->treeSnapshot(7));
    QVERIFY2(tree.isEmpty(), qPrintable(tree));
  }

  void searchingAllocatesNothing() {
    auto net = network(*backend("cuda"), 1024);
    auto s = deviceSearch("connect4", 1024, config(64, 1, false), 1, {search::LeafEvaluator::Kind::Network, net.get()});
    auto allocations = [&] {
      const std::string value = exec::statValue(s->runtimeStats(), "pool device allocations");
      return value.empty() ? -1LL : std::stoll(value);
    };
    s->search(range(1024));
    s->rootStats(range(1024));
    const long long before = allocations();
    for (int i = 0; i < 5; ++i) {
      s->search(range(1024));
      std::vector<int> moves;
      for (const auto& r : s->rootStats(range(1024))) moves.push_back(r.chosen);
      s->play(range(1024), moves);
    }
    QCOMPARE(allocations(), before);
  }

  void instrumentationReportsSimtEfficiency() {
    for (bool masked : {true, false}) {
      search::SearchConfig c = config(64, 1, false);
      c.selection = masked ? search::SelectionKernel::Masked : search::SelectionKernel::Branchy;
      auto s = deviceSearch("connect4", 1024, c, 1, {search::LeafEvaluator::Kind::Hashed, nullptr});
      const auto kernels = s->profileKernels(64);
      bool sawSelect = false;
      for (const exec::KernelReport& k : kernels) {
        if (k.name.rfind("search_select", 0) != 0 && k.name != "search_expand_backup") continue;
        sawSelect = sawSelect || k.name.rfind("search_select", 0) == 0;
        QVERIFY2(k.simtEfficiency > 0 && k.simtEfficiency <= 1, qPrintable(QString::fromStdString(k.name)));
        // Measured as the reports' column and the Kernels dock's occupancy plot show it.
        QVERIFY2(k.theoreticalOccupancy > 0 && k.theoreticalOccupancy <= 1, qPrintable(QString::fromStdString(k.name)));
        QCOMPARE(int(k.timeline.size()), 1024 / 32);
        qInfo("%s: %.1f us, SIMT efficiency %.1f%%, theoretical occupancy %.0f%%", k.name.c_str(), k.timeUs, 100 * k.simtEfficiency,
              100 * k.theoreticalOccupancy);
      }
      QVERIFY(sawSelect);
    }
  }

  // The trainer's self-play, Step, snapshots and analysis on the device search.
  void trainerSearchesOnTheDevice() {
        project::LoadResult loaded = project::loadProject(cas::test::sourceFile("projects/connect4-alphazero"));
    QVERIFY(loaded.project);
    for (const char* set : {"train.parallel_games=16", "train.games_per_iteration=16", "train.steps_per_iteration=2", "train.batch_size=32",
                            "search.simulations=16", "train.eval_games=0"})
      QVERIFY(!loaded.project->parameters.assign(set));
    train::AlphaZeroTrainer trainer(*loaded.project, backend("cuda"));
    QCOMPARE(trainer.searchDevice(), std::string("cuda"));
    const train::IterationReport report = trainer.runIteration();
    QVERIFY(report.gamesPlayed >= 16);
    QVERIFY(report.simulationsPerSecond > 0);
    const train::TreeSnapshot before = trainer.snapshot(0, 64);
    trainer.stepSimulation();
    const train::TreeSnapshot after = trainer.snapshot(0, 64);
    QVERIFY2(after.nodes.at(0).visits == before.nodes.at(0).visits + 1 || after.nodes.at(0).visits == 2,
             qPrintable(QStringLiteral("root visits %1 -> %2").arg(before.nodes.at(0).visits).arg(after.nodes.at(0).visits)));
    std::string error;
    const search::RootStats r = trainer.analyse("44", 100, &error);
    QVERIFY2(error.empty(), error.c_str());
    QCOMPARE(std::accumulate(r.visits.begin(), r.visits.end(), 0), 100);
    QVERIFY(r.chosen >= 0 && r.chosen < 7);
  }
};

QTEST_GUILESS_MAIN(TestGpuSearch)
#include "test_gpu_search.moc"
