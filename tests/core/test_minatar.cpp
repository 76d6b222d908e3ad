// MinAtar Breakout, Freeway, Asterix, Space Invaders and Seaquest against episodes recorded from
// the `minatar` package (tests/golden/make_minatar_traces.py): with minatar's random draws
// replayed (Breakout's starting side, Freeway's car periods and directions, Asterix's and
// Seaquest's spawns, the sticky-action draws), the same observations, rewards and episode ends,
// step for step, across resets, sticky actions, two refills of Breakout's bricks, Freeway's
// crossings and its time limit, six of Asterix's difficulty ramps, five of Space Invaders' (a
// cleared block refilled, marching faster) and all 19 of Seaquest's (one per surfacing, some
// with 6 divers aboard), with Seaquest's oxygen running out and its enemies' bullets.
#include <QTest>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/env/minatar_asterix.hpp"
#include "core/env/minatar_breakout.hpp"
#include "core/env/minatar_freeway.hpp"
#include "core/env/minatar_seaquest.hpp"
#include "core/env/minatar_space_invaders.hpp"
#include "support/source_dir.hpp"

using cas::env::MinAtarAsterix;
using cas::env::MinAtarBreakout;
using cas::env::MinAtarFreeway;
using cas::env::MinAtarSeaquest;
using cas::env::MinAtarSpaceInvaders;

namespace {

// The observation a recorded row describes: paddle column, ball row and column, trail row and
// column, then each row's bricks as a bit mask.
std::vector<float> expectedObservation(const nlohmann::json& row, size_t first) {
  std::vector<float> obs(MinAtarBreakout::kObservationSize, 0.0f);
  auto at = [&obs](int channel, int r, int c) -> float& { return obs[size_t((channel * 10 + r) * 10 + c)]; };
  at(0, 9, row[first].get<int>()) = 1;
  at(1, row[first + 1].get<int>(), row[first + 2].get<int>()) = 1;
  at(2, row[first + 3].get<int>(), row[first + 4].get<int>()) = 1;
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c)
      if (row[first + 5 + size_t(r)].get<int>() & (1 << c)) at(3, r, c) = 1;
  return obs;
}

// An observation given as the indices of its set cells.
std::vector<float> fromSetCells(const nlohmann::json& cells, int size) {
  std::vector<float> obs(size_t(size), 0.0f);
  for (const auto& i : cells) obs[i.get<size_t>()] = 1;
  return obs;
}

MinAtarFreeway::CarDraw carDraw(const nlohmann::json& periods) {
  MinAtarFreeway::CarDraw cars{};
  for (size_t i = 0; i < periods.size() && i < cars.size(); ++i) cars[i] = periods[i].get<int>();
  return cars;
}

nlohmann::json golden(const char* file) {
  std::ifstream in(cas::test::sourceFile("tests/golden/minatar/") + file);
  return in.good() ? nlohmann::json::parse(in) : nlohmann::json();
}

}  // namespace

class TestMinAtar : public QObject {
  Q_OBJECT
 private slots:
  void breakoutMatchesMinatar() {
    const auto file = golden("breakout.json");
    const auto& traces = file["minatar_breakout"];
    QVERIFY(traces.size() >= 4);
    MinAtarBreakout env(int(traces.size()), 1);
    int steps = 0, sticky = 0, refills = 0;
    float rewards = 0;
    for (size_t g = 0; g < traces.size(); ++g) {
      for (const auto& episode : traces[g]["episodes"]) {
        env.reset(int(g), episode["ball_start"].get<int>());
        std::vector<float> obs(MinAtarBreakout::kObservationSize);
        env.observe(int(g), obs.data());
        QVERIFY(obs == expectedObservation(episode["initial"], 0));
        int bricks = 30;
        for (const auto& row : episode["steps"]) {
          const double draw = row[1].get<double>();
          const auto r = env.step(int(g), row[0].get<int>(), draw);
          env.observe(int(g), obs.data());
          const QString where = QStringLiteral("trace %1 step %2").arg(g).arg(steps);
          QVERIFY2(obs == expectedObservation(row, 4), qPrintable(where + QStringLiteral(": observation differs")));
          QVERIFY2(r.reward == row[2].get<float>(), qPrintable(where + QStringLiteral(": reward differs")));
          QVERIFY2(r.terminal == (row[3].get<int>() != 0), qPrintable(where + QStringLiteral(": terminal differs")));
          int now = 0;
          for (int k = 0; k < 10; ++k) now += __builtin_popcount(row[9 + size_t(k)].get<unsigned>());
          refills += now > bricks;
          bricks = now;
          sticky += draw < MinAtarBreakout::kStickyActionProbability;
          rewards += r.reward;
          ++steps;
        }
        QVERIFY(env.terminal(int(g)) || episode["steps"].size() == 3000);
      }
    }
    qInfo("%d steps replayed: %.0f bricks, %d sticky actions, %d refills of the bricks", steps, double(rewards), sticky, refills);
    QVERIFY(steps >= 1000 && sticky >= 50 && refills >= 2);  // what the traces must cover
  }

