// How the test suites find the source tree (support/source_dir.hpp): CAS_SOURCE_DIR from the
// environment first, the configured path otherwise. The GPU machine runs a bundle built at
// another path, so a suite that read only the compile-time path would fail there alone; here a
// GPU suite's binary (test_device_rollout, which checks its projects before it looks for a
// device) runs with the variable pointing at an empty folder, which must fail, and at a folder
// holding a copy of the projects it reads, which must not.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "support/source_dir.hpp"

namespace {

struct Outcome {
  int exitCode = -1;
  QString output;
};

Outcome runGpuSuite(const QString& sourceDir) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("CAS_SOURCE_DIR"), sourceDir);
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  p.setProcessEnvironment(env);
  p.setProcessChannelMode(QProcess::MergedChannels);
  // initTestCase checks the files, then skips the suite without a device; with one, the smallest
  // case runs.
  p.start(QStringLiteral(CAS_GPU_SUITE), {QStringLiteral("matchesTheHostRollout:cartpole")});
  if (!p.waitForFinished(120000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromLocal8Bit(p.readAll())};
}

bool copyFolder(const QString& from, const QString& to) {
  if (!QDir().mkpath(to)) return false;
  const QDir source(from);
  for (const QString& name : source.entryList(QDir::Files))
    if (!QFile::copy(source.filePath(name), to + QLatin1Char('/') + name)) return false;
  return true;
}

}  // namespace

class TestSourceLookup : public QObject {
  Q_OBJECT
 private slots:
  void environmentComesFirst() {
    const QByteArray saved = qgetenv("CAS_SOURCE_DIR");
    qputenv("CAS_SOURCE_DIR", "/elsewhere/checkout");
    QCOMPARE(cas::test::sourcePath(QStringLiteral("projects")), QStringLiteral("/elsewhere/checkout/projects"));
    qputenv("CAS_SOURCE_DIR", "");
    QCOMPARE(cas::test::sourceDir(), QStringLiteral(CAS_SOURCE_DIR));
    qunsetenv("CAS_SOURCE_DIR");
    QCOMPARE(cas::test::sourceFile("tests"), std::string(CAS_SOURCE_DIR "/tests"));
    if (!saved.isNull()) qputenv("CAS_SOURCE_DIR", saved);
  }

  void gpuSuiteFailsWithoutTheFiles() {
    QTemporaryDir empty;
    QVERIFY(empty.isValid());
    const Outcome o = runGpuSuite(empty.path());
    QVERIFY2(o.exitCode > 0, qPrintable(o.output));
    QVERIFY2(o.output.contains(empty.path() + QStringLiteral("/projects/")), qPrintable(o.output));
    QVERIFY2(o.output.contains(QStringLiteral("set CAS_SOURCE_DIR")), qPrintable(o.output));
  }

  void gpuSuiteReadsTheEnvironmentsCheckout() {
    QTemporaryDir checkout;
    QVERIFY(checkout.isValid());
    for (const char* folder : {"minatar-breakout-ppo", "cartpole-ppo", "trading-ppo"}) {
      const QString relative = QStringLiteral("projects/") + QLatin1String(folder);
      QVERIFY(copyFolder(cas::test::sourcePath(relative), checkout.filePath(relative)));
    }
    const Outcome o = runGpuSuite(checkout.path());
    QVERIFY2(o.exitCode == 0, qPrintable(o.output));
  }
};

QTEST_GUILESS_MAIN(TestSourceLookup)
#include "test_source_lookup.moc"
