#include "widgets/board/move_list.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/board/board_view.hpp"

namespace cas::widgets {
namespace {

QToolButton* stepButton(const QString& text, const QString& toolTip, const char* objectName) {
  auto* button = new QToolButton;
  button->setText(text);
  button->setToolTip(toolTip);
  button->setObjectName(QLatin1String(objectName));
  button->setAutoRaise(true);
  return button;
}

QTableWidgetItem* cell(const QString& text, Qt::Alignment alignment) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(alignment | Qt::AlignVCenter);
  return item;
}

}  // namespace

MoveList::MoveList(QWidget* parent)
    : QWidget(parent),
      table_(new QTableWidget(0, 2)),
      startButton_(stepButton(QStringLiteral("|◀"), tr("The starting position"), "moveListStart")),
      backButton_(stepButton(QStringLiteral("◀"), tr("One move back (Up arrow in the list)"), "moveListBack")),
      forwardButton_(stepButton(QStringLiteral("▶"), tr("One move forward (Down arrow in the list)"), "moveListForward")),
      endButton_(stepButton(QStringLiteral("▶|"), tr("The game's current position"), "moveListEnd")) {
  setObjectName(QStringLiteral("moveList"));
  table_->setObjectName(QStringLiteral("moveListTable"));
  table_->setHorizontalHeaderLabels({tr("Move"), tr("Value")});
  table_->horizontalHeaderItem(1)->setToolTip(
      tr("The agent's value of the position after the move, for the player who made it, from -1 (lost) to +1 (won); "
         "– where no search of the agent judged it. A finished game's last move shows the result."));
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setToolTip(tr("Pick a move to see the position after it; the game goes on from its last move."));

  auto* buttons = new QHBoxLayout;
  buttons->setSpacing(0);
  for (QToolButton* b : {startButton_, backButton_, forwardButton_, endButton_}) buttons->addWidget(b);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);

  connect(startButton_, &QToolButton::clicked, this, &MoveList::showStart);
  connect(backButton_, &QToolButton::clicked, this, &MoveList::stepBack);
  connect(forwardButton_, &QToolButton::clicked, this, &MoveList::stepForward);
  connect(endButton_, &QToolButton::clicked, this, &MoveList::showEnd);
  // Row r shows the position after r moves (row 0: the start).
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) {
    if (row >= 0 && row != shown_) emit positionRequested(row);
  });
  updateButtons();
}

void MoveList::setGame(const QString& environment, const std::vector<int>& moves, const std::vector<std::optional<float>>& values, bool over,
                       int shown) {
  const QSignalBlocker quiet(table_);  // the owner's own update is no request
  moveCount_ = int(moves.size());
  shown_ = std::clamp(shown, 0, moveCount_);
  table_->setRowCount(moveCount_ + 1);
  table_->setItem(0, 0, cell(tr("Start"), Qt::AlignLeft));
  table_->setItem(0, 1, cell(QString(), Qt::AlignRight));
  for (int n = 0; n < moveCount_; ++n) {
    const QString move = tr("%1. %2 %3").arg(n + 1).arg(BoardView::playerName(environment, n % 2)).arg(moves[size_t(n)] + 1);
    QString value = QStringLiteral("–");
    if (n < int(values.size()) && values[size_t(n)]) {
      const float v = *values[size_t(n)];
      value = over && n == moveCount_ - 1 ? (v > 0 ? tr("wins") : v < 0 ? tr("loses") : tr("draw")) : signedValue(v);
    }
    table_->setItem(n + 1, 0, cell(move, Qt::AlignLeft));
    table_->setItem(n + 1, 1, cell(value, Qt::AlignRight));
  }
  table_->setCurrentCell(shown_, 0);
  table_->scrollToItem(table_->item(shown_, 0));
  updateButtons();
}

void MoveList::request(int moveCount) {
  moveCount = std::clamp(moveCount, 0, moveCount_);
  if (moveCount != shown_) emit positionRequested(moveCount);
}

void MoveList::showStart() { request(0); }
void MoveList::stepBack() { request(shown_ - 1); }
void MoveList::stepForward() { request(shown_ + 1); }
void MoveList::showEnd() { request(moveCount_); }

void MoveList::updateButtons() {
  startButton_->setEnabled(shown_ > 0);
  backButton_->setEnabled(shown_ > 0);
  forwardButton_->setEnabled(shown_ < moveCount_);
  endButton_->setEnabled(shown_ < moveCount_);
}

}  // namespace cas::widgets
