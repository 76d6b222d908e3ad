#include "widgets/board/board_view.hpp"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QRadialGradient>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cas::widgets {
namespace {

constexpr double kMargin = 8;
constexpr double kColumnLabelRows = 0.42;  // Connect Four: the column numbers under the board, in cells

// Stone colours: tic-tac-toe X and O, Connect Four red and yellow.
const QColor kCross(37, 99, 235);
const QColor kNought(224, 86, 43);
const QColor kRed(229, 57, 53);
const QColor kYellow(251, 192, 45);
const QColor kConnectFourBoard(30, 86, 200);
const QColor kSearchHeat(22, 163, 74);
const QColor kPerfectMove(5, 150, 105);
const QColor kMistake(220, 38, 38);

// The board facts of a game from the catalogue; null for a game that has no board.
const env::BoardGeometry* boardOf(const QString& environment) {
  const env::EnvironmentInfo* e = env::findEnvironment(environment.toStdString());
  return e && e->board ? &*e->board : nullptr;
}

QColor withAlpha(QColor c, int alpha) {
  c.setAlpha(alpha);
  return c;
}

// The board is drawn in the active colours even while input is off, so that it does not flash
// grey each time the agent thinks.
QPalette activeColours(const QWidget& widget) {
  QPalette p = widget.palette();
  p.setCurrentColorGroup(QPalette::Active);
  return p;
}

QFont pixelFont(const QFont& base, double pixels, bool bold = false) {
  QFont f = base;
  f.setPixelSize(std::max(1, int(pixels)));
  f.setBold(bold);
  return f;
}

}  // namespace

QString signedValue(float value) {
  const QString digits = QString::number(std::abs(double(value)), 'f', 2);
  if (digits == QLatin1String("0.00")) return digits;
  return (value < 0 ? QStringLiteral("−") : QStringLiteral("+")) + digits;
}

BoardView::BoardView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);  // the ghost stone follows the pointer
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  showPosition(QStringLiteral("tictactoe"), {});
}

QString BoardView::playerName(const QString& environment, int player) {
  const env::BoardGeometry* board = boardOf(environment);
  if (board && board->stones == env::BoardGeometry::Stones::Discs) return player == 0 ? tr("red") : tr("yellow");
  return player == 0 ? tr("X") : tr("O");
}

QString BoardView::moveNoun(const QString& environment) {
  const env::BoardGeometry* board = boardOf(environment);
  return board && board->dropsInColumns ? tr("Column") : tr("Cell");
}

QSize BoardView::sizeHint() const { return {300, 260}; }
QSize BoardView::minimumSizeHint() const { return {150, 130}; }

void BoardView::showPosition(const QString& environment, const std::vector<int>& moves) {
  const bool samePosition = position_ && environment == environment_ && moves == moves_;
  environment_ = environment;
  moves_ = moves;
  if (!samePosition) {
    std::string error;
    position_ = env::describePosition(environment.toStdString(), moves, &error);
    problem_ = QString::fromStdString(error);
    statistics_.reset();
  }
  if (perfectPlay_ && !perfectPlayFits()) perfectPlay_.reset();
  hoveredAction_ = pressedAction_ = -1;
  unsetCursor();
  update();
  if (position_) emit positionShown(environment_, moves_);
}

void BoardView::showSearchStatistics(const search::RootStats& statistics) {
  if (!position_ || int(statistics.visits.size()) != position_->actionCount()) return;
  statistics_ = statistics;
  update();
}

void BoardView::clearSearchStatistics() {
  statistics_.reset();
  update();
}

bool BoardView::perfectPlayFits() const {
  if (!perfectPlay_ || !position_) return false;
  const std::vector<int>& judged = perfectPlay_->moves;
  return (moves_.size() == judged.size() || moves_.size() == judged.size() + 1) && std::equal(judged.begin(), judged.end(), moves_.begin());
}

void BoardView::showPerfectPlay(const PerfectPlayMarks& marks) {
  std::string error;
  const auto judged = env::describePosition(environment_.toStdString(), marks.moves, &error);
  if (!judged) return;
  perfectPlay_ = marks;
  if (!perfectPlayFits()) {
    perfectPlay_.reset();
    return;
  }
  perfectCells_.clear();
  for (int action : marks.perfect)
    if (const int cell = judged->landingCell(action); cell >= 0) perfectCells_.push_back(cell);
  mistakeCell_ = judged->landingCell(marks.mistake);
  update();
}

void BoardView::clearPerfectPlay() {
  perfectPlay_.reset();
  update();
}

void BoardView::setStatisticsVisible(bool visible) {
  statisticsVisible_ = visible;
  update();
}

