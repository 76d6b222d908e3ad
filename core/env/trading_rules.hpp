#pragma once
// gym-anytrading's trading rules (TradingEnv with StocksEnv's or ForexEnv's reward and profit,
// version 2.0.0) for one copy, as static functions compiled for the host and the device (CAS_HD):
// the CPU twin (trading.hpp's TradingEnvironments) and the CUDA backend's environment kernels
// (gpu/env) run this code over a series each keeps in its own memory.
//
//   TradingSeriesView   what every copy reads, shared and read-only:
//     prices [bars]  the closes as float32
//     diffs  [bars]  float32(close[b] - close[b-1]), taken in float64 as pandas holds the
//                    closes; diffs[0] = 0 (a frame's first diff is 0 wherever it starts)
//   State               one copy: the view, its frame [begin, begin + length) of bars, its
//                       tick within the frame, the last trade's tick, the position, the sums and
//                       its own generator (about 64 bytes)
//
// One copy's episode is gym-anytrading's episode over its frame: with window W, the frame's
// prices p[0..L), the tick starts at W, the last trade's at W - 1, the position Short, the total
// profit 1. Actions: 0 sells, 1 buys (gym-anytrading has no hold: an action that agrees with the
// position keeps it). A step: t += 1 (truncated when t reaches L - 1); a trade is a buy while
// Short or a sell while Long; then, with the position before the trade,
//   - reward (TradingReward::PriceChange, gym-anytrading's), stocks: p[t] - p[last] when a trade closes a Long, else 0;
//             forex: (p[t] - p[last]) * 10000 when a trade closes a Long, -(p[t] - p[last]) * 10000
//             when it closes a Short, else 0 (pips);
//   - total profit, on a trade or the episode's last step, stocks: a Long's shares bought with
//     the profit less the 0.5% ask fee at p[last] are sold less the 1% bid fee at p[t];
//     forex (unit side left): a Short's profit becomes profit * (p[last] - 0.0003) / p[t];
//   - a trade flips the position and sets last = t;
//   - with TradingReward::Equity the reward is instead (equity after - equity before) * 100:
//     the equity (equity() below) is the total profit with an open long sold at the tick's
//     close less the fees, so over an episode the rewards sum to about 100 (final total profit
//     - 1), float32's rounding aside.
// All in float32, as numpy >= 2 computes it (gym-anytrading's prices are float32 and Python's
// floats adapt to them), with no operation whose result may differ between host and device: the
// device twin agrees with the CPU twin to the bit. The observation: the W rows t-W+1..t of
// [price, diff], oldest first ([W][2], row-major).
// Thread-safety: static functions over the caller's state; the view is read-only.
#include <cstdint>

#include "core/env/game_random.hpp"
#include "core/env/single_agent.hpp"
#include "core/support/host_device.hpp"

namespace cas::env {

enum class TradingMarket : std::uint8_t { Stocks, Forex };
enum class TradingPosition : std::uint8_t { Short = 0, Long = 1 };
// What a step rewards (trading.reward): gym-anytrading's price change of each closed long
// (fees not counted; the rules the check against gym-anytrading covers), or the change of the
// equity over the step in percent of the starting money (fees counted as they are paid).
enum class TradingReward : std::uint8_t { PriceChange, Equity };

struct TradingSeriesView {
  const float* prices = nullptr;
  const float* diffs = nullptr;
  int bars = 0;
  int window = 30;         // bars in an observation (gym-anytrading's window_size)
  int episodeSteps = 256;  // steps of an episode reset() draws
  TradingMarket market = TradingMarket::Stocks;
  TradingReward reward = TradingReward::PriceChange;
  // Bars one episode needs: its window, its steps and the bar a first trade is priced against.
  CAS_HD int barsNeeded() const { return window + episodeSteps + 1; }
};

struct TradingRules {
  static constexpr int kActions = 2, kSell = 0, kBuy = 1;
  // The catalogue's window (stocks-v0's), and so the device twin's observation row.
  static constexpr int kWindow = 30, kObservationSize = 2 * kWindow;
  static constexpr bool kSparseObservation = false;  // every entry is written by observe()

  struct State {
    TradingSeriesView series;
    int begin = 0, length = 0;  // the frame: bars [begin, begin + length)
    int tick = 0, lastTradeTick = 0;
    TradingPosition position = TradingPosition::Short;
    float totalReward = 0, totalProfit = 1;
    GameRandom random;
  };

