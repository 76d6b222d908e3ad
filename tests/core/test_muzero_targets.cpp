// MuZero's training targets (core/train/muzero_targets.hpp): value, reward, policy and action
// targets of a K-step unroll worked out by hand from the pseudocode's make_target, episodes kept
// to the capacity, bad episodes refused by field, seeded sampling, and an unrolled model that
// learns a reward from batches of them through LossKind::MuZero.
#include <QTest>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/train/muzero_targets.hpp"
#include "core/train/update.hpp"

using namespace cas;
using train::Episode;
using train::EpisodeReplay;
using train::MuZeroBatch;
using train::MuZeroTargetSetup;

namespace {

MuZeroTargetSetup handSetup() {
  MuZeroTargetSetup s;
  s.observationSize = 2, s.actions = 3, s.unrollSteps = 2, s.tdSteps = 2, s.discount = 0.5f;
  s.capacity = 100;
  return s;
}

// T = 4: observation i = (i, -i), actions 0 1 2 1, rewards 1 2 3 4, pi_i one-hot on i % 3,
// root values 10 20 30 40.
Episode handEpisode() {
  Episode e;
  e.actions = {0, 1, 2, 1};
  e.rewards = {1, 2, 3, 4};
  e.values = {10, 20, 30, 40};
  for (int i = 0; i < 4; ++i) {
    e.observations.insert(e.observations.end(), {float(i), float(-i)});
    for (int a = 0; a < 3; ++a) e.policies.push_back(a == i % 3 ? 1.0f : 0.0f);
  }
  return e;
}

MuZeroBatch oneRow(const EpisodeReplay& replay, const Episode& e, std::int64_t t) {
  const MuZeroTargetSetup& s = replay.setup();
  MuZeroBatch b;
  b.batch = 1;
  b.obs.resize(size_t(s.observationSize));
  b.actions.resize(size_t(s.unrollSteps * s.actions));
  b.policyTargets.resize(size_t((s.unrollSteps + 1) * s.actions));
  b.valueTargets.resize(size_t(s.unrollSteps + 1));
  b.rewardTargets.resize(size_t(s.unrollSteps));
  replay.writeTargets(e, t, 7, b, 0);
  return b;
}

Episode chainEpisode(std::uint64_t seed, int length) {  // observation: one-hot position; reward = action
  Episode e;
  for (int i = 0; i < length; ++i) {
    for (int p = 0; p < length; ++p) e.observations.push_back(p == i ? 1.0f : 0.0f);
    const int action = int((seed >> (i % 60)) & 1u);
    e.actions.push_back(action);
    e.rewards.push_back(float(action));
    e.policies.insert(e.policies.end(), {0.5f, 0.5f});
    e.values.push_back(0.0f);
  }
  return e;
}

}  // namespace

class TestMuZeroTargets : public QObject {
  Q_OBJECT
 private slots:
  void targetsInsideTheEpisode() {
    const EpisodeReplay replay(handSetup());
    const MuZeroBatch b = oneRow(replay, handEpisode(), 1);
    QCOMPARE(b.obs, (std::vector<float>{1, -1}));
    // z_0 = r1 + r2/2 + v3/4; z_1 = r2 + r3/2 (v4 past the end); z_2 = r3 alone.
    QCOMPARE(b.valueTargets, (std::vector<float>{13.5f, 5.0f, 4.0f}));
    QCOMPARE(b.rewardTargets, (std::vector<float>{2, 3}));
    QCOMPARE(b.actions, (std::vector<float>{0, 1, 0, 0, 0, 1}));                 // a_1, a_2
    QCOMPARE(b.policyTargets, (std::vector<float>{0, 1, 0, 0, 0, 1, 1, 0, 0}));  // pi_1, pi_2, pi_3
  }

  void targetsPastTheEnd() {
    const EpisodeReplay replay(handSetup());
    const MuZeroBatch b = oneRow(replay, handEpisode(), 3);
    QCOMPARE(b.valueTargets, (std::vector<float>{4, 0, 0}));
    QCOMPARE(b.rewardTargets, (std::vector<float>{4, 0}));  // the last action's reward, then nothing
    QCOMPARE(std::vector<float>(b.policyTargets.begin(), b.policyTargets.begin() + 3), (std::vector<float>{1, 0, 0}));
    QVERIFY(std::all_of(b.policyTargets.begin() + 3, b.policyTargets.end(), [](float p) { return p == 0; }));
    QCOMPARE(std::vector<float>(b.actions.begin(), b.actions.begin() + 3), (std::vector<float>{0, 1, 0}));
    QCOMPARE(std::count(b.actions.begin() + 3, b.actions.end(), 1.0f), 1);  // a random action past the end
  }