  void freewayMatchesMinatar() {
    const auto file = golden("freeway.json");
    const auto& traces = file["minatar_freeway"];
    QVERIFY(traces.size() >= 2);
    MinAtarFreeway env(int(traces.size()), 1);
    int steps = 0, sticky = 0, crossings = 0, timeLimits = 0;
    std::vector<float> obs(MinAtarFreeway::kObservationSize);
    for (size_t g = 0; g < traces.size(); ++g) {
      for (const auto& episode : traces[g]["episodes"]) {
        env.reset(int(g), carDraw(episode["cars"]));
        env.observe(int(g), obs.data());
        QVERIFY(obs == fromSetCells(episode["initial"], MinAtarFreeway::kObservationSize));
        int episodeSteps = 0;
        for (const auto& row : episode["steps"]) {
          const double draw = row[1].get<double>();
          const auto r = env.step(int(g), row[0].get<int>(), draw, carDraw(row[4]));
          env.observe(int(g), obs.data());
          const QString where = QStringLiteral("trace %1 step %2").arg(g).arg(episodeSteps);
          QVERIFY2(obs == fromSetCells(row[5], MinAtarFreeway::kObservationSize), qPrintable(where + QStringLiteral(": observation differs")));
          QVERIFY2(r.reward == row[2].get<float>(), qPrintable(where + QStringLiteral(": reward differs")));
          QVERIFY2(r.terminal == (row[3].get<int>() != 0), qPrintable(where + QStringLiteral(": terminal differs")));
          crossings += r.reward > 0;
          QCOMPARE(r.reward > 0, !row[4].empty());  // minatar draws new cars exactly at a crossing
          sticky += draw < MinAtarFreeway::kStickyActionProbability;
          ++steps;
          ++episodeSteps;
        }
        timeLimits += env.terminal(int(g)) && episodeSteps == MinAtarFreeway::kTimeLimit + 1;
      }
    }
    qInfo("%d Freeway steps replayed: %d crossings, %d sticky actions, %d episodes to the time limit", steps, crossings, sticky, timeLimits);
    QVERIFY(steps >= 3000 && crossings >= 10 && sticky >= 100 && timeLimits == 1);
  }