  // A new episode over a frame drawn from the copy's generator: `episodeSteps` steps starting
  // anywhere the series allows, uniformly (the modulo's bias is below 1e-9 for any series a file
  // may hold).
  CAS_HD static void reset(State& s) {
    const std::uint64_t starts = std::uint64_t(s.series.bars - s.series.barsNeeded() + 1);
    const int begin = int(s.random.next() % starts);
    setFrame(s, begin, s.series.barsNeeded());
  }
  // The frame [begin, begin + length) of bars, its episode at its start (the caller has checked
  // that it lies in the series and holds a step).
  CAS_HD static void setFrame(State& s, int begin, int length) {
    s.begin = begin;
    s.length = length;
    s.tick = s.series.window;
    s.lastTradeTick = s.tick - 1;
    s.position = TradingPosition::Short;
    s.totalReward = 0;
    s.totalProfit = 1;
  }

  CAS_HD static StepResult step(State& s, int action) {
    if (s.tick >= s.length - 1) return {0.0f, false, true};  // ended: stays until reset
    const float equityBefore = s.series.reward == TradingReward::Equity ? equity(s) : 0.0f;
    ++s.tick;
    const bool truncated = s.tick == s.length - 1;
    const bool trade = (action == kBuy && s.position == TradingPosition::Short) || (action == kSell && s.position == TradingPosition::Long);
    float r = trade ? tradeReward(s) : 0.0f;
    if (trade || truncated) s.totalProfit = profitAfter(s);
    if (trade) {
      s.position = s.position == TradingPosition::Long ? TradingPosition::Short : TradingPosition::Long;
      s.lastTradeTick = s.tick;
    }
    if (s.series.reward == TradingReward::Equity) r = (equity(s) - equityBefore) * 100.0f;
    s.totalReward += r;
    return {r, false, truncated};
  }

  // The total profit the episode would end with at this tick: an open position sold here, less
  // the fees; once the episode has ended, the total profit itself.
  CAS_HD static float equity(const State& s) { return s.tick >= s.length - 1 ? s.totalProfit : profitAfter(s); }

  // Buy and hold's equity over the same frame at this tick, as `eval` plays it: a buy at the
  // first step (closing the starting Short under the market's rules, as a step would), held.
  CAS_HD static float buyAndHoldEquity(const State& s) {
    const int firstStep = s.series.window + 1;
    if (s.tick < firstStep) return 1;
    State start = s;
    start.tick = firstStep;
    start.lastTradeTick = s.series.window - 1;
    start.position = TradingPosition::Short;
    start.totalProfit = 1;
    State held = s;
    held.lastTradeTick = firstStep;
    held.position = TradingPosition::Long;
    held.totalProfit = profitAfter(start);
    // A buy on an episode's last step is not sold: the episode ends holding it.
    const bool boughtOnTheLastStep = s.tick == firstStep && s.tick >= s.length - 1;
    return boughtOnTheLastStep ? held.totalProfit : profitAfter(held);
  }

  // Writes 2 * window floats.
  CAS_HD static void observe(const State& s, float* out) {
    for (int row = 0; row < s.series.window; ++row) {
      const int tick = s.tick - s.series.window + 1 + row, bar = s.begin + tick;
      out[2 * row] = s.series.prices[bar];
      out[2 * row + 1] = tick == 0 ? 0.0f : s.series.diffs[bar];
    }
  }

 private:
  CAS_HD static float price(const State& s, int tick) { return s.series.prices[s.begin + tick]; }

  CAS_HD static float tradeReward(const State& s) {
    const float diff = price(s, s.tick) - price(s, s.lastTradeTick);
    if (s.series.market == TradingMarket::Stocks) return s.position == TradingPosition::Long ? diff : 0.0f;
    return s.position == TradingPosition::Short ? -diff * 10000.0f : diff * 10000.0f;
  }

  // The total profit once the position held since the last trade is closed at this tick.
  CAS_HD static float profitAfter(const State& s) {
    const float current = price(s, s.tick), last = price(s, s.lastTradeTick);
    if (s.series.market == TradingMarket::Stocks) {
      if (s.position != TradingPosition::Long) return s.totalProfit;
      // gym-anytrading's (1 - 0.005) and (1 - 0.01), Python floats rounded to float32.
      constexpr float kAfterAskFee = float(1.0 - 0.005), kAfterBidFee = float(1.0 - 0.01);
      const float shares = (s.totalProfit * kAfterAskFee) / last;
      return (shares * kAfterBidFee) * current;
    }
    if (s.position != TradingPosition::Short) return s.totalProfit;
    const float quantity = s.totalProfit * (last - 0.0003f);
    return quantity / current;
  }
};

}  // namespace cas::env
