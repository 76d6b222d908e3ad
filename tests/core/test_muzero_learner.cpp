// MuZero's learning loop (core/train/muzero_learner.hpp) on the CPU backend and the CPU search,
// on MinAtar Breakout: the search's programs hold the updater's parameters from the start and
// after every iteration, iterations play and update, and a model that does not compile or an
// environment without a CPU twin is refused with the reason. (The loss itself is no measure of
// learning here: the visit distributions of 8 simulations keep the policy term near their
// entropy. test_muzero_targets trains on a fixed replay instead.)
#include <QTest>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/env/environments.hpp"
#include "core/exec/backend.hpp"
#include "core/train/muzero_learner.hpp"

using namespace cas;

namespace {

const char* kModel =
    "def represent(obs):\n    return tanh(dense(flatten(obs), units=32))\n"
    "def dynamics(state, action):\n    h = tanh(dense(concat(state, action), units=32))\n    return h, dense(h, units=1)\n"
    "def predict(state):\n    h = relu(dense(state, units=32))\n    return dense(h, units=action_dim), dense(h, units=1)\n";

exec::Backend& cpu() { return *exec::BackendRegistry::instance().find("cpu")->backend; }

train::MuZeroOptions smallOptions() {
  train::MuZeroOptions o;
  o.copies = 8;
  o.search.simulations = 8;
  o.search.nodeBudget = 128;
  o.unrollSteps = 3;
  o.tdSteps = 5;
  o.batch = 32;
  o.selfPlayMoves = 8;
  o.updates = 4;
  o.optimizer.learningRate = 3e-3f;
  o.searchDevice = "cpu";
  return o;
}

// Every trained parameter is in at least one of the search's programs, with the same values in
// each program that has it.
bool sameParameters(const train::MuZeroLearner& l) {
  for (const pdl::ParameterSummary& p : l.updater().parameters()) {
    int found = 0;
    for (const char* program : {"represent", "recurrent", "predict"}) {
      const std::vector<float> inSearch = l.searchParameter(program, p.name);
      if (inSearch.empty()) continue;
      if (inSearch != l.updater().parameter(p.name)) return false;
      found += 1;
    }
    if (found == 0) return false;
  }
  return !l.updater().parameters().empty();
}

}  // namespace

class TestMuZeroLearner : public QObject {
  Q_OBJECT
 private slots:
  void theSearchPlaysWithTheTrainedParameters() {
    train::MuZeroLearner learner(cpu(), kModel, *env::findEnvironment("minatar-breakout"), smallOptions());
    QVERIFY(sameParameters(learner));
    const std::vector<float> before = learner.updater().parameter("dynamics/dense_1/weight");
    const train::MuZeroIterationStats s = learner.iteration();
    QCOMPARE(s.updates, 4);
    QCOMPARE(s.selfPlay.moves, 8 * 8);
    QVERIFY(s.replayPositions <= s.selfPlay.moves);
    QVERIFY(std::isfinite(s.loss.total));
    QVERIFY(learner.updater().parameter("dynamics/dense_1/weight") != before);
    QVERIFY(sameParameters(learner));
    QCOMPARE(learner.search().metrics().simulations, std::int64_t(8 * 8 * 8));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, learner.searchParameter("dynamics", "dynamics/dense_1/weight"));
  }

  void refusesWhatItCannotTrain() {
    try {
      train::MuZeroLearner learner(cpu(), "def represent(obs):\n    return dense(flatten(obs), units=4)\n",
                                   *env::findEnvironment("minatar-breakout"), smallOptions());
      QFAIL("a model without dynamics was accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("model.pdl") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             train::MuZeroLearner(cpu(), kModel, *env::findEnvironment("tictactoe"), smallOptions()));
  }
};

QTEST_GUILESS_MAIN(TestMuZeroLearner)
#include "test_muzero_learner.moc"