  void theOldestEpisodesLeaveAtCapacity() {
    MuZeroTargetSetup s = handSetup();
    s.capacity = 5;
    EpisodeReplay replay(s);
    replay.add(handEpisode());
    Episode shorter = handEpisode();
    shorter.actions.resize(3), shorter.rewards.resize(3), shorter.values.resize(3), shorter.observations.resize(6),
        shorter.policies.resize(9);
    replay.add(shorter);
    QCOMPARE(replay.episodes(), 1);
    QCOMPARE(replay.positions(), 3);
  }

  void badEpisodesAreRefusedByField() {
    EpisodeReplay replay(handSetup());
    Episode e = handEpisode();
    e.actions[2] = 7;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, replay.add(e));
    try {
      replay.add(e);
      QFAIL("an action out of range was kept");
    } catch (const std::invalid_argument& error) {
      QVERIFY2(std::string(error.what()).find("action 2 is 7") != std::string::npos, error.what());
    }
    e = handEpisode();
    e.values.pop_back();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, replay.add(e));
    QCOMPARE(replay.positions(), 0);
  }

  void samplingIsSeededAndCoversTheEpisodes() {
    MuZeroTargetSetup s = handSetup();
    s.observationSize = 6, s.actions = 2;
    EpisodeReplay replay(s);
    replay.add(chainEpisode(5, 6));
    Episode second = chainEpisode(9, 6);
    for (float& x : second.observations) x *= 2;  // its positions told apart from the first's
    replay.add(second);
    const MuZeroBatch a = replay.sample(256, 11), b = replay.sample(256, 11), c = replay.sample(256, 12);
    QCOMPARE(a.obs, b.obs);
    QCOMPARE(a.actions, b.actions);
    QVERIFY(a.obs != c.obs);
    std::set<std::vector<float>> seen;
    for (std::int64_t row = 0; row < 256; ++row) seen.insert(std::vector<float>(a.obs.begin() + row * 6, a.obs.begin() + (row + 1) * 6));
    QCOMPARE(int(seen.size()), 12);  // every position of both episodes
  }

  // A tiny learned model, unrolled 2 steps, trained on chain episodes where the reward is the
  // action: the reward loss falls to a tenth.
  void anUnrolledModelLearnsTheReward() {
    const int length = 4, batch = 32;
    pdl::LearnedModelOptions o;
    o.observationShape = {length};
    o.actionCount = 2;
    o.batch = batch;
    o.training = true;
    o.unrollSteps = 2;
    const pdl::LearnedModelResult r = pdl::compileLearnedModel(
        "def represent(obs):\n    return tanh(dense(obs, units=16))\n"
        "def dynamics(state, action):\n    h = tanh(dense(concat(state, action), units=16))\n    return h, dense(h, units=1)\n"
        "def predict(state):\n    return dense(state, units=action_dim), dense(state, units=1)\n",
        o);
    QVERIFY(r.model && r.model->unrolled);
    MuZeroTargetSetup s;
    s.observationSize = length, s.actions = 2, s.unrollSteps = 2, s.tdSteps = 2, s.discount = 0.9f;
    EpisodeReplay replay(s);
    for (std::uint64_t e = 0; e < 16; ++e) replay.add(chainEpisode(e * 2654435761u, length));
    train::OptimizerConfig adam;
    adam.learningRate = 0.01f;
    train::Updater updater(*exec::BackendRegistry::instance().find("cpu")->backend, *r.model->unrolled, train::LossKind::MuZero, adam, 2,
                           1);
    auto rewardLoss = [&](int first, int steps) {
      updater.resetLossSums();
      for (int i = first; i < first + steps; ++i) {
        replay.sample(batch, std::uint64_t(i)).setInputs(updater.executable());
        updater.step();
      }
      return updater.lossSums().term("reward") / steps;
    };
    const double before = rewardLoss(0, 10);
    rewardLoss(10, 300);
    const double after = rewardLoss(310, 10);
    QVERIFY2(after < before / 10, qPrintable(QStringLiteral("the reward loss went from %1 to %2").arg(before).arg(after)));
  }
};

QTEST_GUILESS_MAIN(TestMuZeroTargets)
#include "test_muzero_targets.moc"
