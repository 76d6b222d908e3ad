// The CUDA backend on a real device, against the CPU reference backend (the executable spec):
// discovery and the probe kernel; every golden case's outputs and gradients; ten training steps
// of each benchmark network; bf16 within its documented tolerance; the kernel cache (hits, and
// a corrupt entry rebuilt); no device allocation in the steady state; out-of-memory reported;
// per-kernel profiles (achieved occupancy through CUPTI).
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/autodiff.hpp"
#include "core/ir/builder.hpp"
#include "core/train/benchmark_nets.hpp"
#include "core/train/update.hpp"
#include "support/golden.hpp"

using namespace cas;

namespace {

constexpr double kAtol = 1e-5, kForwardRtol = 1e-4, kGradRtol = 1e-3;
// bf16 keeps 8 bits of mantissa: products of K terms are off by about sqrt(K) * 2^-9 relative.
constexpr double kBf16Atol = 2e-2, kBf16Rtol = 5e-2;

std::shared_ptr<exec::Backend> cuda() { return exec::BackendRegistry::instance().find("cuda")->backend; }
std::shared_ptr<exec::Backend> cpu() { return exec::BackendRegistry::instance().find("cpu")->backend; }

QStringList caseNames() {
  QStringList names;
  for (const QString& f : QDir(QString::fromStdString(golden::dataDir())).entryList({QStringLiteral("*.json")})) names << f.chopped(5);
  return names;
}

std::string stat(const exec::Executable& exe, const std::string& key) { return exec::statValue(exe.runtimeStats(), key); }

QString mismatch(const std::string& what, const std::vector<float>& got, const std::vector<float>& ref, double atol, double rtol) {
  double worst = 0;
  const auto bad = golden::firstMismatch(got, ref, atol, rtol, &worst);
  if (bad < 0) return {};
  return QStringLiteral("%1 element %2: CUDA %3, CPU %4").arg(QString::fromStdString(what)).arg(bad).arg(got[size_t(bad)]).arg(ref[size_t(bad)]);
}

pdl::CompiledPolicy benchmarkPolicy(const train::BenchmarkNet& net, std::int64_t batch, bool mixed) {
  pdl::CompileOptions o;
  o.fileName = net.name + ".pdl";
  o.observationShape = net.observationShape;
  o.actionCount = net.actionCount;
  o.batch = batch;
  auto r = pdl::compile(mixed ? net.mixedSource : net.source, o);
  if (!r.policy) throw std::runtime_error(net.name + " does not compile");
  return std::move(*r.policy);
}

struct UpdateData {
  std::vector<float> obs, actions, advantages, returns;
};

UpdateData updateData(const train::BenchmarkNet& net, std::int64_t batch) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  UpdateData d;
  std::int64_t obs = batch;
  for (auto s : net.observationShape) obs *= s;
  std::uniform_int_distribution<std::int64_t> token(0, std::max<std::int64_t>(net.tokenVocabulary, 1) - 1);
  for (std::int64_t i = 0; i < obs; ++i) d.obs.push_back(net.tokenVocabulary > 0 ? float(token(rng)) : normal(rng));
  for (std::int64_t i = 0; i < batch; ++i) {
    d.actions.push_back(float(i % net.actionCount));
    d.advantages.push_back(normal(rng));
    d.returns.push_back(normal(rng));
  }
  return d;
}

void setUpdateData(exec::Executable& exe, const UpdateData& d) {
  exe.setInput("obs", d.obs.data(), d.obs.size());
  exe.setInput("actions", d.actions.data(), d.actions.size());
  exe.setInput("advantages", d.advantages.data(), d.advantages.size());
  exe.setInput("returns", d.returns.data(), d.returns.size());
}

}  // namespace

class TestCudaBackend : public QObject {
  Q_OBJECT
  QTemporaryDir cacheDir_;

