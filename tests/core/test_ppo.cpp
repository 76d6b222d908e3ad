// PPO on the CPU backend: GAE against CleanRL's loop (numpy), the loss and its gradient against
// PyTorch (tests/golden/ppo, made by make_ppo_golden.py), the entry signature refused with the
// policy's file:line, a seeded CartPole run that learns (and repeats itself exactly), a
// checkpoint that restores the policy, and `cuda-agent train` / `eval --episodes --json` end to end.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/env/environments.hpp"
#include "core/project/project.hpp"
#include "core/train/gae.hpp"
#include "core/train/ppo.hpp"
#include "core/train/update.hpp"
#include "support/cli_runs.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

const QString kCartPole = cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo"));

nlohmann::json golden(const char* name) {
  std::ifstream in(cas::test::sourceFile("tests/golden/ppo/") + name + ".json");
  if (!in) return {};
  return nlohmann::json::parse(in);
}

std::vector<float> floats(const nlohmann::json& j) { return j.get<std::vector<float>>(); }

bool close(double got, double want, double rtol, double atol) { return std::abs(got - want) <= atol + rtol * std::abs(want); }

// The cartpole-ppo project with its parameters overridden by `sets` ("key=value").
project::Project cartPole(const std::vector<std::string>& sets) {
  project::LoadResult loaded = project::loadProject(kCartPole.toStdString());
  if (!loaded.project) throw std::runtime_error("projects/cartpole-ppo does not load");
  for (const std::string& s : sets)
    if (auto problem = loaded.project->parameters.assign(s)) throw std::runtime_error(*problem);
  return *loaded.project;
}

std::shared_ptr<exec::Backend> cpu() { return exec::BackendRegistry::instance().find("cpu")->backend; }

// A small budget that still learns: 48 iterations of 4 x 128 steps, about a second on two cores.
const std::vector<std::string> kShortRun = {"ppo.total_steps=24576"};

}  // namespace

class TestPpo : public QObject {
  Q_OBJECT
 private slots:
  void gaeMatchesCleanRl() {
    const nlohmann::json g = golden("gae");
    QVERIFY2(!g.is_null(), "golden data missing: run tests/golden/make_ppo_golden.py");
    const train::Advantages a = computeGaeOf(g);
    const std::vector<float> advantages = floats(g["advantages"]), returns = floats(g["returns"]);
    QCOMPARE(a.advantages.size(), advantages.size());
    for (size_t i = 0; i < advantages.size(); ++i) {
      QVERIFY2(close(a.advantages[i], advantages[i], 1e-5, 1e-5), qPrintable(QStringLiteral("advantage %1: %2, CleanRL %3").arg(i).arg(a.advantages[i]).arg(advantages[i])));
      QVERIFY2(close(a.returns[i], returns[i], 1e-5, 1e-5), qPrintable(QStringLiteral("return %1: %2, CleanRL %3").arg(i).arg(a.returns[i]).arg(returns[i])));
    }
  }

  void gaeByHand() {
    // One environment, three steps, the episode ending at step 1: the advantage of step 1 sees
    // no value beyond it, step 0 bootstraps through step 1 only.
    const double gamma = 0.5, lambda = 0.5;
    const train::Advantages a = train::computeGae({1, 2, 3}, {10, 20, 30}, {0, 1, 0}, {40}, 3, 1, gamma, lambda);
    const double d2 = 3 + gamma * 40 - 30, d1 = 2 - 20.0, d0 = 1 + gamma * 20 - 10;
    const double a2 = d2, a1 = d1, a0 = d0 + gamma * lambda * a1;
    QCOMPARE(a.advantages, (std::vector<float>{float(a0), float(a1), float(a2)}));
    QCOMPARE(a.returns, (std::vector<float>{float(a0 + 10), float(a1 + 20), float(a2 + 30)}));
  }

