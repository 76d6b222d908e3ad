#include "widgets/new_project_dialog.hpp"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QVBoxLayout>

#include <string>

#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"

namespace cas::widgets {

namespace {

// A TOML basic string holding `text`.
QString tomlString(const QString& text) {
  QString escaped = text;
  escaped.replace(u'\\', QLatin1String("\\\\")).replace(u'"', QLatin1String("\\\""));
  return u'"' + escaped + u'"';
}

}  // namespace

QStringList projectTemplates(const QString& projectsFolder) {
  QStringList out;
  if (projectsFolder.isEmpty()) return out;
  const QDir dir(projectsFolder);
  for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
    if (QFileInfo(dir.filePath(name) + QStringLiteral("/project.toml")).isFile()) out << dir.filePath(name);
  return out;
}

QString createProjectFromTemplate(const QString& templateFolder, const QString& folder) {
  const QFileInfo target(folder);
  if (folder.trimmed().isEmpty()) return NewProjectDialog::tr("Choose a folder for the new project.");
  if (target.exists() && !target.isDir()) return NewProjectDialog::tr("%1 is a file, not a folder.").arg(QDir::toNativeSeparators(folder));
  if (target.isDir() && !QDir(folder).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System))
    return NewProjectDialog::tr("%1 is not empty. A new project needs a new or an empty folder, so that none of its files are overwritten.")
        .arg(QDir::toNativeSeparators(folder));
  const bool madeFolder = !target.exists();
  if (madeFolder && !QDir().mkpath(folder)) return NewProjectDialog::tr("%1 could not be created.").arg(QDir::toNativeSeparators(folder));

  const QDir from(templateFolder), to(folder);
  QStringList written;
  auto undo = [&] {
    for (const QString& f : written) QFile::remove(f);
    if (madeFolder) QDir().rmdir(folder);
  };
  const QString name = QDir(QFileInfo(folder).absoluteFilePath()).dirName();
  for (const QString& file : from.entryList(QDir::Files | QDir::NoDotAndDotDot, QDir::Name)) {
    std::string error;
    std::optional<std::string> data = readFile(from.filePath(file).toStdString(), kProjectFileLimit, &error);
    if (data && file == QLatin1String("project.toml")) {
      // The project is named after its folder; the rest of the template's settings stay.
      static const QRegularExpression nameLine(QStringLiteral("^name\\s*=.*$"), QRegularExpression::MultilineOption);
      QString toml = QString::fromStdString(*data);
      const QRegularExpressionMatch m = nameLine.match(toml);
      if (m.hasMatch()) toml.replace(m.capturedStart(), m.capturedLength(), QStringLiteral("name = ") + tomlString(name));
      data = toml.toStdString();
    }
    if (!data || !writeFileAtomic(to.filePath(file).toStdString(), *data, &error)) {
      undo();
      return NewProjectDialog::tr("%1 could not be copied: %2").arg(file, QString::fromStdString(error));
    }
    written << to.filePath(file);
  }
  const project::LoadResult loaded = project::loadProject(folder.toStdString());
  if (!loaded.project) {
    undo();
    return NewProjectDialog::tr("The project made from %1 does not load; nothing was kept.").arg(QDir::toNativeSeparators(templateFolder));
  }
  return {};
}

NewProjectDialog::NewProjectDialog(const QString& projectsFolder, QWidget* parent)
    : QDialog(parent), templates_(new QListWidget(this)), folder_(new QLineEdit(this)), problem_(new QLabel(this)) {
  setObjectName(QStringLiteral("newProjectDialog"));
  setWindowTitle(tr("New Project"));
  templates_->setObjectName(QStringLiteral("templateList"));
  for (const QString& t : projectTemplates(projectsFolder)) {
    auto* item = new QListWidgetItem(QFileInfo(t).fileName(), templates_);
    item->setData(Qt::UserRole, t);
    const project::LoadResult loaded = project::loadProject(t.toStdString());
    if (loaded.project) {
      const project::Project& p = *loaded.project;
      item->setText(QStringLiteral("%1 — %2, %3").arg(QFileInfo(t).fileName(), QString::fromStdString(p.environment), QString::fromStdString(p.algorithm)));
      item->setToolTip(QString::fromStdString(p.description));
    }
  }
  // Tic-tac-toe first: the example the studio opens at its first start, the one that trains in
  // minutes on a CPU. Sorted by name it is the last, below the Connect Four ones, which a new user
  // would otherwise take by pressing Create.
  templates_->setCurrentRow(0);
  for (int row = 0; row < templates_->count(); ++row)
    if (QFileInfo(templates_->item(row)->data(Qt::UserRole).toString()).fileName() == QLatin1String("tictactoe-alphazero"))
      templates_->setCurrentRow(row);
  folder_->setObjectName(QStringLiteral("projectFolder"));
  folder_->setPlaceholderText(tr("a new or empty folder"));
  const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  folder_->setText(QDir(documents.isEmpty() ? QDir::homePath() : documents).filePath(QStringLiteral("my-project")));
  auto* browse = new QPushButton(tr("Browse..."), this);
  connect(browse, &QPushButton::clicked, this, &NewProjectDialog::chooseFolder);
  problem_->setObjectName(QStringLiteral("newProjectProblem"));
  problem_->setWordWrap(true);
  problem_->setStyleSheet(QStringLiteral("color: #b3261e"));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  create_ = buttons->addButton(tr("Create"), QDialogButtonBox::AcceptRole);
  connect(buttons, &QDialogButtonBox::accepted, this, &NewProjectDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(templates_, &QListWidget::currentRowChanged, this, &NewProjectDialog::updateButtons);
  connect(folder_, &QLineEdit::textChanged, this, [this] {
    problem_->clear();
    updateButtons();
  });

  auto* folderRow = new QHBoxLayout;
  folderRow->addWidget(folder_, 1);
  folderRow->addWidget(browse);
  auto* form = new QFormLayout;
  form->addRow(tr("Template:"), templates_);
  form->addRow(tr("Folder:"), folderRow);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("The new project starts as a copy of an example project, named after its folder.")));
  layout->addLayout(form);
  layout->addWidget(problem_);
  layout->addWidget(buttons);
  if (templates_->count() == 0) problem_->setText(tr("No example projects were found next to the studio or in its source tree."));
  updateButtons();
  resize(560, 360);
}

void NewProjectDialog::updateButtons() { create_->setEnabled(templates_->currentItem() && !folder_->text().trimmed().isEmpty()); }

void NewProjectDialog::chooseFolder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder for the New Project"), QFileInfo(folder_->text()).absolutePath());
  if (!folder.isEmpty()) folder_->setText(folder);
}

void NewProjectDialog::accept() {
  if (!templates_->currentItem() || folder_->text().trimmed().isEmpty()) return;
  const QString folder = QDir::cleanPath(QFileInfo(folder_->text().trimmed()).absoluteFilePath());
  const QString problem = createProjectFromTemplate(templates_->currentItem()->data(Qt::UserRole).toString(), folder);
  if (!problem.isEmpty()) {
    problem_->setText(problem);
    return;
  }
  created_ = folder;
  QDialog::accept();
}

}  // namespace cas::widgets
