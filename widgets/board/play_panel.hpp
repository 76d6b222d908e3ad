#pragma once
// The Board dock: play against a trained run, or set up a position and analyse it.
//   Run      the run trained in this window ("Load current run", and loaded by itself when a
//            training run stops while nothing is loaded) or any run folder ("Open run…"); its
//            newest valid checkpoint is loaded through core.
//   Play     New game with the human or the agent first; a click on the board moves, and the
//            agent answers with its search (the run's simulations, editable). The table shows
//            the agent's search for its move (move, visits, Q, prior); the result ends the game.
//   Set up   clicks place stones in turn; Analyse searches the position and shows the
//            statistics in the table and on the board. Switching back to Play continues the
//            game from there, with the human playing the side to move.
// The move list beside the board holds the game's moves with the agent's value after each (from
// its searches: the value of its own moves, and of the human's from its search for the reply) and
// steps back and forth through them; while it shows an earlier position the board takes no moves.
// Positions shown on the board by others (the search-tree view calls BoardView::showPosition)
// are taken over in Set up mode, ready to analyse.
// For the games with a perfect player, each search comes with its verdicts: the table's last
// column says what each move leads to (win, draw, loss), the board rings the perfect moves, and
// an agent's move that made the verdict worse is marked as a mistake, in words below the table
// and on its stone.
// The Search tree dock's teaching mode can follow the Board: the agent grows the search tree of
// a position the Board shows, a simulation at a time (requestPositionTree).
// Loading and searching run on an AgentWorker on its own QThread; input is off meanwhile.
// Thread-safety: GUI thread only (the worker's thread is private to the panel).
#include <QString>
#include <QThread>
#include <QWidget>

#include <optional>
#include <vector>

#include "widgets/board/agent_worker.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QStackedWidget;
class QTableWidget;

namespace cas::widgets {

class BoardView;
class MoveList;
class RunController;

class PlayPanel : public QWidget {
  Q_OBJECT
 public:
  enum class Mode { Play, SetUp };

  // `run` is the studio's training run, whose folder "Load current run" loads.
  explicit PlayPanel(RunController* run, QWidget* parent = nullptr);
  ~PlayPanel() override;  // waits for a search in progress, then stops the worker's thread

  BoardView* boardView() const { return board_; }
  MoveList* moveList() const { return moveList_; }
  // The agent's value after each move of moves(), for the player who made it (see MoveList).
  const std::vector<std::optional<float>>& moveValues() const { return values_; }
  int shownMoves() const { return shown_; }  // how many of moves() the board shows
  QTableWidget* statisticsTable() const { return table_; }
  QString perfectPlayText() const;
  Mode mode() const { return mode_; }
  const std::vector<int>& moves() const { return moves_; }
  bool busy() const { return busy_; }
  std::optional<AgentSummary> agent() const { return agent_; }
  QString statusText() const;
  QString runText() const;

 public slots:
  void loadRun(const QString& folder);
  void loadCurrentRun();
  void chooseRun();
  void setMode(cas::widgets::PlayPanel::Mode mode);
  void newGame();
  void playAction(int action);
  void undoMove();
  void clearBoard();
  void analysePosition();
  void showMovesUpTo(int count);  // shows the position after `count` moves of the game
  // The loaded agent's search tree of the position after `moves` of `environment`, grown by one
  // simulation with `step` (AgentWorker::growPositionTree); answered by positionTreeReady, or by
  // positionTreeFailed when no agent of that game is loaded or the position has no search.
  void requestPositionTree(const QString& environment, const std::vector<int>& moves, bool step, int maxNodes);

 signals:
  void agentLoaded(const QString& runFolder);
  void runLoadFailed(const QString& runFolder, const QString& reason);
  void positionTreeReady(const cas::widgets::PositionTree& tree);
  void positionTreeFailed(const QString& reason);

 private slots:
  void takeLoadedRun(const cas::widgets::AgentSummary& summary);
  void reportLoadFailure(const QString& folder, const QString& reason);
  void takeSearch(const cas::widgets::AgentSearch& search);
  void reportSearchFailure(const QString& reason);
  void adoptShownPosition(const QString& environment, const std::vector<int>& moves);

 private:
  void createControls();
  void createLayout();
  void connectSignals();
  void applyMode(Mode mode);
  void startSearch();
  void showBoard();     // after moves_ changed: shows its last position
  void displayShown();  // the board and the move list at shown_
  bool browsing() const { return shown_ < int(moves_.size()); }
  void showStatistics(const AgentSearch& search, bool forAgentMove);
  void showPerfectPlay(const AgentSearch& search, bool forAgentMove);
  void clearStatistics();
  void setBusy(bool busy, const QString& status = {});
  void setStatus(const QString& text, bool problem = false);
  void updateStatus();
  void updateControls();
  bool agentPlaysThisGame() const;
  bool humanToMove() const;
  int undoTarget() const;  // the number of moves Undo goes back to; -1 when it cannot

  RunController* run_;
  QThread thread_;
  AgentWorker* worker_;
  std::optional<AgentSummary> agent_;
  QString environment_ = QStringLiteral("tictactoe");
  std::vector<int> moves_;
  std::vector<std::optional<float>> values_;  // parallel to moves_
  int shown_ = 0;
  Mode mode_ = Mode::Play;
  int humanSide_ = 0;
  bool busy_ = false;

  QLabel* runLabel_;
  QPushButton* currentRunButton_;
  QPushButton* openRunButton_;
  QRadioButton* playButton_;
  QRadioButton* setUpButton_;
  QSpinBox* simulations_;
  QStackedWidget* modeActions_;
  QComboBox* firstPlayer_;
  QPushButton* newGameButton_;
  QPushButton* clearButton_;
  QPushButton* analyseButton_;
  QPushButton* undoButton_;
  BoardView* board_;
  MoveList* moveList_;
  QLabel* status_;
  QLabel* statisticsCaption_;
  QLabel* perfectPlay_;
  QTableWidget* table_;
  QCheckBox* overlay_;
};

}  // namespace cas::widgets
