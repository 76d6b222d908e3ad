// gym-anytrading's StocksEnv and ForexEnv over a price series, a batch of copies (trading.hpp)
// stepped by trading_rules.hpp: the series' view the rules read, the frames; and the split of a
// series into a training part and a held-out part.
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

std::shared_ptr<const PriceSeries> tradingPart(const EnvironmentData& data, const TradingSetup& setup) {
  if (!data.series) throw std::invalid_argument("trading-stocks steps over a price series; name its CSV file in project.toml (series = \"prices.csv\")");
  if (auto problem = splitProblem(data.series->size(), data.trainFraction, setup)) throw std::invalid_argument(data.series->file + ": " + *problem);
  return leadingBars(*data.series, trainingBars(data.series->size(), data.trainFraction));
}

TradingSetup stocksSetup(const EnvironmentData& data) {
  TradingSetup setup = stocksSetup();
  setup.reward = data.tradingReward;
  return setup;
}

TradingSeriesView tradingView(const PriceSeries& series, const TradingSetup& setup, std::vector<float>& prices, std::vector<float>& diffs) {
  const std::vector<double>& close = series.close;
  prices.resize(close.size());
  diffs.resize(close.size());
  for (std::size_t b = 0; b < close.size(); ++b) {
    prices[b] = float(close[b]);
    diffs[b] = b == 0 ? 0.0f : float(close[b] - close[b - 1]);
  }
  TradingSeriesView view;
  view.prices = prices.data();
  view.diffs = diffs.data();
  view.bars = series.size();
  view.window = setup.window;
  view.episodeSteps = setup.episodeSteps;
  view.market = setup.market;
  view.reward = setup.reward;
  return view;
}

TradingEnvironments::TradingEnvironments(std::shared_ptr<const PriceSeries> series, TradingSetup setup, int count, std::uint64_t seed)
    : series_(std::move(series)), setup_(setup), copies_(std::size_t(count < 0 ? 0 : count)) {
  if (!series_) throw std::invalid_argument("trading: no price series");
  if (setup_.window < 1 || setup_.episodeSteps < 1) throw std::invalid_argument("trading: the window and the episode's steps must be 1 or more");
  if (setup_.window > series_->size() || setup_.episodeSteps > series_->size() || series_->size() < setup_.barsNeeded())
    throw std::invalid_argument("trading: " + std::to_string(series_->size()) + " bars, fewer than the " + std::to_string(setup_.barsNeeded()) +
                                " one episode needs");
  const TradingSeriesView view = tradingView(*series_, setup_, prices_, diffs_);
  for (int g = 0; g < count; ++g) {
    TradingRules::State& s = at(g);
    s.series = view;
    s.random = GameRandom::forGame(seed, g);
    TradingRules::reset(s);
  }
}

void TradingEnvironments::resetToFrame(int env, int first, int last) {
  const int begin = first - setup_.window;
  if (begin < 0 || last > series_->size() || last - begin < setup_.window + 2)
    throw std::invalid_argument("trading: the frame [" + std::to_string(first) + ", " + std::to_string(last) + ") with a window of " +
                                std::to_string(setup_.window) + " does not fit a series of " + std::to_string(series_->size()) + " bars");
  TradingRules::setFrame(at(env), begin, last - begin);
}

std::vector<std::string> TradingEnvironments::scalarNames() const { return {kPositionScalar, kTotalProfitScalar, kEquityScalar, kBuyAndHoldScalar}; }

std::vector<float> TradingEnvironments::scalars(int env) const {
  const TradingRules::State& s = copies_[std::size_t(env)];
  return {s.position == TradingPosition::Long ? 1.0f : 0.0f, s.totalProfit, TradingRules::equity(s), TradingRules::buyAndHoldEquity(s)};
}

}  // namespace cas::env
