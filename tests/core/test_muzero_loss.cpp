// MuZero's unrolled loss (LossKind::MuZero in core/train/update.hpp) on the CPU backend against
// PyTorch (tests/golden/muzero/loss.json, made by tests/golden/make_muzero_golden.py): a tiny PDL
// learned model unrolled K = 2 steps, its loss, the loss's three terms and the gradient of every
// parameter, including the dynamics' gradient halved between steps; and h^-1, which the search's
// programs apply to heads trained on scaled targets, against numpy's.
#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/train/update.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

nlohmann::json loadGolden() {
  std::ifstream in(test::sourceFile("tests/golden/muzero/loss.json"));
  return nlohmann::json::parse(in);
}

pdl::CompiledLearnedModel compileGoldenModel(const nlohmann::json& golden) {
  pdl::LearnedModelOptions o;
  o.fileName = "muzero_golden.pdl";
  o.observationShape = golden["observation"].get<std::vector<std::int64_t>>();
  o.actionCount = golden["actions"].get<std::int64_t>();
  o.batch = golden["batch"].get<std::int64_t>();
  o.training = true;
  o.unrollSteps = golden["unroll"].get<std::int64_t>();
  pdl::LearnedModelResult r = pdl::compileLearnedModel(golden["source"].get<std::string>(), o);
  if (!r.model || !r.model->unrolled) throw std::runtime_error("the golden model does not compile");
  return std::move(*r.model);
}

// The gradient program of the unrolled model with the golden parameters and batch set.
std::unique_ptr<exec::Executable> goldenRun(const nlohmann::json& golden, const pdl::CompiledLearnedModel& model) {
  ir::Graph g =
      train::buildGradientGraph(*model.unrolled, train::LossKind::MuZero, train::OptimizerConfig{}, golden["actions"].get<std::int64_t>());
  auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
  for (const auto& [name, p] : golden["parameters"].items()) {
    const auto values = p["values"].get<std::vector<float>>();
    exe->setInput(name, values.data(), values.size());
  }
  for (const auto& [name, t] : golden["inputs"].items()) {
    const auto values = t.get<std::vector<float>>();
    exe->setInput(name, values.data(), values.size());
  }
  return exe;
}

bool close(double got, double want) { return std::abs(got - want) <= kAtol + kRtol * std::abs(want); }

std::vector<float> read(exec::Executable& exe, const std::string& name, size_t count) {
  std::vector<float> v(count);
  exe.readOutput(name, v.data(), v.size());
  return v;
}

}  // namespace

class TestMuZeroLoss : public QObject {
  Q_OBJECT
 private slots:
  void lossAndTermsMatchPyTorch() {
    const nlohmann::json golden = loadGolden();
    const pdl::CompiledLearnedModel model = compileGoldenModel(golden);
    auto exe = goldenRun(golden, model);
    exe->run();
    const double loss = read(*exe, "loss", 1)[0];
    QVERIFY2(close(loss, golden["loss"].get<double>()),
             qPrintable(QStringLiteral("loss %1, PyTorch %2").arg(loss).arg(golden["loss"].get<double>())));
    for (const auto& [term, want] : golden["terms"].items()) {
      const double got = read(*exe, "loss/" + term, 1)[0];
      QVERIFY2(close(got, want.get<double>()),
               qPrintable(QStringLiteral("%1: %2, PyTorch %3").arg(QString::fromStdString(term)).arg(got).arg(want.get<double>())));
    }
  }

  void gradientsMatchPyTorch() {
    const nlohmann::json golden = loadGolden();
    const pdl::CompiledLearnedModel model = compileGoldenModel(golden);
    QCOMPARE(model.parameters.size(), golden["gradients"].size());
    auto exe = goldenRun(golden, model);
    exe->run();
    for (const auto& [name, want] : golden["gradients"].items()) {
      const auto ref = want.get<std::vector<float>>();
      const auto got = read(*exe, std::string(train::kGradientPrefix) + name, ref.size());
      for (size_t i = 0; i < ref.size(); ++i)
        QVERIFY2(
            close(got[i], ref[i]),
            qPrintable(QStringLiteral("%1 element %2: %3, PyTorch %4").arg(QString::fromStdString(name)).arg(i).arg(got[i]).arg(ref[i])));
    }
  }

  // The halving sits between every two dynamics steps, and nowhere else.
  void theStateBetweenStepsCarriesHalfTheGradient() {
    const nlohmann::json golden = loadGolden();
    const pdl::CompiledLearnedModel model = compileGoldenModel(golden);
    int stops = 0;
    for (const ir::Node& n : model.unrolled->graph.nodes) stops += n.op == ir::Op::StopGradient;
    QCOMPARE(stops, golden["unroll"].get<int>() - 1);
  }

