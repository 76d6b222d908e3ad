// PPO's rollout on the device (gpu/env/device_rollout.cpp) against the host rollout over the CPU
// twins (core/train/ppo.cpp), both on the CUDA backend with the same seeds: the same
// observations, actions, log-probabilities, values, rewards and episode ends, the same advantages
// and value targets, and after the updates (the device gathering the minibatches into the update
// program, the host uploading them) the same losses and the same next rollout. For MinAtar
// Breakout, CartPole and trading (over a synthetic series); trading's episodes are all cut by
// their length, so it covers the device's bootstrap of cut episodes, which CartPole's untrained
// policy never reaches (its episodes end long before step 500).
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "core/exec/backend.hpp"
#include "core/project/project.hpp"
#include "core/train/ppo.hpp"
#include "support/price_fixture.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

std::shared_ptr<exec::Backend> cuda() {
  const exec::BackendEntry* e = exec::BackendRegistry::instance().find("cuda");
  return e ? e->backend : nullptr;
}

// The example project `folder` (trading-ppo beside a synthetic series: tests/support/price_fixture.hpp).
project::Project projectWith(const QString& folder, const std::vector<std::string>& sets, const QString& scratch) {
  const QString path = cas::test::loadableExample(cas::test::sourcePath(QStringLiteral("projects/")) + folder, scratch);
  project::LoadResult loaded = project::loadProject(path.toStdString());
  if (!loaded.project) throw std::runtime_error("the project does not load");
  for (const std::string& s : sets)
    if (auto problem = loaded.project->parameters.assign(s)) throw std::runtime_error(*problem);
  return *loaded.project;
}

// Entries of `got` and `want` differ by more than `tolerance` (0: bit for bit): the first such, as text.
QString difference(const char* what, const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  if (got.size() != want.size()) return QStringLiteral("%1: %2 entries on the device, %3 on the host").arg(what).arg(got.size()).arg(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tolerance))
      return QStringLiteral("%1[%2]: device %3, host %4").arg(what).arg(i).arg(double(got[i]), 0, 'g', 9).arg(double(want[i]), 0, 'g', 9);
  return {};
}

}  // namespace

class TestDeviceRollout : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    // The source files first, so that a runner that cannot find them fails on any machine
    // (test_source_lookup runs this suite with CAS_SOURCE_DIR elsewhere).
    for (const char* folder : {"minatar-breakout-ppo", "cartpole-ppo", "trading-ppo"}) {
      const QString toml = cas::test::sourcePath(QStringLiteral("projects/%1/project.toml").arg(QLatin1String(folder)));
      QVERIFY2(QFileInfo::exists(toml), qPrintable(toml + QStringLiteral(" not found: set CAS_SOURCE_DIR to the source tree")));
    }
    if (!cuda()) QSKIP("no CUDA backend on this machine");
  }

  void matchesTheHostRollout_data() {
    QTest::addColumn<QString>("folder");
    QTest::newRow("minatar-breakout") << QStringLiteral("minatar-breakout-ppo");
    QTest::newRow("cartpole") << QStringLiteral("cartpole-ppo");
    QTest::newRow("trading-stocks") << QStringLiteral("trading-ppo");
  }
  void matchesTheHostRollout() {
    QFETCH(QString, folder);
    // Trading's episodes are 256 steps: 3 rollouts of 128 steps cut each copy's first one.
    const bool trading = folder == QStringLiteral("trading-ppo");
    const std::vector<std::string> sets = {"ppo.envs=64", trading ? "ppo.rollout_steps=128" : "ppo.rollout_steps=32", "ppo.minibatches=4",
                                           "ppo.epochs=2", "runtime.seed=5", "ppo.device_rollout=true"};
    std::vector<std::string> hostSets = sets;
    hostSets.back() = "ppo.device_rollout=false";
    QTemporaryDir scratch;
    train::PpoTrainer device(projectWith(folder, sets, scratch.path()), cuda()), host(projectWith(folder, hostSets, scratch.path()), cuda());
    // MinAtar's observations and rewards agree to the bit; CartPole's states within the device's
    // last-place differences of cos and sin. The values come from each trainer's own inference
    // program, compiled apart, each timing its own cuDNN convolution algorithms: they may differ
    // in the last places (on the H200, 1.1e-8 in Breakout's first value), hence `network`.
    // Trading's prices and diffs agree to the bit, its episodes (256 steps) are all cut: each
    // cut episode's last state goes through the policy on both sides.
    const float exact = folder.startsWith(QStringLiteral("cartpole")) ? 1e-5f : 0.0f;
    const float network = 1e-5f;
    // A cut episode's reward carries the discounted value of its last state (each side's own
    // inference program's).
    const float rewards = trading ? network : exact;
    QVERIFY2(device.rolloutOnDevice(), device.rolloutNote().c_str());
    QVERIFY(!host.rolloutOnDevice());
    QVERIFY2(host.rolloutNote().find("ppo.device_rollout is off") != std::string::npos, host.rolloutNote().c_str());
    for (int iteration = 1; iteration <= 3; ++iteration) {
      const train::IterationReport d = device.runIteration(), h = host.runIteration();
      const train::RolloutArrays a = device.lastRollout(), b = host.lastRollout();
      for (const QString& problem : {difference("observations", a.obs, b.obs, exact), difference("actions", a.actions, b.actions, 0),
                                     difference("log-probabilities", a.logProbs, b.logProbs, 1e-6f), difference("values", a.values, b.values, network),
                                     difference("rewards", a.rewards, b.rewards, rewards), difference("episode ends", a.dones, b.dones, 0),
                                     difference("last values", a.lastValues, b.lastValues, network),
                                     difference("advantages", a.advantages, b.advantages, 1e-5f), difference("value targets", a.returns, b.returns, 1e-5f)})
        QVERIFY2(problem.isEmpty(), qPrintable(QStringLiteral("iteration %1, %2").arg(iteration).arg(problem)));
      QCOMPARE(d.episodes->episodes, h.episodes->episodes);
      QVERIFY(std::abs(d.episodes->returnMean - h.episodes->returnMean) <= 1e-9 * (1 + std::abs(h.episodes->returnMean)));  // summed in another order
      QVERIFY2(std::abs(d.loss - h.loss) <= 1e-5f * (1 + std::abs(h.loss)),
               qPrintable(QStringLiteral("iteration %1: loss %2 on the device rollout, %3 on the host's").arg(iteration).arg(d.loss).arg(h.loss)));
      qInfo("%s iteration %d: %lld episodes ended, return %.3f, loss %.6f (host %.6f)", qPrintable(folder), iteration,
            static_cast<long long>(d.episodes->episodes), d.episodes->returnMean, double(d.loss), double(h.loss));
    }
  }
};

QTEST_GUILESS_MAIN(TestDeviceRollout)
#include "test_device_rollout.moc"
