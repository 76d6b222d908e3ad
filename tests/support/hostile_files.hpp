#pragma once
// What the hostile-input suites (test_hostile_input, test_hostile_toml) share: the CLI run and
// timed (under ulimit settings too), a small project written from its project.toml, files read
// and written whole, a diagnostic as "LINE:COLUMN message", and a PDL source compiled.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <string>

#include "core/pdl/compiler.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::test::hostile {

inline const QString kCli = QStringLiteral(CAS_BIN_DIR "/cuda-agent");
inline const QByteArray kHeader = "name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n";
inline const QByteArray kPolicy = "def policy(obs):\n    h = relu(dense(obs, units=8))\n    return dense(h, units=action_dim), tanh(dense(h, units=1))\n";

struct Result {
  int status = -1;
  QString out, err;
  qint64 ms = 0;
};

inline Result cli(const QStringList& args) {
  QElapsedTimer clock;
  clock.start();
  QProcess p;
  p.start(kCli, args);
  p.waitForFinished(60000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError()), clock.elapsed()};
}

// The CLI under `sh -c script`: ulimit settings, then the CLI with `args` ("$0" "$@").
inline Result limitedCli(const QString& limits, const QStringList& args) {
  QElapsedTimer clock;
  clock.start();
  QProcess p;
  p.start(QStringLiteral("/bin/sh"), QStringList{QStringLiteral("-c"), limits + QStringLiteral("; exec \"$0\" \"$@\""), kCli} + args);
  p.waitForFinished(120000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError()), clock.elapsed()};
}

inline void write(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

inline QByteArray bytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline std::string at(const cas::Diagnostic& d) { return std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " + d.message; }

inline cas::pdl::CompileResult compile(const std::string& source) {
  cas::pdl::CompileOptions o;
  o.fileName = "bad.pdl";
  o.observationShape = {4};
  o.actionCount = 2;
  return cas::pdl::compile(source, o);
}


// The base of the suites: a temporary folder, and project folders written in it.
class HostileSuite : public QObject {
 protected:
  QTemporaryDir dir_;

  // A project folder `name` with the given project.toml and the small policy.
  QString project(const QString& name, const QByteArray& toml) {
    const QString folder = dir_.filePath(name);
    QDir().mkpath(folder);
    write(folder + QStringLiteral("/project.toml"), toml);
    write(folder + QStringLiteral("/policy.pdl"), kPolicy);
    return folder;
  }
};

}  // namespace cas::test::hostile