BoardView::Layout BoardView::layout() const {
  Layout l;
  if (!position_) return l;
  const QRectF area = QRectF(rect()).adjusted(kMargin, kMargin, -kMargin, -kMargin);
  const double labelRows = dropsInColumns() ? kColumnLabelRows : 0.0;
  l.cell = std::max(1.0, std::min(area.width() / position_->columns, area.height() / (position_->rows + labelRows)));
  const QSizeF board(l.cell * position_->columns, l.cell * position_->rows);
  const double top = area.top() + (area.height() - l.cell * (position_->rows + labelRows)) / 2;
  l.board = QRectF(QPointF(area.left() + (area.width() - board.width()) / 2, top), board);
  return l;
}

QRectF BoardView::cellRect(const Layout& l, int cell) const {
  const int row = cell / position_->columns, column = cell % position_->columns;
  return {l.board.left() + column * l.cell, l.board.top() + row * l.cell, l.cell, l.cell};
}

QPoint BoardView::actionCentre(int action) const {
  if (!position_) return {};
  const int cell = position_->landingCell(action);
  return cell < 0 ? QPoint() : cellRect(layout(), cell).center().toPoint();
}

int BoardView::actionAt(const QPoint& point) const {
  if (!position_) return -1;
  const Layout l = layout();
  // A dropping game takes a click anywhere in the column, the numbers under it included.
  const QRectF target = dropsInColumns() ? l.board.adjusted(0, 0, 0, l.cell * kColumnLabelRows) : l.board;
  if (!target.contains(point)) return -1;
  const int column = std::clamp(int((point.x() - l.board.left()) / l.cell), 0, position_->columns - 1);
  const int row = std::clamp(int((point.y() - l.board.top()) / l.cell), 0, position_->rows - 1);
  return position_->actionForCell(row * position_->columns + column);
}

void BoardView::setHoveredAction(int action) {
  if (action == hoveredAction_) return;
  hoveredAction_ = action;
  if (action >= 0) setCursor(Qt::PointingHandCursor);
  else unsetCursor();
  update();
}

void BoardView::mouseMoveEvent(QMouseEvent* event) { setHoveredAction(actionAt(event->position().toPoint())); }

void BoardView::mousePressEvent(QMouseEvent* event) {
  pressedAction_ = event->button() == Qt::LeftButton ? actionAt(event->position().toPoint()) : -1;
}

void BoardView::mouseReleaseEvent(QMouseEvent* event) {
  // A click plays where it both started and ended, so a press dragged off a cell cancels.
  const int action = event->button() == Qt::LeftButton ? actionAt(event->position().toPoint()) : -1;
  if (action >= 0 && action == std::exchange(pressedAction_, -1)) emit actionClicked(action);
}

void BoardView::leaveEvent(QEvent* event) {
  setHoveredAction(-1);
  QWidget::leaveEvent(event);
}

void BoardView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::EnabledChange && !isEnabled()) setHoveredAction(-1);  // no ghost while input is off
  QWidget::changeEvent(event);
}

void BoardView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  if (!position_) {
    p.setPen(activeColours(*this).color(QPalette::PlaceholderText));
    p.drawText(rect().adjusted(16, 16, -16, -16), Qt::AlignCenter | Qt::TextWordWrap,
               tr("This position cannot be shown: %1").arg(problem_));
    return;
  }
  const Layout l = layout();
  if (dropsInColumns()) paintConnectFour(p, l);
  else paintTicTacToe(p, l);
  if (statistics_ && statisticsVisible_) paintStatistics(p, l);
  if (perfectPlay_) paintPerfectPlay(p, l);
  if (hoveredAction_ >= 0 && isEnabled()) paintStone(p, cellRect(l, position_->landingCell(hoveredAction_)), position_->toMove, 0.3);
}

void BoardView::paintStone(QPainter& p, const QRectF& cell, int player, double opacity) const {
  p.save();
  p.setOpacity(opacity);
  const QPointF c = cell.center();
  const double s = cell.width();
  if (position_->stones == env::BoardGeometry::Stones::Discs) {
    const QColor base = player == 0 ? kRed : kYellow;
    QRadialGradient shine(c - QPointF(s * 0.12, s * 0.12), s * 0.5);
    shine.setColorAt(0, base.lighter(125));
    shine.setColorAt(1, base.darker(108));
    p.setPen(QPen(base.darker(135), std::max(1.0, s * 0.03)));
    p.setBrush(shine);
    p.drawEllipse(c, s * 0.38, s * 0.38);
  } else {
    const QColor colour = player == 0 ? kCross : kNought;
    p.setPen(QPen(colour, s * 0.11, Qt::SolidLine, Qt::RoundCap));
    p.setBrush(Qt::NoBrush);
    if (player == 0) {
      const double d = s * 0.24;
      p.drawLine(c + QPointF(-d, -d), c + QPointF(d, d));
      p.drawLine(c + QPointF(-d, d), c + QPointF(d, -d));
    } else {
      p.drawEllipse(c, s * 0.25, s * 0.25);
    }
  }
  p.restore();
}

