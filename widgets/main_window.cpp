#include "widgets/main_window.hpp"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QStandardPaths>
#include <QToolBar>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

#include "cas/version.hpp"
#include "core/exec/backend.hpp"
#include "core/params/run_params.hpp"
#include "core/project/project.hpp"
#include "widgets/board/board_view.hpp"
#include "widgets/board/episode_view.hpp"
#include "widgets/board/play_panel.hpp"
#include "widgets/dock_layout.hpp"
#include "widgets/editor/pdl_editor.hpp"
#include "widgets/help_menu.hpp"
#include "widgets/log_panel.hpp"
#include "widgets/metrics/backend_status.hpp"
#include "widgets/metrics/kernel_view.hpp"
#include "widgets/metrics/metrics_panel.hpp"
#include "widgets/new_project_dialog.hpp"
#include "widgets/project_panel.hpp"
#include "widgets/runs/export_dialog.hpp"
#include "widgets/runs/run_catalog.hpp"
#include "widgets/runs/run_controller.hpp"
#include "widgets/runs/runs_dock.hpp"
#include "widgets/runs/runs_model.hpp"
#include "widgets/runs/train_prompt.hpp"
#include "widgets/studio_folders.hpp"
#include "widgets/tree/search_tree_view.hpp"
#include "widgets/tuning/parameter_table_model.hpp"
#include "widgets/tuning/tuning_panel.hpp"

