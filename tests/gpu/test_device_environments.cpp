// The device environments (gpu/env) against their CPU twins (core/env): for every environment
// with a device twin, the same copies seeded the same way give the same observations, rewards
// and episode ends, copy for copy and step for step, through hundreds of resets; and a random
// run on the device (bench env's) gives the CPU loop's rewards and episode count. MinAtar,
// trading and market making agree to the bit; CartPole's observations within 1e-5, since the device's double cos
// and sin may differ from the host's in the last place. Trading steps over a synthetic series
// (tests/support/price_fixture.hpp), its training part uploaded to the device.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "core/env/environments.hpp"
#include "core/env/game_random.hpp"
#include "core/env/single_agent.hpp"
#include "core/env/vector_environments.hpp"
#include "core/env/price_series.hpp"
#include "core/exec/backend.hpp"
#include "support/price_fixture.hpp"

using namespace cas;

namespace {

std::shared_ptr<exec::Backend> cuda() {
  const exec::BackendEntry* e = exec::BackendRegistry::instance().find("cuda");
  return e ? e->backend : nullptr;
}

// A row is an environment, or a trading environment and its reward after a '/'.
const char* const kEnvironments[] = {"cartpole",         "minatar-asterix",        "minatar-breakout", "minatar-freeway",        "minatar-seaquest",
                                     "minatar-space-invaders", "trading-stocks", "trading-stocks/equity", "market-making"};

std::string environmentOf(const QString& row) { return row.section(QLatin1Char('/'), 0, 0).toStdString(); }

// What the project would give the row's environment: for trading, a synthetic series of 3,000 daily bars
// (read through the CSV reader, as a project's), 80% of it traded.
env::EnvironmentData dataFor(const QString& row) {
  env::EnvironmentData data;
  if (!env::findEnvironment(environmentOf(row))->needsSeries) return data;
  if (row.endsWith(QStringLiteral("/equity"))) data.tradingReward = env::TradingReward::Equity;
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("prices.csv"));
  if (!cas::test::writeText(path, cas::test::syntheticPrices(3000, 4))) throw std::runtime_error("cannot write the series");
  data.series = std::make_shared<const env::PriceSeries>(env::readPriceSeries(path.toStdString()));
  return data;
}

int observationSize(const env::EnvironmentInfo& e) {
  int n = 1;
  for (int d : e.observationShape) n *= d;
  return n;
}

}  // namespace