  void asterixMatchesMinatar() {
    const auto file = golden("asterix.json");
    const auto& traces = file["minatar_asterix"];
    QVERIFY(traces.size() >= 2);
    MinAtarAsterix env(int(traces.size()), 1);
    int steps = 0, sticky = 0, spawns = 0, gold = 0, hardest = 0;
    std::vector<float> obs(MinAtarAsterix::kObservationSize);
    for (size_t g = 0; g < traces.size(); ++g) {
      for (const auto& episode : traces[g]["episodes"]) {
        env.reset(int(g));
        env.observe(int(g), obs.data());
        QVERIFY(obs == fromSetCells(episode["initial"], MinAtarAsterix::kObservationSize));
        int episodeSteps = 0;
        for (const auto& row : episode["steps"]) {
          const auto& drawn = row[4];
          // minatar draws for a spawn exactly when the twin says one is due, and the lane index
          // only when a lane is free.
          QCOMPARE(env.spawnsNext(env.state(int(g))), !drawn.empty());
          MinAtarAsterix::SpawnDraw spawn;
          if (!drawn.empty()) {
            QCOMPARE(drawn.size(), size_t(env.freeLanes(env.state(int(g))) > 0 ? 3 : 2));
            spawn = {drawn[0].get<double>(), drawn[1].get<double>(), drawn.size() == 3 ? drawn[2].get<int>() : 0};
            ++spawns;
          }
          const double draw = row[1].get<double>();
          const auto r = env.step(int(g), row[0].get<int>(), draw, spawn);
          env.observe(int(g), obs.data());
          const QString where = QStringLiteral("trace %1 step %2").arg(g).arg(episodeSteps);
          QVERIFY2(obs == fromSetCells(row[5], MinAtarAsterix::kObservationSize), qPrintable(where + QStringLiteral(": observation differs")));
          QVERIFY2(r.reward == row[2].get<float>(), qPrintable(where + QStringLiteral(": reward differs")));
          QVERIFY2(r.terminal == (row[3].get<int>() != 0), qPrintable(where + QStringLiteral(": terminal differs")));
          QVERIFY2(env.difficulty(env.state(int(g))) == row[6].get<int>(), qPrintable(where + QStringLiteral(": difficulty differs")));
          gold += int(r.reward);
          hardest = std::max(hardest, env.difficulty(env.state(int(g))));
          sticky += draw < MinAtarAsterix::kStickyActionProbability;
          ++steps;
          ++episodeSteps;
        }
        QVERIFY(env.terminal(int(g)) || episode["steps"].size() == 1500 || episode["steps"].size() == 300);
      }
    }
    qInfo("%d Asterix steps replayed: %d spawns, %d gold, %d sticky actions, difficulty up to %d", steps, spawns, gold, sticky, hardest);
    QVERIFY(steps >= 1000 && spawns >= 100 && gold >= 10 && sticky >= 50 && hardest >= 5);
  }

  void spaceInvadersMatchesMinatar() {
    const auto file = golden("space_invaders.json");
    const auto& traces = file["minatar_space_invaders"];
    QVERIFY(traces.size() >= 2);
    MinAtarSpaceInvaders env(int(traces.size()), 1);
    int steps = 0, sticky = 0, hits = 0, episodes = 0, hardest = 0;
    std::vector<float> obs(MinAtarSpaceInvaders::kObservationSize);
    for (size_t g = 0; g < traces.size(); ++g) {
      for (const auto& episode : traces[g]["episodes"]) {
        env.reset(int(g));
        env.observe(int(g), obs.data());
        QVERIFY(obs == fromSetCells(episode["initial"], MinAtarSpaceInvaders::kObservationSize));
        int episodeSteps = 0;
        for (const auto& row : episode["steps"]) {
          const double draw = row[1].get<double>();
          const auto r = env.step(int(g), row[0].get<int>(), draw);
          env.observe(int(g), obs.data());
          const QString where = QStringLiteral("trace %1 step %2").arg(g).arg(episodeSteps);
          QVERIFY2(obs == fromSetCells(row[4], MinAtarSpaceInvaders::kObservationSize),
                   qPrintable(where + QStringLiteral(": observation differs")));
          QVERIFY2(r.reward == row[2].get<float>(), qPrintable(where + QStringLiteral(": reward differs")));
          QVERIFY2(r.terminal == (row[3].get<int>() != 0), qPrintable(where + QStringLiteral(": terminal differs")));
          QVERIFY2(env.difficulty(env.state(int(g))) == row[5].get<int>(), qPrintable(where + QStringLiteral(": difficulty differs")));
          hits += int(r.reward);
          hardest = std::max(hardest, env.difficulty(env.state(int(g))));
          sticky += draw < MinAtarSpaceInvaders::kStickyActionProbability;
          ++steps;
          ++episodeSteps;
        }
        episodes += env.terminal(int(g));
      }
    }
    qInfo("%d Space Invaders steps replayed: %d aliens hit, %d sticky actions, %d episodes to their end, difficulty up to %d", steps, hits,
          sticky, episodes, hardest);
    QVERIFY(steps >= 1000 && hits >= 150 && sticky >= 100 && episodes >= 4 && hardest >= 5);
  }

