#pragma once
// The policies the export suites check (tests/core/test_export.cpp: ONNX and C; the CUDA export
// in the same suite, run on the GPU machine): every example project, every benchmark network and
// small policies for the layers those do not use; their random observations, the CPU backend's
// outputs for them and the comparison of an exporter's outputs with those.
#include <QDir>
#include <QFile>
#include <QTest>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/export/policy_loader.hpp"
#include "core/ir/passes.hpp"
#include "core/train/benchmark_nets.hpp"
#include "support/golden.hpp"
#include "support/source_dir.hpp"

namespace cas::test {

using cas::exports::ExportablePolicy;

inline constexpr double kTolerance = 1e-5;  // atol and rtol of the CPU-side exports
inline constexpr int kSamples = 64;

// The example projects of the source tree (support/source_dir.hpp).
inline QString projectsDir() { return cas::test::sourcePath(QStringLiteral("projects/")); }

// Small policies for the layers the example projects and benchmark networks do not use.
struct SmallPolicy {
  const char* name;
  std::vector<std::int64_t> observationShape;
  const char* source;
};

inline const SmallPolicy kSmallPolicies[] = {
    {"layer_norm_residual", {12},
     "@parallel(axis='batch')\n"
     "def policy(obs):\n"
     "    h = dense(obs, units=16)\n"
     "    for i in range(2):\n"
     "        h = block(h)\n"
     "    h = layer_norm(h)\n"
     "    return dense(h, units=action_dim), tanh(dense(h, units=1))\n"
     "\n"
     "def block(x):\n"
     "    y = gelu(dense(layer_norm(x), units=24))\n"
     "    return x + dense(y, units=16)\n"},
    {"attention", {5, 8},
     "@parallel(axis='batch')\n"
     "def policy(obs):\n"
     "    q = reshape(dense(obs, units=40), (5, 8))\n"
     "    x = layer_norm(obs + attention(q, obs, obs, heads=2, causal=True))\n"
     "    x = x + attention(x, x, x, heads=4)\n"
     "    h = flatten(x)\n"
     "    return dense(h, units=action_dim), tanh(dense(h, units=1))\n"},
    {"pools_and_elementwise", {3, 6, 6},
     "@parallel(axis='batch')\n"
     "def policy(obs):\n"
     "    x = relu(conv2d(obs, filters=4, kernel=3, stride=2, padding='same'))\n"
     "    y = concat(max_pool2d(x, kernel=2, stride=1, padding='same'), avg_pool2d(x, kernel=2, stride=1, padding='same'))\n"
     "    z = dense(y, units=10)\n"
     "    g = where(z > 0, sigmoid(z), exp(clip(z, -3, 3)))\n"
     "    s = softmax(g) - log_softmax(z) + log(g + 1)\n"
     "    m = max(reshape(z, (2, 5)), axis=1) + mean(reshape(z, (2, 5)), axis=1)\n"
     "    ids = where(z >= 0.5, 1, 0) + where(z != z, 1, 0)\n"
     "    e = flatten(embedding(ids, vocab=3, dim=2))\n"
     "    h = concat(g, s, m, e)\n"
     "    return dense(h, units=action_dim), tanh(dense(h, units=1) + sum(s))\n"},
};

// A standalone policy with the weights of seed 1, as `cuda-agent check` initialises them.
inline ExportablePolicy standalone(const QString& name, const std::string& source, std::vector<std::int64_t> observationShape, std::int64_t actions) {
  ExportablePolicy p;
  p.source = source;
  p.options.fileName = name.toStdString() + ".pdl";
  p.options.observationShape = observationShape;
  p.options.actionCount = actions;
  p.options.algorithm = "alphazero";
  cas::pdl::CompileResult compiled = cas::pdl::compile(p.source, p.options);
  if (!compiled.policy) qFatal("%s does not compile: %s", qPrintable(name), compiled.diagnostics.items()[0].message.c_str());
  for (const cas::ir::Node& n : compiled.policy->graph.nodes)
    if (n.op == cas::ir::Op::Input && n.attrs.role == cas::ir::InputRole::Parameter) p.weights[n.attrs.name] = cas::exec::initialValues(n, 1);
  p.metadata.project = name.toStdString();
  p.metadata.environment = "none";
  p.metadata.observationShape = observationShape;
  for (std::int64_t a = 0; a < actions; ++a) p.metadata.actionNames.push_back("action " + std::to_string(a));
  return p;
}

// The policy a test row names: a project (initial weights), a benchmark network or a small policy.
inline ExportablePolicy policyNamed(const QString& name) {
  if (QDir(projectsDir() + name).exists()) {
    cas::exports::LoadedPolicy loaded = cas::exports::loadPolicy((projectsDir() + name).toStdString(), 0);
    if (!loaded.policy) qFatal("%s: %s", qPrintable(name), loaded.error.message.c_str());
    return *loaded.policy;
  }
  if (const cas::train::BenchmarkNet* net = cas::train::findBenchmarkNet(name.toStdString()))
    return standalone(name, net->alphaZeroSource, net->observationShape, net->actionCount);
  for (const SmallPolicy& s : kSmallPolicies)
    if (name == QLatin1String(s.name)) return standalone(name, s.source, s.observationShape, 4);
  qFatal("no policy named %s", qPrintable(name));
}

// Every policy the export suites check, by name (policyNamed).
inline std::vector<QString> policyNames() {
  std::vector<QString> names;
  for (const char* project : {"tictactoe-alphazero", "connect4-alphazero", "connect4-gpu"}) names.push_back(QString::fromLatin1(project));
  // The Transformers read token ids, and their exports are their compositions (core/ir/decompose.hpp),
  // which the small policies with attention and layer_norm below cover at a size a test can run.
  for (const cas::train::BenchmarkNet& net : cas::train::benchmarkNets())
    if (net.tokenVocabulary == 0) names.push_back(QString::fromStdString(net.name));
  for (const SmallPolicy& s : kSmallPolicies) names.push_back(QString::fromLatin1(s.name));
  return names;
}

inline void addPolicyRows() {
  QTest::addColumn<QString>("name");
  for (const QString& name : policyNames()) QTest::newRow(qPrintable(name)) << name;
}

inline std::vector<float> observations(const ExportablePolicy& p, int count) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> obs(size_t(count * cas::ir::numel(p.options.observationShape)));
  for (float& x : obs) x = normal(rng);
  return obs;
}

