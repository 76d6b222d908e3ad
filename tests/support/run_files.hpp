#pragma once
// A run folder's files as the run-folder suites (test_run_*) read and alter them: whole files,
// appended text, the metrics log checked line by line, a folder's contents, checkpoint files
// sealed again after an edit, and the suites' base with a quick run to work on.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <optional>

#include <unistd.h>

#include "core/engine/run_folder.hpp"

#include "support/cli_runs.hpp"

namespace cas::test {

inline QByteArray bytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline void append(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::Append));
  f.write(text);
}

// Every metrics line is a JSON object, and they record iterations 1..count in order.
inline void verifyMetrics(const QString& run, int count) {
  const QByteArray text = bytes(run + QStringLiteral("/metrics.jsonl"));
  QVERIFY2(text.endsWith('\n'), text.right(80).constData());
  const QStringList m = lines(run + QStringLiteral("/metrics.jsonl"));
  QCOMPARE(m.size(), count);
  for (int i = 0; i < m.size(); ++i) {
    const QJsonDocument doc = QJsonDocument::fromJson(m[i].toUtf8());
    QVERIFY2(doc.isObject(), qPrintable(m[i]));
    QCOMPARE(doc.object().value(QLatin1String("iteration")).toInt(), i + 1);
  }
}

// Every file of a run folder but its lock, with its contents.
inline QMap<QString, QByteArray> contents(const QString& run) {
  QMap<QString, QByteArray> out;
  for (const QString& sub : {QString(), QStringLiteral("checkpoints/")})
    for (const QString& name : QDir(run + QLatin1Char('/') + sub).entryList(QDir::Files))
      if (name != QLatin1String("lock")) out[sub + name] = bytes(run + QLatin1Char('/') + sub + name);
  return out;
}

// A checkpoint file for `payload`: the payload, its checksum and the trailer, as the run writes it.
inline QByteArray withChecksum(const QByteArray& payload) {
  const std::uint64_t sum = cas::engine::fnv1a64({payload.constData(), size_t(payload.size())});
  return payload + QByteArray(reinterpret_cast<const char*>(&sum), sizeof sum) + QByteArray("CASCKPT1");
}

// `good`'s payload (a checkpoint file less its 16-byte trailer) with its iteration replaced.
inline QByteArray withIteration(const QByteArray& good, qint64 iteration) {
  QByteArray payload = good.left(good.size() - 16);
  std::memcpy(payload.data() + 8, &iteration, sizeof iteration);
  return withChecksum(payload);
}

// `cuda-agent args` as a user whom file permissions bind. Root is not bound by them: as root it
// runs through setpriv without the capabilities that override them (CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH), so that a chmod 000 folder is as unreadable to it as to anyone else.
// Empty when that cannot be arranged here (root without setpriv): the caller skips.
inline std::optional<Result> cliBoundByPermissions(const QStringList& args) {
  if (::geteuid() != 0) return cli(args);
  const QString setpriv = QStandardPaths::findExecutable(QStringLiteral("setpriv"));
  if (setpriv.isEmpty()) return std::nullopt;
  return cli(QStringList{QStringLiteral("--bounding-set=-dac_override,-dac_read_search"), kCli} + args, setpriv);
}

// The base of the run-folder suites: a temporary folder for their runs, and a quick run in it.
class RunFolderSuite : public QObject {
 protected:
  QTemporaryDir dir_;

  // A fresh run of `iterations` quick iterations of `project` in the folder `name`.
  QString trained(const QString& name, int iterations, const QString& project = kExample, const QStringList& extra = {}) {
    const QString run = dir_.filePath(name);
    const Result r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--iterations"), QString::number(iterations),
                                     QStringLiteral("--out"), run} + kQuick + extra);
    if (r.status != 0) qWarning("%s", qPrintable(r.err));
    return run;
  }
};

}  // namespace cas::test
