#pragma once
// Market making in Avellaneda and Stoikov's model ("High-frequency trading in a limit order
// book", Quantitative Finance 8(3), 2008), with the simulation of its section 4: the agent quotes
// a bid and an ask around a mid price for one unit each, over a horizon T in steps of dt.
//   mid price    s(t + dt) = s(t) +- sigma sqrt(dt), up or down with probability 1/2
//   fills        the bid at s - db is hit with probability A exp(-k db) dt in a step (capped at
//                1), the ask at s + da likewise; a hit bid buys a unit (inventory + 1, cash
//                - (s - db)), a lifted ask sells one
//   wealth       cash + inventory * s; at T the agent's utility is -exp(-gamma * wealth)
// with the paper's s(0) = 100, T = 1, sigma = 2, dt = 0.005 (200 steps), A = 140, k = 1.5,
// gamma = 0.1, starting with no inventory and no cash. Its closed-form quotes (section 3, the
// finite-horizon approximation), the baseline `eval` compares with:
//   reservation price  r = s - q gamma sigma^2 (T - t)
//   spread             da + db = gamma sigma^2 (T - t) + (2 / gamma) ln(1 + gamma / k)
//   quotes             bid r - spread / 2, ask r + spread / 2
//
// Actions: a bid offset and an ask offset, each from the grid 0, 0.25, ..., 2.0 below and above
// the mid: action = 9 * bid index + ask index (81 actions). The inventory is held within
// +-kMaxInventory: a fill past it does not happen. The reward of a step is the change in wealth
// less the mean-variance penalty of the inventory held, (gamma / 2) sigma^2 q^2 dt: for this
// model's wealth, whose variance is the sum of sigma^2 q^2 dt over the steps, maximising its sum
// maximises the mean less gamma / 2 times the variance, a second-order stand-in for the CARA
// utility the baseline maximises (docs/trading.md says why it is not the utility itself). The
// episode ends (terminated: the time left is observed) after 200 steps. Observation: [inventory
// / 10, time left / T].
//
// The rules are static functions compiled for the host and the device (CAS_HD), as CartPole's:
// the CPU twin (MarketMaking) and the CUDA backend's kernels (gpu/env) run the same code. The
// grid's fill probabilities are a table (fillProbability), so no exp is taken on the device and
// the device twin agrees with the CPU twin to the bit; the baseline's quotes, off the grid, are
// stepped on the host only (quote()).
// Thread-safety: MarketMakingRules: static functions over the caller's state; MarketMaking:
// distinct copies may be stepped from distinct threads.
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/single_agent.hpp"
#include "core/support/host_device.hpp"

namespace cas::env {

struct MarketMakingRules {
  static constexpr double kStartMid = 100, kSigma = 2, kHorizon = 1, kDt = 0.005, kA = 140, kK = 1.5, kGamma = 0.1;
  static constexpr double kMidStep = 0.1414213562373095;  // sigma sqrt(dt) = 2 sqrt(0.005), to the last place
  static constexpr int kSteps = 200, kMaxInventory = 50;
  static constexpr int kOffsets = 9, kActions = kOffsets * kOffsets;
  static constexpr double kOffsetStep = 0.25;
  static constexpr int kObservationSize = 2;
  static constexpr bool kSparseObservation = false;

  struct State {
    double mid = kStartMid, cash = 0;
    int inventory = 0, step = 0;
    GameRandom random;
  };

  CAS_HD static void reset(State& s) {
    s.mid = kStartMid;
    s.cash = 0;
    s.inventory = 0;
    s.step = 0;
  }

  CAS_HD static double offset(int index) { return kOffsetStep * index; }
  // A exp(-k offset(index)) dt for the grid's offsets, as Python's math.exp computes them
  // (test_market_making checks the table against std::exp).
  CAS_HD static double fillProbability(int index) {
    constexpr double kTable[kOffsets] = {0.7000000000000001,  0.48110249515368053, 0.3306565869187103,  0.22725672715084483, 0.15619111210390088,
                                         0.10734847679144993, 0.07377945719330503, 0.05070782992397602, 0.03485094785750476};
    return kTable[index];
  }

  CAS_HD static StepResult step(State& s, int action) {
    const int bid = action / kOffsets, ask = action % kOffsets;
    return quote(s, offset(bid), offset(ask), fillProbability(bid), fillProbability(ask));
  }

  // One step with the bid `bidOffset` below the mid and the ask `askOffset` above it, filled with
  // the probabilities given. Three uniform draws a step, in this order whatever the quotes (so
  // that two policies on the same seed see the same mid-price path).
  CAS_HD static StepResult quote(State& s, double bidOffset, double askOffset, double bidFill, double askFill) {
    const double bidDraw = s.random.uniform(), askDraw = s.random.uniform(), midDraw = s.random.uniform();
    const double before = wealth(s);
    if (bidDraw < bidFill && s.inventory < kMaxInventory) {
      s.inventory += 1;
      s.cash -= s.mid - bidOffset;
    }
    if (askDraw < askFill && s.inventory > -kMaxInventory) {
      s.inventory -= 1;
      s.cash += s.mid + askOffset;
    }
    s.mid += midDraw < 0.5 ? kMidStep : -kMidStep;
    s.step += 1;
    const double q = double(s.inventory);
    const double penalty = 0.5 * kGamma * kSigma * kSigma * (q * q) * kDt;
    return {float((wealth(s) - before) - penalty), s.step >= kSteps, false};
  }

  CAS_HD static void observe(const State& s, float* out) {
    out[0] = float(double(s.inventory) / 10.0);
    out[1] = float(double(kSteps - s.step) / double(kSteps));
  }

  CAS_HD static double wealth(const State& s) { return s.cash + double(s.inventory) * s.mid; }
};

// Avellaneda and Stoikov's closed-form quotes for a state: offsets below and above the mid
// (either may be negative: a quote through the mid).
struct OptimalQuotes {
  double bidOffset = 0, askOffset = 0;
};
OptimalQuotes optimalQuotes(const MarketMakingRules::State& s);
// A exp(-k offset) dt, capped at 1 (an offset below 0 raises the intensity past A).
double fillProbabilityAt(double offset);
// -exp(-gamma * wealth): the utility the baseline maximises.
double terminalUtility(double wealth);

class MarketMaking final : public SingleAgentEnvironments {
 public:
  static constexpr int kObservationSize = MarketMakingRules::kObservationSize, kActions = MarketMakingRules::kActions;

  MarketMaking(int count, std::uint64_t seed);
  int size() const override { return int(states_.size()); }
  void reset(int env) override { MarketMakingRules::reset(at(env)); }
  StepResult step(int env, int action) override { return MarketMakingRules::step(at(env), action); }
  void observe(int env, float* out) const override { MarketMakingRules::observe(states_[std::size_t(env)], out); }

  // The closed-form optimum's step for copy `env`.
  StepResult stepOptimally(int env);
  // The grid's action nearest the closed-form quotes (each offset rounded to the grid, clamped).
  int nearestAction(int env) const;
  const MarketMakingRules::State& state(int env) const { return states_[std::size_t(env)]; }

 private:
  MarketMakingRules::State& at(int env) { return states_[std::size_t(env)]; }
  std::vector<MarketMakingRules::State> states_;
};

}  // namespace cas::env