namespace cas::widgets {

namespace {
constexpr int kMaxRecentProjects = 8;
const QString kRecentKey = QStringLiteral("recentProjects");
const QString kGeometryKey = QStringLiteral("window/geometry");
const QString kStateKey = QStringLiteral("window/state");

QString duration(double seconds) {
  if (seconds < 10) return MainWindow::tr("%1 s").arg(std::max(0.0, seconds), 0, 'f', 1);  // tic-tac-toe iterations take under a second
  const auto s = qint64(seconds + 0.5);
  if (s >= 3600) return MainWindow::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
  if (s >= 60) return MainWindow::tr("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
  return MainWindow::tr("%1 s").arg(s);
}
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      projectPanel_(new ProjectPanel),
      policyEditor_(new PdlEditor),
      logPanel_(new LogPanel),
      parameterModel_(new ParameterTableModel(this)),
      backendLabel_(new QLabel),
      metrics_(new MetricsPanel),
      run_(new RunController(this)),
      playPanel_(new PlayPanel(run_)) {
  tuningPanel_ = new TuningPanel(parameterModel_, policyEditor_);
  runsDock_ = new RunsDock;
  kernelView_ = new KernelView;
  episodeView_ = new EpisodeView;
  iterationBudget_ = new QSpinBox;
  progressLabel_ = new QLabel;
  progressBar_ = new QProgressBar;
  progressTimer_ = new QTimer(this);
  setWindowTitle(tr("CUDA-Agent Studio"));
  setObjectName(QStringLiteral("mainWindow"));
  setDockNestingEnabled(true);
  resize(1280, 800);

  createControls();
  createLayout();
  updateBackendStatus(QStringLiteral("auto"));
  connectSignals();
  updateRunActions();

  QSettings settings;
  recent_ = settings.value(kRecentKey).toStringList();
  rebuildRecentMenu();
  // Every dock is placed: this is the arrangement View > Reset Layout returns to.
  dockLayout_->captureDefaultArrangement();
  viewMenu_->addSeparator();
  viewMenu_->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout)->setObjectName(QStringLiteral("resetLayoutAction"));
  restoreGeometry(settings.value(kGeometryKey).toByteArray());
  if (restoreState(settings.value(kStateKey).toByteArray())) defaultSizesPending_ = false;
}

// The menus, their actions and the Run tool bar.
void MainWindow::createControls() {
  auto* fileMenu = menuBar()->addMenu(tr("&File"));
  fileMenu->addAction(tr("&New Project..."), QKeySequence::New, this, &MainWindow::newProject)->setObjectName(QStringLiteral("newProjectAction"));
  fileMenu->addAction(tr("&Open Project..."), QKeySequence::Open, this, &MainWindow::chooseProject);
  recentMenu_ = fileMenu->addMenu(tr("&Recent Projects"));
  fileMenu->addSeparator();
  fileMenu->addActions({policyEditor_->saveAction(), policyEditor_->saveAsAction()});  // the file in the editor's front tab
  exportAction_ = fileMenu->addAction(tr("&Export..."), QKeySequence(tr("Ctrl+E")), this, &MainWindow::showExportDialog);
  exportAction_->setObjectName(QStringLiteral("exportAction"));
  exportAction_->setToolTip(tr("Exports the current run's policy (or the project's initial weights) as ONNX or C source"));
  fileMenu->addSeparator();
  fileMenu->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  auto* runMenu = menuBar()->addMenu(tr("&Run"));
  trainAction_ = runMenu->addAction(tr("&Train"), QKeySequence(tr("Ctrl+T")), this, &MainWindow::startTraining);
  pauseAction_ = runMenu->addAction(tr("&Pause"), QKeySequence(tr("Ctrl+P")), this, &MainWindow::togglePause);
  stepAction_ = runMenu->addAction(tr("St&ep"), QKeySequence(tr("Ctrl+J")), this, &MainWindow::stepSimulation);
  stepAction_->setToolTip(tr("While paused: one more simulation in every self-play game"));
  stopAction_ = runMenu->addAction(tr("&Stop"), QKeySequence(tr("Ctrl+.")), this, &MainWindow::stopTraining);
  trainAction_->setObjectName(QStringLiteral("trainAction"));
  pauseAction_->setObjectName(QStringLiteral("pauseAction"));
  stepAction_->setObjectName(QStringLiteral("stepAction"));
  stopAction_->setObjectName(QStringLiteral("stopAction"));
  QToolBar* runBar = addToolBar(tr("Run"));
  runBar->setObjectName(QStringLiteral("runToolBar"));
  runBar->addActions({trainAction_, pauseAction_, stepAction_, stopAction_});
  runBar->addSeparator();
  iterationBudget_->setObjectName(QStringLiteral("iterationBudget"));
  iterationBudget_->setRange(0, 1000000);
  iterationBudget_->setSpecialValueText(tr("no iteration limit"));
  iterationBudget_->setPrefix(tr("stop after "));
  iterationBudget_->setSuffix(tr(" iterations"));
  iterationBudget_->setToolTip(tr("The next run's budget; the status bar shows its progress and ETA."));
  runBar->addWidget(iterationBudget_);
  viewMenu_ = menuBar()->addMenu(tr("&View"));
  goToMenu_ = viewMenu_->addMenu(tr("&Go To"));  // addPanel fills it: Alt+1 to Alt+9, then Alt+0
  viewMenu_->addSeparator();
  auto* helpMenu = menuBar()->addMenu(tr("&Help"));
  addHelpActions(helpMenu, this);
  helpMenu->addSeparator();
  helpMenu->addAction(tr("&About CUDA-Agent Studio"), this, &MainWindow::showAbout);
}

// The docks, where they sit and which tab of each group is in front; the status bar's permanent
// widgets.
void MainWindow::createLayout() {
  QDockWidget* project = addPanel(QStringLiteral("projectDock"), tr("Project"), projectPanel_, Qt::LeftDockWidgetArea);
  QDockWidget* tuningDock = addPanel(QStringLiteral("tuningDock"), tr("Tuning"), tuningPanel_, Qt::LeftDockWidgetArea);
  QDockWidget* editor = addPanel(QStringLiteral("policyDock"), tr("Policy editor"), policyEditor_, Qt::RightDockWidgetArea);
  searchTree_ = new SearchTreePanel;
  searchTree_->setRunController(run_);
  searchTree_->setBoard(playPanel_);
  QDockWidget* tree = addPanel(QStringLiteral("searchTreeDock"), tr("Search tree"), searchTree_, Qt::RightDockWidgetArea);
  // Training is what the tree is for: the live tree comes to the front when a run starts (a run
  // without a search, PPO, brings the Metrics dock instead: its return curve).
  QDockWidget* metrics = addPanel(QStringLiteral("metricsDock"), tr("Metrics"), metrics_, Qt::RightDockWidgetArea);
  QDockWidget* kernels = addPanel(QStringLiteral("kernelsDock"), tr("Kernels"), kernelView_, Qt::RightDockWidgetArea);
  QDockWidget* log = addPanel(QStringLiteral("logDock"), tr("Log"), logPanel_, Qt::BottomDockWidgetArea);
  // The runs' table wants the window's width: beside the Log, below everything.
  QDockWidget* runs = addPanel(QStringLiteral("runsDock"), tr("Runs"), runsDock_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(log, runs);
  splitDockWidget(project, tuningDock, Qt::Vertical);
  splitDockWidget(editor, metrics, Qt::Horizontal);
  tabifyDockWidget(editor, tree);
  tabifyDockWidget(metrics, kernels);
  // Beside the search tree, not behind it: a clicked tree node's position shows on the board.
  QDockWidget* board = addPanel(QStringLiteral("boardDock"), tr("Board"), playPanel_, Qt::RightDockWidgetArea);
  tabifyDockWidget(kernels, board);
  // A single-agent run's episodes: beside the Board, which shows a two-player game's.
  QDockWidget* episode = addPanel(QStringLiteral("episodeDock"), tr("Episode"), episodeView_, Qt::RightDockWidgetArea);
  tabifyDockWidget(board, episode);
  editor->raise();
  metrics->raise();
  log->raise();
  dockLayout_ = new DockLayout(this, {project, tuningDock, editor, metrics, log}, policyEditor_);

  progressLabel_->setObjectName(QStringLiteral("runProgress"));
  progressBar_->setObjectName(QStringLiteral("runProgressBar"));
  progressBar_->setMaximumWidth(160);
  progressBar_->setFormat(QStringLiteral("%v / %m"));
  progressBar_->hide();
  statusBar()->addPermanentWidget(progressLabel_);
  statusBar()->addPermanentWidget(progressBar_);
  statusBar()->addPermanentWidget(backendLabel_);
  progressTimer_->setInterval(1000);  // the elapsed time and ETA move on between iterations
  backendLabel_->setObjectName(QStringLiteral("backendStatus"));
}

// The docks' contents with each other and with the window; the run's signals (connectRun) and
// the Runs dock's (connectRuns).
void MainWindow::connectSignals() {
  auto* metricsDock = findChild<QDockWidget*>(QStringLiteral("metricsDock"));
  auto* boardDock = findChild<QDockWidget*>(QStringLiteral("boardDock"));
  connect(searchTree_, &SearchTreePanel::positionSelected, playPanel_->boardView(), &BoardView::showPosition);
  connect(searchTree_, &SearchTreePanel::positionSelected, boardDock, &QDockWidget::raise);
  connectRuns(metricsDock, boardDock);  // the Runs dock, a tab beside the Log (main_window_runs.cpp)
  connect(progressTimer_, &QTimer::timeout, this, &MainWindow::updateRunProgress);
  connect(projectPanel_, &ProjectPanel::fileActivated, policyEditor_, &PdlEditor::openFile);
  connect(parameterModel_, &ParameterTableModel::parameterEditRequested, this, &MainWindow::requestParameter);
  connect(tuningPanel_, &TuningPanel::messagePosted, logPanel_, &LogPanel::appendMessage);
  connect(tuningPanel_, &TuningPanel::projectFileWritten, this, &MainWindow::reloadProjectFile);
  // Saving project.toml in the editor reads the project again, so the Tuning dock shows the file.
  connect(policyEditor_, &PdlEditor::saved, this, [this](const QString& path) {
    if (project_ && QFileInfo(path) == QFileInfo(QString::fromStdString(project_->projectFile.string()))) reloadProjectFile();
  });
  connectRun();
  connect(playPanel_, &PlayPanel::agentLoaded, this, [this] { updateRunActions(); });
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  // Dock sizes only take once the window has its geometry, so the default layout is applied on
  // the first show (a restored layout replaces it).
  if (std::exchange(defaultSizesPending_, false)) QTimer::singleShot(0, dockLayout_, &DockLayout::applyDefaultSizes);
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  dockLayout_->keepSidePanels();  // the change of size goes to the editor and the plots
}

void MainWindow::resetLayout() { dockLayout_->reset(); }

void MainWindow::showStatus(const QString& text, int timeoutMs) {
  int room = statusBar()->width() - 24;
  for (const QWidget* permanent : {static_cast<QWidget*>(progressLabel_), static_cast<QWidget*>(progressBar_), static_cast<QWidget*>(backendLabel_)})
    if (permanent->isVisible()) room -= permanent->width() + 8;
  statusBar()->showMessage(statusBar()->fontMetrics().elidedText(text, Qt::ElideRight, std::max(room, 40)), timeoutMs);
}

MainWindow::~MainWindow() = default;

QDockWidget* MainWindow::addPanel(const QString& objectName, const QString& title, QWidget* content, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(objectName);  // saveState() keys on it
  dock->setWidget(content);
  addDockWidget(area, dock);
  viewMenu_->addAction(dock->toggleViewAction());
  // Brings the dock to the front, even as a hidden tab, and gives its content the keyboard.
  const int number = goToMenu_->actions().size() + 1;
  QAction* goTo = goToMenu_->addAction(title, this, [dock, content] {
    dock->show();
    dock->raise();
    content->setFocus(Qt::ShortcutFocusReason);
  });
  goTo->setObjectName(objectName + QStringLiteral("GoTo"));
  if (number <= 10) goTo->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_0 + number % 10)));
  return dock;
}

