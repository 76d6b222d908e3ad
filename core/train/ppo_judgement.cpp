// What `eval` reports of a PPO run beyond its episodes' returns, for the environments that have a
// yardstick: a trading run on its series' held-out part against buy and hold, and a market-making
// run against Avellaneda and Stoikov's closed-form quotes on the same episodes.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/env/environments.hpp"
#include "core/env/market_making.hpp"
#include "core/env/trading.hpp"
#include "core/project/project.hpp"
#include "core/train/ppo.hpp"
#include "core/train/ppo_math.hpp"

namespace cas::train {
namespace {

// Terminal wealth, utility and inventory summed over episodes, then summarised.
struct QuotingSums {
  double utility = 0, wealth = 0, wealthSquares = 0, absInventory = 0;
  int episodes = 0;
  void add(const env::MarketMakingRules::State& s) {
    const double w = env::MarketMakingRules::wealth(s);
    utility += env::terminalUtility(w);
    wealth += w;
    wealthSquares += w * w;
    absInventory += std::abs(double(s.inventory));
    ++episodes;
  }
  QuotingResult result() const {
    QuotingResult r;
    const double n = episodes;
    r.meanUtility = utility / n;
    r.certaintyEquivalent = -std::log(-r.meanUtility) / env::MarketMakingRules::kGamma;
    r.meanWealth = wealth / n;
    r.wealthStd = std::sqrt(std::max(0.0, wealthSquares / n - r.meanWealth * r.meanWealth));
    r.meanAbsInventory = absInventory / n;
    return r;
  }
};

}  // namespace

std::optional<HeldOutResult> PpoTrainer::heldOut() {
  const env::EnvironmentInfo& info = *env::findEnvironment(project_.environment);
  if (!info.needsSeries || !project_.series) return std::nullopt;
  HeldOutResult out;
  out.file = project_.series->file;
  out.seriesBars = project_.series->size();
  out.firstBar = env::trainingBars(out.seriesBars, params_.getFloat("trading.train_fraction"));
  // One copy trades; the inference program's other rows hold its first observation, unused.
  const env::TradingSetup setup = env::stocksSetup(project::environmentData(project_));
  env::TradingEnvironments policy(project_.series, setup, 1, 0), hold(project_.series, setup, 1, 0);
  policy.resetToFrame(0, out.firstBar, out.seriesBars);
  hold.resetToFrame(0, out.firstBar, out.seriesBars);
  const auto obs = size_t(obsSize_);
  std::vector<float> observations(size_t(ppo_.envs) * obs), logits;
  for (int e = 0; e < int(ppo_.envs); ++e) policy.observe(0, &observations[size_t(e) * obs]);
  for (bool ended = false; !ended;) {
    forward(observations, &logits, nullptr);
    const env::TradingPosition before = policy.position(0);
    const env::StepResult step = policy.step(0, ppo_math::greedyAction(logits.data(), actions_));
    out.policyReward += step.reward;
    out.trades += policy.position(0) != before;
    out.longSteps += policy.position(0) == env::TradingPosition::Long;
    ++out.steps;
    ended = step.truncated || step.terminated;
    policy.observe(0, observations.data());
    hold.step(0, env::TradingEnvironments::kBuy);
  }
  out.policyProfit = policy.totalProfit(0);
  out.buyAndHoldProfit = hold.totalProfit(0);
  out.firstClose = project_.series->close[size_t(out.firstBar + 1)];  // the first step's bar: where buy and hold buys
  out.lastClose = project_.series->close.back();
  return out;
}

std::optional<OptimumComparison> PpoTrainer::againstOptimum(int episodes, std::uint64_t seed) {
  using Rules = env::MarketMakingRules;
  if (project_.environment != "market-making" || episodes < 1) return std::nullopt;
  // Copy g of each batch is seeded alike: the same draws, so the same mid-price path whatever
  // the quotes (market_making.hpp's quote draws three numbers a step, always).
  env::MarketMaking policy(episodes, seed), optimum(episodes, seed), onGrid(episodes, seed);
  const int batch = int(ppo_.envs);
  const auto obs = size_t(obsSize_);
  std::vector<float> observations(size_t(batch) * obs), logits;
  for (int first = 0; first < episodes; first += batch) {
    const int count = std::min(batch, episodes - first);
    for (int step = 0; step < Rules::kSteps; ++step) {
      // Rows past `count` keep the last chunk's observations: computed, not used.
      for (int e = 0; e < count; ++e) policy.observe(first + e, &observations[size_t(e) * obs]);
      forward(observations, &logits, nullptr);
      for (int e = 0; e < count; ++e) policy.step(first + e, ppo_math::greedyAction(&logits[size_t(e) * size_t(actions_)], actions_));
    }
  }
  QuotingSums sums[3];
  for (int g = 0; g < episodes; ++g) {
    for (int step = 0; step < Rules::kSteps; ++step) {
      optimum.stepOptimally(g);
      onGrid.step(g, onGrid.nearestAction(g));
    }
    sums[0].add(policy.state(g));
    sums[1].add(optimum.state(g));
    sums[2].add(onGrid.state(g));
  }
  return OptimumComparison{episodes, seed, sums[0].result(), sums[1].result(), sums[2].result()};
}

}  // namespace cas::train
