#pragma once
// A tic-tac-toe or Connect Four board painted with QPainter, scaled to the widget: the position
// reached by a list of moves from the start, the last move and the winning line marked, a ghost
// stone where a click would play, and optionally the search's statistics (visit share, Q, prior)
// drawn on each legal move. Clicking a legal cell (tic-tac-toe) or column (Connect Four) emits
// actionClicked; the view itself never changes the position, its owner does.
// For the games with a perfect player the owner may add its judgement (PerfectPlayMarks): rings
// on the moves proven best and a red ring on a move that made the verdict worse, a teaching aid.
// Thread-safety: GUI thread only.
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "core/env/board_position.hpp"
#include "core/search/mcts.hpp"

namespace cas::widgets {

// A value from a player's point of view with its sign, as the views print Q: "+0.31", "−0.12".
QString signedValue(float value);

// The perfect player's judgement of a position, as the board marks it.
struct PerfectPlayMarks {
  std::vector<int> moves;    // the position judged (actions from the start)
  std::vector<int> perfect;  // its moves proven best
  int mistake = -1;          // a move from it that made the verdict worse; -1 none
};

class BoardView : public QWidget {
  Q_OBJECT
 public:
  explicit BoardView(QWidget* parent = nullptr);

  QString environment() const { return environment_; }
  const std::vector<int>& moves() const { return moves_; }
  // The position on the board; nullopt when the last showPosition could not be replayed (the
  // view then shows why).
  const std::optional<env::BoardPosition>& position() const { return position_; }
  bool hasSearchStatistics() const { return statistics_.has_value(); }
  bool statisticsVisible() const { return statisticsVisible_; }
  const std::optional<PerfectPlayMarks>& perfectPlay() const { return perfectPlay_; }

  // The point to click to play `action`: the centre of the cell its stone lands on; a null
  // QPoint when the action is not legal.
  QPoint actionCentre(int action) const;
  // The legal action a click at `point` plays; -1 when none.
  int actionAt(const QPoint& point) const;

  // How the board names a player (0 first, 1 second): "X" and "O", or "red" and "yellow".
  static QString playerName(const QString& environment, int player);
  // What a move is called in the game: "cell" or "column", capitalised for headers.
  static QString moveNoun(const QString& environment);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 public slots:
  // Shows the position after `moves` (actions, 0-based) from the start of `environment`'s game.
  // Search statistics stay only if the position is the one they were shown for.
  void showPosition(const QString& environment, const std::vector<int>& moves);
  // Statistics of a search from the position on the board (the root's per-action visits, Q and
  // prior); drawn on the legal moves until the position changes.
  void showSearchStatistics(const cas::search::RootStats& statistics);
  void clearSearchStatistics();
  void setStatisticsVisible(bool visible);
  // Marks drawn while the board shows the judged position or the one a move after it (the move
  // judged); dropped when the board moves elsewhere.
  void showPerfectPlay(const cas::widgets::PerfectPlayMarks& marks);
  void clearPerfectPlay();

 signals:
  // After showPosition displayed a position (not when it could not be replayed).
  void positionShown(const QString& environment, const std::vector<int>& moves);
  void actionClicked(int action);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  // The board's rectangle inside the widget and the side of one cell, for the current size.
  struct Layout {
    QRectF board;
    double cell = 0;
  };
  Layout layout() const;
  QRectF cellRect(const Layout& l, int cell) const;
  bool dropsInColumns() const { return position_ && !position_->placesOnCells(); }
  void setHoveredAction(int action);

  void paintTicTacToe(QPainter& p, const Layout& l) const;
  void paintConnectFour(QPainter& p, const Layout& l) const;
  void paintStone(QPainter& p, const QRectF& cell, int player, double opacity) const;
  void paintStatistics(QPainter& p, const Layout& l) const;
  void paintPerfectPlay(QPainter& p, const Layout& l) const;
  bool perfectPlayFits() const;  // the marks are for the position shown or the one before it

  QString environment_;
  std::vector<int> moves_;
  std::optional<env::BoardPosition> position_;
  QString problem_;  // why position_ is empty
  std::optional<search::RootStats> statistics_;
  bool statisticsVisible_ = true;
  std::optional<PerfectPlayMarks> perfectPlay_;
  std::vector<int> perfectCells_;  // where the perfect moves land in the judged position
  int mistakeCell_ = -1;
  int hoveredAction_ = -1;
  int pressedAction_ = -1;
};

}  // namespace cas::widgets
