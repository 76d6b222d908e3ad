#include "core/env/minatar_freeway.hpp"

#include <algorithm>
#include <cstdlib>

namespace cas::env {
namespace {

constexpr int kMinatarAction[MinAtarFreeway::kActions] = {0, 2, 4};  // none, up, down

}  // namespace

MinAtarFreeway::MinAtarFreeway(int games, std::uint64_t seed) : games_(size_t(games)), sticky_(size_t(games)) {
  for (int g = 0; g < games; ++g) random_.push_back(GameRandom::forGame(seed, g));
  for (int g = 0; g < games; ++g) reset(g);
}

// minatar draws the eight periods, then the eight directions (sign of a uniform - 0.5).
MinAtarFreeway::CarDraw MinAtarFreeway::drawCars(int game) {
  GameRandom& r = random_[size_t(game)];
  CarDraw cars;
  for (int& c : cars) c = 1 + r.below(5);
  for (int& c : cars) c *= r.uniform() < 0.5 ? -1 : 1;
  return cars;
}

void MinAtarFreeway::reset(int game) { reset(game, drawCars(game)); }

void MinAtarFreeway::reset(int game, const CarDraw& draw) {
  Game& s = games_[size_t(game)];
  s = Game{};
  for (int i = 0; i < kCars; ++i) s.cars[size_t(i)] = {0, std::abs(draw[size_t(i)]), draw[size_t(i)]};
}

MinAtarFreeway::StepResult MinAtarFreeway::step(int game, int action) {
  const double sticky = random_[size_t(game)].uniform();
  // The draw is made only when it is used, as minatar makes it only after a crossing.
  Game& s = games_[size_t(game)];
  const int a = sticky_[size_t(game)].peek(kMinatarAction[std::clamp(action, 0, kActions - 1)], sticky);
  const bool crosses = !s.terminal && a == 2 && s.moveTimer == 0 && s.chicken == 1;
  return step(game, action, sticky, crosses ? drawCars(game) : CarDraw{});
}

// minatar's Freeway `act`, branch for branch.
MinAtarFreeway::StepResult MinAtarFreeway::step(int game, int action, double stickyDraw, const CarDraw& carsAfterCrossing) {
  Game& s = games_[size_t(game)];
  const int a = sticky_[size_t(game)].take(kMinatarAction[std::clamp(action, 0, kActions - 1)], stickyDraw);
  if (s.terminal) return {0.0f, true};
  float reward = 0;
  if (a == 2 && s.moveTimer == 0) {
    s.moveTimer = kMoveEvery;
    s.chicken = std::max(0, s.chicken - 1);
  } else if (a == 4 && s.moveTimer == 0) {
    s.moveTimer = kMoveEvery;
    s.chicken = std::min(9, s.chicken + 1);
  }
  if (s.chicken == 0) {  // across: new periods and directions, the cars stay where they are
    reward += 1;
    for (int i = 0; i < kCars; ++i) {
      s.cars[size_t(i)].countdown = std::abs(carsAfterCrossing[size_t(i)]);
      s.cars[size_t(i)].velocity = carsAfterCrossing[size_t(i)];
    }
    s.chicken = 9;
  }
  for (int i = 0; i < kCars; ++i) {
    Car& c = s.cars[size_t(i)];
    const int lane = i + 1;
    if (c.x == 4 && lane == s.chicken) s.chicken = 9;
    if (c.countdown == 0) {
      c.countdown = std::abs(c.velocity);
      c.x += c.velocity > 0 ? 1 : -1;
      if (c.x < 0) c.x = 9;
      else if (c.x > 9) c.x = 0;
      if (c.x == 4 && lane == s.chicken) s.chicken = 9;
    } else {
      c.countdown -= 1;
    }
  }
  s.moveTimer -= s.moveTimer > 0;
  s.stepsLeft -= 1;
  if (s.stepsLeft < 0) s.terminal = true;
  return {reward, s.terminal};
}

void MinAtarFreeway::observe(int game, float* out) const {
  const Game& s = games_[size_t(game)];
  std::fill(out, out + kObservationSize, 0.0f);
  auto at = [out](int channel, int row, int column) -> float& { return out[(channel * kRows + row) * kColumns + column]; };
  at(0, s.chicken, 4) = 1;
  for (int i = 0; i < kCars; ++i) {
    const Car& c = s.cars[size_t(i)];
    at(1, i + 1, c.x) = 1;
    int back = c.velocity > 0 ? c.x - 1 : c.x + 1;
    if (back < 0) back = 9;
    else if (back > 9) back = 0;
    at(1 + std::abs(c.velocity), i + 1, back) = 1;
  }
}

}  // namespace cas::env
