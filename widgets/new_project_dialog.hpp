#pragma once
// File > New Project: a new project made from one of the example projects (projects/*), the
// templates, in a folder the user chooses. The folder must be new or empty (a non-empty one is
// refused, saying so); the template's files are copied each with an atomic write, project.toml
// with its name set to the folder's name, and when any copy fails the files already written are
// removed again, so no half-made project is left behind.
// Thread-safety: GUI thread only (createProjectFromTemplate: any thread, one call per folder).
#include <QDialog>
#include <QString>
#include <QStringList>

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace cas::widgets {

// The templates: the folders under `projectsFolder` that hold a project.toml, sorted.
QStringList projectTemplates(const QString& projectsFolder);

// Makes a project in `folder` (created when missing) from the template folder. Returns an empty
// string on success, else why nothing was made.
QString createProjectFromTemplate(const QString& templateFolder, const QString& folder);

class NewProjectDialog : public QDialog {
  Q_OBJECT
 public:
  explicit NewProjectDialog(const QString& projectsFolder, QWidget* parent = nullptr);

  QListWidget* templateList() const { return templates_; }
  QLineEdit* folderEdit() const { return folder_; }
  QLabel* problemLabel() const { return problem_; }
  // The folder of the project made; empty until one is.
  QString createdFolder() const { return created_; }

 public slots:
  void accept() override;  // makes the project; stays open, saying why, when it cannot

 private:
  void chooseFolder();
  void updateButtons();

  QListWidget* templates_;
  QLineEdit* folder_;
  QLabel* problem_;
  QPushButton* create_;
  QString created_;
};

}  // namespace cas::widgets