QString MainWindow::backendStatusText() const { return backendLabel_->text(); }

void MainWindow::updateBackendStatus(const QString& device) {
  backendLabel_->setText(widgets::backendStatusText(exec::BackendRegistry::instance().status(device.toStdString())));
}

void MainWindow::connectRun() {
  connect(run_, &RunController::runStarted, this, [this](const QString& folder) {
    metrics_->clear();
    episodeView_->setRun(folder, project_ && (project_->algorithm == "ppo" || project_->algorithm == "muzero"));
    QString history;
    // A resumed run goes on from its checkpoint: its recorded iterations are its curves' start.
    if (run_->resumedFrom() > 0 && !metrics_->showRun(folder, &history)) logPanel_->appendMessage(LogPanel::Level::Warning, history);
    tuningPanel_->showChanges(metrics_->liveChanges());  // a resumed run's changes.jsonl; none for a new run
    parameterModel_->setLiveEditing(true);
    parameterModel_->showRunValues(run_->startParameters(), QFileInfo(folder).fileName());
    runsDock_->setTraining(true);
    runsDock_->refresh();
    runsDock_->selectRun(folder);
    kernelView_->runStarted(run_->backendId());
    progressTimer_->start();
    updateRunProgress();
    logPanel_->appendMessage(LogPanel::Level::Info, tr("Training started; the run folder is %1.").arg(folder));
    if (run_->searchDevice().isEmpty()) findChild<QDockWidget*>(QStringLiteral("metricsDock"))->raise();
    else findChild<QDockWidget*>(QStringLiteral("searchTreeDock"))->raise();
    if (!run_->searchDevice().isEmpty())
      logPanel_->appendMessage(LogPanel::Level::Info, run_->searchDevice() == QLatin1String("cuda")
                                                          ? tr("The search runs on the GPU: its trees and games stay in device memory.")
                                                          : tr("The search runs on the CPU."));
    updateRunActions();
  });
  connect(run_, &RunController::iterationFinished, this, [this](const train::IterationReport& r) {
    metrics_->addIteration(r);
    runsDock_->model()->refreshRun(run_->runFolder());
    kernelView_->addIteration(r);
    updateRunProgress();
    if (r.episodes)
      showStatus(r.episodes->episodes > 0 ? tr("Iteration %1: %2 environment steps, mean return %3, %4 steps/s")
                                                .arg(r.iteration)
                                                .arg(r.episodes->environmentSteps)
                                                .arg(r.episodes->returnMean, 0, 'f', 1)
                                                .arg(r.episodes->stepsPerSecond, 0, 'f', 0)
                                          : tr("Iteration %1: %2 environment steps, no episode ended, %3 steps/s")
                                                .arg(r.iteration)
                                                .arg(r.episodes->environmentSteps)
                                                .arg(r.episodes->stepsPerSecond, 0, 'f', 0));
    else if (r.trainingSteps > 0)
      showStatus(tr("Iteration %1: %2 games, loss %3, %4 simulations/s")
                                   .arg(r.iteration)
                                   .arg(r.gamesPlayed)
                                   .arg(double(r.loss), 0, 'f', 3)
                                   .arg(r.simulationsPerSecond, 0, 'f', 0));
    else if (r.positions >= r.batchSize)  // train.overlap: the steps could draw only from earlier iterations' positions
      showStatus(tr("Iteration %1: %2 games, no training step yet (%3 positions, for the next iteration), %4 simulations/s")
                                   .arg(r.iteration)
                                   .arg(r.gamesPlayed)
                                   .arg(r.positions)
                                   .arg(r.simulationsPerSecond, 0, 'f', 0));
    else
      showStatus(tr("Iteration %1: %2 games, no training step yet (%3 of %4 positions), %5 simulations/s")
                                   .arg(r.iteration)
                                   .arg(r.gamesPlayed)
                                   .arg(r.positions)
                                   .arg(r.batchSize)
                                   .arg(r.simulationsPerSecond, 0, 'f', 0));
    for (const auto& e : r.evaluations)
      logPanel_->appendMessage(LogPanel::Level::Info, tr("Iteration %1 against %2: %3 wins, %4 draws, %5 losses.")
                                                          .arg(r.iteration)
                                                          .arg(QString::fromStdString(e.opponent))
                                                          .arg(e.wins)
                                                          .arg(e.draws)
                                                          .arg(e.losses));
  });
  connect(run_, &RunController::parameterApplied, this, [this](const engine::ParameterChange& c) {
    const MetricChange change{c.iteration, QString::fromStdString(c.name), QString::fromStdString(c.from), QString::fromStdString(c.to)};
    tuningPanel_->addChange(change);
    metrics_->addParameterChange(change.iteration, change.parameter, change.from, change.to);
    parameterModel_->applyChange(change.parameter, change.to, change.iteration);
    logPanel_->appendMessage(LogPanel::Level::Info, TuningPanel::describeChange(change));
  });
  connect(run_, &RunController::messagePosted, this, [this](const QString& m) { logPanel_->appendMessage(LogPanel::Level::Info, m); });
  connect(run_, &RunController::runFailed, this, [this](const QString& m) {
    logPanel_->appendMessage(LogPanel::Level::Error, tr("The run stopped: %1").arg(m));
    showStatus(tr("The run stopped on an error; see the Log."), 10000);
  });
  connect(run_, &RunController::kernelsProfiled, kernelView_, &KernelView::showProfile);
  connect(kernelView_, &KernelView::profileRequested, run_, &RunController::requestKernelProfile);
  connect(run_, &RunController::simulationStepped, this, [this](qint64 n) {
    showStatus(tr("Simulations stepped in every self-play game during this run: %1").arg(n), 5000);
  });
  connect(run_, &RunController::runFinished, this, [this] {
    parameterModel_->setLiveEditing(false);
    runsDock_->setTraining(false);
    runsDock_->refresh();
    kernelView_->runFinished();
    progressTimer_->stop();
    updateRunProgress();
    logPanel_->appendMessage(LogPanel::Level::Info, tr("Training stopped; the run is checkpointed in %1.").arg(run_->runFolder()));
    // A single-agent run's next step is to watch its policy play: the Episode dock comes forward.
    if (run_->searchDevice().isEmpty()) findChild<QDockWidget*>(QStringLiteral("episodeDock"))->raise();
    updateRunActions();
  });
}

