// The trainer's iteration as a pipeline (core/train/alphazero.hpp): with train.overlap the
// training steps read only earlier iterations' positions and self-play plays with the weights
// the last iteration ended with; lock-step trains on the iteration's own games. A checkpoint
// carries the replay ring, and a restored trainer continues with it; a checkpoint of another
// network is refused, naming the tensor, and leaves the trainer as it was.
#include <QTemporaryDir>
#include <QTest>

#include "core/exec/backend.hpp"
#include "core/project/project.hpp"
#include "core/train/alphazero.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

// The tic-tac-toe example, or with `policyFile` in place of its policy.
std::unique_ptr<train::AlphaZeroTrainer> trainer(bool overlap, const QString& policyFile = {}) {
  project::LoadOptions options;
  if (!policyFile.isEmpty()) options.policyFile = policyFile.toStdString();
  project::LoadResult loaded = project::loadProject(cas::test::sourceFile("projects/tictactoe-alphazero"), options);
  if (!loaded.project) return nullptr;
  for (const char* set : {"train.parallel_games=8", "train.games_per_iteration=8", "train.steps_per_iteration=3", "train.batch_size=16",
                          "search.simulations=8", "train.eval_games=0", "train.replay_capacity=256"})
    if (loaded.project->parameters.assign(set)) return nullptr;
  if (loaded.project->parameters.assign(overlap ? "train.overlap=true" : "train.overlap=false")) return nullptr;
  return std::make_unique<train::AlphaZeroTrainer>(*loaded.project, exec::makeCpuBackend());
}

// The example's policy with `from` replaced by `to`, written into `dir`; empty when it failed.
QString editedPolicy(const QTemporaryDir& dir, const QByteArray& from, const QByteArray& to) {
  QFile original(cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero/policy.pdl")));
  if (!original.open(QIODevice::ReadOnly)) return {};
  QByteArray text = original.readAll();
  if (!text.contains(from)) return {};
  QFile edited(dir.filePath(QStringLiteral("policy.pdl")));
  if (!edited.open(QIODevice::WriteOnly) || edited.write(text.replace(from, to)) < 0) return {};
  return edited.fileName();
}

}  // namespace

class TestPipeline : public QObject {
  Q_OBJECT
 private slots:
  void overlapTrainsOnEarlierIterations() {
    auto t = trainer(true);
    QVERIFY(t);
    const train::IterationReport first = t->runIteration();
    QVERIFY(first.overlapped);
    QCOMPARE(first.trainingSteps, std::int64_t(0));  // the ring was empty when the iteration began
    QVERIFY(first.positions >= 8 * 5);               // its games joined the ring at its end
    QCOMPARE(first.selfPlayWeightsStep, std::int64_t(0));
    const train::IterationReport second = t->runIteration();
    QCOMPARE(second.trainingSteps, std::int64_t(3));
    QCOMPARE(second.selfPlayWeightsStep, std::int64_t(0));  // new weights reach self-play at the iteration's end
    const train::IterationReport third = t->runIteration();
    QCOMPARE(third.selfPlayWeightsStep, std::int64_t(3));
    QVERIFY(third.wallSeconds > 0 && third.selfPlaySeconds > 0 && third.trainSeconds > 0);
  }

  void lockStepTrainsOnTheIterationsOwnGames() {
    auto t = trainer(false);
    QVERIFY(t);
    const train::IterationReport first = t->runIteration();
    QVERIFY(!first.overlapped);
    QCOMPARE(first.trainingSteps, std::int64_t(3));
    QVERIFY(std::isfinite(first.loss) && first.loss > 0);
    QCOMPARE(t->runIteration().selfPlayWeightsStep, std::int64_t(3));
  }

  void seedsGiveTheSameRun() {
    auto a = trainer(true), b = trainer(true);
    for (int i = 0; i < 3; ++i) {
      a->runIteration();
      b->runIteration();
    }
    QVERIFY(a->checkpoint() == b->checkpoint());
  }

  void restoredTrainerContinuesWithTheRing() {
    auto a = trainer(true);
    a->runIteration();
    a->runIteration();
    const std::string saved = a->checkpoint();
    auto b = trainer(true);
    std::string error;
    QVERIFY2(b->restore(saved, &error), error.c_str());
    QVERIFY(b->checkpoint() == saved);  // the ring, the weights, the optimizer and the counters
    const train::IterationReport next = b->runIteration();
    QCOMPARE(next.iteration, std::int64_t(3));
    QCOMPARE(next.trainingSteps, std::int64_t(3));  // trained on the restored ring at once
    QVERIFY(next.positions > 0);
  }

  // A checkpoint of another network never loads in part: a tensor the network needs and the
  // checkpoint lacks (a layer added) and a tensor of another size (a layer narrowed) are each
  // refused with the tensor's name, and the refused trainer keeps its own weights.
  void checkpointOfAnotherNetworkIsRefused() {
    auto original = trainer(true);
    QVERIFY(original);
    original->runIteration();
    const std::string saved = original->checkpoint();

    QTemporaryDir added, narrowed;
    const QString withSkip = editedPolicy(added, "units=1))", "units=1) + dense(h, units=1, name='value_skip'))");
    QVERIFY(!withSkip.isEmpty());
    auto wider = trainer(true, withSkip);
    QVERIFY(wider);
    const std::string before = wider->checkpoint();
    std::string error;
    QVERIFY(!wider->restore(saved, &error));
    QVERIFY2(error.starts_with("the checkpoint lacks policy/value_skip/weight and 5 more tensor(s), which this project's network needs"),
             error.c_str());
    QVERIFY(wider->checkpoint() == before);

    const QString narrower = editedPolicy(narrowed, "const width = 32", "const width = 16");
    QVERIFY(!narrower.isEmpty());
    auto smaller = trainer(true, narrower);
    QVERIFY(smaller);
    error.clear();
    QVERIFY(!smaller->restore(saved, &error));
    QVERIFY2(error.starts_with("policy/conv2d_0/weight: the checkpoint holds shape [32, 2, 3, 3], this project's network needs [16, 2, 3, 3]"),
             error.c_str());
  }
};

QTEST_APPLESS_MAIN(TestPipeline)
#include "test_pipeline.moc"