void BoardView::paintTicTacToe(QPainter& p, const Layout& l) const {
  const env::BoardPosition& pos = *position_;
  const QPalette pal = activeColours(*this);
  const double s = l.cell;
  p.setPen(QPen(pal.color(QPalette::Mid), 1));
  p.setBrush(pal.color(QPalette::Base));
  p.drawRoundedRect(l.board.adjusted(-2, -2, 2, 2), s * 0.08, s * 0.08);

  // The last move and the winning line: tinted cells under the stones.
  if (pos.lastCell >= 0 && pos.winningLine.empty())
    p.fillRect(cellRect(l, pos.lastCell).adjusted(s * 0.06, s * 0.06, -s * 0.06, -s * 0.06), withAlpha(pal.color(QPalette::Highlight), 36));
  for (int cell : pos.winningLine) {
    QPainterPath tile;
    tile.addRoundedRect(cellRect(l, cell).adjusted(s * 0.06, s * 0.06, -s * 0.06, -s * 0.06), s * 0.08, s * 0.08);
    p.fillPath(tile, withAlpha(pos.winner == 0 ? kCross : kNought, 48));
  }

  const QColor lineColour = withAlpha(pal.color(QPalette::Text), 110);
  p.setPen(QPen(lineColour, std::max(2.0, s * 0.035), Qt::SolidLine, Qt::RoundCap));
  const double inset = s * 0.1;
  for (int i = 1; i < 3; ++i) {
    p.drawLine(QPointF(l.board.left() + i * s, l.board.top() + inset), QPointF(l.board.left() + i * s, l.board.bottom() - inset));
    p.drawLine(QPointF(l.board.left() + inset, l.board.top() + i * s), QPointF(l.board.right() - inset, l.board.top() + i * s));
  }

  // Empty cells carry their number, the notation of moves in the statistics table.
  p.setFont(pixelFont(font(), s * 0.14));
  p.setPen(withAlpha(pal.color(QPalette::Text), 90));
  for (int cell = 0; cell < pos.rows * pos.columns; ++cell) {
    const QRectF r = cellRect(l, cell);
    if (pos.cells[size_t(cell)] < 0) p.drawText(r.adjusted(s * 0.1, s * 0.07, 0, 0), Qt::AlignLeft | Qt::AlignTop, QString::number(cell + 1));
    else paintStone(p, r, pos.cells[size_t(cell)], 1.0);
  }
}

void BoardView::paintConnectFour(QPainter& p, const Layout& l) const {
  const env::BoardPosition& pos = *position_;
  const QPalette pal = activeColours(*this);
  const double s = l.cell;
  const QRectF frame = l.board.adjusted(-s * 0.08, -s * 0.08, s * 0.08, s * 0.08);
  p.setPen(QPen(kConnectFourBoard.darker(130), std::max(1.0, s * 0.03)));
  p.setBrush(kConnectFourBoard);
  p.drawRoundedRect(frame, s * 0.18, s * 0.18);
  if (hoveredAction_ >= 0 && isEnabled()) {
    const QRectF column(l.board.left() + hoveredAction_ * s, l.board.top(), s, l.board.height());
    p.fillRect(column, QColor(255, 255, 255, 28));
  }

  for (int cell = 0; cell < pos.rows * pos.columns; ++cell) {
    const QRectF r = cellRect(l, cell);
    const int owner = pos.cells[size_t(cell)];
    if (owner < 0) {
      p.setPen(QPen(kConnectFourBoard.darker(140), std::max(1.0, s * 0.025)));
      p.setBrush(pal.color(QPalette::Window));
      p.drawEllipse(r.center(), s * 0.38, s * 0.38);
    } else {
      paintStone(p, r, owner, 1.0);
    }
  }
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(Qt::white, std::max(2.0, s * 0.07)));
  for (int cell : pos.winningLine) p.drawEllipse(cellRect(l, cell).center(), s * 0.3, s * 0.3);
  if (pos.lastCell >= 0 && pos.winningLine.empty()) {
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(255, 255, 255, 200));
    p.drawEllipse(cellRect(l, pos.lastCell).center(), s * 0.08, s * 0.08);
  }

  p.setFont(pixelFont(font(), s * 0.26));
  p.setPen(pal.color(QPalette::Text));
  for (int column = 0; column < pos.columns; ++column) {
    const QRectF label(l.board.left() + column * s, l.board.bottom() + s * 0.08, s, s * (kColumnLabelRows - 0.08));
    p.drawText(label, Qt::AlignCenter, QString::number(column + 1));
  }
}

