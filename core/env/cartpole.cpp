#include "core/env/cartpole.hpp"

#include <cmath>

namespace cas::env {
namespace {
constexpr double kGravity = 9.8, kCartMass = 1.0, kPoleMass = 0.1, kTotalMass = kCartMass + kPoleMass;
constexpr double kHalfLength = 0.5, kPoleMassLength = kPoleMass * kHalfLength, kForce = 10.0, kTau = 0.02;
constexpr double kXLimit = 2.4, kThetaLimit = 12 * 2 * M_PI / 360;
}  // namespace

CartPole::CartPole(int games, std::uint64_t seed)
    : x_(size_t(games)), xDot_(size_t(games)), theta_(size_t(games)), thetaDot_(size_t(games)), steps_(size_t(games)) {
  for (int g = 0; g < games; ++g) random_.push_back(GameRandom::forGame(seed, g));
  for (int g = 0; g < games; ++g) reset(g);
}

void CartPole::reset(int g) {
  GameRandom& r = random_[size_t(g)];
  auto draw = [&r] { return -0.05 + 0.1 * r.uniform(); };
  const double x = draw(), xDot = draw(), theta = draw(), thetaDot = draw();
  setState(g, x, xDot, theta, thetaDot);
}

void CartPole::setState(int g, double x, double xDot, double theta, double thetaDot) {
  const auto i = size_t(g);
  x_[i] = x;
  xDot_[i] = xDot;
  theta_[i] = theta;
  thetaDot_[i] = thetaDot;
  steps_[i] = 0;
}

CartPole::StepResult CartPole::step(int g, int action) {
  const auto i = size_t(g);
  // The same operations in the same order as Gymnasium, so results agree to the last bit.
  const double force = action == 1 ? kForce : -kForce;
  const double c = std::cos(theta_[i]), s = std::sin(theta_[i]);
  const double temp = (force + kPoleMassLength * (thetaDot_[i] * thetaDot_[i]) * s) / kTotalMass;
  const double thetaAcc = (kGravity * s - c * temp) / (kHalfLength * (4.0 / 3.0 - kPoleMass * (c * c) / kTotalMass));
  const double xAcc = temp - kPoleMassLength * thetaAcc * c / kTotalMass;
  x_[i] = x_[i] + kTau * xDot_[i];
  xDot_[i] = xDot_[i] + kTau * xAcc;
  theta_[i] = theta_[i] + kTau * thetaDot_[i];
  thetaDot_[i] = thetaDot_[i] + kTau * thetaAcc;
  ++steps_[i];
  const bool terminated = x_[i] < -kXLimit || x_[i] > kXLimit || theta_[i] < -kThetaLimit || theta_[i] > kThetaLimit;
  return {1.0f, terminated, !terminated && steps_[i] >= kMaxSteps};
}

void CartPole::observe(int g, float* out) const {
  const auto i = size_t(g);
  out[0] = float(x_[i]);
  out[1] = float(xDot_[i]);
  out[2] = float(theta_[i]);
  out[3] = float(thetaDot_[i]);
}

}  // namespace cas::env