  void seaquestMatchesMinatar() {
    const auto file = golden("seaquest.json");
    const auto& traces = file["minatar_seaquest"];
    QVERIFY(traces.size() >= 4);
    MinAtarSeaquest env(int(traces.size()), 1);
    int steps = 0, sticky = 0, surfacings = 0, fullSurfacings = 0, enemyBullets = 0, noOxygen = 0, hardest = 0;
    float rewards = 0;
    std::vector<float> obs(MinAtarSeaquest::kObservationSize);
    for (size_t g = 0; g < traces.size(); ++g) {
      for (const auto& episode : traces[g]["episodes"]) {
        env.reset(int(g));
        env.observe(int(g), obs.data());
        QVERIFY(obs == fromSetCells(episode["initial"], MinAtarSeaquest::kObservationSize));
        int episodeSteps = 0;
        for (const auto& row : episode["steps"]) {
          const auto& game = env.state(int(g)).game;
          // minatar draws for an enemy and a diver exactly when the twin says one is due.
          const auto& enemy = row[4];
          const auto& diver = row[5];
          QCOMPARE(env.enemySpawnsNext(env.state(int(g))), !enemy.empty());
          QCOMPARE(env.diverSpawnsNext(env.state(int(g))), !diver.empty());
          MinAtarSeaquest::SpawnDraws draws;
          if (!enemy.empty()) draws.enemy = {enemy[0].get<double>(), enemy[1].get<double>(), enemy[2].get<int>()};
          if (!diver.empty()) draws.diver = {diver[0].get<double>(), diver[1].get<int>()};
          const int oxygenBefore = game.oxygen, diversBefore = game.diverCount;
          const double draw = row[1].get<double>();
          const auto r = env.step(int(g), row[0].get<int>(), draw, draws);
          env.observe(int(g), obs.data());
          const QString where = QStringLiteral("trace %1 step %2").arg(g).arg(episodeSteps);
          QVERIFY2(obs == fromSetCells(row[6], MinAtarSeaquest::kObservationSize), qPrintable(where + QStringLiteral(": observation differs")));
          QVERIFY2(r.reward == row[2].get<float>(), qPrintable(where + QStringLiteral(": reward differs")));
          QVERIFY2(r.terminal == (row[3].get<int>() != 0), qPrintable(where + QStringLiteral(": terminal differs")));
          QVERIFY2(env.difficulty(env.state(int(g))) == row[7].get<int>(), qPrintable(where + QStringLiteral(": difficulty differs")));
          QVERIFY2(game.diverCount == row[8].get<int>(), qPrintable(where + QStringLiteral(": divers carried differ")));
          QVERIFY2(game.oxygen == row[9].get<int>(), qPrintable(where + QStringLiteral(": oxygen differs")));
          surfacings += game.oxygen == MinAtarSeaquest::kMaxOxygen && oxygenBefore < MinAtarSeaquest::kMaxOxygen;
          fullSurfacings += diversBefore == 6 && game.diverCount == -1;  // minatar's count after emptying
          rewards += r.reward;
          enemyBullets = std::max(enemyBullets, game.enemyBullets.count);
          noOxygen += r.terminal && game.oxygen <= 0;
          hardest = std::max(hardest, env.difficulty(env.state(int(g))));
          sticky += draw < MinAtarSeaquest::kStickyActionProbability;
          ++steps;
          ++episodeSteps;
        }
        QVERIFY(env.terminal(int(g)));
      }
    }
    qInfo("%d Seaquest steps replayed: %d surfacings (%d with 6 divers), %.0f reward, up to %d enemy bullets at once, %d episodes out of "
          "oxygen, %d sticky actions, difficulty up to %d",
          steps, surfacings, fullSurfacings, double(rewards), enemyBullets, noOxygen, sticky, hardest);
    // Difficulty 19 is the ramp's end: enemies spawn every step and move every 3rd.
    QVERIFY(steps >= 1000 && surfacings >= 10 && fullSurfacings >= 1 && rewards >= 20 && enemyBullets >= 2 && noOxygen >= 1 && sticky >= 100 &&
            hardest == 19);
  }

