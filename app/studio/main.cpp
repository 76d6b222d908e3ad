// cuda-agent-studio: the desktop studio's composition root.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include "cas/version.hpp"
#include "widgets/main_window.hpp"
#include "widgets/studio_folders.hpp"
#include "widgets/translations.hpp"

namespace {

// The example opened when the user names none and has no recent project.
QString defaultProject() {
  const QString projects = cas::widgets::bundledFolder(QStringLiteral("projects"));
  const QString project = QDir(projects).filePath(QStringLiteral("tictactoe-alphazero"));
  return !projects.isEmpty() && QFileInfo::exists(project + QStringLiteral("/project.toml")) ? project : QString();
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent"));
  QCoreApplication::setApplicationName(QStringLiteral("cuda-agent-studio"));
  QCoreApplication::setApplicationVersion(QString::fromLatin1(cas::kVersion));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("CUDA-Agent Studio: design, train and debug RL policies."));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption lang(QStringLiteral("lang"), QStringLiteral("Interface language: zh_CN or en (default: the system's)."),
                          QStringLiteral("language"));
  parser.addOption(lang);
  QCommandLineOption train(QStringLiteral("train"), QStringLiteral("Start training the project as soon as it is open."));
  parser.addOption(train);
  QCommandLineOption outside(QStringLiteral("allow-outside-project"), QStringLiteral("Let a project's policy lie outside its folder."));
  parser.addOption(outside);
  parser.addPositionalArgument(QStringLiteral("project"), QStringLiteral("Project folder to open."));
  parser.process(app);

  cas::widgets::installTranslations(app, parser.value(lang));

  cas::widgets::MainWindow window;
  cas::project::LoadOptions loadOptions;
  loadOptions.allowOutsidePaths = parser.isSet(outside);
  window.setLoadOptions(loadOptions);
  window.show();
  if (window.openAtStartup(parser.positionalArguments().value(0), defaultProject()) && parser.isSet(train)) window.startTraining();
  return app.exec();
}