  // With scaledHeads the predict program's value is h^-1 of its head: the head made the identity
  // on the state's first element, the value must be numpy's h^-1 of what is fed in.
  void thePredictProgramUndoesTheScaling() {
    const nlohmann::json golden = loadGolden();
    const auto x = golden["inverse"]["x"].get<std::vector<float>>();
    const auto want = golden["inverse"]["h_inverse"].get<std::vector<double>>();
    pdl::LearnedModelOptions o;
    o.observationShape = golden["observation"].get<std::vector<std::int64_t>>();
    o.actionCount = golden["actions"].get<std::int64_t>();
    o.batch = std::int64_t(x.size());
    o.scaledHeads = true;
    const pdl::LearnedModelResult r = pdl::compileLearnedModel(golden["source"].get<std::string>(), o);
    QVERIFY(r.model);
    auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(r.model->predict.graph);
    const std::int64_t stateSize = r.model->stateShape[0];
    std::vector<float> firstElement(size_t(stateSize), 0.0f), state(x.size() * size_t(stateSize), 0.0f);
    firstElement[0] = 1;
    for (size_t i = 0; i < x.size(); ++i) state[i * size_t(stateSize)] = x[i];
    const std::vector<float> zeroBias = {0.0f}, logitsWeight(size_t(stateSize * o.actionCount), 0.0f),
                             logitsBias(size_t(o.actionCount), 0.0f);
    exe->setInput("predict/dense_1/weight", firstElement.data(), firstElement.size());
    exe->setInput("predict/dense_1/bias", zeroBias.data(), 1);
    exe->setInput("predict/dense_0/weight", logitsWeight.data(), logitsWeight.size());
    exe->setInput("predict/dense_0/bias", logitsBias.data(), logitsBias.size());
    exe->setInput("state", state.data(), state.size());
    exe->run();
    const std::vector<float> value = read(*exe, "value", x.size());
    for (size_t i = 0; i < x.size(); ++i)
      QVERIFY2(std::abs(value[i] - want[i]) <= 1e-4 + 1e-5 * std::abs(want[i]),
               qPrintable(QStringLiteral("h^-1(%1): %2, numpy %3").arg(x[i]).arg(value[i]).arg(want[i])));
  }

  // The recurrent program's reward and value are h^-1 of the unscaled program's, and the
  // training program keeps the heads' own values.
  void theRecurrentProgramUndoesTheScaling() {
    const nlohmann::json golden = loadGolden();
    pdl::LearnedModelOptions o;
    o.observationShape = golden["observation"].get<std::vector<std::int64_t>>();
    o.actionCount = golden["actions"].get<std::int64_t>();
    o.batch = 4;
    o.unrollSteps = 2;
    const pdl::LearnedModelResult plain = pdl::compileLearnedModel(golden["source"].get<std::string>(), o);
    o.scaledHeads = true;
    const pdl::LearnedModelResult scaled = pdl::compileLearnedModel(golden["source"].get<std::string>(), o);
    QVERIFY(plain.model && scaled.model);
    QCOMPARE(scaled.model->unrolled->graph.nodes.size(), plain.model->unrolled->graph.nodes.size());
    auto run = [&](const pdl::CompiledPolicy& program) {
      auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(program.graph);
      for (const auto& [name, p] : golden["parameters"].items()) {
        if (!name.starts_with("dynamics/") && !name.starts_with("predict/")) continue;
        const auto values = p["values"].get<std::vector<float>>();
        exe->setInput(name, values.data(), values.size());
      }
      const std::vector<float> state = {0.5f, -1, 2, 0.25f, 3, -2, 1, 0, 0.75f, 1.5f, 4, -3, 0.1f, 2.5f, -0.5f, 1, 2, 3, -4, 5};
      const std::vector<float> action = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0};
      exe->setInput("state", state.data(), state.size());
      exe->setInput("action", action.data(), action.size());
      exe->run();
      std::vector<float> out = read(*exe, "reward", 4), value = read(*exe, "value", 4);
      out.insert(out.end(), value.begin(), value.end());
      return out;
    };
    const std::vector<float> heads = run(plain.model->recurrent), unscaled = run(scaled.model->recurrent);
    for (size_t i = 0; i < heads.size(); ++i) {
      const double y = unscaled[i], h = (y > 0 ? 1 : y < 0 ? -1 : 0) * (std::sqrt(std::abs(y) + 1) - 1) + pdl::kValueScaleEpsilon * y;
      QVERIFY2(close(h, heads[i]),
               qPrintable(QStringLiteral("output %1: h(%2) = %3, the head gives %4").arg(i).arg(y).arg(h).arg(heads[i])));
    }
  }

  void aPolicyWithoutUnrolledOutputsIsRefused() {
    pdl::CompileOptions o;
    o.observationShape = {4};
    o.actionCount = 2;
    auto compiled = pdl::compile("def policy(obs):\n    return dense(obs, units=action_dim), dense(obs, units=1)\n", o);
    QVERIFY(compiled.policy);
    try {
      train::buildGradientGraph(*compiled.policy, train::LossKind::MuZero, train::OptimizerConfig{}, 2);
      QFAIL("a policy's outputs were taken for an unrolled model's");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("logits, values, rewards") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestMuZeroLoss)
#include "test_muzero_loss.moc"
