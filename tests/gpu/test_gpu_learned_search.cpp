// The device search over a learned model (gpu/search/gpu_learned_search.cpp) on a real device
// against the CPU reference, BatchedLearnedSearch. With the hashed model (computed bit-identically
// on both sides) the root statistics of 1000 random root observations must agree on at least 99%
// (all are expected to), for PUCT with noise at k = 1, k = 8 under the pending rule, Gumbel, and
// a budget so small that every tree recycles; trees node by node and the counts as well. With a
// small PDL learned model compiled by the CUDA backend against the same model compiled by the
// CPU backend, float differences may move a visit, so the choice must agree on most games and the
// values be close. Setups the device cannot hold are refused with a reason.
#include <QTest>

#include <cmath>
#include <numeric>
#include <random>

#include "core/exec/backend.hpp"
#include "core/exec/device_services.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/search/learned_search.hpp"
#include "support/search_compare.hpp"

using namespace cas;
using search::LearnedSearchConfig;
using search::LearnedSearchSetup;

namespace {

exec::Backend& backend(const char* id) { return *exec::BackendRegistry::instance().find(id)->backend; }

std::vector<int> range(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

LearnedSearchConfig config(int simulations, int leaves, bool gumbel, int nodeBudget) {
  LearnedSearchConfig c;
  c.simulations = simulations;
  c.leavesPerStep = leaves;
  c.gumbel = gumbel;
  c.gumbelArms = 4;
  c.dirichletFraction = gumbel ? 0.0f : 0.25f;
  c.dirichletAlpha = 0.3f;
  c.nodeBudget = nodeBudget;
  return c;
}

std::vector<float> randomObservations(int games, int size, std::uint32_t seed) {
  std::mt19937 rng{seed};
  std::vector<float> obs(size_t(games) * size_t(size));
  for (float& x : obs) x = float(int(rng() % 9) - 4) * 0.5f;
  return obs;
}

std::unique_ptr<search::LearnedSearch> deviceSearch(const LearnedSearchSetup& setup) {
  std::string reason;
  auto s = backend("cuda").deviceServices()->createLearnedSearch(setup, &reason);
  if (!s) throw std::runtime_error("no device search: " + reason);
  return s;
}

// Roots whose statistics agree in every bit; the others are listed.
int agreeingRoots(const search::LearnedSearch& cpu, const search::LearnedSearch& device, const std::vector<int>& games) {
  const auto a = cpu.rootStats(games), b = device.rootStats(games);
  int same = 0;
  for (size_t i = 0; i < games.size(); ++i) {
    const QString difference = test::statsDifference(a[i], b[i]);
    if (difference.isEmpty())
      ++same;
    else
      qInfo("differs: game %d: %s", games[i], qPrintable(difference));
  }
  return same;
}

// Two searches of `games` games (all of them, then every other one with fresh observations) on
// both sides: statistics, the first trees and the counts compared.
LearnedSearchSetup hashedSetup(const LearnedSearchConfig& c, int games) {
  LearnedSearchSetup setup;
  setup.games = games;
  setup.observationSize = 12, setup.stateSize = 6, setup.actions = 5;
  setup.config = c;
  setup.seed = 21;
  setup.evaluator.kind = search::LearnedModelEvaluator::Kind::Hashed;
  return setup;
}

void compareHashed(const LearnedSearchConfig& c, int games) {
  const LearnedSearchSetup setup = hashedSetup(c, games);
  search::BatchedLearnedSearch cpu(search::hashedLearnedModel(12, 6, 5), games, c, setup.seed);
  auto device = deviceSearch(setup);
  std::vector<int> everyOther;
  for (int g = 0; g < games; g += 2) everyOther.push_back(g);
  for (const std::vector<int>& listed : {range(games), everyOther}) {
    const std::vector<float> obs = randomObservations(int(listed.size()), 12, std::uint32_t(listed.size()));
    cpu.search(listed, obs.data());
    device->search(listed, obs.data());
    const int same = agreeingRoots(cpu, *device, listed);
    if (same < int(listed.size())) qWarning("%d of %d roots agree", same, int(listed.size()));
    QVERIFY2(same * 100 >= int(listed.size()) * 99, "fewer than 99% of the roots agree");
    for (int i = 0; i < 16; ++i) {
      const QString tree = test::treeDifference(cpu.tree(listed[size_t(i)]), device->treeSnapshot(listed[size_t(i)]));
      QVERIFY2(tree.isEmpty(), qPrintable(QStringLiteral("game %1: %2").arg(listed[size_t(i)]).arg(tree)));
    }
  }
  const search::LearnedSearchMetrics a = cpu.metrics(), b = device->metrics();
  QCOMPARE(b.simulations, a.simulations);
  QCOMPARE(b.evaluations, a.evaluations);
  QCOMPARE(b.recycledNodes, a.recycledNodes);
  QCOMPARE(b.recurrentCalls, a.recurrentCalls);
}

const char* kModelSource =
    "def represent(obs):\n    return tanh(dense(flatten(obs), units=5))\n"
    "def dynamics(state, action):\n    return tanh(dense(concat(state, action), units=5)), tanh(dense(state, units=1))\n"
    "def predict(state):\n    return dense(state, units=action_dim), tanh(dense(state, units=1))\n";

// The model's three programs on backend `b`, with the same parameters on every backend.
struct ModelPrograms {
  std::unique_ptr<exec::Executable> represent, recurrent, predict;
};
ModelPrograms compileModel(exec::Backend& b, std::int64_t batch) {
  pdl::LearnedModelOptions o;
  o.observationShape = {2, 3};
  o.actionCount = 3;
  o.batch = batch;
  const pdl::LearnedModelResult r = pdl::compileLearnedModel(kModelSource, o);
  if (!r.model) throw std::runtime_error("the learned model does not compile");
  auto program = [&](const pdl::CompiledPolicy& p) {
    ir::Graph g = p.graph;
    ir::runPasses(g, ir::defaultPipeline());
    auto exe = b.compile(g);
    for (const ir::Node& n : exe->graph().nodes)
      if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
        const std::vector<float> v = exec::initialValues(n, 3);
        exe->setInput(n.attrs.name, v.data(), v.size());
      }
    return exe;
  };
  return {program(r.model->represent), program(r.model->recurrent), program(r.model->predict)};
}

LearnedSearchSetup networkSetup(int games, const LearnedSearchConfig& c, const ModelPrograms& p) {
  LearnedSearchSetup s;
  s.games = games;
  s.observationSize = 6, s.stateSize = 5, s.actions = 3;
  s.config = c;
  s.seed = 5;
  s.evaluator = {search::LearnedModelEvaluator::Kind::Network, p.represent.get(), p.recurrent.get(), p.predict.get()};
  return s;
}

}  // namespace

