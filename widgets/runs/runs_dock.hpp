#pragma once
// The Runs dock: every run of the open project, and run folders opened from elsewhere, in a table
// (runs_model.hpp), with what can be done with the selected run:
//   Metrics   show its metrics in the Metrics dock (the check box beside its name overlays several)
//   Resume    train it on from its newest valid checkpoint, with its own project file and policy
//   Play / Analyse   load it on the Board (its own copies, whatever the project's policy is now)
//   Rename..., Delete... (asks first; a run being trained is refused), Open Folder
//   Add Run Folder... lists a run from elsewhere; Refresh reads the folders again.
// What the dock cannot do itself (the Metrics and Board docks, training) it asks for with signals;
// what goes wrong reaches the Log through messagePosted.
// Thread-safety: GUI thread only.
#include <QWidget>

#include "widgets/log_panel.hpp"

class QAction;
class QLabel;
class QTableView;
class QToolBar;

namespace cas::widgets {

class RunsModel;

class RunsDock : public QWidget {
  Q_OBJECT
 public:
  explicit RunsDock(QWidget* parent = nullptr);

  RunsModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString selectedRun() const;  // the selected run's folder; empty with none
  // Whether the studio is training (Resume and Metrics wait until it stops).
  void setTraining(bool training);

 public slots:
  void selectRun(const QString& folder);
  void showSelectedMetrics();
  void resumeSelected();
  void playSelected();
  void analyseSelected();
  // Asks for a new name and renames the folder; returns whether it was renamed.
  bool renameSelected();
  bool renameRun(const QString& folder, const QString& newName);
  // Asks for confirmation, then removes the folder; returns whether it was removed.
  bool deleteSelected();
  void openSelectedFolder();
  void chooseRunFolder();
  void refresh();

 signals:
  void metricsRequested(const QString& folder);
  void resumeRequested(const QString& folder);
  void playRequested(const QString& folder);
  void analyseRequested(const QString& folder);
  void overlayToggled(const QString& folder, bool overlaid);
  void runRemoved(const QString& folder);
  void messagePosted(cas::widgets::LogPanel::Level level, const QString& text);

 private:
  void createControls();
  void createLayout();
  void connectSignals();
  void updateActions();
  qint64 trainingProcess(const QString& folder) const;  // the process holding the run's lock; 0 with none

  RunsModel* model_;
  QTableView* table_;
  QLabel* empty_;
  QToolBar* toolBar_ = nullptr;
  bool training_ = false;
  QAction *metricsAction_, *resumeAction_, *playAction_, *analyseAction_, *renameAction_, *deleteAction_, *openFolderAction_,
      *addAction_, *refreshAction_;
};

}  // namespace cas::widgets
