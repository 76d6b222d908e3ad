// A learned model in PDL (core/pdl/learned_model.hpp): the three programs compile with the inputs,
// outputs and shared parameter names the search relies on, run on the CPU backend consistently
// (recurrent = dynamics then predict), and every disagreement between the functions is a
// diagnostic at its file:line.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/pdl/learned_model.hpp"

using cas::pdl::CompiledPolicy;
using cas::pdl::LearnedModelOptions;
using cas::pdl::LearnedModelResult;

namespace {

// MinAtar's observation, an MLP model with a 64-wide state.
const std::string kModel =
    "def represent(obs):\n"                                                    // 1
    "    return relu(dense(flatten(obs), units=64))\n"                         // 2
    "\n"                                                                       // 3
    "def dynamics(state, action):\n"                                           // 4
    "    h = relu(dense(concat(state, action), units=64))\n"                   // 5
    "    return relu(dense(h, units=64)), dense(h, units=1)\n"                 // 6
    "\n"                                                                       // 7
    "def predict(state):\n"                                                    // 8
    "    h = relu(dense(state, units=64))\n"                                   // 9
    "    return dense(h, units=action_dim), dense(h, units=1)\n";              // 10

LearnedModelResult compileModel(const std::string& source, std::int64_t batch = 1) {
  LearnedModelOptions o;
  o.observationShape = {4, 10, 10};
  o.actionCount = 3;
  o.batch = batch;
  return cas::pdl::compileLearnedModel(source, o);
}

QString firstError(const LearnedModelResult& r) {
  for (const cas::Diagnostic& d : r.diagnostics.items())
    if (d.severity == cas::Severity::Error)
      return QString("%1:%2 %3").arg(d.location.line).arg(d.location.column).arg(QString::fromStdString(d.message));
  return {};
}

std::vector<std::string> inputNames(const CompiledPolicy& p) {
  std::vector<std::string> names;
  for (const cas::ir::Node& n : p.graph.nodes)
    if (n.op == cas::ir::Op::Input && n.attrs.role == cas::ir::InputRole::Data) names.push_back(n.attrs.name);
  return names;
}

// `p` on the CPU backend with every parameter at its seeded initial value.
std::unique_ptr<cas::exec::Executable> cpuProgram(const CompiledPolicy& p) {
  auto exe = cas::exec::BackendRegistry::instance().find("cpu")->backend->compile(p.graph);
  for (const cas::ir::Node& n : exe->graph().nodes)
    if (n.op == cas::ir::Op::Input && n.attrs.role == cas::ir::InputRole::Parameter) {
      const std::vector<float> v = cas::exec::initialValues(n, 7);
      exe->setInput(n.attrs.name, v.data(), v.size());
    }
  return exe;
}

std::vector<float> output(const cas::exec::Executable& exe, const std::string& name, std::size_t count) {
  std::vector<float> v(count);
  exe.readOutput(name, v.data(), v.size());
  return v;
}

}  // namespace

class LearnedModelTest : public QObject {
  Q_OBJECT
 private slots:
  void theThreeProgramsHaveTheSearchsInputsAndOutputs() {
    const LearnedModelResult r = compileModel(kModel, 5);
    QVERIFY2(r.model, qPrintable(firstError(r)));
    const auto& m = *r.model;
    QCOMPARE(m.stateShape, (std::vector<std::int64_t>{64}));
    QCOMPARE(inputNames(m.represent), (std::vector<std::string>{"obs"}));
    QCOMPARE(inputNames(m.recurrent), (std::vector<std::string>{"state", "action"}));
    QCOMPARE(inputNames(m.predict), (std::vector<std::string>{"state"}));
    QCOMPARE(m.represent.outputNames, (std::vector<std::string>{"state"}));
    QCOMPARE(m.recurrent.outputNames, (std::vector<std::string>{"state", "reward", "logits", "value"}));
    QCOMPARE(m.predict.outputNames, (std::vector<std::string>{"logits", "value"}));
    QCOMPARE(m.recurrent.outputShapes, (std::vector<std::vector<std::int64_t>>{{64}, {1}, {3}, {1}}));
    QCOMPARE(m.recurrent.graph.node(m.recurrent.graph.findInput("action")).shape, (cas::ir::Shape{5, 3}));
  }

