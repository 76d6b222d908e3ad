#pragma once
// The studio's main window: docks (Project, Policy editor, Search tree, Metrics, Kernels, Board,
// Tuning, Log; their layout policy and View > Reset Layout in dock_layout.hpp), menus (File > New
// Project... opens new_project_dialog.hpp, File > Export... runs/export_dialog.hpp, Help
// help_menu.hpp), the backend in the status bar, and persisted window state and recent projects
// (QSettings).
// GUI thread only.
#include <QMainWindow>
#include <QStringList>

#include <optional>

#include "core/project/project.hpp"

class QDockWidget;
class QListWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QSpinBox;
class QTimer;

namespace cas::widgets {

class DockLayout;
class LogPanel;
class MetricsPanel;
class RunController;
class PdlEditor;
class ProjectPanel;
class ParameterTableModel;
class KernelView;
class EpisodeView;
class PlayPanel;
class SearchTreePanel;
class RunsDock;
class TuningPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  QStringList recentProjects() const { return recent_; }
  QString backendStatusText() const;
  PdlEditor* policyEditor() const { return policyEditor_; }
  ProjectPanel* projectPanel() const { return projectPanel_; }
  LogPanel* logPanel() const { return logPanel_; }
  ParameterTableModel* parameterModel() const { return parameterModel_; }
  MetricsPanel* metricsPanel() const { return metrics_; }
  KernelView* kernelView() const { return kernelView_; }
  EpisodeView* episodeView() const { return episodeView_; }
  QString runProgressText() const;  // the status bar's progress and ETA
  PlayPanel* playPanel() const { return playPanel_; }
  SearchTreePanel* searchTreePanel() const { return searchTree_; }
  RunController* runController() const { return run_; }
  RunsDock* runsDock() const { return runsDock_; }
  TuningPanel* tuningPanel() const { return tuningPanel_; }
  QStringList changeLog() const;
  // What File > Export... exports: the run loaded on the Board, else the run trained in this
  // window, else the open project (its initial weights); empty with none of them.
  QString exportSource() const;

 public slots:
  // Loads and validates the project; problems go to the Log. Returns whether it opened.
  bool openProject(const QString& folder);
  // At start-up: the project named on the command line, else the most recent one, else
  // `example` (the bundled one). A named path that does not exist opens nothing: the Log and the
  // status bar say so, rather than opening something the user did not ask for.
  bool openAtStartup(const QString& named, const QString& example);
  // How projects are loaded (the studio's --allow-outside-project).
  void setLoadOptions(const project::LoadOptions& options) { loadOptions_ = options; }
  void chooseProject();
  // File > New Project...: a project from a template, opened once it is made.
  void newProject();
  // View > Reset Layout.
  void resetLayout();
  void showAbout();
  void showExportDialog();
  void startTraining();
  void togglePause();
  void stopTraining();
  void stepSimulation();  // while paused: one more simulation in every self-play game
  void requestParameter(const QString& name, const QString& value);
  // Trains the run in `folder` on from its newest valid checkpoint (the Runs dock's Resume).
  void resumeRun(const QString& folder);
  // Reads project.toml again (after it was saved or written): the Tuning dock, the Runs dock's
  // differences and the editor's compile options follow it. Errors go to the Log.
  void reloadProjectFile();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void createControls();
  void createLayout();
  void connectSignals();
  QDockWidget* addPanel(const QString& objectName, const QString& title, QWidget* content, Qt::DockWidgetArea area);
  void rememberProject(const QString& folder);
  // A temporary message in the status bar, cut to the room left of its permanent widgets (Qt
  // draws a longer one under them).
  void showStatus(const QString& text, int timeoutMs = 0);
  void rebuildRecentMenu();
  void updateBackendStatus(const QString& device);
  void updateRunActions();
  void connectRun();
  void updateRunProgress();
  // The Runs dock and project.toml's provenance: main_window_runs.cpp.
  void connectRuns(QDockWidget* metrics, QDockWidget* board);
  void showNewestRunMetrics();
  bool reportBoardBusy();  // the Board takes no new run while it works; says so in the Log

  ProjectPanel* projectPanel_;
  PdlEditor* policyEditor_;
  LogPanel* logPanel_;
  ParameterTableModel* parameterModel_;
  QLabel* backendLabel_;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QMenu* goToMenu_ = nullptr;  // View > Go To: one action per dock, with Alt+number
  QStringList recent_;
  std::optional<project::Project> project_;
  project::LoadOptions loadOptions_;
  MetricsPanel* metrics_;
  RunController* run_;
  TuningPanel* tuningPanel_;
  RunsDock* runsDock_;
  PlayPanel* playPanel_;
  SearchTreePanel* searchTree_ = nullptr;
  QAction *exportAction_ = nullptr, *trainAction_ = nullptr, *pauseAction_ = nullptr, *stopAction_ = nullptr, *stepAction_ = nullptr;
  KernelView* kernelView_;
  EpisodeView* episodeView_;
  QSpinBox* iterationBudget_;
  QLabel* progressLabel_;
  QProgressBar* progressBar_;
  QTimer* progressTimer_;
  DockLayout* dockLayout_ = nullptr;
  bool defaultSizesPending_ = true;  // until the first show, when no saved layout was restored
};

}  // namespace cas::widgets