void MainWindow::updateRunActions() {
  exportAction_->setEnabled(!exportSource().isEmpty());
  trainAction_->setEnabled(project_.has_value() && !run_->running());
  pauseAction_->setEnabled(run_->running());
  pauseAction_->setText(run_->paused() ? tr("&Resume") : tr("&Pause"));
  stepAction_->setEnabled(run_->running() && run_->paused());
  stopAction_->setEnabled(run_->running());
  iterationBudget_->setEnabled(!run_->running());
}

QString MainWindow::runProgressText() const { return progressLabel_->text(); }

void MainWindow::updateRunProgress() {
  const RunProgress p = run_->progress();
  progressBar_->setVisible(run_->running() && p.iterationBudget > 0);
  if (p.iterationBudget > 0) {
    progressBar_->setRange(0, int(std::min<qint64>(p.iterationBudget, std::numeric_limits<int>::max())));
    progressBar_->setValue(int(std::min(p.iterations, p.iterationBudget)));
  }
  QString text;
  const qint64 first = run_->resumedFrom();  // a resumed run counts on from its checkpoint's iteration
  if (!run_->running()) {
    text = p.iterations > 0 ? tr("The run ended after %1 iterations in %2.").arg(p.iterations).arg(duration(p.activeSeconds)) : QString();
  } else if (p.iterations == 0) {
    text = p.iterationBudget > 0 ? tr("Iteration %1 of %2, %3 elapsed").arg(first).arg(first + p.iterationBudget).arg(duration(p.activeSeconds))
                                 : tr("%1 elapsed, the first iteration is running").arg(duration(p.activeSeconds));
  } else if (p.iterationBudget > 0) {
    text = tr("Iteration %1 of %2, about %3 left (%4 per iteration)")
               .arg(first + p.iterations)
               .arg(first + p.iterationBudget)
               .arg(duration(p.etaSeconds), duration(p.meanIterationSeconds));
  } else {
    text = tr("Iteration %1, %2 elapsed, %3 iterations/min")
               .arg(first + p.iterations)
               .arg(duration(p.activeSeconds))
               .arg(60.0 / std::max(p.meanIterationSeconds, 1e-9), 0, 'f', 1);
  }
  if (run_->running() && run_->paused()) text = tr("%1 (paused)").arg(text);
  progressLabel_->setText(text);
}