  void parametersAreNamedByFunctionAndCountedOnce() {
    const LearnedModelResult r = compileModel(kModel);
    QVERIFY2(r.model, qPrintable(firstError(r)));
    const auto& m = *r.model;
    // represent: 400x64+64; dynamics: 67x64+64, 64x64+64, 64x1+1; predict: 64x64+64, 64x3+3, 64x1+1.
    const std::int64_t expected = (400 * 64 + 64) + (67 * 64 + 64) + (64 * 64 + 64) + (64 + 1) + (64 * 64 + 64) + (64 * 3 + 3) + (64 + 1);
    QCOMPARE(m.parameterCount, expected);
    QCOMPARE(m.parameters.size(), size_t(2 + 6 + 6));
    for (const auto& p : m.recurrent.parameters)
      QVERIFY2(p.name.rfind("dynamics/", 0) == 0 || p.name.rfind("predict/", 0) == 0, p.name.c_str());
    for (const auto& p : m.predict.parameters) QVERIFY2(p.name.rfind("predict/", 0) == 0, p.name.c_str());
  }

  // The recurrent program's heads are predict's on its own next state: the search may evaluate
  // a root with predict and every leaf with recurrent.
  void recurrentIsDynamicsThenPredict() {
    const LearnedModelResult r = compileModel(kModel);
    QVERIFY2(r.model, qPrintable(firstError(r)));
    auto represent = cpuProgram(r.model->represent), recurrent = cpuProgram(r.model->recurrent), predict = cpuProgram(r.model->predict);
    std::vector<float> obs(400);
    for (size_t i = 0; i < obs.size(); ++i) obs[i] = float((i * 7) % 3 == 0);
    represent->setInput("obs", obs.data(), obs.size());
    represent->run();
    const std::vector<float> state = output(*represent, "state", 64);
    const std::vector<float> action = {0, 1, 0};
    recurrent->setInput("state", state.data(), state.size());
    recurrent->setInput("action", action.data(), action.size());
    recurrent->run();
    const std::vector<float> next = output(*recurrent, "state", 64);
    predict->setInput("state", next.data(), next.size());
    predict->run();
    const std::vector<float> direct = output(*predict, "logits", 3), viaRecurrent = output(*recurrent, "logits", 3);
    QCOMPARE(viaRecurrent, direct);
    QVERIFY(std::any_of(next.begin(), next.end(), [](float x) { return x != 0; }));
    QVERIFY(std::isfinite(output(*recurrent, "reward", 1)[0]));
  }

  // The training program chains the functions over K actions with one set of parameters: its
  // outputs are those of represent + predict, then K recurrent steps, run one after another.
  void theUnrolledProgramChainsTheFunctions() {
    LearnedModelOptions o;
    o.observationShape = {4, 10, 10};
    o.actionCount = 3;
    o.unrollSteps = 3;
    const LearnedModelResult r = cas::pdl::compileLearnedModel(kModel, o);
    QVERIFY2(r.model && r.model->unrolled, qPrintable(firstError(r)));
    const CompiledPolicy& unrolled = *r.model->unrolled;
    QCOMPARE(inputNames(unrolled), (std::vector<std::string>{"actions", "obs"}));
    QCOMPARE(unrolled.outputNames, (std::vector<std::string>{"logits", "values", "rewards"}));
    QCOMPARE(unrolled.outputShapes, (std::vector<std::vector<std::int64_t>>{{4, 3}, {4, 1}, {3, 1}}));
    QCOMPARE(unrolled.parameterCount, r.model->parameterCount);  // every tensor once
    QCOMPARE(unrolled.parameters.size(), r.model->parameters.size());
    QCOMPARE(unrolled.layers.size(), size_t(1 + 3 + 3));  // represent, dynamics and predict layers, each listed once

    auto net = cpuProgram(unrolled), represent = cpuProgram(r.model->represent), predict = cpuProgram(r.model->predict),
         recurrent = cpuProgram(r.model->recurrent);
    std::vector<float> obs(400);
    for (size_t i = 0; i < obs.size(); ++i) obs[i] = float((i * 5) % 7 == 0);
    const int chosen[3] = {2, 0, 1};
    std::vector<float> actions(9, 0.0f);
    for (int k = 0; k < 3; ++k) actions[size_t(k * 3 + chosen[k])] = 1.0f;
    net->setInput("obs", obs.data(), obs.size());
    net->setInput("actions", actions.data(), actions.size());
    net->run();
    const std::vector<float> logits = output(*net, "logits", 12), values = output(*net, "values", 4), rewards = output(*net, "rewards", 3);

    represent->setInput("obs", obs.data(), obs.size());
    represent->run();
    std::vector<float> state = output(*represent, "state", 64);
    predict->setInput("state", state.data(), state.size());
    predict->run();
    auto close = [](float a, float b) { return std::abs(a - b) <= 1e-5f * (1.0f + std::abs(b)); };
    for (int a = 0; a < 3; ++a) QVERIFY(close(logits[size_t(a)], output(*predict, "logits", 3)[size_t(a)]));
    QVERIFY(close(values[0], output(*predict, "value", 1)[0]));
    for (int k = 0; k < 3; ++k) {
      const std::vector<float> hot(actions.begin() + k * 3, actions.begin() + k * 3 + 3);
      recurrent->setInput("state", state.data(), state.size());
      recurrent->setInput("action", hot.data(), hot.size());
      recurrent->run();
      state = output(*recurrent, "state", 64);
      for (int a = 0; a < 3; ++a) QVERIFY(close(logits[size_t((k + 1) * 3 + a)], output(*recurrent, "logits", 3)[size_t(a)]));
      QVERIFY(close(values[size_t(k + 1)], output(*recurrent, "value", 1)[0]));
      QVERIFY(close(rewards[size_t(k)], output(*recurrent, "reward", 1)[0]));
    }
  }

