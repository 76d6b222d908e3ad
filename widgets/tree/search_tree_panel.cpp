// SearchTreePanel (declared in search_tree_view.hpp): the Search tree dock's toolbar, status
// line and its traffic with the run: throttled snapshot requests, layouts built on a worker
// thread, and teaching mode's steps; or, following the Board, with the Board's agent. The view it
// wraps is in search_tree_view.cpp.
// Thread-safety: GUI thread only; the worker thread only reads the snapshot copies it is given.
#include "widgets/tree/search_tree_view.hpp"

#include <QButtonGroup>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QShortcut>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <initializer_list>

#include "widgets/board/board_view.hpp"
#include "widgets/board/play_panel.hpp"
#include "widgets/runs/run_controller.hpp"

namespace cas::widgets {
namespace {

QString grouped(qint64 n) { return QLocale().toString(n); }  // as the view writes counts

}  // namespace

SearchTreePanel::SearchTreePanel(QWidget* parent)
    : QWidget(parent),
      view_(new SearchTreeView),
      sunburstButton_(new QToolButton),
      nodeLinkButton_(new QToolButton),
      fitButton_(new QToolButton),
      debugButton_(new QToolButton),
      teaching_(new QCheckBox(tr("Teaching mode"))),
      step_(new QPushButton(tr("Step one simulation"))),
      gameBox_(new QSpinBox),
      follow_(new QCheckBox(tr("Follow"))),
      refreshButton_(new QToolButton),
      hint_(new QLabel),
      status_(new QLabel),
      path_(new QLabel) {
  setObjectName(QStringLiteral("searchTreePanel"));
  worker_.setMaxThreadCount(1);
  createControls();
  createLayout();
  connectSignals();
  ticker_.start(1000 / kLiveRequestsPerSecond);
  sinceLastRequest_.start();
  view_->setEmptyMessage(tr("Train the project to watch the search tree of a self-play game grow."));
  updateControls();
}

SearchTreePanel::~SearchTreePanel() { worker_.waitForDone(); }

// The tool bar's buttons, the game box, and the hint, status and path lines.
void SearchTreePanel::createControls() {
  sunburstButton_->setText(tr("Sunburst"));
  sunburstButton_->setToolTip(tr("Rings by depth; a node's angle is its share of the visits"));
  nodeLinkButton_->setText(tr("Node-link"));
  nodeLinkButton_->setToolTip(tr("The top levels as a tree of nodes and edges"));
  for (QToolButton* b : {sunburstButton_, nodeLinkButton_}) {
    b->setCheckable(true);
    b->setAutoRaise(true);
  }
  sunburstButton_->setChecked(true);
  auto* modes = new QButtonGroup(this);
  modes->addButton(sunburstButton_);
  modes->addButton(nodeLinkButton_);
  fitButton_->setText(tr("Fit"));
  fitButton_->setToolTip(tr("Show the whole tree (or double-click the view)"));
  fitButton_->setAutoRaise(true);
  debugButton_->setText(tr("Debug"));
  debugButton_->setToolTip(tr("Debug overlay: frame time, snapshot latency, tree size, allocator and queues (F12)"));
  debugButton_->setCheckable(true);
  debugButton_->setAutoRaise(true);
  teaching_->setToolTip(tr("Step through single simulations of the paused run and watch selection, expansion and backup"));
  step_->setObjectName(QStringLiteral("stepSimulationButton"));
  step_->setToolTip(tr("One more simulation in every self-play game; the view animates the game chosen"));
  gameBox_->setObjectName(QStringLiteral("searchTreeGame"));
  // 0 is the Board's position; the games' maximum is narrowed to the run's once a snapshot says
  // how many there are.
  gameBox_->setRange(0, 65536);
  gameBox_->setValue(1);
  gameBox_->setSpecialValueText(tr("Board position"));
  gameBox_->setPrefix(tr("Game "));
  gameBox_->setToolTip(tr("The self-play game whose tree is shown and, in teaching mode, stepped; or, below game 1, the position "
                          "the Board shows, searched by the Board's agent"));
  follow_->setObjectName(QStringLiteral("searchTreeFollow"));
  follow_->setToolTip(tr("Show each new tree while training; off, the tree holds still until Refresh"));
  refreshButton_->setObjectName(QStringLiteral("searchTreeRefresh"));
  refreshButton_->setText(tr("Refresh"));
  refreshButton_->setToolTip(tr("Show the game's newest tree once"));
  refreshButton_->setAutoRaise(true);
  hint_->setObjectName(QStringLiteral("searchTreeHint"));
  status_->setObjectName(QStringLiteral("searchTreeStatus"));
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  path_->setObjectName(QStringLiteral("searchTreePath"));
  path_->setToolTip(tr("How the tree reaches the screen: written by the GPU into the view's OpenGL buffers (CUDA-GL interop), "
                       "or meshed on the CPU from a snapshot copied to host memory"));
  // Long sentences wrap rather than widening the dock, and the window, to fit them; the hint has
  // a row of its own under the toolbar, where a narrow dock does not cut it short.
  for (QLabel* label : {hint_, status_, path_}) {
    label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    label->setWordWrap(true);
  }
  QPalette faint = hint_->palette();
  faint.setColor(QPalette::WindowText, faint.color(QPalette::Disabled, QPalette::WindowText));
  hint_->setPalette(faint);
  path_->setPalette(faint);
}

// The tool bar, the game row and the hint over the view, the status and path lines under it.
void SearchTreePanel::createLayout() {
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 2);
  bar->addWidget(sunburstButton_);
  bar->addWidget(nodeLinkButton_);
  bar->addWidget(fitButton_);
  bar->addStretch(1);
  bar->addWidget(debugButton_);
  // What is shown and stepped, on a row of its own: one row for everything is wider than the dock.
  auto* gameRow = new QHBoxLayout;
  gameRow->setContentsMargins(4, 0, 4, 0);
  gameRow->addWidget(gameBox_);
  gameRow->addWidget(follow_);
  gameRow->addWidget(refreshButton_);
  gameRow->addSpacing(12);
  gameRow->addWidget(teaching_);
  gameRow->addWidget(step_);
  gameRow->addStretch(1);
  auto* hintRow = new QHBoxLayout;
  hintRow->setContentsMargins(6, 0, 6, 0);
  hintRow->addWidget(hint_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(bar);
  layout->addLayout(gameRow);
  layout->addLayout(hintRow);
  if (const QString reason = openGlWidgetUnavailableReason(); reason.isEmpty()) {
    layout->addWidget(view_, 1);
  } else {
    // Outside the window: there even a hidden QOpenGLWidget child makes Qt compose the window
    // with OpenGL, which these platforms lack. The view keeps working off screen.
    unparentedView_.reset(view_);
    noOpenGl_ = new QLabel(reason);
    noOpenGl_->setObjectName(QStringLiteral("searchTreeNoOpenGl"));
    noOpenGl_->setWordWrap(true);
    noOpenGl_->setAlignment(Qt::AlignCenter);
    noOpenGl_->setMargin(16);
    layout->addWidget(noOpenGl_, 1);
  }
  auto* statusRow = new QHBoxLayout;
  statusRow->setContentsMargins(6, 0, 6, 2);
  statusRow->addWidget(status_, 1);
  layout->addLayout(statusRow);
  auto* pathRow = new QHBoxLayout;
  pathRow->setContentsMargins(6, 0, 6, 2);
  pathRow->addWidget(path_, 1);
  layout->addLayout(pathRow);
}

// The buttons and their shortcuts (F12, F5), the view, and the ticker of live requests.
void SearchTreePanel::connectSignals() {
  connect(sunburstButton_, &QToolButton::clicked, this, [this] { view_->setMode(TreeViewMode::Sunburst); });
  connect(nodeLinkButton_, &QToolButton::clicked, this, [this] { view_->setMode(TreeViewMode::NodeLink); });
  connect(fitButton_, &QToolButton::clicked, view_, &SearchTreeView::fitToView);
  connect(debugButton_, &QToolButton::toggled, view_, &SearchTreeView::setDebugOverlayVisible);
  connect(view_, &SearchTreeView::debugOverlayToggled, debugButton_, &QToolButton::setChecked);
  auto* f12 = new QShortcut(QKeySequence(Qt::Key_F12), this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  f12->setWhatsThis(tr("Search tree: show or hide the debug overlay"));  // Help > Keyboard Shortcuts lists it
  connect(f12, &QShortcut::activated, this, [this] { view_->setDebugOverlayVisible(!view_->debugOverlayVisible()); });
  auto* f5 = new QShortcut(QKeySequence(Qt::Key_F5), this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  f5->setWhatsThis(tr("Search tree: show the game's newest tree once (Refresh)"));
  connect(f5, &QShortcut::activated, refreshButton_, [this] {
    if (refreshButton_->isEnabled()) refreshButton_->animateClick();
  });
  connect(teaching_, &QCheckBox::toggled, this, &SearchTreePanel::setTeachingMode);
  connect(step_, &QPushButton::clicked, this, &SearchTreePanel::stepSimulation);
  connect(gameBox_, &QSpinBox::valueChanged, this, [this](int shown) { setGame(shown - 1); });
  connect(follow_, &QCheckBox::toggled, this, &SearchTreePanel::setFollowLive);
  connect(refreshButton_, &QToolButton::clicked, this, &SearchTreePanel::refreshTree);
  connect(view_, &SearchTreeView::positionSelected, this, [this](const QString& environment, const std::vector<int>& moves) {
    pickedInTree_ = moves;  // before the Board shows it, so that the tree it came from stays
    emit positionSelected(environment, moves);
  });
  connect(view_, &SearchTreeView::modeChanged, this, &SearchTreePanel::updateControls);
  connect(view_, &SearchTreeView::drawingPathChanged, this, &SearchTreePanel::updateControls);
  connect(&ticker_, &QTimer::timeout, this, &SearchTreePanel::tick);
}

bool SearchTreePanel::teachingMode() const { return teaching_->isChecked(); }

void SearchTreePanel::setRunController(RunController* run) {
  if (run_) disconnect(run_, nullptr, this, nullptr);
  run_ = run;
  if (!run) return;
  connect(run, &RunController::treeSnapshotReady, this, &SearchTreePanel::takeSnapshot);
  connect(run, &RunController::kernelsProfiled, this,
          [this](const KernelProfile& p) { view_->setInstrumentationCost(p.profileMs, p.searchProfileMs, p.searchSteps); });
  connect(run, &RunController::runStarted, this, [this] {
    resetRequests();
    view_->resetInterop();  // another run, perhaps on another device
    if (!followsBoard()) view_->setEmptyMessage(tr("Waiting for the first snapshot of self-play game %1…").arg(game_ + 1));
    updateControls();
  });
  connect(run, &RunController::runFinished, this, [this] {
    resetRequests();
    updateControls();
  });
  // A pause takes effect at the end of the iteration: then the settled tree is worth a snapshot.
  connect(run, &RunController::iterationFinished, this, [this] { pausedSnapshotWanted_ = true; });
  connect(run, &RunController::simulationStepped, this, [this] {
    if (ownStepsPending_ > 0) {
      --ownStepsPending_;  // its "after" snapshot is already asked for
      return;
    }
    request(Purpose::AfterStep);  // traced from the tree shown: animated in teaching mode, marked otherwise
  });
}

void SearchTreePanel::resetRequests() {
  requests_.clear();
  ownStepsPending_ = 0;
  beforeStep_.reset();
  pausedSnapshotWanted_ = true;
  publishStats();
}

void SearchTreePanel::setBoard(PlayPanel* board) {
  if (board_) {
    disconnect(board_, nullptr, this, nullptr);
    disconnect(board_->boardView(), nullptr, this, nullptr);
  }
  board_ = board;
  if (!board) return;
  boardEnvironment_ = board->boardView()->environment();
  boardMoves_ = board->boardView()->moves();
  connect(board->boardView(), &BoardView::positionShown, this, &SearchTreePanel::boardPositionShown);
  connect(board, &PlayPanel::positionTreeReady, this, &SearchTreePanel::takePositionTree);
  connect(board, &PlayPanel::positionTreeFailed, this, &SearchTreePanel::reportBoardTreeFailure);
  // Another agent: the tree of the position is grown afresh by it.
  connect(board, &PlayPanel::agentLoaded, this, [this] { requestBoardTree(false); });
}

void SearchTreePanel::boardPositionShown(const QString& environment, const std::vector<int>& moves) {
  if (environment == boardEnvironment_ && moves == boardMoves_) return;  // shown again
  boardEnvironment_ = environment;
  boardMoves_ = moves;
  if (pickedInTree_ == moves) return;  // a node clicked in the tree: the tree it belongs to stays
  pickedInTree_.reset();
  if (!followsBoard()) return;
  treeEnvironment_ = environment;
  treeMoves_ = moves;
  requestBoardTree(false);
}

void SearchTreePanel::requestBoardTree(bool step) {
  if (!followsBoard() || !board_ || boardTreePending_) return;  // a pending request is followed by one for the newest position
  boardTreePending_ = true;
  board_->requestPositionTree(treeEnvironment_, treeMoves_, step, kMaxNodes);  // may fail at once
  updateControls();
}

void SearchTreePanel::takePositionTree(const PositionTree& tree) {
  boardTreePending_ = false;
  if (followsBoard() && (tree.moves != treeMoves_ || QString::fromStdString(tree.after.environment) != treeEnvironment_)) {
    requestBoardTree(false);  // the Board moved on meanwhile
    return;
  }
  if (followsBoard()) {
    boardTreeProblem_.clear();
    if (tree.before) traceStep(*tree.before, tree.after);
    else showSnapshot(tree.after);
  }
  updateControls();
}

void SearchTreePanel::reportBoardTreeFailure(const QString& reason) {
  boardTreePending_ = false;
  if (followsBoard()) {
    boardTreeProblem_ = reason;
    view_->showTree({});  // the tree of another position would pass for this one's
    view_->setEmptyMessage(reason);
  }
  updateControls();
}

void SearchTreePanel::request(Purpose purpose) {
  if (!run_ || !run_->running() || followsBoard()) return;
  requests_.push_back({purpose, {}});
  requests_.back().sent.start();
  sinceLastRequest_.restart();
  if (purpose == Purpose::Live) refreshWanted_ = false;
  // The device layout is asked for while the run's search is on a GPU and the view has not found
  // that it cannot draw one (its GL context must run on that GPU).
  const bool device = run_->searchDevice() == QLatin1String("cuda") && !view_->interopRefused();
  run_->requestTreeSnapshot(game_, kMaxNodes, device ? kDeviceNodes : 0);
  publishStats();
}

void SearchTreePanel::tick() {
  updateControls();
  if (!run_ || !run_->running() || !isVisible() || followsBoard()) return;
  if (!requests_.empty()) return;  // one at a time keeps the engine's queue short
  if (sinceLastRequest_.elapsed() < 1000 / kLiveRequestsPerSecond) return;
  if (run_->paused()) {
    // Nothing changes while paused but by steps, which ask for their own snapshots.
    if (!pausedSnapshotWanted_ && !refreshWanted_) return;
    pausedSnapshotWanted_ = false;
  } else if (view_->layout() && !follow_->isChecked() && !refreshWanted_) {
    return;  // holds the tree shown still
  }
  request(Purpose::Live);
}

void SearchTreePanel::stepSimulation() {
  if (followsBoard()) {
    requestBoardTree(true);
    return;
  }
  if (!run_ || !run_->running() || !run_->paused()) return;
  request(Purpose::BeforeStep);
  ++ownStepsPending_;
  run_->stepSimulation();
  request(Purpose::AfterStep);
}

void SearchTreePanel::setGame(int game) {
  if (game != kBoardPosition) game = std::clamp(game, 0, gameBox_->maximum() - 1);
  if (gameBox_->value() != game + 1) {
    const QSignalBlocker quiet(gameBox_);
    gameBox_->setValue(game + 1);  // kBoardPosition: 0, the box's "Board position"
  }
  if (game == game_) return;
  const bool sourceChanged = (game == kBoardPosition) != followsBoard();
  game_ = game;
  beforeStep_.reset();  // a step's "before" belongs to the game it was taken of
  if (sourceChanged) view_->showTree({});  // a self-play tree is not the Board's, nor the other way round
  if (followsBoard()) {
    boardTreeProblem_.clear();
    treeEnvironment_ = boardEnvironment_;
    treeMoves_ = boardMoves_;
    view_->setEmptyMessage(tr("Searching the Board's position…"));
    requestBoardTree(false);
  } else {
    view_->setEmptyMessage(!noTree_.isEmpty()            ? noTree_
                           : run_ && run_->running() ? tr("Waiting for the first snapshot of self-play game %1…").arg(game_ + 1)
                                                     : tr("Train the project to watch the search tree of a self-play game grow."));
    refreshTree();
  }
  updateControls();
}

bool SearchTreePanel::followsLive() const { return follow_->isChecked(); }

void SearchTreePanel::setFollowLive(bool on) {
  if (follow_->isChecked() != on) follow_->setChecked(on);  // re-enters through toggled
  updateControls();
}

void SearchTreePanel::refreshTree() {
  refreshWanted_ = true;
  tick();
}

void SearchTreePanel::setTeachingMode(bool on) {
  if (teaching_->isChecked() != on) teaching_->setChecked(on);  // re-enters through toggled
  updateControls();
}

void SearchTreePanel::takeSnapshot(const train::TreeSnapshot& snapshot) {
  if (requests_.empty()) return;  // asked for by someone else
  const Request r = requests_.front();
  requests_.pop_front();
  const double latency = double(r.sent.nsecsElapsed()) / 1e6;
  ++stats_.received;
  latencySumMs_ += latency;
  stats_.lastLatencyMs = latency;
  stats_.meanLatencyMs = latencySumMs_ / double(stats_.received);
  if (snapshot.game != game_) {
    // The run has fewer games than asked for: the engine answered with its last one.
    if (snapshot.game >= game_) return;  // asked for before the game changed
    const QSignalBlocker quiet(gameBox_);
    gameBox_->setMaximum(snapshot.game + 1);
    game_ = snapshot.game;
  }
  switch (r.purpose) {
    case Purpose::Live:
      showSnapshot(snapshot);
      break;
    case Purpose::BeforeStep:
      beforeStep_ = snapshot;
      break;
    case Purpose::AfterStep: {
      // Our own step brought its "before"; a step made elsewhere is traced from the tree shown.
      std::optional<train::TreeSnapshot> before = std::exchange(beforeStep_, std::nullopt);
      if (!before && view_->layout() && view_->layout()->snapshot().game == snapshot.game) before = view_->layout()->snapshot();
      if (before) traceStep(std::move(*before), snapshot);
      else showSnapshot(snapshot);
      break;
    }
  }
  publishStats();
}

void SearchTreePanel::traceStep(train::TreeSnapshot before, train::TreeSnapshot after) {
  worker_.start([this, before = std::move(before), after = std::move(after)]() mutable {
    PreparedTree b = prepareTree(std::move(before)), a = prepareTree(std::move(after));
    std::optional<SimulationTrace> trace = traceSimulation(*b.layout, *a.layout);
    QMetaObject::invokeMethod(this, [this, b, a, trace] { teachingBuilt(b, a, trace); }, Qt::QueuedConnection);
  });
}

void SearchTreePanel::showSnapshot(const train::TreeSnapshot& snapshot) {
  if (waiting_) ++stats_.superseded;
  waiting_ = snapshot;
  if (!building_) startBuild();
  publishStats();
}

void SearchTreePanel::startBuild() {
  if (!waiting_) return;
  building_ = true;
  worker_.start([this, snapshot = std::move(*waiting_)]() mutable {
    PreparedTree tree = prepareTree(std::move(snapshot));
    QMetaObject::invokeMethod(this, [this, tree] { buildFinished(tree); }, Qt::QueuedConnection);
  });
  waiting_.reset();
}

void SearchTreePanel::buildFinished(PreparedTree tree) {
  building_ = false;
  stats_.lastBuildMs = tree.buildMs;
  view_->showTree(std::move(tree));
  startBuild();
  updateControls();
  publishStats();
}

void SearchTreePanel::teachingBuilt(PreparedTree before, PreparedTree after, std::optional<SimulationTrace> trace) {
  stats_.lastBuildMs = after.buildMs;
  if (trace && teachingMode()) view_->playSimulation(std::move(before), std::move(after), std::move(*trace));
  else if (trace) view_->showSteppedTree(std::move(after), *trace);
  else view_->showTree(std::move(after));
  updateControls();
  publishStats();
}

void SearchTreePanel::publishStats() {
  stats_.requestsInFlight = int(requests_.size());
  stats_.buildsWaiting = waiting_ ? 1 : 0;
  view_->setPipelineStats(stats_);
}

QString SearchTreePanel::statusText() const { return status_->text(); }

void SearchTreePanel::showAlgorithm(const std::string& algorithm) {
  if (algorithm == "ppo")
    noTree_ = tr("This project trains with PPO, which searches no tree: the Metrics and Episode docks show its training.");
  else if (algorithm == "muzero")
    noTree_ = tr("The tree view does not show MuZero's search over its learned model yet: the Metrics and Episode docks show its training.");
  else
    noTree_.clear();
  view_->setEmptyMessage(noTree_.isEmpty() ? tr("Train the project to watch the search tree of a self-play game grow.") : noTree_);
  updateControls();
}

void SearchTreePanel::updateControls() {
  const bool running = run_ && run_->running();
  const bool paused = running && run_->paused();
  const bool board = followsBoard();
  const bool hasTree = noTree_.isEmpty();  // the project's algorithm has a tree to show
  for (QWidget* control : std::initializer_list<QWidget*>{sunburstButton_, nodeLinkButton_, fitButton_, debugButton_, teaching_, gameBox_})
    control->setEnabled(hasTree);
  follow_->setEnabled(hasTree && !board);
  refreshButton_->setEnabled(hasTree && running && !follow_->isChecked() && !board);
  step_->setVisible(hasTree && teachingMode());
  step_->setEnabled(board ? board_ && !boardTreePending_ && boardTreeProblem_.isEmpty() && view_->layout() : paused && requests_.empty());
  if (!hasTree) {
    status_->setText(noTree_);
    hint_->hide();
    path_->hide();
    return;
  }
  if (!teachingMode()) hint_->clear();
  else if (board) hint_->setText(boardTreeProblem_.isEmpty() ? tr("Each step animates selection, expansion and backup.") : boardTreeProblem_);
  else if (!running) hint_->setText(tr("Start a run, then pause it to step."));
  else if (!paused) hint_->setText(tr("Pause the run (Run ▸ Pause) to step through single simulations."));
  else hint_->setText(tr("Each step animates selection, expansion and backup."));
  hint_->setVisible(!hint_->text().isEmpty());

  const TreeLayout* l = view_->layout();
  path_->setText(l ? view_->drawingPath().sentence : QString());
  path_->setVisible(!path_->text().isEmpty());
  if (!l) {
    if (board) status_->setText(boardTreeProblem_.isEmpty() ? tr("Board position: waiting for its search tree.") : boardTreeProblem_);
    else status_->setText(running ? tr("Self-play game %1: waiting for a snapshot.").arg(game_ + 1) : tr("No run."));
    return;
  }
  const train::TreeSnapshot& s = l->snapshot();
  if (!board && s.nodes.empty() && s.treeCapacity == 0) {  // what a run without a search publishes
    status_->setText(tr("This run's algorithm has no search tree (PPO): the Metrics and Episode docks show its training."));
    path_->hide();
    return;
  }
  QStringList pv;
  for (int node : l->principalVariation())
    if (node != 0) pv << view_->actionName(l->node(node).action);
  const QString rootVisits = grouped(s.nodes.empty() ? 0 : s.nodes[0].visits);
  const QString tree = board ? tr("Board position after %n move(s), checkpoint of iteration %1", nullptr, int(s.rootMoves.size())).arg(s.iteration)
                             : tr("Self-play game %1, iteration %2").arg(s.game + 1).arg(s.iteration);
  // The node-link diagram draws only the top levels, so it counts what it draws.
  QString text = view_->mode() == TreeViewMode::NodeLink
                     ? tr("%1 · the top levels: %2 nodes drawn of %3 in the tree · root N %4")
                           .arg(tree, grouped(qint64(l->linkNodes().size())), grouped(s.treeNodes), rootVisits)
                     : tr("%1 · %2 nodes shown of %3 in the tree · root N %4").arg(tree, grouped(view_->drawnNodes()), grouped(s.treeNodes), rootVisits);
  if (!pv.isEmpty()) text += tr(" · principal variation %1").arg(pv.join(QStringLiteral(" › ")));
  status_->setText(text);
}

}  // namespace cas::widgets
