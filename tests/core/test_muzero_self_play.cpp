// MuZero's self-play (core/train/muzero_self_play.hpp) on MinAtar Breakout's CPU twins with the
// CPU search over the hashed test model: a recorded episode replays move for move on a fresh copy
// of the same seed (observations, rewards, its end), its policies are distributions, the search's
// choice is played at temperature 0, and the counts add up.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include "core/env/environments.hpp"
#include "core/env/single_agent.hpp"
#include "core/search/learned_search.hpp"
#include "core/train/muzero_self_play.hpp"

using namespace cas;

namespace {

constexpr int kCopies = 4, kObservation = 400, kActions = 3, kSimulations = 8;

std::unique_ptr<env::SingleAgentEnvironments> breakout(std::uint64_t seed) {
  return env::findEnvironment("minatar-breakout")->singleAgent(kCopies, seed, {});
}

search::LearnedSearchConfig searchConfig() {
  search::LearnedSearchConfig c;
  c.simulations = kSimulations;
  c.nodeBudget = 256;
  return c;
}

train::MuZeroTargetSetup targetSetup() {
  train::MuZeroTargetSetup s;
  s.observationSize = kObservation, s.actions = kActions;
  return s;
}

}  // namespace

class TestMuZeroSelfPlay : public QObject {
  Q_OBJECT
 private slots:
  void recordedStepsMatchTheEnvironment() {
    auto envs = breakout(11);
    search::BatchedLearnedSearch search(search::hashedLearnedModel(kObservation, 8, kActions), kCopies, searchConfig(), 5);
    train::EpisodeReplay replay(targetSetup());
    train::MuZeroSelfPlay play(*envs, search, replay, 1.0f, 7);
    while (play.stats().episodes < 1) play.step();
    QCOMPARE(replay.episodes(), play.stats().episodes);
    QVERIFY(replay.positions() <= play.stats().moves);
    // The first episode to end came from some copy c: find it by replaying each copy's actions.
    auto fresh = breakout(11);
    int matched = 0;
    for (int c = 0; c < kCopies && matched == 0; ++c) {
      fresh->reset(c);
      const train::Episode& e = replay.episode(0);
      std::vector<float> obs(kObservation);
      bool same = true, ended = false;
      double total = 0;
      for (std::int64_t i = 0; i < e.length() && same; ++i) {
        fresh->observe(c, obs.data());
        same = std::equal(obs.begin(), obs.end(), e.observations.begin() + i * kObservation);
        const env::StepResult r = fresh->step(c, e.actions[size_t(i)]);
        same = same && r.reward == e.rewards[size_t(i)];
        ended = r.terminated || r.truncated;
        same = same && (ended == (i + 1 == e.length()));
        total += r.reward;
      }
      if (same && ended) {
        matched = 1;
        if (play.stats().episodes == 1) QCOMPARE(play.stats().returnSum, total);
      }
    }
    QVERIFY2(matched == 1, "no copy replays the recorded episode");
    const train::Episode& e = replay.episode(0);
    QVERIFY2(e.length() >= 5, qPrintable(QStringLiteral("an episode of %1 moves").arg(e.length())));
    for (std::int64_t i = 0; i < e.length(); ++i) {
      const float share = std::accumulate(e.policies.begin() + i * kActions, e.policies.begin() + (i + 1) * kActions, 0.0f);
      QVERIFY(std::abs(share - 1.0f) < 1e-5f);
    }
  }

  void theSearchChoiceAtTemperatureZero() {
    auto envs = breakout(2);
    search::BatchedLearnedSearch search(search::hashedLearnedModel(kObservation, 8, kActions), kCopies, searchConfig(), 5);
    train::EpisodeReplay replay(targetSetup());
    train::MuZeroSelfPlay play(*envs, search, replay, 0.0f, 7);
    while (play.stats().episodes < 1) play.step();
    const train::Episode& e = replay.episode(0);
    for (std::int64_t i = 0; i < e.length(); ++i) {
      const auto p = e.policies.begin() + i * kActions;
      const auto best = std::max_element(p, p + kActions) - p;
      QCOMPARE(e.policies[size_t(i * kActions + e.actions[size_t(i)])], e.policies[size_t(i * kActions + best)]);
    }
  }

  void refusesMismatchedCopies() {
    auto envs = breakout(1);
    search::BatchedLearnedSearch search(search::hashedLearnedModel(kObservation, 8, kActions), kCopies + 1, searchConfig(), 5);
    train::EpisodeReplay replay(targetSetup());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, train::MuZeroSelfPlay(*envs, search, replay, 1.0f, 7));
  }
};

QTEST_GUILESS_MAIN(TestMuZeroSelfPlay)
#include "test_muzero_self_play.moc"
