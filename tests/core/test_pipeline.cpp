// The trainer's iteration as a pipeline (core/train/alphazero.hpp): with train.overlap the
// training steps read only earlier iterations' positions and self-play plays with the weights
// the last iteration ended with; lock-step trains on the iteration's own games. A checkpoint
// carries the replay ring, and a restored trainer continues with it.
#include <QTest>

#include "core/exec/backend.hpp"
#include "core/project/project.hpp"
#include "core/train/alphazero.hpp"

using namespace cas;

namespace {

std::unique_ptr<train::AlphaZeroTrainer> trainer(bool overlap) {
  const QString source = qEnvironmentVariable("CAS_SOURCE_DIR", QStringLiteral(CAS_SOURCE_DIR));
  project::LoadResult loaded = project::loadProject((source + QStringLiteral("/projects/tictactoe-alphazero")).toStdString());
  if (!loaded.project) return nullptr;
  for (const char* set : {"train.parallel_games=8", "train.games_per_iteration=8", "train.steps_per_iteration=3", "train.batch_size=16",
                          "search.simulations=8", "train.eval_games=0", "train.replay_capacity=256"})
    if (loaded.project->parameters.assign(set)) return nullptr;
  if (loaded.project->parameters.assign(overlap ? "train.overlap=true" : "train.overlap=false")) return nullptr;
  return std::make_unique<train::AlphaZeroTrainer>(*loaded.project, exec::makeCpuBackend());
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
};

QTEST_APPLESS_MAIN(TestPipeline)
#include "test_pipeline.moc"
