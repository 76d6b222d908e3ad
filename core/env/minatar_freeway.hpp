#pragma once
// MinAtar Freeway with the rules of the `minatar` package: a chicken crosses eight lanes of cars
// from the bottom row to the top, +1 per crossing (then the cars' speeds and directions are drawn
// again and the chicken starts over at the bottom); a car that reaches the chicken sends it back
// to the bottom; the chicken moves at most once every 3 steps; the episode ends after 2500 steps.
// Sticky actions as minatar's Environment wrapper (probability 0.1, the previous action survives
// a reset). Actions are minatar's minimal set: 0 none, 1 up, 2 down.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 7 x 10 x 10 floats         lane i (car i) is row i + 1
//   channel 0 chicken (column 4) | 1 cars | 2-6 the cell behind a car of speed period 1-5
//
// A car of period p moves one column every p + 1 steps, in its direction, wrapping around.
// Draws (minatar_games.hpp): each car's period and direction, at a reset and after a crossing;
// the sticky-action draw at a step.
// Thread-safety: static functions over the caller's state.
#include <cstddef>

#include "core/env/minatar_games.hpp"

namespace cas::env {

struct FreewayRules {
  static constexpr int kRows = 10, kColumns = 10, kChannels = 7, kActions = 3, kCars = 8;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr int kMoveEvery = 3, kTimeLimit = 2500;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  // Each car's signed period: 1-5 moving right, -1 to -5 left.
  struct CarDraw {
    int period[kCars] = {};
    CAS_HD int& operator[](std::size_t i) { return period[i]; }
    CAS_HD int operator[](std::size_t i) const { return period[i]; }
    static constexpr std::size_t size() { return kCars; }
  };
  struct Car {
    int x = 0, countdown = 0, velocity = 0;  // velocity: the signed period
  };
  struct Game {
    Car cars[kCars];
    int chicken = 9, moveTimer = kMoveEvery, stepsLeft = kTimeLimit;
    bool terminal = false;
  };
  using State = MinatarState<Game>;

  // minatar draws the eight periods, then the eight directions (sign of a uniform - 0.5).
  CAS_HD static CarDraw drawCars(GameRandom& r) {
    CarDraw cars;
    for (int& c : cars.period) c = 1 + r.below(5);
    for (int& c : cars.period) c *= r.uniform() < 0.5 ? -1 : 1;
    return cars;
  }

  CAS_HD static void reset(State& state) { reset(state, drawCars(state.random)); }
  CAS_HD static void reset(State& state, const CarDraw& draw) {
    Game& s = state.game;
    s = Game{};
    for (int i = 0; i < kCars; ++i) s.cars[i] = {0, grid::absInt(draw[std::size_t(i)]), draw[std::size_t(i)]};
  }

  CAS_HD static MinatarStep step(State& state, int action) {
    const double sticky = state.random.uniform();
    // The draw is made only when it is used, as minatar makes it only after a crossing.
    const Game& s = state.game;
    const int a = state.sticky.peek(minatarAction(action), sticky);
    const bool crosses = !s.terminal && a == 2 && s.moveTimer == 0 && s.chicken == 1;
    return step(state, action, sticky, crosses ? drawCars(state.random) : CarDraw{});
  }

  // minatar's Freeway `act`, branch for branch; `carsAfterCrossing`: the draw used if the chicken
  // crosses this step.
  CAS_HD static MinatarStep step(State& state, int action, double stickyDraw, const CarDraw& carsAfterCrossing) {
    const int a = state.sticky.take(minatarAction(action), stickyDraw);
    Game& s = state.game;
    if (s.terminal) return {0.0f, true};
    float reward = 0;
    if (a == 2 && s.moveTimer == 0) {
      s.moveTimer = kMoveEvery;
      s.chicken = grid::maxInt(0, s.chicken - 1);
    } else if (a == 4 && s.moveTimer == 0) {
      s.moveTimer = kMoveEvery;
      s.chicken = grid::minInt(9, s.chicken + 1);
    }
    if (s.chicken == 0) {  // across: new periods and directions, the cars stay where they are
      reward += 1;
      for (int i = 0; i < kCars; ++i) {
        s.cars[i].countdown = grid::absInt(carsAfterCrossing[std::size_t(i)]);
        s.cars[i].velocity = carsAfterCrossing[std::size_t(i)];
      }
      s.chicken = 9;
    }
    for (int i = 0; i < kCars; ++i) {
      Car& c = s.cars[i];
      const int lane = i + 1;
      if (c.x == 4 && lane == s.chicken) s.chicken = 9;
      if (c.countdown == 0) {
        c.countdown = grid::absInt(c.velocity);
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

  // The observation's ones, into `out` already zero (observeMinatar clears it first; the device
  // kernels clear the row in 16-byte stores).
  CAS_HD static void mark(const State& state, float* out) {
    const Game& s = state.game;
    grid::cell(out, 0, s.chicken, 4) = 1;
    for (int i = 0; i < kCars; ++i) {
      const Car& c = s.cars[i];
      grid::cell(out, 1, i + 1, c.x) = 1;
      int back = c.velocity > 0 ? c.x - 1 : c.x + 1;
      if (back < 0) back = 9;
      else if (back > 9) back = 0;
      grid::cell(out, 1 + grid::absInt(c.velocity), i + 1, back) = 1;
    }
  }

 private:
  // minatar's action numbers for our minimal set (none, up, down): 0, 2, 4.
  CAS_HD static int minatarAction(int action) { return 2 * grid::clampInt(action, 0, kActions - 1); }
};

using MinAtarFreeway = MinAtarGames<FreewayRules>;

}  // namespace cas::env
