// The schedule (core/ir/schedule.hpp) and the CUDA renderer, without a GPU: every golden case's
// gradient graph and every benchmark network's update graph is planned and rendered, and the
// module must compile with NVRTC for sm_90. Also checks the schedule as data: the fusion
// decisions the performance depends on.
#include <QTest>
#include <nvrtc.h>

#include "core/train/benchmark_nets.hpp"
#include "core/train/update.hpp"
#include "core/cuda_render/render.hpp"
#include "core/ir/passes.hpp"
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

// `precision`: "fp32" (the net's source), or the precision of its mixed source's trunk.
ir::Graph updateGraph(const train::BenchmarkNet& net, std::int64_t batch, const std::string& precision = "fp32") {
  const bool mixed = precision != "fp32";
  std::string source = mixed ? net.mixedSource : net.source;
  if (mixed && precision != "bf16") source.replace(source.find("'bf16'"), 6, "'" + precision + "'");
  pdl::CompileOptions o;
  o.fileName = net.name + ".pdl";
  o.observationShape = net.observationShape;
  o.actionCount = net.actionCount;
  o.batch = batch;
  auto compiled = pdl::compile(source, o);
  if (!compiled.policy) throw std::runtime_error("benchmark net does not compile");
  return train::buildUpdateGraph(*compiled.policy, train::LossKind::PolicyGradient, train::OptimizerConfig{}, net.actionCount);
}

int count(const gpu::Schedule& s, gpu::StepKind kind) {
  return int(std::count_if(s.steps.begin(), s.steps.end(), [&](const gpu::Step& st) { return st.kind == kind; }));
}

// A computing step as text: its kind and its units' kinds (GEMMs with their variant).
std::string signature(const ir::Schedule& s, const ir::Step& step) {
  std::string text = ir::stepKindName(step.kind);
  for (size_t k = 0; k < step.units.size(); ++k) {
    const ir::Unit& u = s.units[size_t(step.units[k])];
    text += (k ? "+" : ":") + std::string(u.kind == ir::UnitKind::Gemm ? ir::gemmVariantName(u.gemm.variant) : ir::unitKindName(u.kind));
  }
  return text;
}

}  // namespace

class TestCodegen : public QObject {
  Q_OBJECT
 private slots:
  // connect4_mlp256's update at batch 1024, step by step: the two hidden layers' GEMMs with
  // their bias and tanh (and the tanh' the backward pass needs) as epilogues, the 8-wide head
  // as a narrow GEMM, the loss in three fused launches, the weight gradients as split-K GEMMs
  // in one launch with the bias gradients, the gradient norms and Adam over every parameter
  // each in one launch, every parameter and moment updated in place, 14 launches in all.
  void scheduleAsData() {
    const ir::Graph g = updateGraph(*train::findBenchmarkNet("connect4_mlp256"), 1024);
    const ir::Schedule s = ir::planSchedule(g, gpu::cudaTarget());
    std::vector<std::string> steps;
    int fills = 0, copies = 0;
    for (const ir::Step& step : s.steps) {
      if (step.kind == ir::StepKind::Fill) ++fills;
      else if (step.kind == ir::StepKind::Copy) ++copies;
      else steps.push_back(signature(s, step));
    }
    const std::vector<std::string> expected = {
        "gemm:tiled",
        "gemm:tiled",
        "gemm:narrow",
        "kernel:reduction",
        "kernel:special+reduction+elementwise",
        "kernel:reduction+reduction",
        "kernel:elementwise+elementwise",
        "kernel:reduction",
        "gemm:tiled",
        "gemm:tiled",
        "gemm:reduction+reduction+split-k+split-k+split-k",
        "kernel:reduction+reduction+reduction+reduction+reduction+reduction",
        "kernel:reduction+reduction+elementwise",
        "kernel:elementwise+elementwise+elementwise+elementwise+elementwise+elementwise+elementwise",
    };
    QCOMPARE(steps, expected);
    QCOMPARE(s.launches(), 14);
    QCOMPARE(copies, 0);
    QCOMPARE(fills, 14);  // the atomic reductions' and split-K GEMMs' accumulators
    // Every parameter and Adam moment (6 parameters x 3) is written in place, and the four loss
    // sums (the loss, its policy, value and entropy terms).
    int inPlace = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (s.storage[i] != ir::kNoNode && s.storage[i] != ir::NodeId(i) && g.nodes[i].op != ir::Op::Reshape) ++inPlace;
    QCOMPARE(inPlace, 22);
    // The first layer's bias and tanh live in registers; tanh and tanh' are stored for the
    // backward pass.
    const ir::Unit& first = s.units[size_t(s.steps[size_t(fills)].units[0])];
    QCOMPARE(first.gemm.m, 1024);
    QCOMPARE(first.gemm.n, 256);
    QCOMPARE(int(first.members.size()), 5);
    QVERIFY(!s.stored[size_t(first.members[1])]);  // the bias add
    QCOMPARE(s.fusedNodes, 110);
    const std::string text = ir::toText(s, g);
    QVERIFY2(text.find("gemm tiled 1024x256 K 256") != std::string::npos, text.c_str());
  }

