// Exported policies against the CPU backend: for every example project, every benchmark network
// and small policies with layer_norm, residual blocks, attention, pooling, embedding and the
// elementwise ops, the ONNX model (run by onnxruntime from python3, tests/export/run_onnx.py,
// after onnx.checker accepts it) and the C source (compiled by the system's cc with -Werror
// beside tests/export/c_driver.c) give the CPU backend's outputs on 64 random observations
// within atol + rtol*|ref| (both 1e-5). Then `cuda-agent export` on a project and on a trained
// run (a chosen checkpoint, metadata), and its refusals (a missing or corrupted checkpoint, a
// truncated one, a checkpoint of another network, bad options), each of which writes nothing.
// Suites that need onnxruntime skip with the reason when python3 cannot import it.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <random>

#include "cas/version.hpp"
#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/export/c_export.hpp"
#include "core/export/onnx_export.hpp"
#include "core/export/policy_loader.hpp"
#include "core/ir/builder.hpp"
#include "core/ir/passes.hpp"
#include "core/train/benchmark_nets.hpp"
#include "core/cuda_render/standalone_export.hpp"

#include "support/cli_runs.hpp"
#include "support/export_policies.hpp"
#include "support/golden.hpp"
#include "support/source_dir.hpp"

namespace {

using cas::exports::ExportablePolicy;
using namespace cas::test;

const QString kRunOnnx = cas::test::sourcePath(QStringLiteral("tests/export/run_onnx.py"));
const QString kDriver = cas::test::sourcePath(QStringLiteral("tests/export/c_driver.c"));
const QString kProjects = cas::test::projectsDir();

// run_onnx.py on `model` and `obs`; its JSON summary, or a skip when onnxruntime is missing.
struct OnnxRun {
  bool skipped = false;
  QString why;
  QJsonObject summary;
};

OnnxRun runOnnx(const QString& model, const QString& obsFile, const QString& outDir) {
  QProcess p;
  p.start(QStringLiteral("python3"), {kRunOnnx, model, obsFile, outDir});
  OnnxRun run;
  if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit) {
    run.why = QStringLiteral("python3 did not run or finish: ") + p.errorString();
    return run;
  }
  const QString out = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
  if (p.exitCode() == 77) {
    run.skipped = true;
    run.why = out;
    return run;
  }
  if (p.exitCode() != 0) {
    run.why = QString::fromUtf8(p.readAllStandardError());
    return run;
  }
  run.summary = QJsonDocument::fromJson(out.toUtf8()).object();
  return run;
}

#define RUN_ONNX(run, model, obs, out)                              \
  const OnnxRun run = runOnnx(model, obs, out);                     \
  if (run.skipped) QSKIP(qPrintable(run.why));                      \
  QVERIFY2(!run.summary.isEmpty(), qPrintable(run.why))

QJsonArray jsonArray(const std::vector<std::int64_t>& v) {
  QJsonArray a;
  for (std::int64_t x : v) a.append(double(x));
  return a;
}

