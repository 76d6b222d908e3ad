// Checkpoint format versions (docs/checkpoints.md): a run written by format version 1
// (tests/fixtures/checkpoint-v1, made by its make_fixture.sh with that version's cuda-agent) still
// loads, with the weights that parse_checkpoint.py, a reader that does not use our code, found in
// it (tensors.json); resuming it writes a version-2 checkpoint, which records every tensor's
// shape; and a checkpoint of a newer version than this one reads is refused with both versions
// named, by every command that reads checkpoints, writing nothing.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>

#include "core/export/policy_loader.hpp"

#include "support/cli_runs.hpp"
#include "support/source_dir.hpp"

namespace {

using cas::test::cli;
using cas::test::Result;

const QString kFixture = cas::test::sourcePath(QStringLiteral("tests/fixtures/checkpoint-v1"));
const QString kParser = kFixture + QStringLiteral("/parse_checkpoint.py");

// A copy of the fixture's run to work on (the committed one stays as it is).
bool copyRun(const QString& from, const QString& to) {
  if (!QDir().mkpath(to + QStringLiteral("/checkpoints"))) return false;
  for (const QString& f : QDir(from).entryList(QDir::Files))
    if (!QFile::copy(from + QLatin1Char('/') + f, to + QLatin1Char('/') + f)) return false;
  for (const QString& f : QDir(from + QStringLiteral("/checkpoints")).entryList(QDir::Files))
    if (!QFile::copy(from + QStringLiteral("/checkpoints/") + f, to + QStringLiteral("/checkpoints/") + f)) return false;
  return true;
}

QJsonObject parsed(const QString& checkpoint) {
  QProcess p;
  p.start(QStringLiteral("python3"), {kParser, checkpoint});
  p.waitForFinished(60000);
  return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

QString newestCheckpoint(const QString& run) {
  const QStringList files = QDir(run + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files, QDir::Name);
  return files.isEmpty() ? QString() : run + QStringLiteral("/checkpoints/") + files.last();
}

// Rewrites a checkpoint's format version and its checksum trailer (FNV-1a of the payload, then
// "CASCKPT1"), as a later cuda-agent would have written it.
bool setVersion(const QString& path, std::uint32_t version) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return false;
  QByteArray bytes = f.readAll();
  f.close();
  if (bytes.size() < 24) return false;
  bytes.truncate(bytes.size() - 16);
  std::memcpy(bytes.data() + 4, &version, sizeof version);
  std::uint64_t h = 14695981039346656037ull;
  for (char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  bytes.append(reinterpret_cast<const char*>(&h), sizeof h);
  bytes.append("CASCKPT1", 8);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(bytes) == bytes.size();
}

}  // namespace

class TestCheckpointFormat : public QObject {
  Q_OBJECT
 private slots:
  void versionOneLoadsWithItsWeights() {
    const QJsonObject expected = QJsonDocument::fromJson([] {
                                   QFile f(kFixture + QStringLiteral("/tensors.json"));
                                   return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
                                 }()).object();
    QCOMPARE(expected.value(QStringLiteral("version")).toInt(), 1);
    const auto loaded = cas::exports::loadPolicy((kFixture + QStringLiteral("/run")).toStdString(), 0);
    QVERIFY2(loaded.policy, loaded.error.message.c_str());
    QCOMPARE(loaded.policy->metadata.iteration, 2);
    int compared = 0;
    for (const QJsonValue& v : expected.value(QStringLiteral("tensors")).toArray()) {
      const QJsonObject t = v.toObject();
      const auto it = loaded.policy->weights.find(t.value(QStringLiteral("name")).toString().toStdString());
      if (it == loaded.policy->weights.end()) continue;  // optimizer state: not part of the policy
      const std::vector<float>& w = it->second;
      QCOMPARE(qint64(w.size()), t.value(QStringLiteral("count")).toInteger());
      double sum = 0;
      for (float x : w) sum += x;
      QVERIFY2(std::abs(sum - t.value(QStringLiteral("sum")).toDouble()) <= 1e-6 * (1 + std::abs(sum)), qPrintable(it->first.c_str()));
      const QJsonArray first = t.value(QStringLiteral("first")).toArray();
      for (int i = 0; i < first.size(); ++i) QCOMPARE(double(w[size_t(i)]), first[i].toDouble());
      ++compared;
    }
    QCOMPARE(compared, int(loaded.policy->weights.size()));
    QVERIFY(compared >= 10);
  }

  void resumingWritesVersionTwoWithShapes() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    QVERIFY(copyRun(kFixture + QStringLiteral("/run"), run));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("(iteration 2)")), qPrintable(r.err));
    const QJsonObject written = parsed(newestCheckpoint(run));
    QCOMPARE(written.value(QStringLiteral("version")).toInt(), 3);
    QCOMPARE(written.value(QStringLiteral("iteration")).toInt(), 3);
    const QJsonArray tensors = written.value(QStringLiteral("tensors")).toArray();
    QVERIFY(!tensors.isEmpty());
    bool sawConvolution = false;
    for (const QJsonValue& v : tensors) {
      const QJsonObject t = v.toObject();
      qint64 numel = 1;
      for (const QJsonValue& d : t.value(QStringLiteral("shape")).toArray()) numel *= d.toInteger();
      QCOMPARE(numel, t.value(QStringLiteral("count")).toInteger());
      if (t.value(QStringLiteral("name")).toString() == QStringLiteral("policy/conv2d_0/weight"))
        sawConvolution = t.value(QStringLiteral("shape")).toArray().size() == 4;
    }
    QVERIFY(sawConvolution);
  }

  void newerVersionRefusedByEveryReader() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    QVERIFY(copyRun(kFixture + QStringLiteral("/run"), run));
    QVERIFY(setVersion(newestCheckpoint(run), 4));
    const QString why = QStringLiteral("a checkpoint of format version 4, written by a newer cuda-agent; this one reads versions 1 to 3");
    // What the run holds before and after, but for the lock file a run's writer creates.
    const auto contents = [&run] {
      QStringList files;
      for (const QString& f : QDir(run).entryList(QDir::Files, QDir::Name))
        if (f != QStringLiteral("lock")) files << f + QLatin1Char(' ') + QString::number(QFileInfo(run + QLatin1Char('/') + f).size());
      for (const QString& f : QDir(run).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) files << f + QLatin1Char('/');
      for (const QString& f : QDir(run + QStringLiteral("/checkpoints")).entryList(QDir::Files, QDir::Name)) files << f;
      return files;
    };
    const QStringList before = contents();
    const QList<QStringList> readers = {
        {QStringLiteral("export"), run, QStringLiteral("--checkpoint"), QStringLiteral("2")},
        {QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("random"), QStringLiteral("--games"), QStringLiteral("2")},
        {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")},
    };
    // A resume refuses it before reading any checkpoint (hardening 3), naming what it would
    // replace; the readers skip it with the reason.
    const QString whyNot = QStringLiteral("is a checkpoint of format version 4, written by a newer cuda-agent (this one writes version 3); "
                                          "training the run here would replace it with an older format");
    for (const QStringList& args : readers) {
      const Result r = cli(args);
      QVERIFY2(r.status != 0, qPrintable(args.join(QLatin1Char(' '))));
      QVERIFY2(r.err.contains(args.first() == QLatin1String("train") ? whyNot : why), qPrintable(args.first() + QStringLiteral(": ") + r.err));
    }
    QCOMPARE(contents(), before);
  }
};

QTEST_GUILESS_MAIN(TestCheckpointFormat)
#include "test_checkpoint_format.moc"
