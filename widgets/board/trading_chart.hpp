#pragma once
// A recorded trading episode drawn as the Episode dock's picture: above, the close at each step
// (the newest bar of the observation's window), shaded where the policy held a long (green) or
// was short, out of the market (red), with a triangle at each buy and sell; below, its equity
// (gym-anytrading's total profit with an open long sold at that step's close, less the fees: what
// the episode would end with there; 1 is the money it started with) beside buy and hold's over
// the same bars. A cursor marks the frame shown, what comes after it is dimmed, and a line above
// each panel reads the values at the cursor. The position and the profits are the episode's
// recorded scalars (env::TradingEnvironments::scalars); without them only the closes are drawn.
// Thread-safety: GUI thread (QPainter).
#include <QColor>
#include <QCoreApplication>
#include <QRectF>
#include <QString>

#include <utility>
#include <vector>

class QPainter;

namespace cas::train {
struct RecordedEpisode;
}

namespace cas::widgets {

class TradingChart {
  Q_DECLARE_TR_FUNCTIONS(cas::widgets::TradingChart)

 public:
  // A phrase of a readout line, in its colour.
  using Phrase = std::pair<QString, QColor>;

  explicit TradingChart(const cas::train::RecordedEpisode& episode);
  // Draws the episode into `area` with the cursor at `frame`, in the painter's font.
  void draw(QPainter& p, const QRectF& area, int frame) const;

 private:
  // A panel's plot: steps across, values [low, high] up.
  struct Scale {
    QRectF plot;
    double low = 0, high = 1;
    int steps = 1;
    double x(double step) const { return plot.left() + plot.width() * step / steps; }
    double y(double value) const { return plot.bottom() - plot.height() * (value - low) / (high - low); }
  };
  using Series = std::vector<std::pair<const std::vector<double>*, QColor>>;

  bool hasPositions() const { return !position_.empty(); }
  bool hasEquity() const { return !equity_.empty() && !buyAndHold_.empty(); }
  bool isLong(int frame) const { return hasPositions() && position_[size_t(frame)] > 0.5; }
  void drawPrices(QPainter& p, const Scale& s, int frame) const;
  void drawTrades(QPainter& p, const Scale& s) const;
  void drawEquity(QPainter& p, const Scale& s, int frame) const;
  void drawCursor(QPainter& p, const Scale& s, const Series& series, int frame) const;
  void drawStepAxis(QPainter& p, const Scale& s) const;
  std::vector<Phrase> priceReadout(int frame) const;
  std::vector<Phrase> equityReadout(int frame) const;

  std::vector<double> close_;
  // Per frame, empty when the episode does not hold them: 1 long, 0 short; gym-anytrading's total
  // profit; the equity; buy and hold's equity.
  std::vector<double> position_, totalProfit_, equity_, buyAndHold_;
};

}  // namespace cas::widgets
