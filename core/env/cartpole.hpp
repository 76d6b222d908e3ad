#pragma once
// CartPole with the dynamics of Gymnasium's CartPole-v1 (Euler integration, float64 state,
// float32 observations, termination at |x| > 2.4 or |theta| > 12 degrees, truncation at 500
// steps, reward 1 per step). The rules are static functions compiled for the host and the
// device (CAS_HD), over one copy's state, so that the CPU twin (the class CartPole, a batch of
// copies) and the CUDA backend's environment kernels (gpu/env) run the same code.
// Thread-safety: CartPoleRules: static functions over the caller's state; CartPole: distinct
// copies may be stepped from distinct threads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/single_agent.hpp"
#include "core/support/host_device.hpp"

#ifndef __CUDACC__
#include <cmath>
#endif

namespace cas::env {

struct CartPoleRules {
  static constexpr int kObservationSize = 4, kActions = 2, kMaxSteps = 500;
  static constexpr bool kSparseObservation = false;  // four numbers, all written by observe()

  struct State {
    double x = 0, xDot = 0, theta = 0, thetaDot = 0;
    int steps = 0;
    GameRandom random;
  };

  // Each state variable uniform in [-0.05, 0.05), from the copy's own generator.
  CAS_HD static void reset(State& s) {
    const double x = draw(s.random), xDot = draw(s.random), theta = draw(s.random), thetaDot = draw(s.random);
    setState(s, x, xDot, theta, thetaDot);
  }
  CAS_HD static void setState(State& s, double x, double xDot, double theta, double thetaDot) {
    s.x = x;
    s.xDot = xDot;
    s.theta = theta;
    s.thetaDot = thetaDot;
    s.steps = 0;
  }

  // Action 0 pushes left, 1 right. The same operations in the same order as Gymnasium, so
  // results agree to the last bit on the host (the device's cos and sin may differ in the last
  // place: gpu/env's test allows for it).
  CAS_HD static StepResult step(State& s, int action) {
    constexpr double kGravity = 9.8, kCartMass = 1.0, kPoleMass = 0.1, kTotalMass = kCartMass + kPoleMass;
    constexpr double kHalfLength = 0.5, kPoleMassLength = kPoleMass * kHalfLength, kForce = 10.0, kTau = 0.02;
    constexpr double kXLimit = 2.4, kThetaLimit = 12 * 2 * 3.14159265358979323846 / 360;
    const double force = action == 1 ? kForce : -kForce;
    const double c = cos(s.theta), sn = sin(s.theta);
    const double temp = (force + kPoleMassLength * (s.thetaDot * s.thetaDot) * sn) / kTotalMass;
    const double thetaAcc = (kGravity * sn - c * temp) / (kHalfLength * (4.0 / 3.0 - kPoleMass * (c * c) / kTotalMass));
    const double xAcc = temp - kPoleMassLength * thetaAcc * c / kTotalMass;
    s.x = s.x + kTau * s.xDot;
    s.xDot = s.xDot + kTau * xAcc;
    s.theta = s.theta + kTau * s.thetaDot;
    s.thetaDot = s.thetaDot + kTau * thetaAcc;
    ++s.steps;
    const bool terminated = s.x < -kXLimit || s.x > kXLimit || s.theta < -kThetaLimit || s.theta > kThetaLimit;
    return {1.0f, terminated, !terminated && s.steps >= kMaxSteps};
  }

  CAS_HD static void observe(const State& s, float* out) {
    out[0] = float(s.x);
    out[1] = float(s.xDot);
    out[2] = float(s.theta);
    out[3] = float(s.thetaDot);
  }

 private:
  CAS_HD static double draw(GameRandom& r) { return -0.05 + 0.1 * r.uniform(); }
};

class CartPole final : public SingleAgentEnvironments {
 public:
  static constexpr int kObservationSize = CartPoleRules::kObservationSize, kActions = CartPoleRules::kActions;
  static constexpr int kMaxSteps = CartPoleRules::kMaxSteps;

  explicit CartPole(int games, std::uint64_t seed);
  int size() const override { return int(states_.size()); }

  void reset(int game) override { CartPoleRules::reset(at(game)); }
  void setState(int game, double x, double xDot, double theta, double thetaDot) { CartPoleRules::setState(at(game), x, xDot, theta, thetaDot); }
  using StepResult = env::StepResult;
  StepResult step(int game, int action) override { return CartPoleRules::step(at(game), action); }
  void observe(int game, float* out) const override { CartPoleRules::observe(states_[std::size_t(game)], out); }
  int steps(int game) const { return states_[std::size_t(game)].steps; }

 private:
  CartPoleRules::State& at(int game) { return states_[std::size_t(game)]; }
  std::vector<CartPoleRules::State> states_;
};

}  // namespace cas::env
