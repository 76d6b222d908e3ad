// Finite-difference checks of every op's gradient on the CPU backend: for each golden op case,
// L = sum(output * cotangent), and for a sample of elements of the observation and of every
// parameter, the central difference (L(x+h) - L(x-h)) / 2h must match the autodiff gradient.
// An element where the one-sided differences disagree sits on a kink (relu, max, clip) and is
// skipped; at least 80% of the sampled elements must be checked.
#include <QDir>
#include <QTest>

#include "support/golden.hpp"

using namespace cas;

class TestGradcheck : public QObject {
  Q_OBJECT
 private slots:
  void finiteDifferences_data() {
    QTest::addColumn<QString>("name");
    for (const QString& f : QDir(QString::fromStdString(golden::dataDir())).entryList({QStringLiteral("*.json")}, QDir::Files)) {
      const QString name = f.chopped(5);
      if (golden::load(name.toStdString()).meta["update"].get<bool>()) continue;  // networks: covered by test_golden
      QTest::newRow(qPrintable(name)) << name;
    }
    QTest::newRow("dropout_training") << QStringLiteral("dropout_training");  // the same program with dropout active
  }

  void finiteDifferences() {
    QFETCH(QString, name);
    golden::Case c = golden::load(name == QLatin1String("dropout_training") ? "dropout_inference" : name.toStdString());
    pdl::CompileOptions options = c.options();
    options.training = name == QLatin1String("dropout_training");
    auto compiled = pdl::compile(c.meta["pdl"].get<std::string>(), options);
    QVERIFY(compiled.policy);
    auto exe = golden::gradientRun(c, *compiled.policy);
    auto obs = c.tensor("obs");
    exe->run();
    if (options.training) {  // about half the elements are dropped, the rest scaled by 1 / (1 - 0.5)
      auto out = golden::output(*exe, "output0");
      int zeros = 0;
      for (size_t i = 0; i < out.size(); ++i) zeros += out[i] == 0.0f;
      QVERIFY2(zeros > 0 && zeros < int(out.size()), "dropout dropped nothing or everything");
      for (size_t i = 0; i < out.size(); ++i)
        if (out[i] != 0.0f) QVERIFY(std::abs(out[i] - 6.0f * obs[i]) <= 1e-5f * std::abs(out[i]));
    }

    std::vector<std::string> inputs;
    if (name != QLatin1String("embedding")) inputs.push_back("obs");  // embedding ids are not differentiable
    for (const auto& p : compiled.policy->parameters) inputs.push_back(p.name);
    const float h = 1e-2f;
    int checked = 0, sampled = 0;
    for (const std::string& input : inputs) {
      const ir::Node& node = exe->graph().node(exe->graph().findInput(input));
      std::vector<float> x(size_t(ir::numel(node.shape)));
      exe->readInput(input, x.data(), x.size());
      exe->run();
      const auto grad = golden::output(*exe, "grad:" + input);
      const size_t stride = std::max<size_t>(1, x.size() / 12);
      for (size_t e = 0; e < x.size(); e += stride) {
        auto lossAt = [&](float value) {
          std::vector<float> moved = x;
          moved[e] = value;
          exe->setInput(input, moved.data(), moved.size());
          exe->run();
          return double(golden::output(*exe, "L")[0]);
        };
        const double centre = lossAt(x[e]), up = lossAt(x[e] + h), down = lossAt(x[e] - h);
        exe->setInput(input, x.data(), x.size());
        ++sampled;
        const double forward = (up - centre) / h, backward = (centre - down) / h, central = (up - down) / (2 * h);
        if (std::abs(forward - backward) > 0.05 * std::max(1.0, std::abs(central))) continue;  // a kink
        ++checked;
        const double ad = grad[e];
        QVERIFY2(std::abs(central - ad) <= 2e-3 + 2e-2 * std::abs(ad),
                 qPrintable(QStringLiteral("d L / d %1[%2]: autodiff %3, finite difference %4")
                                .arg(QString::fromStdString(input)).arg(e).arg(ad).arg(central)));
      }
    }
    QVERIFY2(checked >= int(0.8 * sampled), qPrintable(QStringLiteral("only %1 of %2 elements were smooth enough to check").arg(checked).arg(sampled)));
  }
};

QTEST_GUILESS_MAIN(TestGradcheck)
#include "test_gradcheck.moc"
