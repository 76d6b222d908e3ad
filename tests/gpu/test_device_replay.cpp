// The device replay store and self-play's moves on the device against their CPU specs: the same
// ring after the same positions and commits, the same batches for the same draws (the device's
// symmetry gathers against the game's applySymmetry), the same replay ring from self-play with
// the device search recording on the device as from the CPU search recording on the host; and
// the trainer overlapping self-play and training on two streams, reproducibly.
#include <QTest>

#include <numeric>
#include <random>

#include "core/exec/backend.hpp"
#include "core/ir/builder.hpp"
#include "core/ir/passes.hpp"
#include "core/project/project.hpp"
#include "core/search/mcts.hpp"
#include "core/train/alphazero.hpp"
#include "core/train/replay_buffer.hpp"
#include "core/train/self_play.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

std::shared_ptr<exec::Backend> backend(const char* id) { return exec::BackendRegistry::instance().find(id)->backend; }

search::ReplaySetup setupFor(const std::string& environment, std::int64_t capacity, std::int64_t fresh) {
  const env::EnvironmentInfo& e = *env::findEnvironment(environment);
  int obs = 1;
  for (int d : e.observationShape) obs *= d;
  return {environment, capacity, fresh, obs, e.actionCount};
}

std::unique_ptr<search::ReplayStore> deviceStore(const search::ReplaySetup& setup) {
  std::string reason;
  auto store = backend("cuda")->deviceServices()->createReplayStore(setup, &reason);
  if (!store) throw std::runtime_error("no device replay store: " + reason);
  return store;
}

// A program with the inputs a training program draws into, compiled by the CUDA backend.
std::unique_ptr<exec::Executable> sampleTarget(const search::ReplaySetup& s, std::int64_t batch) {
  ir::Graph g;
  g.name = "replay_target";
  ir::Builder b(g);
  const ir::NodeId obs = b.input("obs", {batch, s.observationSize});
  const ir::NodeId policy = b.input("policy_targets", {batch, s.actions});
  const ir::NodeId value = b.input("value_targets", {batch});
  g.outputs.push_back({"sum", b.add(b.add(b.reduceSum(obs, {0, 1}, false), b.reduceSum(policy, {0, 1}, false)), b.reduceSum(value, {0}, false))});
  ir::runPasses(g, ir::defaultPipeline());
  return backend("cuda")->compile(g);
}

std::vector<float> input(const exec::Executable& exe, const std::string& name) {
  std::vector<float> v(size_t(ir::numel(exe.graph().node(exe.graph().findInput(name)).shape)));
  exe.readInput(name, v.data(), v.size());
  return v;
}

search::SearchConfig selfPlayConfig() {
  search::SearchConfig c;
  c.simulations = 16;
  c.leavesPerStep = 2;
  c.nodeBudget = 1024;
  c.temperature = 1.0f;
  c.temperatureMoves = 8;
  return c;
}

std::unique_ptr<train::AlphaZeroTrainer> connect4Trainer(bool overlap) {
    project::LoadResult loaded = project::loadProject(cas::test::sourceFile("projects/connect4-alphazero"));
  if (!loaded.project) return nullptr;
  for (const char* set : {"train.parallel_games=64", "train.games_per_iteration=64", "train.steps_per_iteration=8", "train.batch_size=128",
                          "search.simulations=16", "train.eval_games=0", "train.replay_capacity=4096"})
    if (loaded.project->parameters.assign(set)) return nullptr;
  if (loaded.project->parameters.assign(overlap ? "train.overlap=true" : "train.overlap=false")) return nullptr;
  return std::make_unique<train::AlphaZeroTrainer>(*loaded.project, backend("cuda"));
}

}  // namespace