void BoardView::paintStatistics(QPainter& p, const Layout& l) const {
  const env::BoardPosition& pos = *position_;
  const search::RootStats& r = *statistics_;
  const int total = std::accumulate(r.visits.begin(), r.visits.end(), 0);
  const int most = *std::max_element(r.visits.begin(), r.visits.end());
  if (total <= 0) return;
  const double s = l.cell;
  const QColor text = activeColours(*this).color(QPalette::Text);
  // Fonts shrink with the board; the smaller lines (Q, prior) are left out once unreadable.
  const QFont shareFont = pixelFont(font(), s * (dropsInColumns() ? 0.24 : 0.22), true);
  const QFont detailFont = pixelFont(font(), s * (dropsInColumns() ? 0.15 : 0.13));
  const bool details = detailFont.pixelSize() >= 8;
  for (int action = 0; action < pos.actionCount(); ++action) {
    const int cell = pos.landingCell(action);
    if (cell < 0) continue;
    const QRectF box = cellRect(l, cell).adjusted(s * 0.1, s * 0.1, -s * 0.1, -s * 0.1);
    const int visits = r.visits[size_t(action)];
    const double share = double(visits) / total;
    const QColor heat = withAlpha(kSearchHeat, 24 + int(150.0 * visits / std::max(1, most)));
    p.setBrush(heat);
    p.setPen(action == r.chosen ? QPen(kSearchHeat.darker(120), std::max(2.0, s * 0.04)) : QPen(Qt::NoPen));
    if (dropsInColumns()) p.drawEllipse(box.center(), s * 0.38, s * 0.38);
    else p.drawRoundedRect(box, s * 0.08, s * 0.08);

    const QString shareText = tr("%1%").arg(qRound(share * 100));
    p.setPen(text);
    if (!details) {
      p.setFont(shareFont);
      p.drawText(box, Qt::AlignCenter, shareText);
      continue;
    }
    const QFontMetricsF big(shareFont), small(detailFont);
    const QString q = visits > 0 ? tr("Q %1").arg(signedValue(r.q[size_t(action)])) : tr("Q –");
    const QString prior = tr("P %1").arg(double(r.prior[size_t(action)]), 0, 'f', 2);
    const double height = big.height() + 2 * small.height();
    double y = box.center().y() - height / 2;
    p.setFont(shareFont);
    p.drawText(QRectF(box.left(), y, box.width(), big.height()), Qt::AlignCenter, shareText);
    y += big.height();
    p.setFont(detailFont);
    p.drawText(QRectF(box.left(), y, box.width(), small.height()), Qt::AlignCenter, q);
    y += small.height();
    p.drawText(QRectF(box.left(), y, box.width(), small.height()), Qt::AlignCenter, prior);
  }
}

// Perfect moves: a dashed ring on a free cell, a solid one on the stone when the move was played
// there. A mistake: a red ring on its stone with a question mark, as annotated games mark one.
void BoardView::paintPerfectPlay(QPainter& p, const Layout& l) const {
  const double s = l.cell;
  p.save();
  p.setBrush(Qt::NoBrush);
  for (int cell : perfectCells_) {
    const bool played = position_->cells[size_t(cell)] >= 0;
    p.setPen(QPen(kPerfectMove, std::max(2.0, s * 0.06), played ? Qt::SolidLine : Qt::DashLine, Qt::RoundCap));
    p.drawEllipse(cellRect(l, cell).center(), s * 0.43, s * 0.43);
  }
  if (mistakeCell_ >= 0 && position_->cells[size_t(mistakeCell_)] >= 0) {
    const QRectF r = cellRect(l, mistakeCell_);
    p.setPen(QPen(kMistake, std::max(2.5, s * 0.08)));
    p.drawEllipse(r.center(), s * 0.43, s * 0.43);
    const QRectF badge(r.right() - s * 0.36, r.top() + s * 0.02, s * 0.32, s * 0.32);
    p.setPen(Qt::NoPen);
    p.setBrush(kMistake);
    p.drawEllipse(badge);
    p.setPen(Qt::white);
    p.setFont(pixelFont(font(), s * 0.24, true));
    p.drawText(badge, Qt::AlignCenter, QStringLiteral("?"));
  }
  p.restore();
}

}  // namespace cas::widgets
