// Avellaneda and Stoikov's market making (market_making.hpp): the CPU twin's copies, the closed-
// form quotes and the utility `eval` judges by.
#include "core/env/market_making.hpp"

#include <algorithm>
#include <cmath>

namespace cas::env {

using Rules = MarketMakingRules;

OptimalQuotes optimalQuotes(const Rules::State& s) {
  const double timeLeft = Rules::kHorizon - double(s.step) * Rules::kDt;
  const double variance = Rules::kGamma * Rules::kSigma * Rules::kSigma * timeLeft;
  const double reservation = s.mid - double(s.inventory) * variance;
  const double spread = variance + (2.0 / Rules::kGamma) * std::log(1.0 + Rules::kGamma / Rules::kK);
  return {s.mid - (reservation - spread / 2), (reservation + spread / 2) - s.mid};
}

double fillProbabilityAt(double offset) { return std::min(1.0, Rules::kA * std::exp(-Rules::kK * offset) * Rules::kDt); }

double terminalUtility(double wealth) { return -std::exp(-Rules::kGamma * wealth); }

MarketMaking::MarketMaking(int count, std::uint64_t seed) : states_(std::size_t(count < 0 ? 0 : count)) {
  for (int g = 0; g < count; ++g) {
    at(g).random = GameRandom::forGame(seed, g);
    Rules::reset(at(g));
  }
}

StepResult MarketMaking::stepOptimally(int env) {
  const OptimalQuotes q = optimalQuotes(at(env));
  return Rules::quote(at(env), q.bidOffset, q.askOffset, fillProbabilityAt(q.bidOffset), fillProbabilityAt(q.askOffset));
}

int MarketMaking::nearestAction(int env) const {
  const OptimalQuotes q = optimalQuotes(state(env));
  auto index = [](double offset) { return std::clamp(int(std::lround(offset / Rules::kOffsetStep)), 0, Rules::kOffsets - 1); };
  return index(q.bidOffset) * Rules::kOffsets + index(q.askOffset);
}

}  // namespace cas::env