class TestGpuLearnedSearch : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    const auto* entry = exec::BackendRegistry::instance().find("cuda");
    QVERIFY(entry);
    if (!entry->available()) QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(entry->unavailableReason)));
  }

  void hashedPuctWithNoise() { compareHashed(config(64, 1, false, 4096), 1000); }
  void hashedEightLeavesPendingRule() { compareHashed(config(64, 8, false, 4096), 1000); }
  void hashedGumbel() { compareHashed(config(64, 4, true, 4096), 1000); }
  void hashedTinyBudgetRecycles() { compareHashed(config(200, 2, false, 1 + 6 * 5), 1000); }
  // The normalisation's floor (muzero.min_max_floor) above the hashed model's Q spans of some trees.
  void hashedMinMaxFloor() {
    LearnedSearchConfig c = config(64, 1, false, 4096);
    c.minMaxFloor = 0.5f;
    compareHashed(c, 1000);
  }

  // The same PDL model on both backends: float differences may move a visit, so the choice must
  // agree on most games and the root values stay close.
  void networkModelCloseToTheCpuSearch() {
    const int games = 64, k = 4;
    const LearnedSearchConfig c = config(48, k, false, 4096);
    const ModelPrograms onDevice = compileModel(backend("cuda"), games * k), onCpu = compileModel(backend("cpu"), games * k);
    std::string note;
    auto device = search::makeLearnedSearch(backend("cuda"), networkSetup(games, c, onDevice), "gpu", &note);
    auto cpu = search::makeLearnedSearch(backend("cpu"), networkSetup(games, c, onCpu), "cpu", &note);
    QCOMPARE(device->device(), std::string("cuda"));
    const std::vector<float> obs = randomObservations(games, 6, 9);
    device->search(range(games), obs.data());
    cpu->search(range(games), obs.data());
    const auto a = cpu->rootStats(range(games)), b = device->rootStats(range(games));
    int sameChoice = 0;
    double valueDifference = 0;
    for (int g = 0; g < games; ++g) {
      sameChoice += a[size_t(g)].chosen == b[size_t(g)].chosen;
      valueDifference += std::abs(double(a[size_t(g)].value) - double(b[size_t(g)].value));
      QCOMPARE(std::accumulate(b[size_t(g)].visits.begin(), b[size_t(g)].visits.end(), 0), 48);
    }
    QVERIFY2(sameChoice * 10 >= games * 9, qPrintable(QStringLiteral("the choice agrees on %1 of %2 games").arg(sameChoice).arg(games)));
    QVERIFY2(valueDifference / games < 0.02,
             qPrintable(QStringLiteral("root values differ by %1 on average").arg(valueDifference / games)));
  }

  // A decision timed phase by phase is the same search: its statistics equal the CPU reference's.
  void profiledDecisionIsTheSameSearch() {
    const int games = 256;
    const LearnedSearchSetup setup = hashedSetup(config(64, 4, false, 4096), games);
    search::BatchedLearnedSearch cpu(search::hashedLearnedModel(12, 6, 5), games, setup.config, setup.seed);
    auto device = deviceSearch(setup);
    const std::vector<float> obs = randomObservations(games, 12, 3);
    cpu.search(range(games), obs.data());
    const auto b = device->profileDecision(range(games), obs.data(), -1);
    QVERIFY(b);
    QCOMPARE(b->steps, 16);
    QVERIFY(b->stageUs > 0 && b->rootModelUs > 0 && b->recurrentUs > 0 && b->searchUs > 0 && b->readbackUs > 0);
    QVERIFY(b->exchangeShare() > 0 && b->exchangeShare() < 1);
    QVERIFY2(agreeingRoots(cpu, *device, range(games)) * 100 >= games * 99, "fewer than 99% of the roots agree");
  }

  void refusesWhatItCannotHold() {
    LearnedSearchSetup wide;
    wide.games = 4;
    wide.observationSize = 4, wide.stateSize = 4, wide.actions = 33;
    wide.evaluator.kind = search::LearnedModelEvaluator::Kind::Hashed;
    std::string reason;
    QVERIFY(!backend("cuda").deviceServices()->createLearnedSearch(wide, &reason));
    QVERIFY2(reason.find("32 actions") != std::string::npos, reason.c_str());
    const ModelPrograms small = compileModel(backend("cuda"), 16);  // 8 games x 4 leaves need 32 rows
    QVERIFY(!backend("cuda").deviceServices()->createLearnedSearch(networkSetup(8, config(16, 4, false, 1024), small), &reason));
    QVERIFY2(reason.find("recurrent program's batch (16)") != std::string::npos, reason.c_str());
    const ModelPrograms onCpu = compileModel(backend("cpu"), 32);
    QVERIFY(!backend("cuda").deviceServices()->createLearnedSearch(networkSetup(8, config(16, 4, false, 1024), onCpu), &reason));
    QVERIFY2(reason.find("not all compiled by the CUDA backend") != std::string::npos, reason.c_str());
  }
};

QTEST_GUILESS_MAIN(TestGpuLearnedSearch)
#include "test_gpu_learned_search.moc"
