#pragma once
// Running `cuda-agent` from a test: the CLI, the example project, a quick training
// configuration (seconds per iteration on two cores), and a process's exit status and output.
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>

#include "support/source_dir.hpp"

namespace cas::test {

const QStringList kQuick = {QStringLiteral("--set"), QStringLiteral("train.parallel_games=8"),
                            QStringLiteral("--set"), QStringLiteral("train.games_per_iteration=8"),
                            QStringLiteral("--set"), QStringLiteral("search.simulations=16"),
                            QStringLiteral("--set"), QStringLiteral("train.batch_size=32"),
                            QStringLiteral("--set"), QStringLiteral("train.steps_per_iteration=2"),
                            QStringLiteral("--set"), QStringLiteral("train.eval_games=0")};
const QString kExample = cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero"));
const QString kCli = QStringLiteral(CAS_BIN_DIR "/cuda-agent");

struct Result {
  int status = -1;
  QString out, err;
};

// `program` (the CLI unless given) with `args`; status -1 when it crashed or did not finish.
inline Result cli(const QStringList& args, const QString& program = kCli) {
  QProcess p;
  p.start(program, args);
  p.waitForFinished(120000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

inline QStringList lines(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

}  // namespace cas::test
