#include "core/train/report_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/support/json_string.hpp"

namespace cas::train {
namespace {

// Numbers for JSON, which has no NaN or infinity: those are written as null, and the field that
// holds one is remembered so that the object can name it ("not_finite").
class JsonNumbers {
 public:
  std::string number(const char* field, double v, int digits = 5) {
    if (std::isfinite(v)) {
      char b[32];
      std::snprintf(b, sizeof b, "%.*g", digits, v);
      return b;
    }
    if (std::find(fields_.begin(), fields_.end(), field) == fields_.end()) fields_.push_back(field);
    return "null";
  }
  std::string array(const char* field, const std::vector<float>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + number(field, v[i]);
    return s + "]";
  }
  // ", "not_finite": ["q", "prior"], "not_finite_reason": REASON", or nothing when every number was one.
  std::string notFinite(const std::string& reason) const {
    if (fields_.empty()) return {};
    std::string s = ", \"not_finite\": [";
    for (size_t i = 0; i < fields_.size(); ++i) s += (i ? ", " : "") + jsonString(fields_[i]);
    return s + "], \"not_finite_reason\": " + jsonString(reason);
  }

 private:
  std::vector<std::string> fields_;
};

std::string intArray(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::string analysisJson(const std::string& moves, const env::BoardGames& board, const search::RootStats& r) {
  // A legal move whose logit is not a number has no prior either (the search gives it no weight).
  std::vector<float> prior = r.prior;
  for (size_t a = 0; a < prior.size() && a < r.logits.size(); ++a)
    if (!std::isfinite(r.logits[a]) && board.legal(0, int(a))) prior[a] = std::numeric_limits<float>::quiet_NaN();
  JsonNumbers numbers;
  const std::string value = numbers.number("value", r.value), q = numbers.array("q", r.q), priors = numbers.array("prior", prior);
  std::string pv = "[";
  for (size_t i = 0; i < r.pv.size(); ++i) pv += (i ? ", " : "") + jsonString(board.actionName(r.pv[i]));
  return "{\"position\": " + jsonString(moves) + ", \"move\": " + jsonString(board.actionName(r.chosen)) + ", \"value\": " + value +
         ", \"visits\": " + intArray(r.visits) + ", \"q\": " + q + ", \"prior\": " + priors + ", \"pv\": " + pv + "]" +
         numbers.notFinite("the network's output or the search's statistics are not finite numbers (NaN or infinite) there, printed as null") + "}";
}

std::string episodesJson(const EpisodeEvaluation& r, bool sampled, std::uint64_t seed, double seconds) {
  JsonNumbers numbers;  // returns of NaN (an environment or a policy gone wrong) are null, not nan
  const std::string mean = numbers.number("mean_return", r.mean(), 6), median = numbers.number("median_return", r.median(), 6);
  const std::string deviation = numbers.number("std_return", r.standardDeviation(), 6);
  const auto bad = std::count_if(r.returns.begin(), r.returns.end(), [](double x) { return !std::isfinite(x); });
  char b[256];
  std::snprintf(b, sizeof b, "{\"episodes\": %zu, \"mean_return\": %s, \"median_return\": %s, \"std_return\": %s, \"actions\": \"%s\", \"seed\": %llu, \"seconds\": %.3f",
                r.returns.size(), mean.c_str(), median.c_str(), deviation.c_str(), sampled ? "sampled" : "greedy", static_cast<unsigned long long>(seed), seconds);
  return b + numbers.notFinite(std::to_string(bad) + " of the " + std::to_string(r.returns.size()) +
                               " episodes' returns are not finite numbers (NaN or infinite), so their summaries are printed as null") + "}";
}

std::string heldOutJson(const HeldOutResult& r) {
  JsonNumbers numbers;
  const std::string policy = numbers.number("policy_profit", r.policyProfit, 7), hold = numbers.number("buy_and_hold_profit", r.buyAndHoldProfit, 7);
  const std::string reward = numbers.number("policy_reward", r.policyReward, 7);
  char b[512];
  std::snprintf(b, sizeof b, "{\"first_bar\": %d, \"bars\": %d, \"steps\": %d, \"trades\": %d, \"long_steps\": %d, \"policy_profit\": %s, \"policy_reward\": %s, \"buy_and_hold_profit\": %s",
                r.firstBar, r.seriesBars - r.firstBar, r.steps, r.trades, r.longSteps, policy.c_str(), reward.c_str(), hold.c_str());
  return b + numbers.notFinite("a profit is not a finite number") + "}";
}

std::string optimumJson(const OptimumComparison& c) {
  JsonNumbers numbers;
  auto row = [&](const char* name, const QuotingResult& r) {
    std::string out = std::string("\"") + name + "\": {";
    const std::pair<const char*, double> fields[] = {{"mean_utility", r.meanUtility},   {"certainty_equivalent", r.certaintyEquivalent},
                                                     {"mean_wealth", r.meanWealth},     {"wealth_std", r.wealthStd},
                                                     {"mean_abs_inventory", r.meanAbsInventory}};
    for (const auto& [field, value] : fields) out += std::string(out.back() == '{' ? "" : ", ") + "\"" + field + "\": " + numbers.number(field, value, 9);
    return out + "}";
  };
  return "{\"episodes\": " + std::to_string(c.episodes) + ", \"seed\": " + std::to_string(c.seed) + ", " + row("policy", c.policy) + ", " +
         row("closed_form", c.optimum) + ", " + row("closed_form_on_grid", c.optimumOnGrid) +
         numbers.notFinite("a utility or wealth is not a finite number") + "}";
}

}  // namespace cas::train