class TestDeviceReplay : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!backend("cuda")) QSKIP("no CUDA backend on this machine");
  }

  void storesAgreeOnRingsAndBatches_data() {
    QTest::addColumn<QString>("environment");
    QTest::newRow("tictactoe") << QStringLiteral("tictactoe");
    QTest::newRow("connect4") << QStringLiteral("connect4");
  }
  void storesAgreeOnRingsAndBatches() {
    QFETCH(QString, environment);
    const search::ReplaySetup setup = setupFor(environment.toStdString(), 100, 80);
    train::ReplayBuffer cpu(setup);
    auto gpu = deviceStore(setup);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    const std::int64_t batch = 256;
    auto target = sampleTarget(setup, batch);
    for (int round = 0; round < 4; ++round) {  // 4 x 70 positions through a ring of 100: it wraps
      for (int i = 0; i < 70; ++i) {
        std::vector<float> obs(size_t(setup.observationSize)), policy(size_t(setup.actions));
        for (float& x : obs) x = u(rng);
        for (float& x : policy) x = u(rng);
        const float value = u(rng);
        cpu.add(obs.data(), policy.data(), value);
        gpu->add(obs.data(), policy.data(), value);
      }
      cpu.commit();
      gpu->commit();
      const search::ReplayRing a = cpu.ring(), b = gpu->ring();
      QCOMPARE(b.size, a.size);
      QCOMPARE(b.next, a.next);
      QVERIFY(a.obs == b.obs && a.policy == b.policy && a.value == b.value);
      const std::uint64_t seed = 1000 + std::uint64_t(round);
      std::vector<float> obs(size_t(batch * setup.observationSize)), policy(size_t(batch * setup.actions)), value(static_cast<size_t>(batch));
      cpu.draw(batch, seed, obs.data(), policy.data(), value.data());
      gpu->sample(batch, seed, *target);
      QVERIFY(input(*target, "obs") == obs);
      QVERIFY(input(*target, "policy_targets") == policy);
      QVERIFY(input(*target, "value_targets") == value);
    }
    QVERIFY(gpu->dataSeconds() > 0);
  }

  // Self-play with the hashed evaluator: the CPU search recording on the host and the device
  // search recording on the device fill the same ring.
  void selfPlayRecordsOnTheDeviceAsOnTheHost() {
    const std::string environment = "connect4";
    const int games = 48;
    const search::LeafEvaluator hashed{search::LeafEvaluator::Kind::Hashed, nullptr};
    const search::SearchSetup searchSetup{environment, games, selfPlayConfig(), 11, hashed};
    std::string reason;
    auto device = backend("cuda")->deviceServices()->createSearch(searchSetup, &reason);
    QVERIFY2(device, reason.c_str());
    auto host = std::make_unique<search::BatchedSearch>(environment, games, selfPlayConfig(), search::makeCpuEvaluator(hashed, *env::findEnvironment(environment)), 11);
    const search::ReplaySetup setup = setupFor(environment, 8192, (96 + games) * 42);
    train::ReplayBuffer cpuStore(setup);
    auto gpuStore = deviceStore(setup);
    train::SelfPlay onHost(std::move(host), setup.observationSize, 42), onDevice(std::move(device), setup.observationSize, 42);
    for (int round = 0; round < 2; ++round) {
      train::IterationReport r1, r2;
      const std::int64_t a = onHost.play(48, cpuStore, {}, r1), b = onDevice.play(48, *gpuStore, {}, r2);
      QCOMPARE(b, a);
      QCOMPARE(gpuStore->fresh(), cpuStore.fresh());
      cpuStore.commit();
      gpuStore->commit();
    }
    const search::ReplayRing x = cpuStore.ring(), y = gpuStore->ring();
    QVERIFY(x.size > 96 * 7);
    QCOMPARE(y.size, x.size);
    QVERIFY(x.value == y.value);
    QVERIFY(x.obs == y.obs);
    QVERIFY(x.policy == y.policy);
    // The games in progress carry on alike.
    QCOMPARE(onDevice.snapshot(5, 1).rootMoves, onHost.snapshot(5, 1).rootMoves);
  }

  // A device-to-device copy between programs on two streams lands, and reads come from it.
  void weightsCopyBetweenPrograms() {
    const search::ReplaySetup setup = setupFor("tictactoe", 4, 4);
    auto from = sampleTarget(setup, 8), to = sampleTarget(setup, 8);
    auto* source = dynamic_cast<exec::Executable*>(from.get());
    std::vector<float> v(8 * 18);
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f;
    source->setInput("obs", v.data(), v.size());
    source->run();
    to->copyInputFrom("obs", *source, "obs");
    QVERIFY(input(*to, "obs") == v);
    to->run();
    float sum = 0;
    to->readOutput("sum", &sum, 1);
    QCOMPARE(sum, std::accumulate(v.begin(), v.end(), 0.0f));
  }

  // Self-play on the compute stream, training on the training stream, the replay buffer and the
  // training draws on the device. (Two runs of one seed differ on this backend whether or not
  // they overlap: its atomic reductions add in no fixed order.)
  void trainerOverlapsOnTwoStreams() {
    auto a = connect4Trainer(true);
    QVERIFY(a);
    QCOMPARE(a->replayDevice(), std::string("cuda"));
    QCOMPARE(a->searchDevice(), std::string("cuda"));
    train::IterationReport last;
    for (int i = 0; i < 3; ++i) last = a->runIteration();
    QCOMPARE(last.trainingSteps, std::int64_t(8));
    QVERIFY(std::isfinite(last.loss) && last.loss > 0);
    QVERIFY(last.trainSeconds > 0 && last.dataSeconds > 0 && last.inferenceSeconds > 0);
    QCOMPARE(last.selfPlayWeightsStep, std::int64_t(8));
    QVERIFY(last.positions > 64 * 7);
    // A restored trainer holds the same ring.
    auto c = connect4Trainer(true);
    std::string error;
    const std::string saved = a->checkpoint();
    QVERIFY2(c->restore(saved, &error), error.c_str());
    QVERIFY(c->checkpoint() == saved);
    // Lock-step runs too, and trains in its first iteration.
    auto d = connect4Trainer(false);
    QCOMPARE(d->runIteration().trainingSteps, std::int64_t(8));
  }
};

QTEST_APPLESS_MAIN(TestDeviceReplay)
#include "test_device_replay.moc"