void MainWindow::startTraining() {
  if (!project_ || run_->running()) return;
  // A run trains the files on disk: unsaved editor changes to them are saved first, or left out, or Train is cancelled.
  const TrainChoice choice = askBeforeTraining(this, policyEditor_, *project_);
  if (choice == TrainChoice::Cancel) return;
  if (choice == TrainChoice::TrainSavedFile)
    logPanel_->appendMessage(LogPanel::Level::Warning, tr("Training the saved %1; the editor's unsaved changes are not in this run.")
                                                           .arg(QFileInfo(policyEditor_->currentFile()).fileName()));
  // A new run starts from project.toml (read again when saved), whatever the last run changed.
  run_->setLimits({iterationBudget_->value(), 0});
  run_->startTraining(*project_, studioRunsRoot());
}

void MainWindow::togglePause() {
  if (run_->paused()) {
    run_->resumeTraining();
    logPanel_->appendMessage(LogPanel::Level::Info, tr("Training resumed."));
  } else {
    run_->pauseTraining();
    logPanel_->appendMessage(LogPanel::Level::Info, tr("Training pauses after the current iteration."));
  }
  updateRunActions();
  updateRunProgress();
}

void MainWindow::stepSimulation() {
  if (run_->running() && run_->paused()) run_->stepSimulation();
}