void copyFolder(const QString& from, const QString& to) {
  QDir().mkpath(to);
  for (const QFileInfo& f : QDir(from).entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot)) {
    if (f.isDir()) copyFolder(f.filePath(), to + QLatin1Char('/') + f.fileName());
    else QFile::copy(f.filePath(), to + QLatin1Char('/') + f.fileName());
  }
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString run_;  // a trained run (three quick iterations of tic-tac-toe), made on first use

  QString path(const QString& name) const { return dir_.filePath(name); }

  const QString& trainedRun() {
    if (run_.isEmpty()) {
      run_ = path(QStringLiteral("ttt-run"));
      const Result r = cli(QStringList{QStringLiteral("train"), kProjects + QStringLiteral("tictactoe-alphazero"), QStringLiteral("--iterations"),
                                       QStringLiteral("3"), QStringLiteral("--out"), run_} + kQuick);
      if (r.status != 0) qWarning("%s", qPrintable(r.err));
    }
    return run_;
  }

 private slots:
  void onnxMatchesTheCpuBackend_data() { addPolicyRows(); }
  void onnxMatchesTheCpuBackend() {
    QFETCH(QString, name);
    const ExportablePolicy policy = policyNamed(name);
    const QString folder = path(QStringLiteral("onnx-") + name);
    QVERIFY(QDir().mkpath(folder));
    const QString model = folder + QStringLiteral("/policy.onnx"), obsFile = folder + QStringLiteral("/obs.f32");
    const std::string bytes = cas::exports::exportOnnx(policy, {});
    QVERIFY(writeBytes(model, bytes.data(), qint64(bytes.size())));
    const std::vector<float> obs = observations(policy, kSamples);
    QVERIFY(writeFloats(obsFile, obs));
    RUN_ONNX(run, model, obsFile, folder);
    compareOutputs(folder, reference(policy, obs, kSamples));

    // The interface and the metadata.
    QCOMPARE(run.summary[QLatin1String("opset")].toInt(), cas::exports::kDefaultOnnxOpset);
    const QJsonObject input = run.summary[QLatin1String("inputs")].toArray()[0].toObject();
    QCOMPARE(input[QLatin1String("name")].toString(), QStringLiteral("obs"));
    QJsonArray shape = jsonArray(policy.options.observationShape);
    shape.prepend(QStringLiteral("batch"));
    QCOMPARE(input[QLatin1String("shape")].toArray(), shape);
    QStringList outputs;
    for (const QJsonValue& o : run.summary[QLatin1String("outputs")].toArray()) outputs << o.toObject()[QLatin1String("name")].toString();
    QCOMPARE(outputs, (QStringList{QStringLiteral("logits"), QStringLiteral("value")}));
    const QJsonObject meta = run.summary[QLatin1String("metadata")].toObject();
    QCOMPARE(meta[QLatin1String("project")].toString().toStdString(), policy.metadata.project);
    QCOMPARE(meta[QLatin1String("environment")].toString().toStdString(), policy.metadata.environment);
    QCOMPARE(QJsonDocument::fromJson(meta[QLatin1String("observation_shape")].toString().toUtf8()).array(), jsonArray(policy.options.observationShape));
    const QJsonArray actions = QJsonDocument::fromJson(meta[QLatin1String("action_names")].toString().toUtf8()).array();
    QCOMPARE(actions.size(), qsizetype(policy.options.actionCount));
    QCOMPARE(actions.first().toString().toStdString(), policy.metadata.actionNames.front());
    QCOMPARE(meta[QLatin1String("iteration")].toString(), QStringLiteral("0"));
    QCOMPARE(meta[QLatin1String("cuda_agent_version")].toString(), QString::fromLatin1(cas::kVersion));
  }

  void cMatchesTheCpuBackend_data() { addPolicyRows(); }
  void cMatchesTheCpuBackend() {
    QFETCH(QString, name);
    const QString cc = QStandardPaths::findExecutable(QStringLiteral("cc"));
    if (cc.isEmpty()) QSKIP("no C compiler (cc) on the PATH");
    const ExportablePolicy policy = policyNamed(name);
    const QString folder = path(QStringLiteral("c-") + name);
    QVERIFY(QDir().mkpath(folder));
    const cas::exports::CSource source = cas::exports::exportC(policy, "policy.h");
    QVERIFY(writeBytes(folder + QStringLiteral("/policy.h"), source.header.data(), qint64(source.header.size())));
    QVERIFY(writeBytes(folder + QStringLiteral("/policy.c"), source.source.data(), qint64(source.source.size())));
    QProcess build;
    build.setWorkingDirectory(folder);
    build.start(cc, {QStringLiteral("-std=c99"), QStringLiteral("-O2"), QStringLiteral("-Wall"), QStringLiteral("-Wextra"), QStringLiteral("-Werror"),
                     QStringLiteral("-I."), QStringLiteral("policy.c"), kDriver, QStringLiteral("-lm"), QStringLiteral("-o"), QStringLiteral("driver")});
    QVERIFY(build.waitForFinished(300000));
    QVERIFY2(build.exitCode() == 0, build.readAllStandardError().left(4000).constData());

    const std::vector<float> obs = observations(policy, kSamples);
    QVERIFY(writeFloats(folder + QStringLiteral("/obs.f32"), obs));
    QProcess driver;
    driver.start(folder + QStringLiteral("/driver"), {QString::number(kSamples), folder + QStringLiteral("/obs.f32"), folder});
    QVERIFY(driver.waitForFinished(120000));
    QVERIFY2(driver.exitStatus() == QProcess::NormalExit && driver.exitCode() == 0, driver.readAllStandardError().constData());
    compareOutputs(folder, reference(policy, obs, kSamples));
  }

  // The standalone CUDA export, written here and compiled by nvcc when the toolkit is here (its
  // numbers are checked on the GPU machine, tests/gpu/test_cuda_export.cpp): the policies whose
  // products and convolutions need direct.cuh (no cuBLAS, no cuDNN), one of GEMMs only and a project.
  void cudaSourceCompiles_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"tictactoe-alphazero", "cartpole_mlp64", "attention", "pools_and_elementwise"}) QTest::newRow(name) << QString::fromLatin1(name);
  }
  void cudaSourceCompiles() {
    QFETCH(QString, name);
    const cas::exports::CSource source = cas::gpu::exportCuda(policyNamed(name), 8, "policy_cuda.h");
    for (const char* library : {"cublas", "cudnn", "nvrtc"}) QVERIFY2(source.source.find(library) == std::string::npos, library);
    QVERIFY(source.header.find("#define POLICY_CUDA_BATCH 8 ") != std::string::npos);
    QString nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"));
    if (nvcc.isEmpty()) nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"), {QStringLiteral("/usr/local/cuda/bin")});
    if (nvcc.isEmpty()) QSKIP("no nvcc on the PATH or in /usr/local/cuda/bin");
    const QString folder = path(QStringLiteral("cuda-") + name);
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(writeBytes(folder + QStringLiteral("/policy_cuda.h"), source.header.data(), qint64(source.header.size())));
    QVERIFY(writeBytes(folder + QStringLiteral("/policy_cuda.cu"), source.source.data(), qint64(source.source.size())));
    QProcess build;
    build.setWorkingDirectory(folder);
    build.setProcessChannelMode(QProcess::MergedChannels);
    build.start(nvcc, {QStringLiteral("-arch=sm_90"), QStringLiteral("-O3"), QStringLiteral("-Xcompiler=-Wall,-Wextra"), QStringLiteral("-c"),
                       QStringLiteral("policy_cuda.cu")});
    QVERIFY(build.waitForFinished(300000));
    const QByteArray output = build.readAll();
    QVERIFY2(build.exitCode() == 0, output.left(4000).constData());
    QVERIFY2(!output.contains("warning"), output.left(4000).constData());
  }

  // Other opsets (ReduceMax takes its axes as an attribute before 18), a static batch, and a
  // dynamic model at a batch size other than the one it was written from.
  void opsetsAndBatchSizes() {
    const ExportablePolicy policy = policyNamed(QStringLiteral("pools_and_elementwise"));
    struct Variant {
      int opset;
      std::int64_t batch;  // 0: dynamic
      int samples;
    };
    for (const Variant v : {Variant{13, 0, 5}, Variant{21, 0, 1}, Variant{17, kSamples, kSamples}}) {
      const QString folder = path(QStringLiteral("opset-%1-batch-%2-%3").arg(v.opset).arg(v.batch).arg(v.samples));
      QVERIFY(QDir().mkpath(folder));
      const std::string bytes = cas::exports::exportOnnx(policy, {v.opset, v.batch});
      QVERIFY(writeBytes(folder + QStringLiteral("/policy.onnx"), bytes.data(), qint64(bytes.size())));
      const std::vector<float> obs = observations(policy, v.samples);
      QVERIFY(writeFloats(folder + QStringLiteral("/obs.f32"), obs));
      RUN_ONNX(run, folder + QStringLiteral("/policy.onnx"), folder + QStringLiteral("/obs.f32"), folder);
      QCOMPARE(run.summary[QLatin1String("opset")].toInt(), v.opset);
      const QJsonValue batchAxis = run.summary[QLatin1String("inputs")].toArray()[0].toObject()[QLatin1String("shape")].toArray()[0];
      QCOMPARE(batchAxis, v.batch > 0 ? QJsonValue(double(v.batch)) : QJsonValue(QStringLiteral("batch")));
      compareOutputs(folder, reference(policy, obs, v.samples));
    }
    QVERIFY_THROWS_EXCEPTION(cas::exports::ExportError, cas::exports::exportOnnx(policy, {12, 0}));
  }

  // An op with no exported form is refused with its name and the PDL call it came from.
  void opsWithoutAFormAreNamed() {
    cas::ir::Graph g;
    cas::ir::Builder b(g);
    b.setOrigin("obs", 2, 12);
    const cas::ir::NodeId obs = b.input("obs", {1, 2, 4, 4});
    b.setOrigin("policy/conv2d_0", 4, 13);
    const cas::ir::NodeId w = b.input("policy/conv2d_0/weight", {3, 2, 3, 3}, cas::ir::InputRole::Parameter);
    cas::ir::Window2d win{3, 3, 1, 1, 1, 1, 1, 1};
    const cas::ir::NodeId dx = b.conv2dGradInput(b.conv2d(obs, w, win), w, win, {1, 2, 4, 4});
    g.outputs.push_back({"logits", dx});
    const cas::exports::Weights weights = {{"policy/conv2d_0/weight", std::vector<float>(54, 0.5f)}};
    const std::string where = "%3 conv2d_grad_input in policy/conv2d_0 (line 4:13)";
    try {
      cas::exports::writeOnnx(g, nullptr, weights, {}, 17);
      QFAIL("the ONNX export took conv2d_grad_input");
    } catch (const cas::exports::ExportError& e) {
      QCOMPARE(QString::fromUtf8(e.what()), QStringLiteral("the IR op 'conv2d_grad_input' has no ONNX form (it belongs to training graphs "
                                                           "(gradients), never to a policy's forward pass): ") + QString::fromStdString(where));
    }
    try {
      cas::exports::writeC(g, weights, {}, "policy.h");
      QFAIL("the C export took conv2d_grad_input");
    } catch (const cas::exports::ExportError& e) {
      QVERIFY2(QString::fromUtf8(e.what()).startsWith(QStringLiteral("the IR op 'conv2d_grad_input' has no C form")), e.what());
      QVERIFY2(QString::fromUtf8(e.what()).endsWith(QString::fromStdString(where)), e.what());
    }
  }

  // The CLI on a project folder: both formats, written where --out says.
  void exportsAProject() {
    const QString project = kProjects + QStringLiteral("connect4-alphazero");
    const QString onnx = path(QStringLiteral("cli/c4.onnx")), c = path(QStringLiteral("cli/c4.c"));
    Result r = cli({QStringLiteral("export"), project, QStringLiteral("--out"), onnx});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.out.startsWith(QStringLiteral("wrote %1 (ONNX, opset 17, dynamic batch, ").arg(onnx)), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("from the initial weights of %1 (runtime.seed 7): project connect4-alphazero, iteration 0").arg(project)),
             qPrintable(r.out));
    QVERIFY(QFileInfo(onnx).size() > 100000);
    r = cli({QStringLiteral("export"), project, QStringLiteral("--format"), QStringLiteral("c"), QStringLiteral("--out"), c});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(c));
    QVERIFY(QFile::exists(path(QStringLiteral("cli/c4.h"))));
  }

  // The CLI on a standalone .pdl file: its shape from --obs-shape and --action-dim, the weights
  // seeded by --seed as a run's are; without a shape, or with a run's options, it is refused.
  void exportsAStandalonePolicy() {
    const QString pdl = path(QStringLiteral("standalone/mlp.pdl"));
    QVERIFY(QDir().mkpath(path(QStringLiteral("standalone"))));
    const QByteArray source = "@parallel(axis='batch')\ndef policy(obs):\n    h = relu(dense(obs, units=64))\n"
                              "    h = relu(dense(h, units=64))\n    return dense(h, units=action_dim), tanh(dense(h, units=1))\n";
    QVERIFY(writeBytes(pdl, source.constData(), source.size()));
    Result r = cli({QStringLiteral("export"), pdl, QStringLiteral("--format"), QStringLiteral("c"), QStringLiteral("--obs-shape"), QStringLiteral("32"),
                    QStringLiteral("--action-dim"), QStringLiteral("3"), QStringLiteral("--seed"), QStringLiteral("5")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(path(QStringLiteral("standalone/exports/mlp.c"))));
    QVERIFY(QFile::exists(path(QStringLiteral("standalone/exports/mlp.h"))));
    QVERIFY2(r.out.contains(QStringLiteral("from the initial weights of %1 (seed 5): project mlp, iteration 0").arg(pdl)), qPrintable(r.out));

    const auto loaded = cas::exports::loadPolicyFile(pdl.toStdString(), {{32}, 3, 5});
    QVERIFY2(loaded.policy, loaded.error.message.c_str());
    QCOMPARE(int(loaded.policy->weights.size()), 8);
    QCOMPARE(loaded.policy->weights.at("policy/dense_0/weight").size(), size_t(32 * 64));
    const auto other = cas::exports::loadPolicyFile(pdl.toStdString(), {{32}, 3, 6});
    QVERIFY(other.policy && other.policy->weights != loaded.policy->weights);

    const auto refused = [](const QStringList& args, const QString& expected) {
      const Result r = cli(QStringList{QStringLiteral("export")} + args);
      QVERIFY2(r.status == 2, qPrintable(r.err));
      QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    };
    refused({pdl, QStringLiteral("--out"), path(QStringLiteral("standalone/no.onnx"))},
            QStringLiteral("is a standalone PDL file: give its observation shape and action count (--obs-shape 32 --action-dim 3)"));
    refused({pdl, QStringLiteral("--obs-shape"), QStringLiteral("32"), QStringLiteral("--action-dim"), QStringLiteral("3"), QStringLiteral("--checkpoint"),
             QStringLiteral("1"), QStringLiteral("--out"), path(QStringLiteral("standalone/no.onnx"))},
            QStringLiteral("is a standalone PDL file, which has no checkpoints"));
    refused({pdl, QStringLiteral("--obs-shape"), QStringLiteral("32x2"), QStringLiteral("--action-dim"), QStringLiteral("3")},
            QStringLiteral("--obs-shape: '32x2' is not a list of positive integers"));
    refused({kProjects + QStringLiteral("tictactoe-alphazero"), QStringLiteral("--obs-shape"), QStringLiteral("9")},
            QStringLiteral("--obs-shape, --action-dim and --seed go with a .pdl file"));
    QVERIFY(!QFileInfo::exists(path(QStringLiteral("standalone/no.onnx"))));
  }

  // The CLI on a trained run: the newest checkpoint by default (into RUN/exports), or the one
  // asked for; the weights are the checkpoint's, not the initial ones.
  void exportsARunsCheckpoint() {
    const QString run = trainedRun();
    Result r = cli({QStringLiteral("export"), run});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(run + QStringLiteral("/exports/policy.onnx")));
    QVERIFY2(r.out.contains(QStringLiteral("iteration 3\n")), qPrintable(r.out));

    const QString model = path(QStringLiteral("run-iter-2.onnx"));
    r = cli({QStringLiteral("export"), run, QStringLiteral("--checkpoint"), QStringLiteral("2"), QStringLiteral("--batch"), QStringLiteral("64"),
             QStringLiteral("--out"), model});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("from checkpoint %1/checkpoints/iter-00000002.ckpt").arg(run)), qPrintable(r.out));
    const cas::exports::LoadedPolicy loaded = cas::exports::loadPolicy(run.toStdString(), 2);
    QVERIFY(loaded.policy);
    const ExportablePolicy initial = policyNamed(QStringLiteral("tictactoe-alphazero"));
    QVERIFY2(loaded.policy->weights != initial.weights, "the checkpoint holds the initial weights: no training step was taken");
    const std::vector<float> obs = observations(*loaded.policy, kSamples);
    QVERIFY(writeFloats(path(QStringLiteral("run-obs.f32")), obs));
    QVERIFY(QDir().mkpath(path(QStringLiteral("run-out"))));
    RUN_ONNX(onnxRun, model, path(QStringLiteral("run-obs.f32")), path(QStringLiteral("run-out")));
    QCOMPARE(onnxRun.summary[QLatin1String("metadata")].toObject()[QLatin1String("iteration")].toString(), QStringLiteral("2"));
    compareOutputs(path(QStringLiteral("run-out")), reference(*loaded.policy, obs, kSamples));
  }

  // Bad input: a clear error, status 2, and nothing written.
  // Hardening, fourth probe: an export never replaces the files it reads (--out PROJECT/policy.pdl,
  // PROJECT/project.toml, or the standalone .pdl itself, were overwritten with the model), also
  // when the path names it another way (through a link to the project's folder).
  void exportsNeverReplaceTheirSource() {
    const QString project = path(QStringLiteral("own-source/project"));
    copyFolder(kProjects + QStringLiteral("tictactoe-alphazero"), project);
    QVERIFY(QFile::link(project, path(QStringLiteral("own-source/alias"))));
    const auto bytes = [](const QString& file) {
      QFile f(file);
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray toml = bytes(project + QStringLiteral("/project.toml")), pdl = bytes(project + QStringLiteral("/policy.pdl"));
    for (const QString& own : {QStringLiteral("/policy.pdl"), QStringLiteral("/project.toml"), QStringLiteral("/../alias/policy.pdl")}) {
      const Result r = cli({QStringLiteral("export"), project, QStringLiteral("--out"), project + own});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, QStringLiteral("error: %1%2 is one of the project's own files (%3); the export would replace it: export to another path "
                                     "(nothing was changed)\n").arg(project, own, own == QStringLiteral("/project.toml") ? QStringLiteral("project.toml") : QStringLiteral("policy.pdl")));
    }
    QCOMPARE(bytes(project + QStringLiteral("/project.toml")), toml);
    QCOMPARE(bytes(project + QStringLiteral("/policy.pdl")), pdl);
    const QString standalone = path(QStringLiteral("own-source/mlp.pdl"));
    const QByteArray source = "def policy(obs):\n    h = relu(dense(obs, units=8))\n    return dense(h, units=action_dim), tanh(dense(h, units=1))\n";
    QVERIFY(writeBytes(standalone, source.constData(), source.size()));
    const Result r = cli({QStringLiteral("export"), standalone, QStringLiteral("--obs-shape"), QStringLiteral("2,3,3"), QStringLiteral("--action-dim"),
                          QStringLiteral("9"), QStringLiteral("--out"), standalone});
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: %1 is the policy file being exported; the export would replace it: export to another path (nothing was changed)\n")
                        .arg(standalone));
    QCOMPARE(bytes(standalone), source);
  }

  // Hardening, fourth probe: `export RUN --out x.c` wrote the ONNX model into x.c without a word,
  // while --format c --out x.onnx was refused; a source file's name is refused for a model.
  void aModelIsNotWrittenUnderASourceName() {
    const QString run = trainedRun();
    for (const char* name : {"model.c", "model.cu", "model.h"}) {
      const QString out = path(QStringLiteral("misnamed/")) + QLatin1String(name);
      const Result r = cli({QStringLiteral("export"), run, QStringLiteral("--out"), out});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, QStringLiteral("error: %1: the ONNX export (the default format) is a model, not source code; give --format c or --format cuda "
                                     "for source, or name the model .onnx\n").arg(out));
      QVERIFY(!QFileInfo::exists(path(QStringLiteral("misnamed"))));
    }
  }

  // Hardening, fourth probe: `check one.pdl` (no --algorithm) says ok for a policy of one output,
  // which export refused as "an AlphaZero policy must return (logits, value)" without saying why
  // it took the file for one; the refusal says so, and how check sees it the same way.
  void aStandaloneExportSaysWhyItWantsAValue() {
    const QString pdl = path(QStringLiteral("one-output/one.pdl"));
    QVERIFY(QDir().mkpath(path(QStringLiteral("one-output"))));
    const QByteArray source = "def policy(obs):\n    return dense(obs, units=action_dim)\n";
    QVERIFY(writeBytes(pdl, source.constData(), source.size()));
    const QStringList shape = {QStringLiteral("--obs-shape"), QStringLiteral("4"), QStringLiteral("--action-dim"), QStringLiteral("2")};
    QCOMPARE(cli(QStringList{QStringLiteral("check"), pdl} + shape).status, 0);
    const Result r = cli(QStringList{QStringLiteral("export"), pdl} + shape + QStringList{QStringLiteral("--out"), path(QStringLiteral("one-output/one.onnx"))});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("; export takes a standalone .pdl file as an actor-critic policy, as AlphaZero and PPO train them (`check %1 "
                                           "--algorithm alphazero` checks it so): return a value head too, such as tanh(dense(h, units=1))").arg(pdl)),
             qPrintable(r.err));
    QVERIFY(cli(QStringList{QStringLiteral("check"), pdl, QStringLiteral("--algorithm"), QStringLiteral("alphazero")} + shape).status != 0);
  }

  void refusalsWriteNothing() {
    const QString run = trainedRun();
    const QString out = path(QStringLiteral("refused/policy.onnx"));
    auto refused = [&](const QStringList& args, const QString& expected) {
      const Result r = cli(QStringList{QStringLiteral("export")} + args + QStringList{QStringLiteral("--out"), out});
      QVERIFY2(r.status == 2, qPrintable(r.err));
      QVERIFY2(r.err.contains(expected), qPrintable(r.err));
      QVERIFY(!QFileInfo::exists(path(QStringLiteral("refused"))));
    };
    refused({path(QStringLiteral("missing"))}, QStringLiteral("Path does not exist"));
    QVERIFY(QDir().mkpath(path(QStringLiteral("empty"))));
    refused({path(QStringLiteral("empty"))}, QStringLiteral("is neither a run folder (with config.toml), a project folder (with project.toml) nor a .pdl file"));
    refused({run, QStringLiteral("--checkpoint"), QStringLiteral("7")},
            QStringLiteral("has no checkpoint of iteration 7 (it keeps the 2 newest; it holds iter-00000002.ckpt, iter-00000003.ckpt)"));
    refused({kProjects + QStringLiteral("tictactoe-alphazero"), QStringLiteral("--checkpoint"), QStringLiteral("1")},
            QStringLiteral("is a project folder, which has no checkpoints"));
    refused({run, QStringLiteral("--opset"), QStringLiteral("12")}, QStringLiteral("--opset"));
    refused({run, QStringLiteral("--format"), QStringLiteral("c"), QStringLiteral("--opset"), QStringLiteral("13")},
            QStringLiteral("--opset goes with --format onnx"));
    refused({run, QStringLiteral("--format"), QStringLiteral("c"), QStringLiteral("--batch"), QStringLiteral("4")},
            QStringLiteral("--batch goes with --format onnx or cuda"));
    refused({run, QStringLiteral("--format"), QStringLiteral("cuda"), QStringLiteral("--batch"), QStringLiteral("dynamic")},
            QStringLiteral("the CUDA export is compiled for a batch size: give --batch N"));
    const Result notCu = cli({QStringLiteral("export"), run, QStringLiteral("--format"), QStringLiteral("cuda"), QStringLiteral("--out"), out});
    QCOMPARE(notCu.status, 2);
    QVERIFY2(notCu.err.contains(QStringLiteral("the CUDA export is a .cu file")), qPrintable(notCu.err));
    const Result notC = cli({QStringLiteral("export"), run, QStringLiteral("--format"), QStringLiteral("c"), QStringLiteral("--out"), out});
    QCOMPARE(notC.status, 2);
    QVERIFY2(notC.err.contains(QStringLiteral("the C export is a .c file")), qPrintable(notC.err));

    // A corrupted checkpoint (one byte changed) and a truncated one: skipped, and with no valid
    // one left, refused.
    const QString damaged = path(QStringLiteral("damaged"));
    copyFolder(run, damaged);
    const QString newest = damaged + QStringLiteral("/checkpoints/iter-00000003.ckpt"), older = damaged + QStringLiteral("/checkpoints/iter-00000002.ckpt");
    {
      QFile f(newest);
      QVERIFY(f.open(QIODevice::ReadWrite));
      QVERIFY(f.seek(f.size() / 2));
      const char flipped = char(f.peek(1)[0] ^ 0x40);
      QVERIFY(f.write(&flipped, 1) == 1);
    }
    QVERIFY(QFile::resize(older, QFileInfo(older).size() / 2));
    refused({damaged}, QStringLiteral("has no valid checkpoint yet"));
    const Result r = cli({QStringLiteral("export"), damaged, QStringLiteral("--out"), out});
    QVERIFY2(r.err.contains(QStringLiteral("warning: skipping checkpoint iter-00000003.ckpt: checksum mismatch (the file is corrupted)")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: truncated (no checksum trailer)")), qPrintable(r.err));
    refused({damaged, QStringLiteral("--checkpoint"), QStringLiteral("3")}, QStringLiteral("checkpoint iter-00000003.ckpt cannot be used: checksum mismatch"));

    // A checkpoint of another network: the run's policy edited to a narrower one.
    const QString other = path(QStringLiteral("other-network"));
    copyFolder(run, other);
    QFile policy(other + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.open(QIODevice::ReadOnly));
    const QByteArray narrower = policy.readAll().replace("const width = 32", "const width = 16");
    policy.close();
    QVERIFY(writeBytes(other + QStringLiteral("/policy.pdl"), narrower.constData(), narrower.size()));
    refused({other}, QStringLiteral("checkpoint iter-00000003.ckpt cannot be used: policy/conv2d_0/weight: the checkpoint holds shape "
                           "[32, 2, 3, 3], this project's network needs [16, 2, 3, 3]"));
  }
};

QTEST_GUILESS_MAIN(TestExport)
#include "test_export.moc"