  void lossAndGradientMatchTorch() {
    const nlohmann::json g = golden("loss");
    QVERIFY2(!g.is_null(), "golden data missing: run tests/golden/make_ppo_golden.py");
    pdl::CompileOptions options;
    options.observationShape = {g["obs_size"].get<std::int64_t>()};
    options.actionCount = g["action_dim"].get<std::int64_t>();
    options.algorithm = "ppo";
    options.batch = g["batch"].get<std::int64_t>();
    options.training = true;
    auto compiled = pdl::compile(g["pdl"].get<std::string>(), options);
    QVERIFY(compiled.policy);
    // Plain SGD with step size 1 and no clipping: the step subtracts the gradient itself.
    train::OptimizerConfig sgd;
    sgd.kind = "sgd";
    sgd.learningRate = 1;
    sgd.momentum = 0;
    sgd.gradClip = 0;
    train::Updater updater(*cpu(), *compiled.policy, train::LossKind::Ppo, sgd, options.actionCount, 1);
    exec::Executable& exe = updater.executable();
    std::map<std::string, std::vector<float>> before;
    for (const auto& [name, values] : g["parameters"].items()) {
      before[name] = floats(values);
      updater.setParameter(name, before[name]);
    }
    for (const char* input : {"obs", "actions", "advantages", "returns", "old_log_probs", "old_values"}) {
      const std::vector<float> v = floats(g[input == std::string("obs") ? "obs" : input]);
      exe.setInput(input, v.data(), v.size());
    }
    const float clip = g["clip"], valueCoef = g["value_coef"], entropyCoef = g["entropy_coef"];
    exe.setInput(train::kPpoClip, &clip, 1);
    exe.setInput(train::kPpoValueCoef, &valueCoef, 1);
    exe.setInput(train::kPpoEntropyCoef, &entropyCoef, 1);
    const float loss = updater.step();
    QVERIFY2(close(loss, g["loss"].get<double>(), 1e-4, 1e-6), qPrintable(QStringLiteral("loss %1, torch %2").arg(loss).arg(g["loss"].get<double>())));
    for (const char* term : {"policy", "value", "entropy", "approx_kl", "clip_fraction"}) {
      float v = 0;
      exe.readOutput(std::string("loss/") + term, &v, 1);
      QVERIFY2(close(v, g[term].get<double>(), 1e-4, 1e-6), qPrintable(QStringLiteral("%1: %2, torch %3").arg(term).arg(v).arg(g[term].get<double>())));
    }
    // The data must exercise both clips, or the comparison proves less than it seems.
    QVERIFY(g["clip_fraction"].get<double>() > 0 && g["clip_fraction"].get<double>() < 1);
    for (const auto& [name, values] : g["gradients"].items()) {
      const std::vector<float> want = floats(values), after = updater.parameter(name);
      QCOMPARE(after.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const double gradient = double(before[name][i]) - double(after[i]);
        QVERIFY2(close(gradient, want[i], 1e-3, 1e-5),
                 qPrintable(QStringLiteral("d loss / d %1[%2]: %3, torch %4").arg(QString::fromStdString(name)).arg(i).arg(gradient).arg(want[i])));
      }
    }
  }

  void entrySignatureRefusedWithLocation_data() {
    QTest::addColumn<QByteArray>("pdl");
    QTest::addColumn<QString>("expected");
    QTest::newRow("one output") << QByteArray("def policy(obs):\n    h = tanh(dense(obs, units=8))\n    return dense(h, units=action_dim)\n")
                                << QStringLiteral("policy.pdl:3:12: error: a PPO policy must return (logits, value), but 'policy' returns one tensor of shape [2]");
    QTest::newRow("wide value") << QByteArray("def policy(obs):\n    h = tanh(dense(obs, units=8))\n    return dense(h, units=action_dim), dense(h, units=2)\n")
                                << QStringLiteral("policy.pdl:3:40: error: the value must have shape [1], got [2]");
  }

