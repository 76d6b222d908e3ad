#pragma once
// Where every test suite finds the source tree's files (projects, golden data, fixtures,
// translations, docs): the environment variable CAS_SOURCE_DIR when it is set and not empty,
// else the folder the build was configured from (the compile-time CAS_SOURCE_DIR). The GPU
// machine's runner (scripts/gpu-run) sets the variable, because a bundle built here keeps this
// machine's path, which does not exist there. Ask here; never use the macro directly.
#include <QString>
#include <QtGlobal>

#include <string>

namespace cas::test {

inline QString sourceDir() {
  if (!qEnvironmentVariableIsEmpty("CAS_SOURCE_DIR")) return qEnvironmentVariable("CAS_SOURCE_DIR");
  return QStringLiteral(CAS_SOURCE_DIR);
}

// `relative` (e.g. "projects/cartpole-ppo") under the source folder.
inline QString sourcePath(const QString& relative) { return sourceDir() + QLatin1Char('/') + relative; }
inline std::string sourceFile(const std::string& relative) { return sourcePath(QString::fromStdString(relative)).toStdString(); }

}  // namespace cas::test
