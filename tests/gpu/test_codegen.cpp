// The CUDA backend's scheduler and code generator, without a GPU: every golden case's gradient
// graph and every benchmark network's update graph is planned, and the generated module must
// compile with NVRTC for sm_90. Also checks the fusion decisions the performance depends on.
#include <QTest>
#include <nvrtc.h>

#include "core/train/benchmark_nets.hpp"
#include "core/train/update.hpp"
#include "gpu/codegen.hpp"
#include "support/golden.hpp"

using namespace cas;

namespace {

QStringList caseNames() {
  QStringList names;
  for (const QString& f : QDir(QString::fromStdString(golden::dataDir())).entryList({QStringLiteral("*.json")}))
    names << f.chopped(5);
  return names;
}

std::string moduleSource(const gpu::Schedule& s) {
  std::string source = gpu::kernelPrelude();
  for (const gpu::Step& step : s.steps) source += "\n" + step.source;
  return source;
}

// Empty when the source compiles, else NVRTC's log.
std::string compileError(const std::string& source) {
  nvrtcProgram program = nullptr;
  nvrtcCreateProgram(&program, source.c_str(), "module.cu", 0, nullptr, nullptr);
  const char* options[] = {"--gpu-architecture=sm_90", "--std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(program, 2, options);
  std::string log;
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    log.resize(size);
    nvrtcGetProgramLog(program, log.data());
  }
  nvrtcDestroyProgram(&program);
  return log;
}

ir::Graph updateGraph(const train::BenchmarkNet& net, std::int64_t batch, bool mixed = false) {
  pdl::CompileOptions o;
  o.fileName = net.name + ".pdl";
  o.observationShape = net.observationShape;
  o.actionCount = net.actionCount;
  o.batch = batch;
  auto compiled = pdl::compile(mixed ? net.mixedSource : net.source, o);
  if (!compiled.policy) throw std::runtime_error("benchmark net does not compile");
  return train::buildUpdateGraph(*compiled.policy, train::LossKind::PolicyGradient, train::OptimizerConfig{}, net.actionCount);
}

int count(const gpu::Schedule& s, gpu::StepKind kind) {
  return int(std::count_if(s.steps.begin(), s.steps.end(), [&](const gpu::Step& st) { return st.kind == kind; }));
}

}  // namespace

class TestCodegen : public QObject {
  Q_OBJECT
 private slots:
  void goldenCasesCompile_data() {
    QTest::addColumn<QString>("name");
    for (const QString& n : caseNames()) QTest::newRow(qPrintable(n)) << n;
  }
  void goldenCasesCompile() {
    QFETCH(QString, name);
    golden::Case c = golden::load(name.toStdString());
    auto compiled = pdl::compile(c.meta["pdl"].get<std::string>(), c.options());
    QVERIFY(compiled.policy);
    const ir::Graph g = golden::gradientGraph(*compiled.policy);
    gpu::Schedule s;
    try {
      s = gpu::planSchedule(g);
    } catch (const std::runtime_error& e) {
      // Refusals must say what and where; asymmetric padding is the one known case.
      QVERIFY2(std::string(e.what()).find("symmetric padding") != std::string::npos, e.what());
      return;
    }
    const std::string error = compileError(moduleSource(s));
    QVERIFY2(error.empty(), error.c_str());
  }

  // A bf16 convolution whose im2col matrix would pass 32-bit indexing (the tensors themselves
  // do not) is refused with the node and the way out, not indexed wrongly.
  void oversizedIm2colIsRefused() {
    pdl::CompileOptions o;
    o.fileName = "big.pdl";
    o.observationShape = {64, 128, 128};
    o.actionCount = 2;
    o.batch = 256;
    auto compiled = pdl::compile("@precision('bf16')\n@parallel(axis='batch')\ndef policy(obs):\n"
                                 "    return conv2d(obs, filters=2, kernel=3, padding='same')\n", o);
    QVERIFY(compiled.policy);
    try {
      gpu::planSchedule(compiled.policy->graph);
      QFAIL("planned");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::string(e.what()).find("im2col matrix of") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("smaller batch") != std::string::npos, e.what());
    }
  }

  void updateGraphsCompileAndFuse_data() {
    QTest::addColumn<QString>("net");
    QTest::addColumn<int>("batch");
    QTest::addColumn<bool>("mixed");
    for (const auto& n : train::benchmarkNets())
      for (int batch : {1, 1024}) QTest::newRow(qPrintable(QString::fromStdString(n.name) + "/" + QString::number(batch))) << QString::fromStdString(n.name) << batch << false;
    // bf16: cuBLAS and cuDNN on low-precision copies; the CNN's convolutions get generated relayouts.
    QTest::newRow("atari_nature_cnn/1024/bf16") << QStringLiteral("atari_nature_cnn") << 1024 << true;
  }
  void updateGraphsCompileAndFuse() {
    QFETCH(QString, net);
    QFETCH(int, batch);
    QFETCH(bool, mixed);
    const ir::Graph g = updateGraph(*train::findBenchmarkNet(net.toStdString()), batch, mixed);
    const gpu::Schedule s = gpu::planSchedule(g);
    if (qEnvironmentVariableIsSet("CAS_DUMP_SCHEDULE"))
      for (const auto& step : s.steps) qInfo("%s", step.describe().c_str());
    const std::string error = compileError(moduleSource(s));
    QVERIFY2(error.empty(), error.c_str());
    for (const auto& step : s.steps)
      if (step.kind == gpu::StepKind::Conv && mixed) {
        // Forward and weight gradient: im2col GEMMs. Input gradient: cuDNN, where the Nature
        // CNN's 8x8/4 and 4x4/2 layers fold (space-to-depth) and the 3x3/1 layer cannot.
        const ir::Node& conv = g.node(step.node);
        const bool input = conv.op == ir::Op::Conv2dGradInput;
        QCOMPARE(step.gemmConv, !input);
        QVERIFY2(step.source.find(step.relayoutPrefix + (input ? "_out(" : "_col(")) != std::string::npos, step.source.c_str());
        QCOMPARE(step.fold, input && conv.attrs.strideH > 1 ? int(conv.attrs.strideH) : 1);
      }
    // Adam over all parameters is one launch, and every parameter update is in place.
    QCOMPARE(count(s, gpu::StepKind::Copy), 0);
    const auto params = g.inputsWithRole(ir::InputRole::Parameter);
    bool adamInOneKernel = false;
    for (const auto& step : s.steps) adamInOneKernel = adamInOneKernel || (step.kind == gpu::StepKind::Kernel && step.segments.size() == params.size());
    QVERIFY(adamInOneKernel);
    const int launches = count(s, gpu::StepKind::Kernel) + count(s, gpu::StepKind::Gemm) + count(s, gpu::StepKind::Blas);
    qInfo("%s batch %d: %d launches (%d generated, %d GEMM, %d cuBLAS, %d cuDNN), %d nodes fused", qPrintable(net), batch, launches,
          count(s, gpu::StepKind::Kernel), count(s, gpu::StepKind::Gemm), count(s, gpu::StepKind::Blas), count(s, gpu::StepKind::Conv),
          s.fusedNodes);
  }
};

QTEST_GUILESS_MAIN(TestCodegen)
#include "test_codegen.moc"
