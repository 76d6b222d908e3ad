// The MainWindow's side of the runs (runs/runs_dock.hpp) and of project.toml's provenance: the Runs
// dock's requests (metrics, overlays, resume, the Board), the newest run's metrics on opening a
// project, and reading project.toml again when it is saved or written. Kept apart from
// main_window.cpp, which wires the other docks. GUI thread only.
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QSpinBox>

#include "widgets/board/episode_view.hpp"
#include "widgets/board/play_panel.hpp"
#include "widgets/editor/pdl_editor.hpp"
#include "widgets/log_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/project_panel.hpp"
#include "widgets/runs/run_catalog.hpp"
#include "widgets/runs/run_controller.hpp"
#include "widgets/runs/runs_dock.hpp"
#include "widgets/runs/runs_model.hpp"
#include "widgets/tuning/parameter_table_model.hpp"
#include "widgets/tuning/tuning_panel.hpp"

namespace cas::widgets {

void MainWindow::resumeRun(const QString& folder) {
  if (run_->running()) return;
  run_->setLimits({iterationBudget_->value(), 0});
  if (run_->resumeRun(folder))
    logPanel_->appendMessage(LogPanel::Level::Info, tr("Resumed %1 from iteration %2, with the project file and policy it was trained with.")
                                                        .arg(QDir::toNativeSeparators(folder))
                                                        .arg(run_->resumedFrom()));
}

void MainWindow::reloadProjectFile() {
  if (!project_) return;
  const project::LoadResult result = project::loadProject(project_->directory, loadOptions_);
  for (const Diagnostic& d : result.diagnostics.items())
    logPanel_->appendMessage(d.severity == Severity::Error ? LogPanel::Level::Error : LogPanel::Level::Warning,
                             QString::fromStdString(formatHeadline(d)));
  if (!result.project) {
    logPanel_->appendMessage(LogPanel::Level::Error, tr("project.toml has errors (above); the Tuning dock keeps the values last read."));
    return;
  }
  project_ = *result.project;
  parameterModel_->setProjectValues(project_->parameters);
  tuningPanel_->showAlgorithm(project_->algorithm);
  policyEditor_->setProject(*project_);
  projectPanel_->showProject(*project_);
  runsDock_->model()->setProject(*project_);
  logPanel_->appendMessage(LogPanel::Level::Info, tr("Read %1 again; the Tuning dock shows its values.")
                                                      .arg(QDir::toNativeSeparators(QString::fromStdString(project_->projectFile.string()))));
}

bool MainWindow::reportBoardBusy() {
  if (!playPanel_->busy()) return false;
  logPanel_->appendMessage(LogPanel::Level::Warning, tr("The Board is still loading a run or searching; ask again once it is done."));
  return true;
}

void MainWindow::connectRuns(QDockWidget* metrics, QDockWidget* board) {
  connect(runsDock_, &RunsDock::messagePosted, logPanel_, &LogPanel::appendMessage);
  connect(runsDock_, &RunsDock::resumeRequested, this, &MainWindow::resumeRun);
  connect(runsDock_, &RunsDock::metricsRequested, this, [this, metrics](const QString& folder) {
    QString error;
    if (!metrics_->showRun(folder, &error)) {
      logPanel_->appendMessage(LogPanel::Level::Error, error);
      return;
    }
    episodeView_->setRun(folder, metrics_->showsSingleAgentRun());
    metrics->raise();
  });
  connect(runsDock_, &RunsDock::overlayToggled, this, [this, metrics](const QString& folder, bool on) {
    QString error;
    if (on && !metrics_->addOverlay(folder, &error)) logPanel_->appendMessage(LogPanel::Level::Error, error);
    if (!on) metrics_->removeOverlay(folder);
    runsDock_->model()->setOverlaid(folder, metrics_->overlays().contains(folder));
    if (on) metrics->raise();
  });
  // The Metrics dock's own Overlay Run... and Remove Overlay change the ticks too.
  connect(metrics_, &MetricsPanel::overlaysChanged, runsDock_, [this] { runsDock_->model()->setOverlaidRuns(metrics_->overlays()); });
  connect(runsDock_, &RunsDock::playRequested, this, [this, board](const QString& folder) {
    const int row = runsDock_->model()->rowOf(folder);
    if (row >= 0 && runsDock_->model()->run(row).singleAgent) {  // no board: an episode of it
      episodeView_->setRun(folder, true);
      episodeView_->record();
      findChild<QDockWidget*>(QStringLiteral("episodeDock"))->raise();
      return;
    }
    if (reportBoardBusy()) return;
    playPanel_->setMode(PlayPanel::Mode::Play);
    playPanel_->loadRun(folder);
    board->raise();
  });
  connect(runsDock_, &RunsDock::analyseRequested, this, [this, board](const QString& folder) {
    if (reportBoardBusy()) return;
    playPanel_->setMode(PlayPanel::Mode::SetUp);
    playPanel_->loadRun(folder);
    board->raise();
  });
  // A run the Board could not load says why in the Log too (a checkpoint that does not fit its
  // network, a run folder without one), not only under the board.
  connect(playPanel_, &PlayPanel::runLoadFailed, this, [this](const QString& folder, const QString& reason) {
    logPanel_->appendMessage(LogPanel::Level::Error, tr("The Board could not load %1: %2").arg(QDir::toNativeSeparators(folder), reason));
  });
  // A run opened on the Board from elsewhere joins the list.
  connect(playPanel_, &PlayPanel::agentLoaded, runsDock_, [this](const QString& folder) {
    if (runsDock_->model()->rowOf(folder) < 0) runsDock_->model()->addRunFolder(folder);
  });
}

void MainWindow::showNewestRunMetrics() {
  // After a restart the Metrics dock shows the project's newest run rather than nothing.
  if (run_->running()) return;
  const RunsModel* runs = runsDock_->model();
  for (int row = 0; row < runs->rowCount(); ++row) {
    const RunSummary& run = runs->run(row);
    if (run.status == RunSummary::Status::Unreadable || run.iterations == 0 || !runBelongsTo(run, QString::fromStdString(project_->directory.string())))
      continue;
    QString error;
    if (metrics_->showRun(run.folder, &error)) {
      episodeView_->setRun(run.folder, metrics_->showsSingleAgentRun());
      runsDock_->selectRun(run.folder);
      logPanel_->appendMessage(LogPanel::Level::Info, tr("The Metrics dock shows the newest run, %1; the Runs dock lists them all.").arg(run.name));
    }
    return;
  }
}

}  // namespace cas::widgets
