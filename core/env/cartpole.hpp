#pragma once
// Batched CartPole with the dynamics of Gymnasium's CartPole-v1 (Euler integration, float64
// state, float32 observations, termination at |x| > 2.4 or |theta| > 12 degrees, truncation at
// 500 steps, reward 1 per step). Struct of arrays: one array per state variable.
// Thread-safety: distinct games may be stepped from distinct threads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/single_agent.hpp"

namespace cas::env {

class CartPole final : public SingleAgentEnvironments {
 public:
  static constexpr int kObservationSize = 4, kActions = 2, kMaxSteps = 500;

  explicit CartPole(int games, std::uint64_t seed);
  int size() const override { return int(x_.size()); }

  void reset(int game) override;  // each state variable uniform in [-0.05, 0.05), from the game's own generator
  void setState(int game, double x, double xDot, double theta, double thetaDot);
  using StepResult = env::StepResult;
  StepResult step(int game, int action) override;  // action 0 pushes left, 1 right
  void observe(int game, float* out) const override;
  int steps(int game) const { return steps_[size_t(game)]; }

 private:
  std::vector<double> x_, xDot_, theta_, thetaDot_;
  std::vector<int> steps_;
  std::vector<GameRandom> random_;  // per game
};

}  // namespace cas::env