  // The rendered kernels are template calls with generated epilogues, e.g. the first layer:
  // cas_gemm_tiled<1024, 256, 84, ...>(..., [&](int i, float acc) { ... cas_tanh(...) ... }).
  void kernelsAreTemplateCalls() {
    const ir::Graph g = updateGraph(*train::findBenchmarkNet("connect4_mlp256"), 1024);
    const gpu::Schedule s = gpu::renderSchedule(g);
    const auto first = std::find_if(s.steps.begin(), s.steps.end(), [](const gpu::Step& st) { return st.kind == gpu::StepKind::Gemm; });
    QVERIFY(first != s.steps.end());
    QVERIFY2(first->source.find("cas_gemm_tiled<1024, 256, 84, false, false, ") != std::string::npos, first->source.c_str());
    QVERIFY2(first->source.find("cas_tanh(") != std::string::npos, first->source.c_str());
    for (const gpu::Step& st : s.steps)
      if (st.kind == gpu::StepKind::Kernel) QVERIFY2(st.source.find("if (cas_") != std::string::npos, st.source.c_str());
  }

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
      s = gpu::renderSchedule(g);
    } catch (const std::runtime_error& e) {
      // Refusals must say what and where; asymmetric padding is the one known case.
      QVERIFY2(std::string(e.what()).find("symmetric padding") != std::string::npos, e.what());
      return;
    }
    const std::string error = compileError(moduleSource(s));
    QVERIFY2(error.empty(), error.c_str());
  }

  // bf16/fp16 convolutions with padding, a stride, sizes that fill no tile (M, K and Kc), and a
  // folded input gradient that leaves a column of pixels uncovered (7 wide, 2x2 stride 2):
  // forward and weight gradient become implicit-GEMM kernels (the forward one with bias and
  // ReLU as its epilogue), the input gradient cuDNN; the whole gradient module compiles.
  void lowPrecisionConvolutionsCompile_data() {
    QTest::addColumn<QString>("precision");
    QTest::newRow("bf16") << QStringLiteral("bf16");
    QTest::newRow("fp16") << QStringLiteral("fp16");
  }
  void lowPrecisionConvolutionsCompile() {
    QFETCH(QString, precision);
    pdl::CompileOptions o;
    o.fileName = "padded.pdl";
    o.observationShape = {3, 11, 13};
    o.actionCount = 2;
    o.batch = 8;
    auto compiled = pdl::compile("@precision('" + precision.toStdString() + "')\ndef trunk(obs):\n"
                                 "    x = relu(conv2d(obs, filters=12, kernel=3, padding='same'))\n"
                                 "    x = relu(conv2d(x, filters=40, kernel=5, stride=2, padding='same'))\n"
                                 "    x = relu(conv2d(x, filters=8, kernel=2, stride=2, padding='valid'))\n"
                                 "    return x\n\n"
                                 "@parallel(axis='batch')\ndef policy(obs):\n    return dense(trunk(obs), units=3)\n", o);
    QVERIFY(compiled.policy);
    const ir::Graph g = golden::gradientGraph(*compiled.policy);
    const gpu::Schedule s = gpu::renderSchedule(g);
    int forward = 0, weight = 0, input = 0;
    for (const auto& step : s.steps) {
      if (step.kind == gpu::StepKind::ImplicitConv) {
        const ir::Node& conv = g.node(step.node);
        if (conv.op == ir::Op::Conv2d) {
          ++forward;
          QVERIFY2(step.segments[0].members.size() >= 3, step.describe().c_str());  // + bias, ReLU
        } else {
          QCOMPARE(conv.op, ir::Op::Conv2dGradWeight);
          ++weight;
        }
      }
      if (step.kind == gpu::StepKind::Conv) {
        QCOMPARE(g.node(step.node).op, ir::Op::Conv2dGradInput);
        ++input;
      }
    }
    QCOMPARE(forward, 3);
    QCOMPARE(weight, 3);
    QCOMPARE(input, 3);  // the gradient graph asks for the observation's gradient too
    const std::string error = compileError(moduleSource(s));
    QVERIFY2(error.empty(), error.c_str());
  }

  // fp32 and tf32 forward convolutions and weight gradients over MinAtar's 10 x 10 boards are
  // generated kernels that stage an image at a time (conv_forward_images.cuh, with the bias and
  // ReLU as the forward's epilogue; conv_wgrad_images.cuh); over a board too large for shared
  // memory they stay with cuDNN, as do the input gradients; the modules compile.
  void smallImageConvolutionsCompile_data() {
    QTest::addColumn<QString>("precision");
    QTest::addColumn<int>("side");
    QTest::addColumn<bool>("generated");
    QTest::newRow("fp32 10x10") << QStringLiteral("fp32") << 10 << true;
    QTest::newRow("tf32 10x10") << QStringLiteral("tf32") << 10 << true;
    QTest::newRow("fp32 48x48") << QStringLiteral("fp32") << 48 << false;  // 4 x 48 x 48 + 16 x 48 x 48 floats: 184,320 bytes
  }
  void smallImageConvolutionsCompile() {
    QFETCH(QString, precision);
    QFETCH(int, side);
    QFETCH(bool, generated);
    pdl::CompileOptions o;
    o.fileName = "minatar.pdl";
    o.observationShape = {4, side, side};
    o.actionCount = 3;
    o.batch = 64;
    auto compiled = pdl::compile("@precision('" + precision.toStdString() + "')\ndef trunk(obs):\n"
                                 "    return relu(conv2d(obs, filters=16, kernel=3))\n\n"
                                 "@parallel(axis='batch')\ndef policy(obs):\n    return dense(trunk(obs), units=3)\n", o);
    QVERIFY(compiled.policy);
    const ir::Graph g = golden::gradientGraph(*compiled.policy);
    const gpu::Schedule s = gpu::renderSchedule(g);
    int forwardImages = 0, weightImages = 0, forwardLibrary = 0, weightLibrary = 0;
    for (const auto& step : s.steps) {
      if (step.kind == gpu::StepKind::ImplicitConv && g.node(step.node).op == ir::Op::Conv2d) {
        QVERIFY2(step.source.find("cas_conv_forward_images<64, 4, 10, 10, 16, 3, 3, 10, 10, 1, 1, 1, 1, 8, 2>(") != std::string::npos, step.source.c_str());
        QCOMPARE(step.blockSize, 128);  // 50 pairs of pixels x 2 groups of 8 filters, in whole warps
        const auto& members = step.segments[0].members;
        QVERIFY2(std::any_of(members.begin(), members.end(), [&](ir::NodeId m) { return g.node(m).op == ir::Op::Relu; }), step.describe().c_str());
        ++forwardImages;
      } else if (step.kind == gpu::StepKind::ImplicitConv) {
        QCOMPARE(g.node(step.node).op, ir::Op::Conv2dGradWeight);
        QVERIFY2(step.source.find("cas_conv_wgrad_images<64, 4, 10, 10, 16, 3, 3, 10, 10, 1, 1, 1, 1, 8>(") != std::string::npos, step.source.c_str());
        QCOMPARE(step.blockSize, 96);  // 36 taps x 2 groups of 8 filters, in whole warps
        ++weightImages;
      }
      if (step.kind == gpu::StepKind::Conv) {
        const ir::Op op = g.node(step.node).op;
        forwardLibrary += op == ir::Op::Conv2d;
        weightLibrary += op == ir::Op::Conv2dGradWeight;
      }
    }
    QCOMPARE(forwardImages, generated ? 1 : 0);
    QCOMPARE(weightImages, generated ? 1 : 0);
    QCOMPARE(forwardLibrary, generated ? 0 : 1);
    QCOMPARE(weightLibrary, generated ? 0 : 1);
    const std::string error = compileError(moduleSource(s));
    QVERIFY2(error.empty(), error.c_str());
  }

  // Odd-width outputs take a pixel a thread: 31 x 31 'same' with 16 filters is 961 threads of
  // 16 filters, generated; with 32 filters it would need 1922, so it stays with cuDNN.
  void oddWidthForwardsFitTheBlock() {
    for (int filters : {16, 32}) {
      pdl::CompileOptions o;
      o.fileName = "odd.pdl";
      o.observationShape = {1, 31, 31};
      o.actionCount = 2;
      o.batch = 4;
      auto compiled = pdl::compile("def policy(obs):\n    return dense(relu(conv2d(obs, filters=" + std::to_string(filters) + ", kernel=3)), units=2)\n", o);
      QVERIFY(compiled.policy);
      const gpu::Schedule s = gpu::renderSchedule(compiled.policy->graph);
      int generated = 0, library = 0;
      for (const auto& step : s.steps) {
        if (step.kind == gpu::StepKind::ImplicitConv) {
          QVERIFY2(step.source.find("cas_conv_forward_images<4, 1, 31, 31, 16, 3, 3, 31, 31, 1, 1, 1, 1, 16, 1>(") != std::string::npos, step.source.c_str());
          QCOMPARE(step.blockSize, 992);
          ++generated;
        }
        library += step.kind == gpu::StepKind::Conv;
      }
      QCOMPARE(generated, filters == 16 ? 1 : 0);
      QCOMPARE(library, filters == 16 ? 0 : 1);
      const std::string error = compileError(moduleSource(s));
      QVERIFY2(error.empty(), error.c_str());
    }
  }

  // `linear` puts a reshape between its product and the bias after it; the bias, GELU and
  // residual adds still fuse (a reshape keeps the flat index), so a pre-LN layer of
  // connect4_transformer runs four elementwise launches (three biases; bias + residual after
  // the attention's projection; bias + GELU; bias + residual), each storing one value.
  void linearEpiloguesFuseAcrossTheReshape() {
    const train::BenchmarkNet& net = *train::findBenchmarkNet("connect4_transformer");
    pdl::CompileOptions o;
    o.fileName = net.name + ".pdl";
    o.observationShape = net.observationShape;
    o.actionCount = net.actionCount;
    o.batch = 1024;
    const auto compiled = pdl::compile(net.source, o);
    QVERIFY(compiled.policy);
    ir::Graph g = compiled.policy->graph;
    ir::runPasses(g, ir::defaultPipeline());
    const ir::Schedule s = ir::planSchedule(g, gpu::cudaTarget());
    int gelus = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op != ir::Op::Gelu) continue;
      ++gelus;
      const ir::NodeId bias = s.root[size_t(g.nodes[i].inputs[0])];
      QCOMPARE(g.node(bias).op, ir::Op::Add);
      QCOMPARE(s.unitOf[size_t(bias)], s.unitOf[i]);
      QVERIFY(!s.stored[size_t(bias)]);  // in registers
    }
    QCOMPARE(gelus, 4);
    int elementwiseSteps = 0;
    for (const ir::Step& step : s.steps) {
      if (step.kind != ir::StepKind::Kernel) continue;
      const bool elementwise = std::all_of(step.units.begin(), step.units.end(), [&](int u) { return s.units[size_t(u)].kind == ir::UnitKind::Elementwise; });
      elementwiseSteps += elementwise;
      for (int u : step.units) {
        const auto& members = s.units[size_t(u)].members;
        if (elementwise) QCOMPARE(std::count_if(members.begin(), members.end(), [&](ir::NodeId m) { return bool(s.stored[size_t(m)]); }), 1L);
      }
    }
    qInfo("%d elementwise launches, %d launches in all", elementwiseSteps, s.launches());
    QCOMPARE(elementwiseSteps, 4 * 4 + 1);  // four layers, and the mean pool's scale
  }

  void updateGraphsCompileAndFuse_data() {
    QTest::addColumn<QString>("net");
    QTest::addColumn<int>("batch");
    QTest::addColumn<QString>("precision");
    for (const auto& n : train::benchmarkNets())
      for (int batch : {1, 1024})
        QTest::newRow(qPrintable(QString::fromStdString(n.name) + "/" + QString::number(batch))) << QString::fromStdString(n.name) << batch << QStringLiteral("fp32");
    // bf16: the CNN's convolutions become implicit GEMMs, its input gradients cuDNN with relayouts.
    QTest::newRow("atari_nature_cnn/1024/bf16") << QStringLiteral("atari_nature_cnn") << 1024 << QStringLiteral("bf16");
    // bf16 Transformer: attention forward and gradients on tensor cores (attention_mma.cuh).
    QTest::newRow("connect4_transformer/1024/bf16") << QStringLiteral("connect4_transformer") << 1024 << QStringLiteral("bf16");
    // tf32: every convolution and product of the trunk goes to cuDNN and cuBLAS on the fp32 buffers.
    QTest::newRow("atari_nature_cnn/1024/tf32") << QStringLiteral("atari_nature_cnn") << 1024 << QStringLiteral("tf32");
  }
  void updateGraphsCompileAndFuse() {
    QFETCH(QString, net);
    QFETCH(int, batch);
    QFETCH(QString, precision);
    const bool bf16 = precision == QStringLiteral("bf16");
    const ir::Graph g = updateGraph(*train::findBenchmarkNet(net.toStdString()), batch, precision.toStdString());
    const gpu::Schedule s = gpu::renderSchedule(g);
    if (qEnvironmentVariableIsSet("CAS_DUMP_SCHEDULE"))
      for (const auto& step : s.steps) qInfo("%s", step.describe().c_str());
    const std::string error = compileError(moduleSource(s));
    QVERIFY2(error.empty(), error.c_str());
    for (const auto& step : s.steps)
      if (step.kind == gpu::StepKind::Conv && bf16) {
        // Input gradients: cuDNN, where the Nature CNN's 8x8/4 and 4x4/2 layers fold
        // (space-to-depth) and the 3x3/1 layer cannot.
        const ir::Node& conv = g.node(step.node);
        QCOMPARE(conv.op, ir::Op::Conv2dGradInput);
        QVERIFY2(step.source.find(step.relayoutPrefix + "_out(") != std::string::npos, step.source.c_str());
        QCOMPARE(step.fold, conv.attrs.strideH > 1 ? int(conv.attrs.strideH) : 1);
      }
    // Adam over all parameters is one launch (or, past maxUnitsPerStep parameters, launches of
    // that many), and every parameter update is in place.
    QCOMPARE(count(s, gpu::StepKind::Copy), 0);
    const auto params = g.inputsWithRole(ir::InputRole::Parameter);
    const std::size_t perStep = std::min(params.size(), std::size_t(gpu::cudaTarget().maxUnitsPerStep));
    std::size_t fullAdamSteps = 0;
    for (const auto& step : s.steps) fullAdamSteps += step.kind == gpu::StepKind::Kernel && step.segments.size() == perStep;
    QVERIFY2(fullAdamSteps >= std::max<std::size_t>(1, params.size() / perStep), qPrintable(QString::number(fullAdamSteps)));
    if (bf16 && net == QStringLiteral("connect4_transformer")) {
      std::string source = moduleSource(s);
      for (const char* kernel : {"cas_attention_forward_mma<", "cas_attention_stats_mma<", "cas_attention_grad_q_mma<", "cas_attention_grad_kv_mma<"})
        QVERIFY2(source.find(kernel) != std::string::npos, kernel);
      QVERIFY(source.find("cas_attention_grad_kv<") == std::string::npos);
    } else if (bf16) {
      // bf16: three forward and three weight-gradient implicit convolutions; the forward ones
      // compute their bias and ReLU as epilogues.
      QCOMPARE(count(s, gpu::StepKind::ImplicitConv), 6);
      for (const auto& step : s.steps)
        if (step.kind == gpu::StepKind::ImplicitConv && g.node(step.node).op == ir::Op::Conv2d) {
          const auto& members = step.segments[0].members;
          QVERIFY2(std::any_of(members.begin(), members.end(), [&](ir::NodeId m) { return g.node(m).op == ir::Op::Relu; }), step.describe().c_str());
        }
    }
    if (precision == QStringLiteral("tf32")) {
      QCOMPARE(count(s, gpu::StepKind::ImplicitConv), 0);
      QCOMPARE(count(s, gpu::StepKind::Conv), 8);  // three forward, three weight and two input gradients
      for (const auto& step : s.steps)
        if (step.kind == gpu::StepKind::Conv) {
          QCOMPARE(g.node(step.node).precision, ir::Precision::TF32);
          QVERIFY2(step.source.empty(), step.describe().c_str());  // no 16-bit relayouts around it
        }
    }
    const int launches = count(s, gpu::StepKind::Kernel) + count(s, gpu::StepKind::Gemm) + count(s, gpu::StepKind::Blas) +
                         count(s, gpu::StepKind::ImplicitConv) + count(s, gpu::StepKind::Conv);
    qInfo("%s batch %d: %d launches (%d generated, %d GEMM, %d implicit convolutions, %d cuBLAS, %d cuDNN), %d nodes fused", qPrintable(net), batch,
          launches, count(s, gpu::StepKind::Kernel), count(s, gpu::StepKind::Gemm), count(s, gpu::StepKind::ImplicitConv),
          count(s, gpu::StepKind::Blas), count(s, gpu::StepKind::Conv), s.plan.fusedNodes);
  }
};

QTEST_GUILESS_MAIN(TestCodegen)
#include "test_codegen.moc"
