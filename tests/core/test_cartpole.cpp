// CartPole against trajectories recorded from Gymnasium's CartPole-v1
// (tests/golden/make_cartpole_traces.py): same observations, rewards and episode ends.
#include <QTest>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/env/cartpole.hpp"
#include "support/source_dir.hpp"

class TestCartPole : public QObject {
  Q_OBJECT
 private slots:
  void matchesGymnasium() {
    std::ifstream in(cas::test::sourceFile("tests/golden/cartpole/traces.json"));
    QVERIFY(in.good());
    const auto traces = nlohmann::json::parse(in);
    QVERIFY(traces.size() >= 8);
    cas::env::CartPole env(int(traces.size()), 1);
    int truncations = 0, terminations = 0;
    for (size_t g = 0; g < traces.size(); ++g) {
      const auto& t = traces[g];
      const auto s = t["initial_state"].get<std::vector<double>>();
      env.setState(int(g), s[0], s[1], s[2], s[3]);
      const auto& steps = t["steps"];
      for (size_t k = 0; k < steps.size(); ++k) {
        const auto& step = steps[k];
        const auto r = env.step(int(g), step["action"].get<int>());
        float obs[4];
        env.observe(int(g), obs);
        const auto expected = step["obs"].get<std::vector<float>>();
        for (int d = 0; d < 4; ++d)
          QVERIFY2(obs[d] == expected[size_t(d)], qPrintable(QStringLiteral("trace %1 step %2 variable %3: %4, Gymnasium %5")
                                                          .arg(g).arg(k).arg(d).arg(double(obs[d]), 0, 'g', 9).arg(double(expected[size_t(d)]), 0, 'g', 9)));
        QCOMPARE(r.reward, step["reward"].get<float>());
        QCOMPARE(r.terminated, step["terminated"].get<bool>());
        QCOMPARE(r.truncated, step["truncated"].get<bool>());
      }
      truncations += steps.back()["truncated"].get<bool>();
      terminations += steps.back()["terminated"].get<bool>();
    }
    QVERIFY(truncations > 0 && terminations > 0);  // both ways an episode ends are covered
  }

  void resetIsSmallAndSeeded() {
    cas::env::CartPole a(4, 9), b(4, 9);
    for (int g = 0; g < 4; ++g) {
      float x[4], y[4];
      a.observe(g, x);
      b.observe(g, y);
      for (int d = 0; d < 4; ++d) {
        QCOMPARE(x[d], y[d]);
        QVERIFY(std::abs(x[d]) <= 0.05f);
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestCartPole)
#include "test_cartpole.moc"
