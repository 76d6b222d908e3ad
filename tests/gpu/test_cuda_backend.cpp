// The CUDA backend plugin on a real device: discovery, properties and the NVRTC probe kernel.
#include <QTest>

#include "core/exec/backend.hpp"

class TestCudaBackend : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    const auto* cuda = cas::exec::BackendRegistry::instance().find("cuda");
    QVERIFY(cuda);
    if (!cuda->available()) QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(cuda->unavailableReason)));
  }

  void describesTheDevice() {
    auto backend = cas::exec::BackendRegistry::instance().find("cuda")->backend;
    const QString status = QString::fromStdString(backend->statusText());
    QVERIFY2(status.startsWith(QStringLiteral("CUDA: ")) && status.contains(QStringLiteral(", sm_")) && status.endsWith(QStringLiteral(" SMs")),
             qPrintable(status));
    bool hasSms = false;
    for (const auto& [name, value] : backend->properties())
      if (name == "SMs") hasSms = std::stoi(value) > 0;
    QVERIFY(hasSms);
    qInfo("%s", qPrintable(status));
  }

  void probeKernelComputesTheRightResult() {
    auto report = cas::exec::BackendRegistry::instance().find("cuda")->backend->probe();
    QVERIFY(report.has_value());
    QVERIFY2(report->passed, report->summary.c_str());
    QVERIFY(report->compileMs > 0);
    qInfo("%s (compile %.1f ms)", report->summary.c_str(), report->compileMs);
  }

  void autoSelectsCuda() {
    std::string error;
    auto chosen = cas::exec::BackendRegistry::instance().select("auto", &error);
    QVERIFY(chosen);
    QCOMPARE(chosen->id(), std::string("cuda"));
  }
};

QTEST_GUILESS_MAIN(TestCudaBackend)
#include "test_cuda_backend.moc"
