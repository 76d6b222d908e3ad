// gym-anytrading's StocksEnv and ForexEnv over a price series, a batch of copies (trading.hpp):
// the frames, the step's reward and profit rules, the observation of [price, diff] rows; and
// the split of a series into a training part and a held-out part.
#include "core/env/trading.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace cas::env {

int trainingBars(int bars, double fraction) { return int(std::floor(double(bars) * fraction)); }

std::optional<std::string> splitProblem(int bars, double fraction, const TradingSetup& setup) {
  const int training = trainingBars(bars, fraction);
  char share[32];
  std::snprintf(share, sizeof share, "%g", fraction);
  if (training < setup.barsNeeded())
    return std::to_string(bars) + " bars, of which the training part (trading.train_fraction = " + share + ") holds " + std::to_string(training) +
           ", fewer than the " + std::to_string(setup.barsNeeded()) + " one episode needs (a window of " + std::to_string(setup.window) + " bars, " +
           std::to_string(setup.episodeSteps) + " steps and the bar before); give a longer series or raise trading.train_fraction";
  if (bars - training < 2)
    return std::to_string(bars) + " bars leave " + std::to_string(bars - training) + " for the held-out part (trading.train_fraction = " + share +
           "), fewer than the 2 one step needs; give a longer series or lower trading.train_fraction";
  return std::nullopt;
}

PriceSeriesNeed splitNeed(double fraction, const TradingSetup& setup) {
  int bars = setup.barsNeeded();
  while (splitProblem(bars, fraction, setup)) ++bars;  // fraction >= 0.05: at most 20 times barsNeeded
  char share[32];
  std::snprintf(share, sizeof share, "%g", fraction);
  return {bars, "a series split for training (trading.train_fraction = " + std::string(share) + ": one episode, a window of " +
                    std::to_string(setup.window) + " bars, " + std::to_string(setup.episodeSteps) +
                    " steps and the bar before, in the training part; a step in the held-out part)"};
}

std::shared_ptr<const PriceSeries> leadingBars(const PriceSeries& series, int bars) {
  auto out = std::make_shared<PriceSeries>();
  const auto n = std::ptrdiff_t(bars < 0 ? 0 : std::min(bars, series.size()));
  out->file = series.file;
  out->times.assign(series.times.begin(), series.times.begin() + n);
  for (auto [to, from] : {std::pair{&out->open, &series.open}, {&out->high, &series.high}, {&out->low, &series.low}, {&out->close, &series.close},
                          {&out->volume, &series.volume}})
    to->assign(from->begin(), from->begin() + n);
  return out;
}

TradingEnvironments::TradingEnvironments(std::shared_ptr<const PriceSeries> series, TradingSetup setup, int count, std::uint64_t seed)
    : series_(std::move(series)), setup_(setup), copies_(std::size_t(count < 0 ? 0 : count)) {
  if (!series_) throw std::invalid_argument("trading: no price series");
  if (setup_.window < 1 || setup_.episodeSteps < 1) throw std::invalid_argument("trading: the window and the episode's steps must be 1 or more");
  if (setup_.window > series_->size() || setup_.episodeSteps > series_->size() || series_->size() < setup_.barsNeeded())
    throw std::invalid_argument("trading: " + std::to_string(series_->size()) + " bars, fewer than the " + std::to_string(setup_.barsNeeded()) +
                                " one episode needs");
  prices_.reserve(series_->close.size());
  for (double c : series_->close) prices_.push_back(float(c));
  for (int g = 0; g < count; ++g) copies_[std::size_t(g)].random = GameRandom::forGame(seed, g);
  for (int g = 0; g < count; ++g) reset(g);
}

void TradingEnvironments::reset(int env) {
  Copy& c = copies_[std::size_t(env)];
  // Frame starts 0 .. size - barsNeeded, uniform (the modulo's bias is below 1e-9 for any series
  // a file may hold).
  const std::uint64_t starts = std::uint64_t(series_->size() - setup_.barsNeeded() + 1);
  const int begin = int(c.random.next() % starts);
  resetToFrame(env, begin + setup_.window, begin + setup_.barsNeeded());
}

void TradingEnvironments::resetToFrame(int env, int first, int last) {
  const int begin = first - setup_.window;
  if (begin < 0 || last > series_->size() || last - begin < setup_.window + 2)
    throw std::invalid_argument("trading: the frame [" + std::to_string(first) + ", " + std::to_string(last) + ") with a window of " +
                                std::to_string(setup_.window) + " does not fit a series of " + std::to_string(series_->size()) + " bars");
  Copy& c = copies_[std::size_t(env)];
  c.begin = begin;
  c.length = last - begin;
  c.tick = setup_.window;
  c.lastTradeTick = c.tick - 1;
  c.position = TradingPosition::Short;
  c.totalReward = 0;
  c.totalProfit = 1;
}

float TradingEnvironments::reward(const Copy& c, bool trade) const {
  if (!trade) return 0;
  const float diff = price(c, c.tick) - price(c, c.lastTradeTick);
  if (setup_.market == TradingMarket::Stocks) return c.position == TradingPosition::Long ? diff : 0.0f;
  return c.position == TradingPosition::Short ? -diff * 10000.0f : diff * 10000.0f;
}

// The total profit once the position held since the last trade is closed at this tick.
float TradingEnvironments::profitAfter(const Copy& c) const {
  const float current = price(c, c.tick), last = price(c, c.lastTradeTick);
  if (setup_.market == TradingMarket::Stocks) {
    if (c.position != TradingPosition::Long) return c.totalProfit;
    // gym-anytrading's (1 - 0.005) and (1 - 0.01), Python floats rounded to float32.
    constexpr float kAfterAskFee = float(1.0 - 0.005), kAfterBidFee = float(1.0 - 0.01);
    const float shares = (c.totalProfit * kAfterAskFee) / last;
    return (shares * kAfterBidFee) * current;
  }
  if (c.position != TradingPosition::Short) return c.totalProfit;
  const float quantity = c.totalProfit * (last - 0.0003f);
  return quantity / current;
}

StepResult TradingEnvironments::step(int env, int action) {
  Copy& c = copies_[std::size_t(env)];
  if (c.tick >= c.length - 1) return {0.0f, false, true};  // ended: stays until reset
  ++c.tick;
  const bool truncated = c.tick == c.length - 1;
  const bool trade = (action == kBuy && c.position == TradingPosition::Short) || (action == kSell && c.position == TradingPosition::Long);
  const float r = reward(c, trade);
  c.totalReward += r;
  if (trade || truncated) c.totalProfit = profitAfter(c);
  if (trade) {
    c.position = c.position == TradingPosition::Long ? TradingPosition::Short : TradingPosition::Long;
    c.lastTradeTick = c.tick;
  }
  return {r, false, truncated};
}

void TradingEnvironments::observe(int env, float* out) const {
  const Copy& c = copies_[std::size_t(env)];
  const std::vector<double>& close = series_->close;
  for (int row = 0; row < setup_.window; ++row) {
    const int tick = c.tick - setup_.window + 1 + row, bar = c.begin + tick;
    out[2 * row] = prices_[std::size_t(bar)];
    out[2 * row + 1] = tick == 0 ? 0.0f : float(close[std::size_t(bar)] - close[std::size_t(bar - 1)]);
  }
}

}  // namespace cas::env
