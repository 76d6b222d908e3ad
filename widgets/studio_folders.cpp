#include "widgets/studio_folders.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include "cas/version.hpp"

namespace cas::widgets {

QString bundledFolder(const QString& name) {
  const QString exeDir = QCoreApplication::applicationDirPath();
  for (const QString& candidate : {exeDir + QStringLiteral("/../") + name, exeDir + QStringLiteral("/../../") + name,
                                   QString::fromUtf8(kSourceDir) + u'/' + name}) {
    if (QFileInfo(candidate).isDir()) return QDir::cleanPath(QFileInfo(candidate).absoluteFilePath());
  }
  return {};
}

}  // namespace cas::widgets