void MainWindow::stopTraining() {
  run_->stopTraining();
  logPanel_->appendMessage(LogPanel::Level::Info, tr("Training stops after the current iteration."));
}

void MainWindow::requestParameter(const QString& name, const QString& value) {
  const QString problem = run_->requestParameter(name, value);
  if (problem.isEmpty()) {
    parameterModel_->markRequested(name, value);
    logPanel_->appendMessage(LogPanel::Level::Info, tr("%1 = %2 requested; it applies at the next iteration.").arg(name, value));
  } else {
    logPanel_->appendMessage(LogPanel::Level::Error, tr("Refused: %1").arg(problem));
    showStatus(tr("Refused: %1").arg(problem), 10000);
  }
}

QStringList MainWindow::changeLog() const {
  QStringList out;
  for (int i = 0; i < tuningPanel_->changeList()->count(); ++i) out << tuningPanel_->changeList()->item(i)->text();
  return out;
}

bool MainWindow::openProject(const QString& folder) {
  if (!policyEditor_->maybeSave()) return false;  // the user kept editing the open policy
  const project::LoadResult result = project::loadProject(folder.toStdString(), loadOptions_);
  for (const Diagnostic& d : result.diagnostics.items()) {
    logPanel_->appendMessage(d.severity == Severity::Error ? LogPanel::Level::Error : LogPanel::Level::Warning,
                             QString::fromStdString(formatHeadline(d)));
  }
  if (!result.project) {
    projectPanel_->showRejectedProject(folder, result.diagnostics.errorCount());
    showStatus(tr("%1 could not be opened; see the Log.").arg(folder), 10000);
    return false;
  }
  const project::Project& p = *result.project;
  project_ = p;
  updateRunActions();
  projectPanel_->showProject(p);
  policyEditor_->setProject(p);
  policyEditor_->openFile(QString::fromStdString(p.policyFile.string()));
  parameterModel_->showParameters(p.parameters);
  tuningPanel_->showAlgorithm(p.algorithm);
  searchTree_->showAlgorithm(p.algorithm);
  tuningPanel_->setProjectFile(QString::fromStdString(p.projectFile.string()));
  runsDock_->model()->setProject(p);
  runsDock_->refresh();
  const QString device = QString::fromStdString(params::readRuntimeParams(p.parameters).device);
  updateBackendStatus(device);
  kernelView_->setDevice(device);
  setWindowTitle(tr("%1 — CUDA-Agent Studio").arg(QString::fromStdString(p.name)));
  logPanel_->appendMessage(LogPanel::Level::Info, tr("Opened project %1 (%2).").arg(QString::fromStdString(p.name), folder));
  showNewestRunMetrics();
  rememberProject(QFileInfo(folder).absoluteFilePath());
  return true;
}