  void unrolledStepsAreBounded() {
    LearnedModelOptions o;
    o.observationShape = {4, 10, 10};
    o.actionCount = 3;
    o.unrollSteps = cas::pdl::kMaxUnrollSteps + 1;
    const LearnedModelResult r = cas::pdl::compileLearnedModel(kModel, o);
    QVERIFY(!r.model);
    QCOMPARE(firstError(r), QString("0:0 the unrolled steps must be in [1, 64]"));
  }

  void disagreementsAreDiagnosedWhereTheyAre_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("error");
    const QString predict = "def predict(state):\n    return dense(state, units=action_dim), dense(state, units=1)\n";
    QTest::newRow("next state of another shape")
        << "def represent(obs):\n    return dense(flatten(obs), units=8)\n"
           "def dynamics(state, action):\n    return dense(state, units=9), dense(state, units=1)\n" + predict
        << "4:12 the next state has shape [9], but 'represent' makes states of shape [8]: the search feeds both to 'dynamics' and "
           "'predict', so they must have one shape";
    QTest::newRow("reward not a scalar")
        << "def represent(obs):\n    return dense(flatten(obs), units=8)\n"
           "def dynamics(state, action):\n    return state + 1.0, dense(state, units=2)\n" + predict
        << "4:25 the reward must have shape [1], one number per sample, got [2]; end the reward head with dense(..., units=1)";
    QTest::newRow("dynamics without the action")
        << "def represent(obs):\n    return flatten(obs)\n"
           "def dynamics(state):\n    return state, dense(state, units=1)\n" + predict
        << "3:5 'dynamics' must take 2 parameters, the latent state and the action (one-hot, [action_dim]); it takes 1";
    QTest::newRow("dynamics returns one tensor")
        << "def represent(obs):\n    return flatten(obs)\n"
           "def dynamics(state, action):\n    return state\n" + predict
        << "3:14 'dynamics' must return (next_state, reward), but it returns one tensor of shape [400]";
    QTest::newRow("represent returns two")
        << "def represent(obs):\n    return flatten(obs), flatten(obs)\n"
           "def dynamics(state, action):\n    return state, dense(state, units=1)\n" + predict
        << "2:5 'represent' must return one tensor, the latent state, but it returns 2 tensors";
    QTest::newRow("predict missing")
        << "def represent(obs):\n    return flatten(obs)\n"
           "def dynamics(state, action):\n    return state, dense(state, units=1)\n"
           "def predcit(state):\n    return dense(state, units=action_dim), dense(state, units=1)\n"
        << "1:1 no function named 'predict' (a function of the learned model) is defined; did you mean 'predcit'?";
    QTest::newRow("logits of another width")
        << "def represent(obs):\n    return flatten(obs)\n"
           "def dynamics(state, action):\n    return state, dense(state, units=1)\n"
           "def predict(state):\n    return dense(state, units=4), dense(state, units=1)\n"
        << "6:12 the logits must have shape [3] (action_dim), got [4]";
  }

  void disagreementsAreDiagnosedWhereTheyAre() {
    QFETCH(QString, source);
    QFETCH(QString, error);
    const LearnedModelResult r = compileModel(source.toStdString());
    QVERIFY(!r.model);
    QCOMPARE(firstError(r), error);
    QCOMPARE(r.diagnostics.errorCount(), 1);
  }

  void theStateShapeNotePointsAtRepresent() {
    const LearnedModelResult r = compileModel(
        "def represent(obs):\n    return dense(flatten(obs), units=8)\n"
        "def dynamics(state, action):\n    return dense(state, units=9), dense(state, units=1)\n"
        "def predict(state):\n    return dense(state, units=action_dim), dense(state, units=1)\n");
    QVERIFY(!r.model);
    const cas::Diagnostic& d = r.diagnostics.items().front();
    QCOMPARE(d.notes.size(), size_t(1));
    QCOMPARE(d.notes[0].location.line, 2);
    QCOMPARE(d.notes[0].location.column, 12);
  }
};

QTEST_GUILESS_MAIN(LearnedModelTest)
#include "test_learned_model.moc"
