#pragma once
// Trading over a price series (price_series.hpp) with gym-anytrading's rules (its TradingEnv,
// StocksEnv and ForexEnv, version 2.0.0), as a batch of copies PPO can step
// (single_agent.hpp), each copy trading its own episode window of the series.
//
// One copy's episode is gym-anytrading's episode over a frame of bars, by trading_rules.hpp's
// rules (which the device twin runs too). In gym-anytrading the frame is fixed (frame_bound); here
// reset() draws each episode's frame from the copy's own generator: `episodeSteps` steps,
// starting anywhere the series allows; resetToFrame() sets gym-anytrading's frame_bound exactly.
// Thread-safety: the series is shared read-only; distinct copies may be stepped from distinct
// threads.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env/environments.hpp"
#include "core/env/game_random.hpp"
#include "core/env/price_series.hpp"
#include "core/env/single_agent.hpp"
#include "core/env/trading_rules.hpp"

namespace cas::env {

struct TradingSetup {
  TradingMarket market = TradingMarket::Stocks;
  int window = 30;         // bars in an observation (gym-anytrading's window_size)
  int episodeSteps = 256;  // steps of an episode reset() draws
  TradingReward reward = TradingReward::PriceChange;
  // Bars one episode needs: its window, its steps and the bar a first trade is priced against.
  int barsNeeded() const { return window + episodeSteps + 1; }
};

// trading-stocks' setup in the catalogue: stocks-v0's window of 30 bars, episodes of 256 steps.
inline TradingSetup stocksSetup() { return {}; }
// The catalogue's setup with what the project chose (trading.reward).
TradingSetup stocksSetup(const EnvironmentData& data);

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
// The training part of a project's series, what its copies trade (the CPU twin's and the device
// twin's); throws std::invalid_argument, saying what to do, when `data` holds no series or one
// that cannot be split so.
std::shared_ptr<const PriceSeries> tradingPart(const EnvironmentData& data, const TradingSetup& setup);

class TradingEnvironments final : public SingleAgentEnvironments {
 public:
  static constexpr int kActions = TradingRules::kActions, kSell = TradingRules::kSell, kBuy = TradingRules::kBuy;
  // scalars()' names, in order: the position (1 long, 0 short); gym-anytrading's total profit
  // (1 is the money the episode started with; it changes on a trade and on the last step); the
  // equity (TradingRules::equity: an open long sold at this step, less the fees); and buy and
  // hold's equity over the same frame (TradingRules::buyAndHoldEquity: `eval`'s comparison).
  static constexpr const char *kPositionScalar = "position", *kTotalProfitScalar = "total_profit", *kEquityScalar = "equity",
                              *kBuyAndHoldScalar = "buy_and_hold";

  // Throws std::invalid_argument when the series is shorter than setup.barsNeeded() or the
  // setup is out of range (window < 1, episodeSteps < 1).
  TradingEnvironments(std::shared_ptr<const PriceSeries> series, TradingSetup setup, int count, std::uint64_t seed);
  // The copies point into this object's prices: it is not copied.
  TradingEnvironments(const TradingEnvironments&) = delete;
  TradingEnvironments& operator=(const TradingEnvironments&) = delete;

  int size() const override { return int(copies_.size()); }
  int observationSize() const { return 2 * setup_.window; }
  // A new episode over a window drawn from the copy's generator.
  void reset(int env) override { TradingRules::reset(at(env)); }
  // gym-anytrading's reset with frame_bound (first, last): the frame is bars
  // [first - window, last); throws std::invalid_argument outside the series or when the frame
  // leaves no step.
  void resetToFrame(int env, int first, int last);
  StepResult step(int env, int action) override { return TradingRules::step(at(env), action); }
  void observe(int env, float* out) const override { TradingRules::observe(copies_[std::size_t(env)], out); }
  std::vector<std::string> scalarNames() const override;
  std::vector<float> scalars(int env) const override;

  TradingPosition position(int env) const { return copies_[std::size_t(env)].position; }
  float totalProfit(int env) const { return copies_[std::size_t(env)].totalProfit; }
  float totalReward(int env) const { return copies_[std::size_t(env)].totalReward; }
  // The series' bar at which the copy's frame starts, and the copy's tick within it.
  int frameBegin(int env) const { return copies_[std::size_t(env)].begin; }
  int tick(int env) const { return copies_[std::size_t(env)].tick; }

 private:
  TradingRules::State& at(int env) { return copies_[std::size_t(env)]; }

  std::shared_ptr<const PriceSeries> series_;
  TradingSetup setup_;
  std::vector<float> prices_, diffs_;  // TradingSeriesView's arrays
  std::vector<TradingRules::State> copies_;
};

// The view over the first `bars` bars of a series' closes that TradingRules reads: prices and
// diffs filled here (`prices`, `diffs` resized), for the CPU twin and for the device twin's
// upload.
TradingSeriesView tradingView(const PriceSeries& series, const TradingSetup& setup, std::vector<float>& prices, std::vector<float>& diffs);

}  // namespace cas::env
