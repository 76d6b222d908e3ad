#pragma once
// The Board dock's move list: the game's moves in order ("3. X 5"), each with the agent's value of
// the position after it for the player who made it (from its searches; a finished game's last move
// shows the result), and buttons to step back and forth through the game. Picking a row, a button
// or an arrow key asks the owner to show the position after that many moves
// (positionRequested); the list never changes the game itself.
// Thread-safety: GUI thread only.
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

class QTableWidget;
class QToolButton;

namespace cas::widgets {

class MoveList : public QWidget {
  Q_OBJECT
 public:
  explicit MoveList(QWidget* parent = nullptr);

  // `values[i]`: the value after move i for the player who made it (nullopt: no search judged it);
  // `over`: the game is finished, and the last value is its result (+1 won, 0 draw, -1 lost).
  // `shown`: how many moves the board shows.
  void setGame(const QString& environment, const std::vector<int>& moves, const std::vector<std::optional<float>>& values, bool over,
               int shown);
  int shown() const { return shown_; }
  int moveCount() const { return moveCount_; }
  QTableWidget* table() const { return table_; }

 public slots:
  void showStart();
  void stepBack();
  void stepForward();
  void showEnd();

 signals:
  void positionRequested(int moveCount);  // the user asked for the position after that many moves

 private:
  void request(int moveCount);
  void updateButtons();

  QTableWidget* table_;
  QToolButton *startButton_, *backButton_, *forwardButton_, *endButton_;
  int shown_ = 0, moveCount_ = 0;
};

}  // namespace cas::widgets
