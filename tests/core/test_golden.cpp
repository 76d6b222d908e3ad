// The CPU backend against PyTorch (tests/golden, made by make_golden.py): forward outputs of
// every op case and network at rtol 1e-4, gradients at rtol 1e-3 (atol 1e-5 on both, for values
// near zero), and three actor-critic updates (clip 5.0, Adam) on the four networks.
#include <QDir>
#include <QTest>

#include "support/golden.hpp"
#include "core/train/update.hpp"

using namespace cas;

namespace {

constexpr double kForwardRtol = 1e-4, kGradRtol = 1e-3, kAtol = 1e-5;

QStringList caseNames() {
  QStringList names;
  for (const QString& f : QDir(QString::fromStdString(golden::dataDir())).entryList({QStringLiteral("*.json")}, QDir::Files))
    names << f.chopped(5);
  return names;
}

}  // namespace

class TestGolden : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(caseNames().size() >= 20, "golden data missing: run tests/golden/make_golden.py"); }

  void forwardAndGradients_data() {
    QTest::addColumn<QString>("name");
    for (const QString& n : caseNames()) QTest::newRow(qPrintable(n)) << n;
  }

  void forwardAndGradients() {
    QFETCH(QString, name);
    golden::Case c = golden::load(name.toStdString());
    auto compiled = pdl::compile(c.meta["pdl"].get<std::string>(), c.options());
    QVERIFY2(compiled.policy, compiled.diagnostics.empty() ? "" : formatHeadline(compiled.diagnostics.items()[0]).c_str());
    auto exe = golden::gradientRun(c, *compiled.policy);
    exe->setFiniteCheck(true);
    exe->run();
    for (size_t i = 0; i < compiled.policy->outputNames.size(); ++i) {
      auto got = golden::output(*exe, compiled.policy->outputNames[i]);
      auto ref = c.tensor("output:" + std::to_string(i));
      double worst = 0;
      const auto bad = golden::firstMismatch(got, ref, kAtol, kForwardRtol, &worst);
      QVERIFY2(bad < 0, qPrintable(QStringLiteral("output %1 element %2: got %3, PyTorch %4")
                                       .arg(i).arg(bad).arg(got[size_t(std::max<std::int64_t>(0, bad))]).arg(ref[size_t(std::max<std::int64_t>(0, bad))])));
    }
    for (const auto& [key, info] : c.meta["tensors"].items()) {
      if (!key.starts_with("grad:")) continue;
      auto ref = c.tensor(key);
      auto got = golden::output(*exe, key);
      double worst = 0;
      const auto bad = golden::firstMismatch(got, ref, kAtol, kGradRtol, &worst);
      QVERIFY2(bad < 0, qPrintable(QStringLiteral("%1 element %2: got %3, PyTorch %4")
                                       .arg(QString::fromStdString(key)).arg(bad)
                                       .arg(got[size_t(std::max<std::int64_t>(0, bad))]).arg(ref[size_t(std::max<std::int64_t>(0, bad))])));
    }
  }

  void nonFiniteCheckNamesTheFirstOp() {
    pdl::CompileOptions o;
    o.observationShape = {4};
    o.actionCount = 2;
    o.fileName = "nan.pdl";
    auto compiled = pdl::compile("def policy(obs):\n    h = tanh(dense(obs, units=3))\n    return exp(log(h - 2) * 0.5)\n", o);
    QVERIFY(compiled.policy);
    ir::Graph g = compiled.policy->graph;
    ir::runPasses(g, ir::defaultPipeline());
    auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
    exe->setFiniteCheck(true);
    golden::setFormulaParameters(*exe);
    std::vector<float> obs(4, 0.5f);
    exe->setInput("obs", obs.data(), obs.size());
    try {
      exe->run();
      QFAIL("log of a negative number should have been reported");
    } catch (const exec::NonFiniteError& e) {
      QVERIFY2(std::string(e.what()).find(" log in policy (line 3:16)") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).rfind("NaN first produced by %", 0) == 0, e.what());
    }
  }

  void updates_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("optimizer");
    for (const QString& n : caseNames())
      if (golden::load(n.toStdString()).meta["update"].get<bool>())
        for (const char* opt : {"adam", "sgd"}) QTest::newRow(qPrintable(n + QLatin1Char('/') + QLatin1String(opt))) << n << QString::fromLatin1(opt);
  }

  void updates() {
    QFETCH(QString, name);
    QFETCH(QString, optimizer);
    golden::Case c = golden::load(name.toStdString());
    auto compiled = pdl::compile(c.meta["pdl"].get<std::string>(), c.options());
    QVERIFY(compiled.policy);
    train::OptimizerConfig config;  // Adam: lr 1e-3, betas 0.9/0.999, eps 1e-8; clip 5.0
    if (optimizer == QLatin1String("sgd")) {
      config.kind = "sgd";
      config.learningRate = 0.01f;
      config.momentum = 0.9f;
    }
    const std::string prefix = optimizer == QLatin1String("sgd") ? "update_sgd:" : "update:";
    train::Updater updater(*exec::BackendRegistry::instance().find("cpu")->backend, *compiled.policy, train::LossKind::PolicyGradient,
                           config, c.meta["action_dim"].get<std::int64_t>(), 0);
    exec::Executable& exe = updater.executable();
    golden::setFormulaParameters(exe);
    for (const char* key : {"obs", "update:actions", "update:advantages", "update:returns"}) {
      auto v = c.tensor(key);
      const std::string input = std::string(key).starts_with("update:") ? std::string(key).substr(7) : key;
      exe.setInput(input, v.data(), v.size());
    }
    auto losses = c.tensor(prefix + "loss");
    for (int step = 0; step < 3; ++step) {
      const float loss = updater.step();
      QVERIFY2(std::abs(loss - losses[size_t(step)]) <= 1e-5 + 1e-4 * std::abs(losses[size_t(step)]),
               qPrintable(QStringLiteral("loss before step %1: %2, PyTorch %3").arg(step).arg(loss).arg(losses[size_t(step)])));
    }
    // After three Adam steps an element moves by about lr per step whatever its gradient's size,
    // so an element whose gradient is near zero can move either way: allow 3 * lr there. SGD
    // moves in proportion to the gradient, so it is held to the tight tolerance everywhere.
    const double atol = optimizer == QLatin1String("sgd") ? 1e-5 : 3e-3;
    int compared = 0;
    for (const auto& p : updater.parameters()) {
      const std::string key = prefix + "param:" + p.name;
      if (!c.has(key)) continue;
      auto ref = c.tensor(key);
      auto got = updater.parameter(p.name);
      double worst = 0;
      const auto bad = golden::firstMismatch(got, ref, atol, 1e-4, &worst);
      QVERIFY2(bad < 0, qPrintable(QStringLiteral("%1 element %2 after 3 steps: got %3, PyTorch %4")
                                       .arg(QString::fromStdString(p.name)).arg(bad).arg(got[size_t(std::max<std::int64_t>(0, bad))])
                                       .arg(ref[size_t(std::max<std::int64_t>(0, bad))])));
      // Most elements must agree far more tightly than that.
      int close = 0;
      for (size_t i = 0; i < ref.size(); ++i) close += std::abs(got[i] - ref[i]) <= 1e-5 + 1e-4 * std::abs(ref[i]);
      QVERIFY2(close >= int(0.99 * double(ref.size())), qPrintable(QString::fromStdString(p.name)));
      ++compared;
    }
    QVERIFY(compared > 0);
  }
};

QTEST_GUILESS_MAIN(TestGolden)
#include "test_golden.moc"