// The CPU backend's outputs for `obs`, by output name.
inline std::map<std::string, std::vector<float>> reference(const ExportablePolicy& p, const std::vector<float>& obs, int count) {
  cas::ir::Graph g = cas::exports::forwardGraph(p, count);
  cas::ir::runPasses(g, {"plan-memory"});
  auto exe = cas::exec::makeCpuBackend()->compile(g);
  for (const auto& [name, values] : p.weights) exe->setInput(name, values.data(), values.size());
  exe->setInput("obs", obs.data(), obs.size());
  exe->run();
  std::map<std::string, std::vector<float>> out;
  for (const cas::ir::Output& o : exe->graph().outputs) {
    std::vector<float>& v = out[o.name];
    v.resize(size_t(cas::ir::numel(exe->graph().node(o.node).shape)));
    exe->readOutput(o.name, v.data(), v.size());
  }
  return out;
}

inline bool writeBytes(const QString& path, const char* data, qint64 size) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(data, size) == size;
}

inline bool writeFloats(const QString& path, const std::vector<float>& v) {
  return writeBytes(path, reinterpret_cast<const char*>(v.data()), qint64(v.size() * sizeof(float)));
}

inline std::vector<float> readFloats(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QByteArray bytes = f.readAll();
  std::vector<float> v(size_t(bytes.size()) / sizeof(float));
  std::memcpy(v.data(), bytes.constData(), v.size() * sizeof(float));
  return v;
}

// Each output in `dir` (NAME.f32) against the reference, within atol + rtol*|ref|.
inline void compareOutputs(const QString& dir, const std::map<std::string, std::vector<float>>& ref, double atol = kTolerance, double rtol = kTolerance) {
  for (const auto& [name, expected] : ref) {
    const std::vector<float> got = readFloats(dir + QLatin1Char('/') + QString::fromStdString(name) + QStringLiteral(".f32"));
    QCOMPARE(got.size(), expected.size());
    double worst = 0;
    const std::int64_t bad = golden::firstMismatch(got, expected, atol, rtol, &worst);
    QVERIFY2(bad < 0, qPrintable(QStringLiteral("%1[%2] = %3, the CPU backend's is %4").arg(QString::fromStdString(name)).arg(bad)
                                     .arg(double(got[size_t(bad)]), 0, 'g', 9).arg(double(expected[size_t(bad)]), 0, 'g', 9)));
    qInfo("%s: worst error %.3g of the allowed atol + rtol*|ref|", name.c_str(), worst);
  }
}

}  // namespace cas::test