  void entrySignatureRefusedWithLocation() {
    QFETCH(QByteArray, pdl);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QFile toml(dir.filePath(QStringLiteral("project.toml"))), policy(dir.filePath(QStringLiteral("policy.pdl")));
    QVERIFY(toml.open(QIODevice::WriteOnly) && policy.open(QIODevice::WriteOnly));
    toml.write("name = \"wrong\"\nenvironment = \"cartpole\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n");
    policy.write(pdl);
    toml.close();
    policy.close();
    project::LoadResult loaded = project::loadProject(dir.path().toStdString());
    QVERIFY(loaded.project);
    try {
      train::makeTrainer(*loaded.project, cpu());
      QFAIL("a policy of the wrong signature was accepted");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString::fromStdString(e.what()).contains(expected), e.what());
    }
    // And `cuda-agent train` says the same and exits with an error, leaving no run behind.
    const test::Result r = test::cli({QStringLiteral("train"), dir.path(), QStringLiteral("--out"), dir.filePath(QStringLiteral("run")),
                                      QStringLiteral("--device"), QStringLiteral("cpu")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    QVERIFY(!QDir(dir.filePath(QStringLiteral("run"))).exists());
  }

  void cartPoleLearnsDeterministically() {
    train::PpoTrainer first(cartPole(kShortRun), cpu()), second(cartPole(kShortRun), cpu());
    const double untrained = first.evaluate(20, false, 7).mean();
    std::vector<double> early, late;
    while (!first.reachedEnd()) {
      const train::IterationReport a = first.runIteration(), b = second.runIteration();
      // Seeded: the same rollouts and the same updates, bit for bit.
      QCOMPARE(a.loss, b.loss);
      QCOMPARE(a.episodes->returnMean, b.episodes->returnMean);
      if (a.episodes->episodes > 0) (a.iteration <= 8 ? early : late).push_back(a.episodes->returnMean);
    }
    QCOMPARE(first.iteration(), std::int64_t(48));
    const double trained = first.evaluate(20, false, 7).mean();
    auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); };
    qInfo("greedy return %.1f untrained, %.1f after %lld steps; training return %.1f early, %.1f late", untrained, trained,
          static_cast<long long>(first.environmentSteps()), mean(early), mean(late));
    QVERIFY2(trained > 3 * untrained && trained >= 100, qPrintable(QStringLiteral("greedy return %1 after training, %2 before").arg(trained).arg(untrained)));
    QVERIFY(mean(late) > 2 * mean(early));
  }

  void checkpointRestoresThePolicy() {
    train::PpoTrainer trainer(cartPole(kShortRun), cpu());
    for (int i = 0; i < 5; ++i) trainer.runIteration();
    const std::string bytes = trainer.checkpoint();
    train::PpoTrainer restored(cartPole(kShortRun), cpu());
    std::string error;
    QVERIFY2(restored.restore(bytes, &error), error.c_str());
    QCOMPARE(restored.iteration(), std::int64_t(5));
    QCOMPARE(restored.environmentSteps(), std::int64_t(5 * 512));
    QCOMPARE(restored.evaluate(8, true, 3).returns, trainer.evaluate(8, true, 3).returns);
    QVERIFY(bytes.size() <= restored.checkpointSizeLimit());
  }

  void evaluationStatistics() {
    train::EpisodeEvaluation e;
    e.returns = {1, 2, 3, 10};
    QCOMPARE(e.mean(), 4.0);
    QCOMPARE(e.median(), 2.5);
    QVERIFY(std::abs(e.standardDeviation() - std::sqrt(12.5)) < 1e-12);  // numpy.std([1, 2, 3, 10])
  }

  // Every MinAtar twin is one PPO can step: the example project trains two rollouts of
  // minatar-breakout (64 environments, channels-first observations through a convolution) and
  // records episodes that end; each other game's twin steps and ends episodes through the same
  // interface.
  void minatarGamesTrain() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("breakout"));
    const test::Result train = test::cli({QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/minatar-breakout-ppo")), QStringLiteral("--out"),
                                          run, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--set"),
                                          QStringLiteral("ppo.total_steps=16384")});
    QVERIFY2(train.status == 0, qPrintable(train.err));
    QVERIFY2(train.out.contains(QStringLiteral("iter 2 | steps 16384 | return ")), qPrintable(train.out));
    for (const char* name : {"minatar-asterix", "minatar-breakout", "minatar-freeway", "minatar-seaquest", "minatar-space-invaders"}) {
      const env::EnvironmentInfo* info = env::findEnvironment(name);
      QVERIFY2(info && info->singleAgent, name);
      auto envs = info->singleAgent(2, 5, {});
      QCOMPARE(envs->size(), 2);
      std::vector<float> obs(size_t(info->observationShape[0] * info->observationShape[1] * info->observationShape[2]));
      envs->observe(1, obs.data());
      QVERIFY(std::all_of(obs.begin(), obs.end(), [](float x) { return x == 0.0f || x == 1.0f; }));
      bool ended = false;
      for (int t = 0; t < 20000 && !ended; ++t) ended = envs->step(0, t % info->actionCount).terminated;
      QVERIFY2(ended, name);  // every MinAtar game ends: a loss, or Freeway's clock
    }
  }

  void trainAndEvalThroughTheCli() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    const test::Result train = test::cli({QStringLiteral("train"), kCartPole, QStringLiteral("--out"), run, QStringLiteral("--device"),
                                          QStringLiteral("cpu"), QStringLiteral("--set"), QStringLiteral("ppo.total_steps=5120"),
                                          QStringLiteral("--set"), QStringLiteral("train.checkpoint_every=4")});
    QVERIFY2(train.status == 0, qPrintable(train.err));
    QCOMPARE(train.out.count(QStringLiteral("iter ")), 10);  // the run ends at ppo.total_steps: 10 rollouts of 512
    QVERIFY2(train.out.contains(QStringLiteral("iter 10 | steps 5120 | ")), qPrintable(train.out));
    const QStringList metrics = test::lines(run + QStringLiteral("/metrics.jsonl"));
    QCOMPARE(metrics.size(), 10);
    const QJsonObject last = QJsonDocument::fromJson(metrics.last().toUtf8()).object();
    for (const char* key : {"env_steps", "episodes", "loss", "loss_policy", "loss_value", "policy_entropy", "approx_kl", "clip_fraction",
                            "env_steps_per_second", "seconds_wall"})
      QVERIFY2(last.contains(QLatin1String(key)), key);
    QCOMPARE(last.value(QLatin1String("env_steps")).toInt(), 5120);
    QVERIFY(QFile::exists(run + QStringLiteral("/checkpoints/iter-00000010.ckpt")));

    const test::Result eval = test::cli({QStringLiteral("eval"), run, QStringLiteral("--episodes"), QStringLiteral("12"),
                                         QStringLiteral("--json"), QStringLiteral("--device"), QStringLiteral("cpu")});
    QVERIFY2(eval.status == 0, qPrintable(eval.err));
    const QJsonObject e = QJsonDocument::fromJson(eval.out.toUtf8()).object();
    QCOMPARE(e.value(QLatin1String("episodes")).toInt(), 12);
    for (const char* key : {"mean_return", "median_return", "std_return"}) QVERIFY2(e.value(QLatin1String(key)).isDouble(), key);
    QVERIFY(e.value(QLatin1String("mean_return")).toDouble() >= 8);  // CartPole ends no episode before step 8

    // A PPO run is not an opponent, and an AlphaZero run has no episodes: both refused, saying what to do.
    const test::Result games = test::cli({QStringLiteral("eval"), run, QStringLiteral("--device"), QStringLiteral("cpu")});
    QCOMPARE(games.status, 1);
    QVERIFY2(games.err.contains(QStringLiteral("is a ppo run")) && games.err.contains(QStringLiteral("--episodes N")), qPrintable(games.err));
  }

 private:
  static train::Advantages computeGaeOf(const nlohmann::json& g) {
    return train::computeGae(floats(g["rewards"]), floats(g["values"]), floats(g["dones"]), floats(g["last_values"]), g["steps"].get<std::int64_t>(),
                             g["envs"].get<std::int64_t>(), g["gamma"].get<double>(), g["lambda"].get<double>());
  }
};

QTEST_GUILESS_MAIN(TestPpo)
#include "test_ppo.moc"
