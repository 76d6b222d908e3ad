#pragma once
// The Project dock: what the open project is (name, environment, algorithm) and its files.
// Activating a file asks the main window to show it.
#include <QWidget>

class QFileSystemModel;
class QLabel;
class QTreeView;

namespace cas::project { struct Project; }

namespace cas::widgets {

class ProjectPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ProjectPanel(QWidget* parent = nullptr);
  QTreeView* fileView() const { return files_; }

 public slots:
  void showProject(const cas::project::Project& project);
  void showRejectedProject(const QString& folder, int errorCount);

 signals:
  void fileActivated(const QString& path);

 private:
  QLabel* summary_;
  QTreeView* files_;
  QFileSystemModel* model_;
};

}  // namespace cas::widgets