 private slots:
  void initTestCase() {
    // A private kernel cache, so the cache tests start empty.
    qputenv("CAS_KERNEL_CACHE", cacheDir_.path().toUtf8());
    const auto* entry = exec::BackendRegistry::instance().find("cuda");
    QVERIFY(entry);
    if (!entry->available()) QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(entry->unavailableReason)));
  }

  void describesTheDevice() {
    const QString status = QString::fromStdString(cuda()->statusText());
    QVERIFY2(status.startsWith(QStringLiteral("CUDA: ")) && status.contains(QStringLiteral(", sm_")) && status.endsWith(QStringLiteral(" SMs")),
             qPrintable(status));
    qInfo("%s", qPrintable(status));
  }

  void probeKernelComputesTheRightResult() {
    auto report = cuda()->probe();
    QVERIFY(report.has_value());
    QVERIFY2(report->passed, report->summary.c_str());
  }

  void autoSelectsCudaForGraphs() {
    std::string error;
    auto chosen = exec::BackendRegistry::instance().select("auto", &error);
    QVERIFY2(chosen, error.c_str());
    QCOMPARE(chosen->id(), std::string("cuda"));
  }

  // Every op's forward and gradient: the golden cases' "outputs + gradients" graphs.
  void goldenCasesMatchTheCpu_data() {
    QTest::addColumn<QString>("name");
    for (const QString& n : caseNames()) QTest::newRow(qPrintable(n)) << n;
  }
  void goldenCasesMatchTheCpu() {
    QFETCH(QString, name);
    golden::Case c = golden::load(name.toStdString());
    auto compiled = pdl::compile(c.meta["pdl"].get<std::string>(), c.options());
    QVERIFY(compiled.policy);
    auto reference = golden::gradientRun(c, *compiled.policy);
    reference->run();
    std::unique_ptr<exec::Executable> exe;
    try {
      exe = cuda()->compile(reference->graph());
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    golden::setFormulaParameters(*exe);
    for (const ir::Node& n : reference->graph().nodes)
      if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Data) {
        std::vector<float> v(size_t(ir::numel(n.shape)));
        reference->readInput(n.attrs.name, v.data(), v.size());
        exe->setInput(n.attrs.name, v.data(), v.size());
      }
    exe->run();
    int compared = 0;
    for (const ir::Output& o : reference->graph().outputs) {
      const bool gradient = o.name.starts_with("grad:");
      const QString bad = mismatch(o.name, golden::output(*exe, o.name), golden::output(*reference, o.name), kAtol,
                                   gradient ? kGradRtol : kForwardRtol);
      QVERIFY2(bad.isEmpty(), qPrintable(bad));
      ++compared;
    }
    QVERIFY(compared >= 2);
    // Running again gives the same results (the graph replays; accumulators are reset).
    exe->run();
    const QString again = mismatch("L", golden::output(*exe, "L"), golden::output(*reference, "L"), kAtol, kForwardRtol);
    QVERIFY2(again.isEmpty(), qPrintable(again));
  }

  // Ten Adam steps of each network from the same parameters and data on both backends.
  void trainingStepsMatchTheCpu_data() {
    QTest::addColumn<QString>("net");
    for (const auto& n : train::benchmarkNets()) QTest::newRow(n.name.c_str()) << QString::fromStdString(n.name);
  }
  void trainingStepsMatchTheCpu() {
    QFETCH(QString, net);
    const train::BenchmarkNet& n = *train::findBenchmarkNet(net.toStdString());
    // The reward model at batch 1 (512 tokens of 6 layers: the CPU side's time), the CNN at 32.
    const std::int64_t batch = n.name == "reward_model_6l" ? 1 : n.name == "atari_nature_cnn" ? 32 : 256;
    const pdl::CompiledPolicy policy = benchmarkPolicy(n, batch, false);
    // The CNN trains with SGD + momentum: its convolutions sum up to 2048 products in cuDNN's
    // order, not im2col's, and Adam, which normalises each gradient element, turns the tiny
    // differences of near-zero gradients (dead ReLU units) into full steps in either direction
    // (after 5 Adam steps its losses differ by about 1%). SGD moves in proportion to the gradient.
    // The Transformers too: a key projection's bias has no true gradient (adding it moves every
    // score of a query alike, which the softmax ignores), so Adam moves it by lr in directions
    // set by rounding.
    train::OptimizerConfig config;
    // (The reward model at 1e-3: at 1e-2 its loss falls from 2.2 to 0.15 in five steps, on a
    // path steep enough that rounding differences grow past the tolerance.)
    if (n.name == "atari_nature_cnn" || n.tokenVocabulary > 0) {
      config.kind = "sgd";
      config.learningRate = n.name == "reward_model_6l" ? 1e-3f : 0.01f;
    }
    train::Updater onCpu(*cpu(), policy, train::LossKind::PolicyGradient, config, n.actionCount, 3);
    train::Updater onCuda(*cuda(), policy, train::LossKind::PolicyGradient, config, n.actionCount, 3);
    const UpdateData d = updateData(n, batch);
    setUpdateData(onCpu.executable(), d);
    setUpdateData(onCuda.executable(), d);
    const double lossRtol = 1e-3;
    double worst = 0;
    for (int step = 0; step < 10; ++step) {
      const float a = onCpu.step(), b = onCuda.step();
      worst = std::max(worst, std::abs(double(a) - b) / std::abs(double(a)));
      QVERIFY2(std::abs(a - b) <= 1e-4 + lossRtol * std::abs(a), qPrintable(QStringLiteral("loss at step %1: CPU %2, CUDA %3").arg(step).arg(a).arg(b)));
    }
    qInfo("largest relative loss difference over 10 steps: %.2e", worst);
    // Adam moves an element by about lr per step whatever its gradient, so an element whose
    // gradient is near zero may go either way; nearly all must agree tightly.
    for (const auto& p : policy.parameters) {
      const auto ref = onCpu.parameter(p.name), got = onCuda.parameter(p.name);
      int close = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        QVERIFY2(std::abs(got[i] - ref[i]) <= 1e-2, qPrintable(QString::fromStdString(p.name)));
        close += std::abs(got[i] - ref[i]) <= 1e-5 + 1e-3 * std::abs(ref[i]);
      }
      QVERIFY2(close >= int(0.99 * double(ref.size())), qPrintable(QStringLiteral("%1: %2 of %3 close").arg(QString::fromStdString(p.name)).arg(close).arg(ref.size())));
    }
  }

  // The fused attention kernels with what the golden cases lack: per-sequence lengths (0, inside,
  // past the keys), causal with lengths, heads of 64 (two warps' columns) over 70 positions (three
  // key blocks, the last partial), more keys than queries; forward and the three gradient kernels
  // (through autodiff) against the CPU backend. bf16 and fp16 (heads of 64): on tensor cores
  // (attention_mma.cuh), the forward within the bf16 bounds, the gradients within docs/pdl.md's
  // bounds (1e-2 for bf16, 2e-3 for fp16, times 1 + the gradient's largest value: a gradient that
  // is 0 by cancellation, as a key every query sees alone gets, keeps the 16-bit rounding of its
  // terms).
  void fusedAttentionWithLengthsMatchesTheCpu_data() {
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("precision");
    const int fp32 = int(ir::Precision::F32);
    QTest::newRow("lengths") << false << 70 << fp32;
    QTest::newRow("causal, lengths") << true << 70 << fp32;
    QTest::newRow("3 queries, 70 keys, lengths") << false << 3 << fp32;
    QTest::newRow("lengths, bf16") << false << 70 << int(ir::Precision::BF16);
    QTest::newRow("causal, lengths, bf16") << true << 70 << int(ir::Precision::BF16);
    QTest::newRow("3 queries, 70 keys, lengths, fp16") << false << 3 << int(ir::Precision::F16);
  }
  void fusedAttentionWithLengthsMatchesTheCpu() {
    QFETCH(bool, causal);
    QFETCH(int, queries);
    QFETCH(int, precision);
    const bool low = precision != int(ir::Precision::F32);
    const std::int64_t batch = 3, keys = 70, width = 128;
    ir::Graph g;
    ir::Builder b(g);
    b.setPrecision(ir::Precision(precision));
    const ir::NodeId q = b.input("q", {batch, queries, width}), k = b.input("k", {batch, keys, width}), v = b.input("v", {batch, keys, width});
    const ir::NodeId w = b.input("w", {batch, queries, width}), lengths = b.input("lengths", {batch, 1});
    const ir::NodeId out = b.attention(q, k, v, 2, causal, lengths);
    const auto grads = ir::appendGradients(b, b.reduceSum(b.mul(out, w), {0, 1, 2}, false), {q, k, v});
    g.outputs = {{"out", out}, {"dq", grads[0]}, {"dk", grads[1]}, {"dv", grads[2]}};
    auto ref = cpu()->compile(g);
    auto exe = cuda()->compile(g);
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    for (const char* name : {"q", "k", "v", "w"}) {
      std::vector<float> values(size_t(ir::numel(g.node(g.findInput(name)).shape)));
      for (float& x : values) x = normal(rng);
      ref->setInput(name, values.data(), values.size());
      exe->setInput(name, values.data(), values.size());
    }
    const std::vector<float> lengthValues = {0.f, 37.f, 90.f};
    ref->setInput("lengths", lengthValues.data(), lengthValues.size());
    exe->setInput("lengths", lengthValues.data(), lengthValues.size());
    ref->run();
    exe->run();
    for (const ir::Output& o : g.outputs) {
      const std::vector<float> got = golden::output(*exe, o.name), want = golden::output(*ref, o.name);
      const bool forward = o.name == "out";
      double atol = kAtol, rtol = forward ? kForwardRtol : kGradRtol;
      if (low && forward) {
        atol = kBf16Atol;
        rtol = kBf16Rtol;
      } else if (low) {
        double largest = 0;
        for (float x : want) largest = std::max(largest, double(std::abs(x)));
        atol = (precision == int(ir::Precision::BF16) ? 1e-2 : 2e-3) * (1 + largest);
        rtol = 0;
      }
      const QString bad = mismatch(o.name, got, want, atol, rtol);
      QVERIFY2(bad.isEmpty(), qPrintable(bad));
      // The tensor-core kernels ran: their results are not the fp32 kernels'.
      if (low) QVERIFY2(golden::firstMismatch(got, want, kAtol, forward ? kForwardRtol : kGradRtol, nullptr) >= 0, o.name.c_str());
    }
  }

  // @precision('bf16'): tensor-core products, fp32 accumulation and master weights.
  void bf16ForwardIsCloseToFp32() {
    for (const char* name : {"connect4_mlp256", "atari_nature_cnn", "connect4_transformer"}) {
      const train::BenchmarkNet& n = *train::findBenchmarkNet(name);
      const pdl::CompiledPolicy mixed = benchmarkPolicy(n, 16, true), full = benchmarkPolicy(n, 16, false);
      ir::Graph gm = mixed.graph, gf = full.graph;
      ir::runPasses(gm, ir::defaultPipeline());
      ir::runPasses(gf, ir::defaultPipeline());
      auto low = cuda()->compile(gm);
      auto ref = cpu()->compile(gf);
      // Same parameter values under both names (the mixed net's layers sit in `trunk`).
      std::vector<std::string> lowParams, refParams;
      for (const auto& p : mixed.parameters) lowParams.push_back(p.name);
      for (const auto& p : full.parameters) refParams.push_back(p.name);
      QCOMPARE(lowParams.size(), refParams.size());
      for (size_t i = 0; i < refParams.size(); ++i) {
        const ir::Node& node = gf.node(gf.findInput(refParams[i]));
        auto v = exec::initialValues(node, 5);
        ref->setInput(refParams[i], v.data(), v.size());
        low->setInput(lowParams[i], v.data(), v.size());
      }
      const UpdateData d = updateData(n, 16);
      ref->setInput("obs", d.obs.data(), d.obs.size());
      low->setInput("obs", d.obs.data(), d.obs.size());
      ref->run();
      low->run();
      const std::string out = full.outputNames[0];
      const QString bad = mismatch(std::string(name) + " " + out, golden::output(*low, mixed.outputNames[0]), golden::output(*ref, out), kBf16Atol, kBf16Rtol);
      QVERIFY2(bad.isEmpty(), qPrintable(bad));
    }
  }

  // Low-precision gradients through the implicit-GEMM convolutions and the NHWC (space-to-depth)
  // cuDNN input gradients (tf32: cuDNN and cuBLAS on tensor cores with fp32 operands), against
  // the fp32 CPU gradients, in norm: the Nature CNN, and a net
  // with padding, a stride, sizes that fill no tile and a fold that leaves pixels uncovered (the
  // kernels' edge paths). A misplaced element (a wrong layout) is off by about 100% at either
  // precision. What rounding leaves is dominated by ReLU masks that flip where a pre-activation
  // lies within rounding of zero: the fraction of flips scales with the rounding, the error norm
  // with its square root, so bf16 (8 bits) is about sqrt(8) = 2.8 times fp16 (11 bits); measured
  // on the H200 with cuDNN for every convolution: 8.8% and 2.9% for the Nature CNN's input
  // gradient.
  void lowPrecisionGradientsAreCloseToFp32_data() {
    QTest::addColumn<QString>("net");
    QTest::addColumn<QString>("precision");
    QTest::addColumn<double>("tolerance");
    for (const char* net : {"atari_nature_cnn", "padded_cnn"}) {
      QTest::newRow(qPrintable(QStringLiteral("%1/bf16").arg(net))) << QString(net) << QStringLiteral("bf16") << 0.15;
      QTest::newRow(qPrintable(QStringLiteral("%1/fp16").arg(net))) << QString(net) << QStringLiteral("fp16") << 0.05;
      // tf32 (10 stored mantissa bits, like fp16) through cuDNN and cuBLAS on fp32 operands.
      QTest::newRow(qPrintable(QStringLiteral("%1/tf32").arg(net))) << QString(net) << QStringLiteral("tf32") << 0.05;
    }
  }
  void lowPrecisionGradientsAreCloseToFp32() {
    QFETCH(QString, net);
    QFETCH(QString, precision);
    QFETCH(double, tolerance);
    train::BenchmarkNet n = *train::findBenchmarkNet("atari_nature_cnn");
    if (net == QStringLiteral("padded_cnn")) {
      const std::string trunk = "    x = relu(conv2d(obs, filters=12, kernel=3, padding='same'))\n"
                                "    x = relu(conv2d(x, filters=40, kernel=5, stride=2, padding='same'))\n"
                                "    x = relu(conv2d(x, filters=8, kernel=2, stride=2, padding='valid'))\n"
                                "    h = relu(dense(x, units=16))\n";
      const std::string head = "    return dense(h, units=action_dim + 1)\n";
      n.source = "@parallel(axis='batch')\ndef policy(obs):\n" + trunk + head;
      n.mixedSource = "@precision('bf16')\ndef trunk(obs):\n" + trunk + "    return h\n\n@parallel(axis='batch')\ndef policy(obs):\n    h = trunk(obs)\n" + head;
      n.observationShape = {3, 11, 13};
      n.actionCount = 3;
    }
    if (precision != QStringLiteral("bf16")) n.mixedSource.replace(n.mixedSource.find("'bf16'"), 6, "'" + precision.toStdString() + "'");
    const pdl::CompiledPolicy mixed = benchmarkPolicy(n, 8, true), full = benchmarkPolicy(n, 8, false);
    auto low = cuda()->compile(golden::gradientGraph(mixed));
    auto ref = cpu()->compile(golden::gradientGraph(full));
    std::vector<std::pair<std::string, std::string>> grads = {{"grad:obs", "grad:obs"}};
    for (size_t i = 0; i < full.parameters.size(); ++i) {
      const ir::Node& node = ref->graph().node(ref->graph().findInput(full.parameters[i].name));
      auto v = exec::initialValues(node, 5);
      ref->setInput(full.parameters[i].name, v.data(), v.size());
      low->setInput(mixed.parameters[i].name, v.data(), v.size());
      grads.push_back({"grad:" + mixed.parameters[i].name, "grad:" + full.parameters[i].name});
    }
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    for (const ir::Node& node : ref->graph().nodes)
      if (node.op == ir::Op::Input && node.attrs.role == ir::InputRole::Data) {
        std::vector<float> v(size_t(ir::numel(node.shape)));
        for (float& x : v) x = normal(rng);
        ref->setInput(node.attrs.name, v.data(), v.size());
        low->setInput(node.attrs.name, v.data(), v.size());
      }
    ref->run();
    low->run();
    for (const auto& [lowName, refName] : grads) {
      const auto got = golden::output(*low, lowName), want = golden::output(*ref, refName);
      QCOMPARE(got.size(), want.size());
      double diff = 0, norm = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        norm += double(want[i]) * want[i];
      }
      const double relative = std::sqrt(diff / std::max(norm, 1e-30));
      qInfo("%s %s %s: relative error %.2e", qPrintable(net), qPrintable(precision), refName.c_str(), relative);
      QVERIFY2(relative <= tolerance,
               qPrintable(QStringLiteral("%1: relative error %2").arg(QString::fromStdString(refName)).arg(relative)));
    }
  }

  void secondCompileHitsTheCacheAndACorruptEntryIsRebuilt() {
    const pdl::CompiledPolicy policy = benchmarkPolicy(*train::findBenchmarkNet("cartpole_mlp64"), 7, false);
    ir::Graph g = policy.graph;
    ir::runPasses(g, ir::defaultPipeline());
    auto first = cuda()->compile(g);
    auto second = cuda()->compile(g);
    QVERIFY2(stat(*second, "module").starts_with("hit"), stat(*second, "module").c_str());
    const QStringList entries = QDir(cacheDir_.path()).entryList({QStringLiteral("*.cubin")});
    QVERIFY(!entries.isEmpty());
    for (const QString& e : entries) {  // flip one byte in the middle of every entry
      QFile f(cacheDir_.filePath(e));
      QVERIFY(f.open(QIODevice::ReadWrite));
      QByteArray bytes = f.readAll();
      bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x5a);
      f.seek(0);
      f.write(bytes);
    }
    auto third = cuda()->compile(g);
    QVERIFY2(stat(*third, "module").starts_with("rebuilt"), stat(*third, "module").c_str());
    auto fourth = cuda()->compile(g);
    QVERIFY2(stat(*fourth, "module").starts_with("hit"), stat(*fourth, "module").c_str());
    // The rebuilt program computes the right thing.
    for (auto* exe : {first.get(), fourth.get()}) {
      for (const ir::Node& n : exe->graph().nodes)
        if (n.op == ir::Op::Input) {
          auto v = exec::initialValues(n, 2);
          if (v.empty()) v.assign(size_t(ir::numel(n.shape)), 0.5f);
          exe->setInput(n.attrs.name, v.data(), v.size());
        }
      exe->run();
    }
    const std::string out = policy.outputNames[0];
    QCOMPARE(golden::output(*fourth, out), golden::output(*first, out));
  }

  void steadyStateTrainingAllocatesNothing() {
    const train::BenchmarkNet& n = *train::findBenchmarkNet("connect4_mlp256");
    train::Updater updater(*cuda(), benchmarkPolicy(n, 1024, false), train::LossKind::PolicyGradient, {}, n.actionCount, 1);
    setUpdateData(updater.executable(), updateData(n, 1024));
    updater.step();
    const std::string before = stat(updater.executable(), "pool device allocations");
    const std::string poolBefore = stat(updater.executable(), "pool allocations");
    for (int i = 0; i < 200; ++i) updater.enqueueStep();
    updater.step();
    QCOMPARE(stat(updater.executable(), "pool device allocations"), before);
    QCOMPARE(stat(updater.executable(), "pool allocations"), poolBefore);
    QVERIFY2(stat(updater.executable(), "graph").starts_with("captured"), stat(updater.executable(), "graph").c_str());
    qInfo("pool: %s; graph: %s", stat(updater.executable(), "pool").c_str(), stat(updater.executable(), "graph").c_str());
  }

  void outOfMemoryIsAClearError() {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CAS_GPU_MEMORY_LIMIT_MB"), QStringLiteral("300"));
    env.insert(QStringLiteral("CAS_KERNEL_CACHE"), cacheDir_.path());
    p.setProcessEnvironment(env);
    p.start(QCoreApplication::applicationDirPath() + QStringLiteral("/cuda-agent"),
            {QStringLiteral("bench"), QStringLiteral("update"), QStringLiteral("--net"), QStringLiteral("atari_nature_cnn"),
             QStringLiteral("--batch"), QStringLiteral("1024"), QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--seconds"),
             QStringLiteral("0.1")});
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains(QStringLiteral("out of GPU memory")) && err.contains(QStringLiteral("pool: reserved")), qPrintable(err));
    qInfo("%s", qPrintable(err.trimmed()));
  }

  void profilesEveryKernel() {
    const train::BenchmarkNet& n = *train::findBenchmarkNet("cartpole_mlp64");
    train::Updater updater(*cuda(), benchmarkPolicy(n, 1024, false), train::LossKind::PolicyGradient, {}, n.actionCount, 1);
    setUpdateData(updater.executable(), updateData(n, 1024));
    updater.step();
    const auto reports = updater.executable().profileKernels(5);
    QVERIFY(reports.size() >= 5);
    // Achieved occupancy comes from CUPTI where the system lets it count (else the reason).
    const std::string occupancy = stat(updater.executable(), "achieved occupancy");
    qInfo("achieved occupancy: %s", occupancy.c_str());
    const bool measured = occupancy.starts_with("measured");
    QVERIFY2(measured || occupancy.starts_with("not measured: "), occupancy.c_str());
    for (const auto& r : reports) {
      QVERIFY2(r.timeUs > 0, r.name.c_str());
      if (r.kind == "generated") {
        QVERIFY(r.registers > 0);
        QVERIFY(r.theoreticalOccupancy > 0 && r.theoreticalOccupancy <= 1);
        QVERIFY(r.source.find(r.name) != std::string::npos);
        // Active warps cannot pass what the resources allow (2% for counter sampling).
        if (measured)
          QVERIFY2(r.achievedOccupancy > 0 && r.achievedOccupancy <= r.theoreticalOccupancy + 0.02,
                   qPrintable(QStringLiteral("%1: achieved %2, theoretical %3").arg(QString::fromStdString(r.name)).arg(r.achievedOccupancy).arg(r.theoreticalOccupancy)));
        else
          QCOMPARE(r.achievedOccupancy, -1.0);
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestCudaBackend)
#include "test_cuda_backend.moc"
