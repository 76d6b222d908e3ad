#pragma once
// Trading over a price series (price_series.hpp) with gym-anytrading's rules (its TradingEnv,
// StocksEnv and ForexEnv, version 2.0.0), as a batch of copies PPO can step
// (single_agent.hpp), each copy trading its own episode window of the series.
//
// One copy's episode is gym-anytrading's episode over the frame of bars [begin, end): with
// window W, the frame's prices p[0..L) are the bars' closes as float32 and its diffs d[0] = 0,
// d[i] = float32(close[i] - close[i-1]) (in float64, then rounded, as gym-anytrading does). The
// tick t starts at W, the last trade's tick at W - 1, the position Short, the total profit 1.
// Actions: 0 sells, 1 buys (gym-anytrading has no hold: an action that agrees with the position
// keeps it). A step: t += 1 (truncated when t reaches L - 1); a trade is a buy while Short or a
// sell while Long; then, with the position before the trade,
//   - reward, stocks: p[t] - p[last] when a trade closes a Long, else 0;
//             forex: (p[t] - p[last]) * 10000 when a trade closes a Long, -(p[t] - p[last]) * 10000
//             when it closes a Short, else 0 (pips);
//   - total profit, on a trade or the episode's last step, stocks: a Long's shares bought with
//     the profit less the 0.5% ask fee at p[last] are sold less the 1% bid fee at p[t];
//     forex (unit side left): a Short's profit becomes profit * (p[last] - 0.0003) / p[t];
//   - a trade flips the position and sets last = t.
// All in float32, as numpy >= 2 computes it (gym-anytrading's prices are float32 and Python's
// floats adapt to them). The observation: the W rows t-W+1..t of [price, diff], oldest first
// ([W][2], row-major). In gym-anytrading the frame is fixed (frame_bound); here reset() draws
// each episode's frame from the copy's own generator: `episodeSteps` steps, starting anywhere
// the series allows; resetToFrame() sets gym-anytrading's frame_bound exactly.
// Thread-safety: the series is shared read-only; distinct copies may be stepped from distinct
// threads.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/price_series.hpp"
#include "core/env/single_agent.hpp"

namespace cas::env {

enum class TradingMarket { Stocks, Forex };
enum class TradingPosition : std::uint8_t { Short = 0, Long = 1 };

struct TradingSetup {
  TradingMarket market = TradingMarket::Stocks;
  int window = 30;         // bars in an observation (gym-anytrading's window_size)
  int episodeSteps = 256;  // steps of an episode reset() draws
  // Bars one episode needs: its window, its steps and the bar a first trade is priced against.
  int barsNeeded() const { return window + episodeSteps + 1; }
};

// trading-stocks' setup in the catalogue: stocks-v0's window of 30 bars, episodes of 256 steps.
inline TradingSetup stocksSetup() { return {}; }

// Training on the first part of a series and judging on the rest (trading.train_fraction):
// bars [0, trainingBars) are the training part PPO's episodes are drawn from, the rest the
// held-out part `eval` trades once, start to end (its first observation's window reaches back
// into the training part: past prices only, never a later one).
int trainingBars(int bars, double fraction);
// Why a series of `bars` bars cannot be split so: a training part too short for one episode,
// or a held-out part of fewer than 2 bars (one step). nullopt when it can.
std::optional<std::string> splitProblem(int bars, double fraction, const TradingSetup& setup);
// The fewest bars a series split at `fraction` needs, and why, for readPriceSeries's refusal.
PriceSeriesNeed splitNeed(double fraction, const TradingSetup& setup);
// The series' first `bars` bars (its file name kept, for messages).
std::shared_ptr<const PriceSeries> leadingBars(const PriceSeries& series, int bars);

class TradingEnvironments final : public SingleAgentEnvironments {
 public:
  static constexpr int kActions = 2, kSell = 0, kBuy = 1;

  // Throws std::invalid_argument when the series is shorter than setup.barsNeeded() or the
  // setup is out of range (window < 1, episodeSteps < 1).
  TradingEnvironments(std::shared_ptr<const PriceSeries> series, TradingSetup setup, int count, std::uint64_t seed);

  int size() const override { return int(copies_.size()); }
  int observationSize() const { return 2 * setup_.window; }
  // A new episode over a window drawn from the copy's generator.
  void reset(int env) override;
  // gym-anytrading's reset with frame_bound (first, last): the frame is bars
  // [first - window, last); throws std::invalid_argument outside the series or when the frame
  // leaves no step.
  void resetToFrame(int env, int first, int last);
  StepResult step(int env, int action) override;
  void observe(int env, float* out) const override;

  TradingPosition position(int env) const { return copies_[std::size_t(env)].position; }
  float totalProfit(int env) const { return copies_[std::size_t(env)].totalProfit; }
  float totalReward(int env) const { return copies_[std::size_t(env)].totalReward; }
  // The series' bar at which the copy's frame starts, and the copy's tick within it.
  int frameBegin(int env) const { return copies_[std::size_t(env)].begin; }
  int tick(int env) const { return copies_[std::size_t(env)].tick; }

 private:
  struct Copy {
    int begin = 0, length = 0;  // the frame: bars [begin, begin + length)
    int tick = 0, lastTradeTick = 0;
    TradingPosition position = TradingPosition::Short;
    float totalReward = 0, totalProfit = 1;
    GameRandom random;
  };
  float price(const Copy& c, int tick) const { return prices_[std::size_t(c.begin + tick)]; }
  float reward(const Copy& c, bool trade) const;
  float profitAfter(const Copy& c) const;

  std::shared_ptr<const PriceSeries> series_;
  TradingSetup setup_;
  std::vector<float> prices_;  // the closes as float32
  std::vector<Copy> copies_;
};

}  // namespace cas::env