bool MainWindow::openAtStartup(const QString& named, const QString& example) {
  if (!named.isEmpty() && !QFileInfo::exists(named)) {
    const QString message = tr("%1 does not exist; no project was opened. Open one with File > Open Project.").arg(QDir::toNativeSeparators(named));
    logPanel_->appendMessage(LogPanel::Level::Error, message);
    showStatus(message);
    return false;
  }
  QString project = named;
  if (project.isEmpty()) project = recent_.value(0);
  if (project.isEmpty() || !QFileInfo::exists(project)) project = example;
  return !project.isEmpty() && openProject(project);
}

void MainWindow::chooseProject() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Project"), recent_.value(0));
  if (!folder.isEmpty()) openProject(folder);
}

void MainWindow::newProject() {
  NewProjectDialog dialog(bundledFolder(QStringLiteral("projects")), this);
  if (dialog.exec() == QDialog::Accepted) openProject(dialog.createdFolder());
}

void MainWindow::showAbout() {
  QMessageBox::about(this, tr("About CUDA-Agent Studio"),
                     tr("<b>CUDA-Agent Studio %1</b><p>Design, train, search-debug and export reinforcement-learning "
                        "policies on NVIDIA GPUs, with a CPU reference backend.</p><p>Backend: %2</p>")
                         .arg(QString::fromLatin1(kVersion), backendLabel_->text().toHtmlEscaped()));
}

QString MainWindow::exportSource() const {
  if (const std::optional<AgentSummary> agent = playPanel_->agent()) return agent->runFolder;
  if (!run_->runFolder().isEmpty()) return run_->runFolder();
  return project_ ? QString::fromStdString(project_->directory.string()) : QString();
}

void MainWindow::showExportDialog() {
  const QString source = exportSource();
  if (source.isEmpty()) return;
  auto* dialog = new ExportDialog(source, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->open();
}

void MainWindow::rememberProject(const QString& folder) {
  recent_.removeAll(folder);
  recent_.prepend(folder);
  while (recent_.size() > kMaxRecentProjects) recent_.removeLast();
  QSettings().setValue(kRecentKey, recent_);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  for (const QString& folder : recent_)
    recentMenu_->addAction(QDir::toNativeSeparators(folder), this, [this, folder] { openProject(folder); });
  recentMenu_->setEnabled(!recent_.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!policyEditor_->maybeSave()) {
    event->ignore();
    return;
  }
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState());
  event->accept();
}

}  // namespace cas::widgets