class TestDeviceEnvironments : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!cuda()) QSKIP("no CUDA backend on this machine");
  }

  void stepsAsTheCpuTwin_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kEnvironments) QTest::newRow(name) << QString::fromLatin1(name);
  }
  void stepsAsTheCpuTwin() {
    QFETCH(QString, name);
    const std::string environment = environmentOf(name);
    const env::EnvironmentInfo& info = *env::findEnvironment(environment);
    const bool exact = environment != "cartpole";
    // Freeway's episodes end by its clock, after 2500 steps.
    constexpr int kCopies = 1000;
    const int kSteps = environment == "minatar-freeway" ? 2600 : 400;
    constexpr std::uint64_t kSeed = 7;
    std::string reason;
    const env::EnvironmentData data = dataFor(name);
    auto device = cuda()->deviceServices()->createEnvironments(environment, kCopies, kSeed, data, &reason);
    QVERIFY2(device, reason.c_str());
    QCOMPARE(device->observationSize(), observationSize(info));
    QCOMPARE(device->actionCount(), info.actionCount);
    auto host = info.singleAgent(kCopies, kSeed, data);
    const int obs = device->observationSize();
    std::vector<float> deviceObs(size_t(kCopies) * size_t(obs)), hostObs(deviceObs.size());
    QString difference;
    std::vector<int> actions(kCopies);  // this step's
    auto compareObservations = [&](int step) {
      device->observe(deviceObs.data());
      for (int g = 0; g < kCopies; ++g) host->observe(g, hostObs.data() + size_t(g) * size_t(obs));
      for (size_t i = 0; i < hostObs.size(); ++i) {
        const bool same = exact ? deviceObs[i] == hostObs[i] : std::abs(deviceObs[i] - hostObs[i]) <= 1e-5f;
        if (same) continue;
        difference = QStringLiteral("%1, step %2, copy %3, entry %4: device %5, CPU twin %6 (the copy's action: %7)")
                         .arg(name).arg(step).arg(i / size_t(obs)).arg(i % size_t(obs)).arg(double(deviceObs[i])).arg(double(hostObs[i]))
                         .arg(step == 0 ? -1 : actions[i / size_t(obs)]);
        return false;
      }
      return true;
    };
    QVERIFY2(compareObservations(0), qPrintable(difference));
    env::GameRandom actionDraws = env::GameRandom::forGame(99, 0);
    std::vector<float> rewards(kCopies);
    std::vector<std::uint8_t> terminated(kCopies), truncated(kCopies);
    std::int64_t episodes = 0;
    for (int step = 1; step <= kSteps; ++step) {
      for (int& a : actions) a = actionDraws.below(info.actionCount);
      device->step(actions.data(), rewards.data(), terminated.data(), truncated.data());
      for (int g = 0; g < kCopies; ++g) {
        const env::StepResult r = host->step(g, actions[size_t(g)]);
        if (r.reward != rewards[size_t(g)] || r.terminated != bool(terminated[size_t(g)]) || r.truncated != bool(truncated[size_t(g)]))
          QFAIL(qPrintable(QStringLiteral("%1, step %2, copy %3: device reward %4 ended %5/%6, CPU twin %7 %8/%9")
                               .arg(name).arg(step).arg(g).arg(double(rewards[size_t(g)])).arg(int(terminated[size_t(g)])).arg(int(truncated[size_t(g)]))
                               .arg(double(r.reward)).arg(int(r.terminated)).arg(int(r.truncated))));
        if (r.terminated || r.truncated) {
          ++episodes;
          host->reset(g);
        }
      }
      if (step <= 10 || step % 50 == 0 || step == kSteps) QVERIFY2(compareObservations(step), qPrintable(difference));
    }
    qInfo("%s: %d copies x %d steps agree, %lld episodes ended and were reset", environment.c_str(), kCopies, kSteps, static_cast<long long>(episodes));
    QVERIFY(episodes > 0);
  }

  void randomRunAsTheCpuLoop_data() { stepsAsTheCpuTwin_data(); }
  void randomRunAsTheCpuLoop() {
    QFETCH(QString, name);
    const std::string environment = environmentOf(name);
    const env::EnvironmentInfo& info = *env::findEnvironment(environment);
    constexpr int kCopies = 512, kSteps = 300;
    std::string reason;
    const env::EnvironmentData data = dataFor(name);
    auto device = cuda()->deviceServices()->createEnvironments(environment, kCopies, 3, data, &reason);
    QVERIFY2(device, reason.c_str());
    const auto run = device->stepRandomly(kSteps, 11);
    auto host = info.singleAgent(kCopies, 3, data);
    double reward = 0;
    std::int64_t episodes = 0;
    for (int g = 0; g < kCopies; ++g) {
      env::GameRandom actions = env::GameRandom::forGame(11, g);
      for (int s = 0; s < kSteps; ++s) {
        const env::StepResult r = host->step(g, actions.below(info.actionCount));
        reward += r.reward;
        if (r.terminated || r.truncated) {
          ++episodes;
          host->reset(g);
        }
      }
    }
    qInfo("%s: %lld episodes, reward %.0f (device %lld, %.0f) in %.3f ms on the device", environment.c_str(), static_cast<long long>(episodes), reward,
          static_cast<long long>(run.episodes), run.reward, run.seconds * 1e3);
    if (environment == "cartpole") {
      QVERIFY(std::abs(double(run.episodes - episodes)) <= 2);  // a last-place difference may move one episode's end
    } else if (environment.rfind("minatar-", 0) != 0) {  // fractions: each copy's float sum on the device, one double sum here
      QCOMPARE(run.episodes, episodes);
      QVERIFY2(std::abs(run.reward - reward) <= 1e-4 * (1 + std::abs(reward)), qPrintable(QStringLiteral("%1 against %2").arg(run.reward).arg(reward)));
    } else {
      QCOMPARE(run.episodes, episodes);
      QCOMPARE(run.reward, reward);
    }
    QVERIFY(run.seconds > 0);
  }

  void refusesWhatItCannotHold() {
    std::string reason;
    QVERIFY(!cuda()->deviceServices()->createEnvironments("connect4", 8, 1, {}, &reason));
    QVERIFY2(reason.find("no device twin") != std::string::npos, reason.c_str());
    QVERIFY(!cuda()->deviceServices()->createEnvironments("minatar-breakout", 0, 1, {}, &reason));
    QVERIFY(!reason.empty());
    QVERIFY(!cuda()->deviceServices()->createEnvironments("trading-stocks", 8, 1, {}, &reason));
    QVERIFY2(reason.find("price series") != std::string::npos, reason.c_str());
  }
};

QTEST_GUILESS_MAIN(TestDeviceEnvironments)
#include "test_device_environments.moc"