  // The generator-driven step plays a plausible Seaquest: seeded; a player that dives, fires and
  // surfaces with a diver aboard before the oxygen runs out scores, ramps the difficulty and
  // sees every kind of entity, and its episodes end.
  void seaquestOwnDraws() {
    MinAtarSeaquest a(8, 5), b(8, 5);
    std::vector<float> x(MinAtarSeaquest::kObservationSize), y(MinAtarSeaquest::kObservationSize), seen(MinAtarSeaquest::kChannels, 0.0f);
    float rewards = 0;
    int episodes = 0, hardest = 0;
    for (int step = 0; step < 3000; ++step)
      for (int g = 0; g < 8; ++g) {
        const auto& s = a.state(g).game;
        const int action = s.diverCount > 0 && s.oxygen < 40 ? 2 : (s.subY == 0 ? 4 : (step % 3 == 0 ? 5 : (step / 7 + g) % 5));
        const auto p = a.step(g, action), q = b.step(g, action);
        QVERIFY(p.reward == q.reward && p.terminal == q.terminal);
        rewards += p.reward;
        hardest = std::max(hardest, a.difficulty(a.state(g)));
        a.observe(g, x.data());
        b.observe(g, y.data());
        QVERIFY(x == y);
        for (int c = 0; c < MinAtarSeaquest::kChannels; ++c)
          for (int i = 0; i < 100; ++i) seen[size_t(c)] += x[size_t(c * 100 + i)];
        if (p.terminal) {
          ++episodes;
          a.reset(g);
          b.reset(g);
        }
      }
    qInfo("Seaquest with its own draws: %d episodes, %.0f reward, difficulty up to %d", episodes, double(rewards), hardest);
    QVERIFY(episodes >= 8 && rewards > 0 && hardest >= 1);
    for (int c = 0; c < MinAtarSeaquest::kChannels; ++c) QVERIFY2(seen[size_t(c)] > 0, qPrintable(QStringLiteral("channel %1 never set").arg(c)));
  }

  // The twins' own draws: seeded, and a crossing in Freeway redraws the cars as minatar does
  // (every car's period within 1-5).
  void ownDrawsAreSeeded() {
    MinAtarFreeway a(4, 11), b(4, 11);
    std::vector<float> x(MinAtarFreeway::kObservationSize), y(MinAtarFreeway::kObservationSize);
    float rewards = 0;
    for (int step = 0; step < 600; ++step)
      for (int g = 0; g < 4; ++g) {
        const auto p = a.step(g, 1), q = b.step(g, 1);
        QVERIFY(p.reward == q.reward && p.terminal == q.terminal);
        rewards += p.reward;
      }
    for (int g = 0; g < 4; ++g) {
      a.observe(g, x.data());
      b.observe(g, y.data());
      QVERIFY(x == y);
    }
    QVERIFY(rewards > 0);
  }

  // After the episode's end a step changes nothing and pays nothing; a reset starts afresh on
  // the side asked for; the generator's own draws are seeded.
  void endsAndResets() {
    MinAtarBreakout env(2, 3);
    env.reset(0, 1);
    int guard = 0;
    while (!env.step(0, 0, 0.5).terminal && ++guard < 1000) {}
    QVERIFY(env.terminal(0));
    std::vector<float> before(MinAtarBreakout::kObservationSize), after(MinAtarBreakout::kObservationSize);
    env.observe(0, before.data());
    const auto r = env.step(0, 2, 0.5);
    env.observe(0, after.data());
    QVERIFY(r.terminal && r.reward == 0 && before == after);
    env.reset(0, 1);
    env.observe(0, after.data());
    QCOMPARE(after[size_t((1 * 10 + 3) * 10 + 9)], 1.0f);  // the ball at row 3, column 9
    QVERIFY(!env.terminal(0));

    MinAtarBreakout a(8, 42), b(8, 42);
    for (int step = 0; step < 50; ++step)
      for (int g = 0; g < 8; ++g) {
        const auto x = a.step(g, (g + step) % 3), y = b.step(g, (g + step) % 3);
        QVERIFY(x.reward == y.reward && x.terminal == y.terminal);
      }
  }
};

QTEST_GUILESS_MAIN(TestMinAtar)
#include "test_minatar.moc"
