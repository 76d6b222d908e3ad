// The standalone CUDA export against the CPU backend, on the GPU machine: for every policy the
// ONNX and C exports are checked on (support/export_policies.hpp), the .cu written at batch 64,
// built with nvcc -arch=sm_90 beside tests/export/cuda_driver.cu, gives the CPU backend's
// outputs on 64 random observations within the GPU suite's forward tolerance (atol 1e-5, rtol
// 1e-4), from host and from device pointers. The builds run at once, started by initTestCase.
// Skips with the reason when there is no nvcc or no CUDA device.
#include <QDir>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <memory>

#include "core/cuda_render/standalone_export.hpp"
#include "support/export_policies.hpp"
#include "support/source_dir.hpp"

namespace {

using namespace cas::test;

constexpr double kAtol = 1e-5, kRtol = 1e-4;

QString findNvcc() {
  QString nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"));
  if (nvcc.isEmpty()) nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"), {QStringLiteral("/usr/local/cuda/bin")});
  return nvcc;
}

// Whether a CUDA device answers (nvidia-smi lists one).
bool deviceAnswers() {
  QProcess smi;
  smi.start(QStringLiteral("nvidia-smi"), {QStringLiteral("-L")});
  return smi.waitForFinished(30000) && smi.exitStatus() == QProcess::NormalExit && smi.exitCode() == 0 &&
         smi.readAllStandardOutput().contains("GPU");
}

}  // namespace

class TestCudaExport : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString skip_;  // why the suite skips, when it does
  std::map<QString, std::unique_ptr<QProcess>> builds_;

  QString folder(const QString& name) const { return dir_.filePath(name); }

 private slots:
  void initTestCase() {
    const QString nvcc = findNvcc();
    if (nvcc.isEmpty()) skip_ = QStringLiteral("no nvcc on the PATH or in /usr/local/cuda/bin");
    else if (!deviceAnswers()) skip_ = QStringLiteral("no CUDA device (nvidia-smi -L lists none)");
    if (!skip_.isEmpty()) return;
    for (const QString& name : policyNames()) {
      const QString f = folder(name);
      QVERIFY(QDir().mkpath(f));
      const cas::exports::CSource source = cas::gpu::exportCuda(policyNamed(name), kSamples, "policy_cuda.h");
      QVERIFY(writeBytes(f + QStringLiteral("/policy_cuda.h"), source.header.data(), qint64(source.header.size())));
      QVERIFY(writeBytes(f + QStringLiteral("/policy_cuda.cu"), source.source.data(), qint64(source.source.size())));
      auto build = std::make_unique<QProcess>();
      build->setWorkingDirectory(f);
      build->setProcessChannelMode(QProcess::MergedChannels);
      build->start(nvcc, {QStringLiteral("-arch=sm_90"), QStringLiteral("-O3"), QStringLiteral("-I."), QStringLiteral("policy_cuda.cu"),
                          cas::test::sourcePath(QStringLiteral("tests/export/cuda_driver.cu")), QStringLiteral("-o"), QStringLiteral("driver")});
      builds_[name] = std::move(build);
    }
  }

  void cudaMatchesTheCpuBackend_data() { addPolicyRows(); }
  void cudaMatchesTheCpuBackend() {
    if (!skip_.isEmpty()) QSKIP(qPrintable(skip_));
    QFETCH(QString, name);
    QProcess& build = *builds_.at(name);
    QVERIFY(build.waitForFinished(600000));
    QVERIFY2(build.exitStatus() == QProcess::NormalExit && build.exitCode() == 0, build.readAll().left(4000).constData());
    const QString f = folder(name);
    const ExportablePolicy policy = policyNamed(name);
    const std::vector<float> obs = observations(policy, kSamples);
    QVERIFY(writeFloats(f + QStringLiteral("/obs.f32"), obs));
    QProcess driver;
    driver.setProcessChannelMode(QProcess::MergedChannels);
    driver.start(f + QStringLiteral("/driver"), {QString::number(kSamples), f + QStringLiteral("/obs.f32"), f});
    QVERIFY(driver.waitForFinished(120000));
    QVERIFY2(driver.exitStatus() == QProcess::NormalExit && driver.exitCode() == 0, driver.readAll().constData());
    compareOutputs(f, reference(policy, obs, kSamples), kAtol, kRtol);
  }
};

QTEST_GUILESS_MAIN(TestCudaExport)
#include "test_cuda_export.moc"
