#include "widgets/board/trading_chart.hpp"

#include <QFontMetricsF>
#include <QPainter>
#include <QPolygonF>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/env/trading.hpp"
#include "core/train/reports.hpp"

namespace cas::widgets {
namespace {

using Env = env::TradingEnvironments;

const QColor kText(220, 222, 228), kDim(120, 124, 134), kGrid(50, 54, 62);
const QColor kLong(44, 160, 44), kShort(214, 39, 40), kBuy(96, 210, 96), kSell(245, 96, 96);
const QColor kEquity(255, 196, 56), kBuyAndHold(110, 175, 230);
const QColor kAfterCursor(24, 26, 31, 165);  // the canvas's background, laid over the steps to come

using Phrase = TradingChart::Phrase;

// Round tick values over [low, high], at most about `most` of them: steps of 1, 2 or 5 x 10^k.
std::vector<double> niceTicks(double low, double high, int most) {
  const double rough = (high - low) / std::max(1, most);
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = 10 * magnitude;
  for (const double f : {1.0, 2.0, 5.0})
    if (f * magnitude >= rough) {
      step = f * magnitude;
      break;
    }
  std::vector<double> ticks;
  // Counted in steps rather than summed, so that rounding cannot drop or shift the last tick.
  for (double k = std::ceil(low / step); k * step <= high + step * 1e-9; ++k) ticks.push_back(k * step);
  return ticks;
}

// The decimals that tell the ticks apart, from their spacing.
int decimalsFor(const std::vector<double>& ticks) {
  if (ticks.size() < 2) return 2;
  return std::max(0, int(-std::floor(std::log10(ticks[1] - ticks[0]) + 1e-9)));
}

// The column `name` of the episode's scalars, frame by frame; empty when it was not recorded.
std::vector<double> scalarColumn(const train::RecordedEpisode& episode, const char* name) {
  const auto it = std::find(episode.scalarNames.begin(), episode.scalarNames.end(), name);
  if (it == episode.scalarNames.end()) return {};
  const auto column = size_t(it - episode.scalarNames.begin());
  std::vector<double> out;
  for (const train::EpisodeFrame& f : episode.frames) {
    if (column >= f.scalars.size()) return {};
    out.push_back(double(f.scalars[column]));
  }
  return out;
}

// [low, high] of the values, widened by a margin so that the lines keep off the plot's edges.
std::pair<double, double> paddedRange(std::initializer_list<const std::vector<double>*> series, std::vector<double> also = {}) {
  for (const auto* s : series) also.insert(also.end(), s->begin(), s->end());
  const auto [low, high] = std::minmax_element(also.begin(), also.end());
  const double pad = std::max((*high - *low) * 0.06, std::abs(*high) * 1e-3 + 1e-9);
  return {*low - pad, *high + pad};
}

// At least five significant digits and two decimals: 1203.45, 1.0523, 0.0012345.
QString priceText(double price) {
  return QString::number(price, 'f', std::clamp(4 - int(std::floor(std::log10(std::abs(price) + 1e-30))), 2, 9));
}

QString profitText(double profit) {
  return QStringLiteral("%1 (%2%3%)").arg(profit, 0, 'f', 4).arg(profit >= 1 ? QStringLiteral("+") : QString()).arg((profit - 1) * 100, 0, 'f', 2);
}

// The lines `phrases` take in `width`, set one after another and wrapped between phrases.
int readoutLines(const QFontMetricsF& m, double width, const std::vector<Phrase>& phrases) {
  const double gap = m.horizontalAdvance(QStringLiteral("   "));
  int lines = 1;
  double x = 0;
  for (const Phrase& phrase : phrases) {
    const double w = m.horizontalAdvance(phrase.first);
    if (x > 0 && x + w > width) {
      ++lines;
      x = 0;
    }
    x += w + gap;
  }
  return lines;
}

void drawReadout(QPainter& p, const QRectF& area, const std::vector<Phrase>& phrases) {
  const QFontMetricsF m(p.font());
  const double gap = m.horizontalAdvance(QStringLiteral("   "));
  QPointF at(area.left(), area.top() + m.ascent());
  for (const Phrase& phrase : phrases) {
    const double w = m.horizontalAdvance(phrase.first);
    if (at.x() > area.left() && at.x() + w > area.right()) at = QPointF(area.left(), at.y() + m.height());
    p.setPen(phrase.second);
    p.drawText(at, m.elidedText(phrase.first, Qt::ElideRight, area.right() - at.x()));
    at.rx() += w + gap;
  }
}

// Horizontal grid lines at the ticks, labelled left of the plot from `labelLeft`.
void drawValueAxis(QPainter& p, const QRectF& plot, double labelLeft, const std::vector<double>& ticks, double low, double high) {
  const QFontMetricsF m(p.font());
  const int decimals = decimalsFor(ticks);
  for (const double t : ticks) {
    const double y = plot.bottom() - plot.height() * (t - low) / (high - low);
    p.setPen(kGrid);
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(kDim);
    p.drawText(QRectF(labelLeft, y - m.height() / 2, plot.left() - labelLeft - 5, m.height()), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(t, 'f', decimals));
  }
}

}  // namespace

TradingChart::TradingChart(const train::RecordedEpisode& episode) {
  // The close a frame's observation ends with: the window's newest row, column 0 ([W][price, diff]).
  const std::vector<int>& shape = episode.observationShape;
  const size_t newest = shape.size() == 2 ? size_t((shape[0] - 1) * shape[1]) : 0;
  for (const train::EpisodeFrame& f : episode.frames)
    if (newest < f.observation.size()) close_.push_back(double(f.observation[newest]));
  if (close_.size() != episode.frames.size()) close_.clear();
  position_ = scalarColumn(episode, Env::kPositionScalar);
  totalProfit_ = scalarColumn(episode, Env::kTotalProfitScalar);
  equity_ = scalarColumn(episode, Env::kEquityScalar);
  buyAndHold_ = scalarColumn(episode, Env::kBuyAndHoldScalar);
}

void TradingChart::draw(QPainter& p, const QRectF& area, int frame) const {
  if (close_.size() < 2) return;
  frame = std::clamp(frame, 0, int(close_.size()) - 1);
  const QFontMetricsF m(p.font());
  const std::vector<Phrase> priceWords = priceReadout(frame), equityWords = equityReadout(frame);
  const double priceTop = area.top() + m.height() * readoutLines(m, area.width(), priceWords) + 4;
  const double equityWordsHeight = hasEquity() ? m.height() * readoutLines(m, area.width(), equityWords) + 10 : 0;
  const double panels = area.bottom() - m.height() - 4 - priceTop - equityWordsHeight;  // the steps' numbers at the bottom
  if (panels < 3 * m.height()) return;  // no room for a readable plot
  Scale price, equity;
  price.steps = equity.steps = int(close_.size()) - 1;
  price.plot = QRectF(area.left(), priceTop, area.width(), panels * (hasEquity() ? 0.6 : 1.0));
  equity.plot = QRectF(area.left(), price.plot.bottom() + equityWordsHeight, area.width(), panels - price.plot.height());
  std::tie(price.low, price.high) = paddedRange({&close_});
  if (hasEquity()) std::tie(equity.low, equity.high) = paddedRange({&equity_, &buyAndHold_}, {1.0});
  const auto tickCount = [&](const QRectF& plot) { return std::max(2, int(plot.height() / (m.height() * 2.6))); };
  const std::vector<double> priceTicks = niceTicks(price.low, price.high, tickCount(price.plot));
  const std::vector<double> equityTicks = hasEquity() ? niceTicks(equity.low, equity.high, tickCount(equity.plot)) : std::vector<double>{};
  // The plots start right of the widest value label and end short of the last step's number.
  double labels = 0;
  for (const double t : priceTicks) labels = std::max(labels, m.horizontalAdvance(QString::number(t, 'f', decimalsFor(priceTicks))));
  for (const double t : equityTicks) labels = std::max(labels, m.horizontalAdvance(QString::number(t, 'f', decimalsFor(equityTicks))));
  const double right = m.horizontalAdvance(QString::number(price.steps)) / 2 + 2;
  for (Scale* s : {&price, &equity}) s->plot.adjust(labels + 8, 0, -right, 0);

  drawValueAxis(p, price.plot, area.left(), priceTicks, price.low, price.high);
  drawPrices(p, price, frame);
  drawReadout(p, QRectF(area.left(), area.top(), area.width(), priceTop - area.top()), priceWords);
  if (hasEquity()) {
    drawValueAxis(p, equity.plot, area.left(), equityTicks, equity.low, equity.high);
    drawEquity(p, equity, frame);
    drawReadout(p, QRectF(area.left(), price.plot.bottom() + 6, area.width(), equityWordsHeight), equityWords);
  }
  drawStepAxis(p, hasEquity() ? equity : price);
}

void TradingChart::drawPrices(QPainter& p, const Scale& s, int frame) const {
  // The position held from one step to the next: shaded in runs, so that no seams show between steps.
  for (int k = 0; hasPositions() && k < s.steps;) {
    int end = k + 1;
    while (end < s.steps && isLong(end) == isLong(k)) ++end;
    QColor shade = isLong(k) ? kLong : kShort;
    shade.setAlpha(isLong(k) ? 70 : 38);
    p.fillRect(QRectF(QPointF(s.x(k), s.plot.top()), QPointF(s.x(end), s.plot.bottom())), shade);
    k = end;
  }
  QPolygonF line;
  for (size_t k = 0; k < close_.size(); ++k) line << QPointF(s.x(double(k)), s.y(close_[k]));
  p.setPen(QPen(kText, 1.4));
  p.drawPolyline(line);
  drawTrades(p, s);
  drawCursor(p, s, {{&close_, kText}}, frame);
}

// A trade shows at the step whose close it was made at: the position changed from the step before.
void TradingChart::drawTrades(QPainter& p, const Scale& s) const {
  const double size = std::clamp(s.plot.width() / s.steps * 1.2, 3.5, 6.0);
  p.setPen(Qt::NoPen);
  for (int k = 1; hasPositions() && k <= s.steps; ++k) {
    if (isLong(k) == isLong(k - 1)) continue;
    const QPointF at(s.x(k), s.y(close_[size_t(k)]));
    const double tip = isLong(k) ? 3 : -3, base = isLong(k) ? 3 + 1.6 * size : -3 - 1.6 * size;  // a buy below the line, a sell above
    p.setBrush(isLong(k) ? kBuy : kSell);
    p.drawPolygon(QPolygonF{{at.x(), at.y() + tip}, {at.x() - size, at.y() + base}, {at.x() + size, at.y() + base}});
  }
}

void TradingChart::drawEquity(QPainter& p, const Scale& s, int frame) const {
  p.setPen(QPen(kDim, 1, Qt::DashLine));  // at 1: the money the episode started with
  p.drawLine(QPointF(s.plot.left(), s.y(1)), QPointF(s.plot.right(), s.y(1)));
  for (const auto& [values, pen] : {std::pair{&buyAndHold_, QPen(kBuyAndHold, 1.4, Qt::DashLine)}, std::pair{&equity_, QPen(kEquity, 2)}}) {
    QPolygonF line;
    for (size_t k = 0; k < values->size(); ++k) line << QPointF(s.x(double(k)), s.y((*values)[k]));
    p.setPen(pen);
    p.drawPolyline(line);
  }
  drawCursor(p, s, {{&buyAndHold_, kBuyAndHold}, {&equity_, kEquity}}, frame);
}

// The steps after the cursor dimmed, the cursor's line, and a dot on each series where it crosses.
void TradingChart::drawCursor(QPainter& p, const Scale& s, const Series& series, int frame) const {
  const double x = s.x(frame);
  if (frame < s.steps) p.fillRect(QRectF(QPointF(x, s.plot.top()), s.plot.bottomRight()), kAfterCursor);
  p.setPen(QPen(kText, 1));
  p.drawLine(QPointF(x, s.plot.top()), QPointF(x, s.plot.bottom()));
  p.setPen(Qt::NoPen);
  for (const auto& [values, colour] : series) {
    p.setBrush(colour);
    p.drawEllipse(QPointF(x, s.y((*values)[size_t(frame)])), 3.5, 3.5);
  }
}

// The steps' numbers under the lower panel.
void TradingChart::drawStepAxis(QPainter& p, const Scale& s) const {
  const QFontMetricsF m(p.font());
  p.setPen(kDim);
  for (const double t : niceTicks(0, s.steps, std::max(2, int(s.plot.width() / m.horizontalAdvance(QStringLiteral("00000000")))))) {
    const QString label = QString::number(t, 'f', 0);
    const double w = m.horizontalAdvance(label);
    p.drawLine(QPointF(s.x(t), s.plot.bottom()), QPointF(s.x(t), s.plot.bottom() + 3));
    p.drawText(QRectF(s.x(t) - w / 2 - 1, s.plot.bottom() + 4, w + 2, m.height()), Qt::AlignCenter, label);
  }
}

std::vector<TradingChart::Phrase> TradingChart::priceReadout(int frame) const {
  std::vector<Phrase> out{{tr("close %1").arg(priceText(close_[size_t(frame)])), kText}};
  if (!hasPositions()) return out;
  out.emplace_back(isLong(frame) ? tr("long") : tr("short, out of the market"), isLong(frame) ? kBuy : kSell);
  out.emplace_back(tr("▲ buy"), kBuy);
  out.emplace_back(tr("▼ sell"), kSell);
  return out;
}

std::vector<TradingChart::Phrase> TradingChart::equityReadout(int frame) const {
  if (!hasEquity()) return {};
  std::vector<Phrase> out{{tr("equity %1").arg(profitText(equity_[size_t(frame)])), kEquity}};
  // gym-anytrading's total profit counts only the trades closed; the equity also sells an open long.
  if (!totalProfit_.empty()) out.emplace_back(tr("total profit %1").arg(totalProfit_[size_t(frame)], 0, 'f', 4), kDim);
  out.emplace_back(tr("buy and hold %1").arg(profitText(buyAndHold_[size_t(frame)])), kBuyAndHold);
  return out;
}

}  // namespace cas::widgets
