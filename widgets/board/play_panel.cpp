#include "widgets/board/play_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

#include "core/env/perfect_play.hpp"
#include "widgets/board/board_view.hpp"
#include "widgets/board/move_list.hpp"
#include "widgets/runs/run_controller.hpp"

namespace cas::widgets {
namespace {

const QColor kProblemColour(198, 40, 40);
// The statistics table: move, visits, Q, prior and, for the games with a perfect player, its verdict.
constexpr int kColumns = 5, kPerfectColumn = 4;

// What a move leads to for the player making it, against perfect play.
QString verdictWord(int verdict) {
  return verdict > 0 ? PlayPanel::tr("win") : verdict < 0 ? PlayPanel::tr("loss") : PlayPanel::tr("draw");
}

// "4", "3 or 5", "2, 4 or 6": moves by their numbers on the board.
QString listOfMoves(const std::vector<int>& actions) {
  QStringList numbers;
  for (int a : actions) numbers << QString::number(a + 1);
  if (numbers.size() <= 1) return numbers.join(QString());
  const QString last = numbers.takeLast();
  return PlayPanel::tr("%1 or %2").arg(numbers.join(QStringLiteral(", ")), last);
}

QTableWidgetItem* numberItem(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

PlayPanel::PlayPanel(RunController* run, QWidget* parent)
    : QWidget(parent),
      run_(run),
      worker_(new AgentWorker),
      runLabel_(new QLabel),
      currentRunButton_(new QPushButton(tr("Load current run"))),
      openRunButton_(new QPushButton(tr("Open run…"))),
      playButton_(new QRadioButton(tr("Play"))),
      setUpButton_(new QRadioButton(tr("Set up"))),
      simulations_(new QSpinBox),
      modeActions_(new QStackedWidget),
      firstPlayer_(new QComboBox),
      newGameButton_(new QPushButton(tr("New game"))),
      clearButton_(new QPushButton(tr("Clear"))),
      analyseButton_(new QPushButton(tr("Analyse"))),
      undoButton_(new QPushButton(tr("Undo"))),
      board_(new BoardView),
      moveList_(new MoveList),
      status_(new QLabel),
      statisticsCaption_(new QLabel),
      perfectPlay_(new QLabel),
      table_(new QTableWidget(0, kColumns)),
      overlay_(new QCheckBox(tr("Show on board"))) {
  setObjectName(QStringLiteral("playPanel"));
  createControls();
  createLayout();
  connectSignals();

  // The agent, on a thread of its own.
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(worker_, &AgentWorker::runLoaded, this, &PlayPanel::takeLoadedRun);
  connect(worker_, &AgentWorker::runLoadFailed, this, &PlayPanel::reportLoadFailure);
  connect(worker_, &AgentWorker::searchFinished, this, &PlayPanel::takeSearch);
  connect(worker_, &AgentWorker::searchFailed, this, &PlayPanel::reportSearchFailure);
  connect(worker_, &AgentWorker::positionTreeReady, this, &PlayPanel::positionTreeReady);
  connect(worker_, &AgentWorker::positionTreeFailed, this, &PlayPanel::positionTreeFailed);
  thread_.setObjectName(QStringLiteral("play agent"));
  thread_.start();

  clearStatistics();
  showBoard();
}

PlayPanel::~PlayPanel() {
  thread_.quit();
  thread_.wait();
}

// The controls made above: their names, tool tips, ranges and fonts.
void PlayPanel::createControls() {
  runLabel_->setObjectName(QStringLiteral("playRun"));
  runLabel_->setWordWrap(true);
  runLabel_->setTextFormat(Qt::RichText);
  runLabel_->setText(tr("No run is loaded."));
  currentRunButton_->setObjectName(QStringLiteral("loadCurrentRun"));
  currentRunButton_->setToolTip(tr("Loads the newest checkpoint of the run trained in this window."));
  openRunButton_->setObjectName(QStringLiteral("openRun"));
  openRunButton_->setToolTip(tr("Loads the newest checkpoint of a run folder."));
  playButton_->setObjectName(QStringLiteral("playMode"));
  playButton_->setToolTip(tr("Play against the loaded run's agent."));
  setUpButton_->setObjectName(QStringLiteral("setUpMode"));
  setUpButton_->setToolTip(tr("Place stones for both sides, then analyse the position."));
  playButton_->setChecked(true);
  simulations_->setObjectName(QStringLiteral("playSimulations"));
  simulations_->setRange(1, 100000);
  simulations_->setValue(64);
  simulations_->setToolTip(tr("Simulations of the agent's search per move; the run's search.simulations when a run loads."));
  firstPlayer_->setObjectName(QStringLiteral("firstPlayer"));
  firstPlayer_->addItems({tr("You move first"), tr("The agent moves first")});
  newGameButton_->setObjectName(QStringLiteral("newGame"));
  clearButton_->setObjectName(QStringLiteral("clearBoard"));
  analyseButton_->setObjectName(QStringLiteral("analyse"));
  analyseButton_->setToolTip(tr("Searches the position on the board with the loaded run."));
  undoButton_->setObjectName(QStringLiteral("undo"));
  board_->setObjectName(QStringLiteral("boardView"));
  status_->setObjectName(QStringLiteral("playStatus"));
  status_->setWordWrap(true);
  QFont statusFont = status_->font();
  statusFont.setPointSizeF(statusFont.pointSizeF() * 1.1);
  status_->setFont(statusFont);
  statisticsCaption_->setWordWrap(true);
  perfectPlay_->setObjectName(QStringLiteral("perfectPlay"));
  perfectPlay_->setWordWrap(true);
  perfectPlay_->setToolTip(tr("The perfect player solves the position within %1 s: rings mark its best moves on the board, "
                              "a red ring a move that made the result worse.")
                               .arg(AgentWorker::kPerfectPlaySeconds));
  table_->setObjectName(QStringLiteral("searchStatistics"));
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  overlay_->setObjectName(QStringLiteral("showSearchOnBoard"));
  overlay_->setChecked(true);
  overlay_->setToolTip(tr("Draws the search's visit share, Q and prior on each move of the board."));
}

// The run and mode rows over the actions, the board beside the move list over the search's
// statistics.
void PlayPanel::createLayout() {
  auto* runRow = new QHBoxLayout;
  runRow->addWidget(currentRunButton_);
  runRow->addWidget(openRunButton_);
  runRow->addStretch(1);

  auto* modeRow = new QHBoxLayout;
  modeRow->addWidget(playButton_);
  modeRow->addWidget(setUpButton_);
  modeRow->addStretch(1);
  auto* simulationsLabel = new QLabel(tr("Simulations:"));
  simulationsLabel->setBuddy(simulations_);
  modeRow->addWidget(simulationsLabel);
  modeRow->addWidget(simulations_);

  auto* playActions = new QWidget;
  auto* playLayout = new QHBoxLayout(playActions);
  playLayout->setContentsMargins(0, 0, 0, 0);
  playLayout->addWidget(firstPlayer_);
  playLayout->addWidget(newGameButton_);
  playLayout->addStretch(1);
  auto* setUpActions = new QWidget;
  auto* setUpLayout = new QHBoxLayout(setUpActions);
  setUpLayout->setContentsMargins(0, 0, 0, 0);
  setUpLayout->addWidget(analyseButton_);
  setUpLayout->addWidget(clearButton_);
  setUpLayout->addWidget(overlay_);
  setUpLayout->addStretch(1);
  modeActions_->addWidget(playActions);
  modeActions_->addWidget(setUpActions);
  modeActions_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
  auto* actionRow = new QHBoxLayout;
  actionRow->addWidget(modeActions_, 1);
  actionRow->addWidget(undoButton_);

  auto* statistics = new QWidget;
  auto* statisticsLayout = new QVBoxLayout(statistics);
  statisticsLayout->setContentsMargins(0, 0, 0, 0);
  statisticsLayout->addWidget(statisticsCaption_);
  statisticsLayout->addWidget(perfectPlay_);
  statisticsLayout->addWidget(table_, 1);
  auto* boardRow = new QSplitter(Qt::Horizontal);
  boardRow->setChildrenCollapsible(false);
  boardRow->addWidget(board_);
  boardRow->addWidget(moveList_);
  boardRow->setStretchFactor(0, 3);
  boardRow->setStretchFactor(1, 1);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->setChildrenCollapsible(false);
  splitter->addWidget(boardRow);
  splitter->addWidget(statistics);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(runLabel_);
  layout->addLayout(runRow);
  layout->addLayout(modeRow);
  layout->addLayout(actionRow);
  layout->addWidget(status_);
  layout->addWidget(splitter, 1);
}

// The controls, the board and the move list; and the run trained in this window.
void PlayPanel::connectSignals() {
  connect(currentRunButton_, &QPushButton::clicked, this, &PlayPanel::loadCurrentRun);
  connect(openRunButton_, &QPushButton::clicked, this, &PlayPanel::chooseRun);
  connect(playButton_, &QRadioButton::toggled, this, [this](bool on) {
    if (on) setMode(Mode::Play);
  });
  connect(setUpButton_, &QRadioButton::toggled, this, [this](bool on) {
    if (on) setMode(Mode::SetUp);
  });
  connect(newGameButton_, &QPushButton::clicked, this, &PlayPanel::newGame);
  connect(clearButton_, &QPushButton::clicked, this, &PlayPanel::clearBoard);
  connect(analyseButton_, &QPushButton::clicked, this, &PlayPanel::analysePosition);
  connect(undoButton_, &QPushButton::clicked, this, &PlayPanel::undoMove);
  connect(overlay_, &QCheckBox::toggled, board_, &BoardView::setStatisticsVisible);
  connect(board_, &BoardView::actionClicked, this, &PlayPanel::playAction);
  connect(board_, &BoardView::positionShown, this, &PlayPanel::adoptShownPosition);
  connect(moveList_, &MoveList::positionRequested, this, &PlayPanel::showMovesUpTo);

  connect(run_, &RunController::runStarted, this, [this] {
    updateStatus();
    updateControls();
  });
  // A run trained here is loaded once it stops, unless another agent is in use: the way from
  // Train to a game needs no step beyond opening the Board.
  connect(run_, &RunController::runFinished, this, [this] {
    // A run without a search (PPO, a single-agent run) has no game for the Board: the Episode dock plays it.
    if (run_->searchDevice().isEmpty()) updateControls();
    else if (!busy_ && (!agent_ || (agent_->runFolder == run_->runFolder() && moves_.empty()))) loadCurrentRun();
    else updateControls();
  });
}

QString PlayPanel::statusText() const { return status_->text(); }
QString PlayPanel::runText() const { return runLabel_->text(); }
QString PlayPanel::perfectPlayText() const { return perfectPlay_->text(); }

void PlayPanel::loadRun(const QString& folder) {
  if (busy_ || folder.isEmpty()) return;
  setBusy(true, tr("Loading %1…").arg(QDir::toNativeSeparators(folder)));
  QMetaObject::invokeMethod(worker_, [worker = worker_, folder] { worker->loadRun(folder); }, Qt::QueuedConnection);
}

void PlayPanel::loadCurrentRun() { loadRun(run_->runFolder()); }

void PlayPanel::chooseRun() {
  // Runs trained in the studio live under the application's data folder (MainWindow::startTraining).
  QString start = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/runs");
  if (!run_->runFolder().isEmpty()) start = QFileInfo(run_->runFolder()).absolutePath();
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Run"), start);
  if (!folder.isEmpty()) loadRun(folder);
}

void PlayPanel::setMode(Mode mode) {
  if (busy_ || mode == mode_) return;
  if (mode == Mode::Play && board_->position()) humanSide_ = board_->position()->toMove;  // the game goes on from the set-up position
  applyMode(mode);
}

void PlayPanel::applyMode(Mode mode) {
  mode_ = mode;
  {
    const QSignalBlocker blockPlay(playButton_), blockSetUp(setUpButton_);
    playButton_->setChecked(mode == Mode::Play);
    setUpButton_->setChecked(mode == Mode::SetUp);
  }
  modeActions_->setCurrentIndex(mode == Mode::Play ? 0 : 1);
  clearStatistics();  // a game's search and a set-up analysis do not carry over
  updateStatus();
  updateControls();
}

void PlayPanel::newGame() {
  if (busy_ || !agent_) return;
  setMode(Mode::Play);
  environment_ = agent_->environment;
  moves_.clear();
  humanSide_ = firstPlayer_->currentIndex() == 0 ? 0 : 1;
  clearStatistics();
  showBoard();
  if (!humanToMove()) startSearch();
}

void PlayPanel::playAction(int action) {
  if (busy_ || browsing() || !board_->position()) return;
  const env::BoardPosition& position = *board_->position();
  if (action < 0 || action >= position.actionCount() || !position.legal[size_t(action)]) return;
  if (mode_ == Mode::Play && (!agentPlaysThisGame() || !humanToMove())) return;
  moves_.push_back(action);
  // A game keeps the agent's last search in view (the game's final one stays); a set-up
  // position's analysis is stale once a stone is added.
  if (mode_ == Mode::SetUp) clearStatistics();
  showBoard();
  if (mode_ == Mode::Play && board_->position() && !board_->position()->over) startSearch();
}

int PlayPanel::undoTarget() const {
  if (moves_.empty()) return -1;
  if (mode_ == Mode::SetUp) return int(moves_.size()) - 1;
  // In a game: back to the latest earlier position with the human to move.
  for (int n = int(moves_.size()) - 1; n >= 0; --n)
    if (n % 2 == humanSide_) return n;
  return -1;
}

void PlayPanel::undoMove() {
  const int target = undoTarget();
  if (busy_ || browsing() || target < 0) return;
  moves_.resize(size_t(target));
  clearStatistics();
  showBoard();
}

void PlayPanel::clearBoard() {
  if (busy_) return;
  moves_.clear();
  clearStatistics();
  showBoard();
}

void PlayPanel::analysePosition() {
  if (busy_ || mode_ != Mode::SetUp || !agentPlaysThisGame() || !board_->position() || board_->position()->over) return;
  startSearch();
}

void PlayPanel::startSearch() {
  const int simulations = simulations_->value();
  setBusy(true, (mode_ == Mode::Play ? tr("The agent is thinking (simulations: %1)…") : tr("Analysing (simulations: %1)…")).arg(simulations));
  QMetaObject::invokeMethod(
      worker_, [worker = worker_, moves = moves_, simulations] { worker->searchPosition(moves, simulations); }, Qt::QueuedConnection);
}

void PlayPanel::requestPositionTree(const QString& environment, const std::vector<int>& moves, bool step, int maxNodes) {
  if (!agent_) {
    emit positionTreeFailed(tr("Load a run on the Board to search its position."));
    return;
  }
  if (agent_->environment != environment) {
    emit positionTreeFailed(tr("The run loaded on the Board plays %1, not %2.").arg(agent_->environment, environment));
    return;
  }
  QMetaObject::invokeMethod(
      worker_, [worker = worker_, moves, step, maxNodes] { worker->growPositionTree(moves, step, maxNodes); }, Qt::QueuedConnection);
}

void PlayPanel::takeLoadedRun(const AgentSummary& summary) {
  agent_ = summary;
  simulations_->setValue(summary.simulations);
  QString text = tr("<b>%1</b><br>Checkpoint of iteration %2").arg(QFileInfo(summary.runFolder).fileName().toHtmlEscaped()).arg(summary.iteration);
  if (!summary.skipped.isEmpty())
    text += QStringLiteral("<br><span style=\"color:%1\">%2</span>")
                .arg(kProblemColour.name(), tr("Skipped: %1").arg(summary.skipped.join(QStringLiteral("; ")).toHtmlEscaped()));
  for (const QString& notice : summary.notices)
    text += QStringLiteral("<br><span style=\"color:%1\">%2</span>").arg(kProblemColour.name(), notice.toHtmlEscaped());
  runLabel_->setText(text);
  runLabel_->setToolTip(tr("%1\nProject %2 (%3), checkpoint %4")
                            .arg(QDir::toNativeSeparators(summary.runFolder), summary.projectName, summary.environment, summary.checkpointFile));
  setBusy(false);
  // A set-up position of the same game stays to be analysed; anything else makes way for a game.
  if (mode_ == Mode::Play || environment_ != summary.environment) newGame();
  else updateStatus();
  emit agentLoaded(summary.runFolder);
}

void PlayPanel::reportLoadFailure(const QString& folder, const QString& reason) {
  setBusy(false);
  setStatus(tr("%1 could not be loaded: %2").arg(QDir::toNativeSeparators(folder), reason), true);
  emit runLoadFailed(folder, reason);
}

void PlayPanel::takeSearch(const AgentSearch& search) {
  setBusy(false);
  if (search.moves != moves_ || !board_->position()) {  // the board moved on meanwhile (a position shown from the tree)
    updateStatus();
    return;
  }
  const env::BoardPosition& position = *board_->position();
  // The searched position's value for the side to move is the opposite of the last move's value
  // for the player who made it.
  if (!moves_.empty()) values_.back() = -search.statistics.value;
  if (mode_ == Mode::SetUp) {
    displayShown();  // the move list takes the value
    showStatistics(search, false);
    board_->showSearchStatistics(search.statistics);
    showPerfectPlay(search, false);
    updateStatus();
    return;
  }
  const int move = search.statistics.chosen;
  if (move < 0 || move >= position.actionCount() || !position.legal[size_t(move)]) {
    setStatus(tr("The agent's search chose no legal move."), true);
    return;
  }
  showStatistics(search, true);
  moves_.push_back(move);
  values_.push_back(search.statistics.q[size_t(move)]);
  showBoard();
  showPerfectPlay(search, true);
}

void PlayPanel::showPerfectPlay(const AgentSearch& search, bool forAgentMove) {
  const auto& verdicts = search.perfectPlay;
  if (verdicts.empty()) return;  // the game has no perfect player
  const int move = search.statistics.chosen;
  const std::vector<int> perfect = env::perfectMoves(verdicts);
  const std::optional<bool> mistake = forAgentMove ? env::isMistake(verdicts, move) : std::nullopt;
  board_->showPerfectPlay({search.moves, perfect, mistake.value_or(false) ? move : -1});
  // The best verdict proven: that of the perfect moves, or (a mistake shown by a solved better
  // move while others are unsolved) the best among the solved ones.
  int best = -1;
  bool anySolved = false;
  for (const auto& v : verdicts)
    if (v && v->solved) {
      best = anySolved ? std::max(best, v->verdict()) : v->verdict();
      anySolved = true;
    }
  const QString perfectText = perfect.empty() ? QString() : tr("Perfect play: %1 (%2).").arg(listOfMoves(perfect), verdictWord(best));
  const QString unsolved = tr("The perfect player could not solve every move within %1 s.").arg(AgentWorker::kPerfectPlaySeconds);
  QString text;
  if (!forAgentMove) {
    text = perfect.empty() ? unsolved : perfectText;
  } else if (!mistake) {
    text = tr("The agent's move %1 is not judged: %2").arg(move + 1).arg(unsolved);
  } else if (*mistake) {
    text = QStringLiteral("<span style=\"color:%1\"><b>%2</b></span> %3")
               .arg(kProblemColour.name(), tr("Mistake:"),
                    tr("the agent's move %1 turns a %2 into a %3.").arg(move + 1).arg(verdictWord(best), verdictWord(verdicts[size_t(move)]->verdict())));
    if (!perfectText.isEmpty()) text += QLatin1Char(' ') + perfectText;
  } else {
    const int kept = verdicts[size_t(move)]->verdict();
    text = kept < 0 ? tr("The agent's move %1 loses, as every move does against perfect play.").arg(move + 1)
                    : tr("The agent's move %1 is perfect: it keeps the %2.").arg(move + 1).arg(verdictWord(kept));
  }
  perfectPlay_->setText(text);
  perfectPlay_->setVisible(true);
}

void PlayPanel::reportSearchFailure(const QString& reason) {
  setBusy(false);
  setStatus(tr("The search failed: %1").arg(reason), true);
}

void PlayPanel::adoptShownPosition(const QString& environment, const std::vector<int>& moves) {
  // The panel's own position, or one it steps through.
  if (environment == environment_ && moves == std::vector<int>(moves_.begin(), moves_.begin() + shown_)) return;
  environment_ = environment;
  moves_ = moves;
  values_.assign(moves_.size(), std::nullopt);  // no search of this agent judged these moves
  shown_ = int(moves_.size());
  moveList_->setGame(environment_, moves_, values_, board_->position() && board_->position()->over, shown_);
  applyMode(Mode::SetUp);  // even while a search runs: its result, for the old position, is then dropped
}

void PlayPanel::showBoard() {
  values_.resize(moves_.size());
  shown_ = int(moves_.size());
  board_->showPosition(environment_, moves_);
  // A finished game's last move is worth its result, whatever the searches estimated.
  if (board_->position() && board_->position()->over && !moves_.empty()) {
    const env::BoardPosition& end = *board_->position();
    const int mover = (int(moves_.size()) - 1) % 2;
    values_.back() = end.winner < 0 ? 0.0f : end.winner == mover ? 1.0f : -1.0f;
  }
  displayShown();
}

void PlayPanel::showMovesUpTo(int count) {
  if (busy_) return;  // a search's result belongs on the game's last position
  shown_ = std::clamp(count, 0, int(moves_.size()));
  board_->showPosition(environment_, std::vector<int>(moves_.begin(), moves_.begin() + shown_));
  displayShown();
}

void PlayPanel::displayShown() {
  const bool over = shown_ == int(moves_.size()) && board_->position() && board_->position()->over;
  moveList_->setGame(environment_, moves_, values_, over, shown_);
  updateStatus();
  updateControls();
}

void PlayPanel::showStatistics(const AgentSearch& search, bool forAgentMove) {
  const search::RootStats& r = search.statistics;
  const QString move = QString::number(r.chosen + 1);
  const QString value = signedValue(r.value);
  if (forAgentMove)
    statisticsCaption_->setText(tr("The agent's search for move %1: it played %2, value %3.").arg(search.moves.size() + 1).arg(move, value));
  else
    statisticsCaption_->setText(
        tr("Search with %1 to move: best move %2, value %3.").arg(BoardView::playerName(environment_, board_->position()->toMove), move, value));
  std::vector<int> actions;
  for (int a = 0; a < int(r.visits.size()); ++a)
    if (r.visits[size_t(a)] > 0 || r.prior[size_t(a)] > 0) actions.push_back(a);
  std::stable_sort(actions.begin(), actions.end(), [&](int a, int b) { return r.visits[size_t(a)] > r.visits[size_t(b)]; });
  table_->setRowCount(int(actions.size()));
  for (int row = 0; row < int(actions.size()); ++row) {
    const auto a = size_t(actions[size_t(row)]);
    QString perfect;
    if (a < search.perfectPlay.size() && search.perfectPlay[a])
      perfect = search.perfectPlay[a]->solved ? verdictWord(search.perfectPlay[a]->verdict()) : tr("unsolved");
    QTableWidgetItem* items[] = {numberItem(QString::number(a + 1)), numberItem(QString::number(r.visits[a])),
                                 numberItem(r.visits[a] > 0 ? signedValue(r.q[a]) : tr("–")),
                                 numberItem(QString::number(double(r.prior[a]), 'f', 3)), numberItem(perfect)};
    for (int column = 0; column < kColumns; ++column) {
      if (int(a) == r.chosen) {
        QFont bold = items[column]->font();
        bold.setBold(true);
        items[column]->setFont(bold);
      }
      table_->setItem(row, column, items[column]);
    }
  }
}

void PlayPanel::clearStatistics() {
  table_->setRowCount(0);
  table_->setHorizontalHeaderLabels({BoardView::moveNoun(environment_), tr("Visits"), tr("Q"), tr("Prior"), tr("Perfect play")});
  table_->horizontalHeaderItem(2)->setToolTip(tr("Mean value of the move for the player making it, from -1 (lost) to +1 (won)."));
  table_->horizontalHeaderItem(3)->setToolTip(tr("The network's probability for the move before the search."));
  table_->horizontalHeaderItem(kPerfectColumn)->setToolTip(tr("What the move leads to for the player making it, against perfect play."));
  const env::EnvironmentInfo* game = env::findEnvironment(environment_.toStdString());
  table_->setColumnHidden(kPerfectColumn, !game || !game->perfectPlayer);
  perfectPlay_->clear();
  perfectPlay_->setVisible(false);
  board_->clearPerfectPlay();
  statisticsCaption_->setText(mode_ == Mode::Play ? tr("The agent's search for its move appears here.")
                                                  : tr("Analyse shows the search of the position here."));
  board_->clearSearchStatistics();
}

void PlayPanel::setBusy(bool busy, const QString& status) {
  busy_ = busy;
  if (!status.isEmpty()) setStatus(status);
  updateControls();
}

void PlayPanel::setStatus(const QString& text, bool problem) {
  status_->setText(text);
  QPalette p = status_->palette();
  p.setColor(QPalette::WindowText, problem ? kProblemColour : palette().color(QPalette::WindowText));
  status_->setPalette(p);
}

bool PlayPanel::agentPlaysThisGame() const { return agent_ && agent_->environment == environment_; }

bool PlayPanel::humanToMove() const { return board_->position() && board_->position()->toMove == humanSide_; }

void PlayPanel::updateStatus() {
  if (busy_) return;  // the busy sentence stays until the work is done
  if (!board_->position()) return setStatus(tr("The board cannot show this position."), true);
  if (browsing())
    return setStatus(tr("Move %1 of %2 is shown. Step forward, or pick the last move, to go on from the game's position.")
                         .arg(shown_)
                         .arg(moves_.size()));
  const env::BoardPosition& position = *board_->position();
  const QString mover = BoardView::playerName(environment_, position.toMove);
  const QString clickTarget = position.placesOnCells() ? tr("Click a free cell.") : tr("Click a column.");
  if (mode_ == Mode::SetUp) {
    QString text = position.over ? (position.winner < 0 ? tr("Draw.") : tr("%1 wins.").arg(BoardView::playerName(environment_, position.winner)))
                                 : tr("Set up a position: each click places a stone for the side to move (%1). Analyse searches it.").arg(mover);
    if (agent_ && !agentPlaysThisGame())
      text += QLatin1Char(' ') + tr("The loaded run plays %1, so it cannot analyse this %2 position.").arg(agent_->environment, environment_);
    return setStatus(text);
  }
  if (!agent_)
    return setStatus(run_->running() ? tr("Training is in progress: Load current run plays its newest checkpoint.")
                                     : tr("Train the project (Run ▸ Train) and play its agent here, or open a run folder."));
  if (!agentPlaysThisGame()) return setStatus(tr("The loaded run plays %1; New game starts one.").arg(agent_->environment));
  if (position.over) {
    const QString result = position.winner < 0 ? tr("Draw.") : position.winner == humanSide_ ? tr("You win!") : tr("The agent wins.");
    return setStatus(result + QLatin1Char(' ') + tr("New game starts another."));
  }
  if (humanToMove()) return setStatus(tr("Your move: you play %1. %2").arg(BoardView::playerName(environment_, humanSide_), clickTarget));
  setStatus(tr("The agent is to move."));
}

void PlayPanel::updateControls() {
  const bool idle = !busy_;
  moveList_->setEnabled(idle);
  // An earlier position of the game is for looking at: moves, analysis and undo wait for the last one.
  const bool over = !board_->position() || board_->position()->over || browsing();
  currentRunButton_->setEnabled(idle && !run_->runFolder().isEmpty());
  openRunButton_->setEnabled(idle);
  playButton_->setEnabled(idle);
  setUpButton_->setEnabled(idle);
  simulations_->setEnabled(idle && agent_.has_value());
  firstPlayer_->setEnabled(idle && agent_.has_value());
  newGameButton_->setEnabled(idle && agent_.has_value());
  clearButton_->setEnabled(idle && !moves_.empty());
  analyseButton_->setEnabled(idle && agentPlaysThisGame() && !over);
  undoButton_->setEnabled(idle && !browsing() && undoTarget() >= 0);
  board_->setEnabled(idle && !over && (mode_ == Mode::SetUp || (agentPlaysThisGame() && humanToMove())));
}

}  // namespace cas::widgets
