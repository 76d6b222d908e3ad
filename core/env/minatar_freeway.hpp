#pragma once
// Batched MinAtar Freeway with the rules of the `minatar` package: a chicken crosses eight lanes
// of cars from the bottom row to the top, +1 per crossing (then the cars' speeds and directions
// are drawn again and the chicken starts over at the bottom); a car that reaches the chicken
// sends it back to the bottom; the chicken moves at most once every 3 steps; the episode ends
// after 2500 steps. Sticky actions as minatar's Environment wrapper (probability 0.1, the
// previous action survives a reset). Actions are minatar's minimal set: 0 none, 1 up, 2 down.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 7 x 10 x 10 floats         lane i (car i) is row i + 1
//   channel 0 chicken (column 4) | 1 cars | 2-6 the cell behind a car of speed period 1-5
//
// A car of period p moves one column every p + 1 steps, in its direction, wrapping around.
// The random draws (each car's period and direction, at a reset and after a crossing; the
// sticky-action draw at a step) can be given, so that a recorded minatar trace is replayed step
// for step (tests/golden/minatar); without them they come from the game's own generator.
// Thread-safety: distinct games may be stepped from distinct threads.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/minatar_sticky.hpp"

namespace cas::env {

class MinAtarFreeway {
 public:
  static constexpr int kRows = 10, kColumns = 10, kChannels = 7, kActions = 3, kCars = 8;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr int kMoveEvery = 3, kTimeLimit = 2500;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;
  using CarDraw = std::array<int, kCars>;  // each car's signed period: 1-5 moving right, -1 to -5 left

  MinAtarFreeway(int games, std::uint64_t seed);
  int size() const { return int(games_.size()); }

  void reset(int game);
  void reset(int game, const CarDraw& cars);
  struct StepResult {
    float reward;
    bool terminal;
  };
  StepResult step(int game, int action);
  // `stickyDraw` in [0, 1); `carsAfterCrossing`: the draw used if the chicken crosses this step.
  StepResult step(int game, int action, double stickyDraw, const CarDraw& carsAfterCrossing);
  void observe(int game, float* out) const;  // kObservationSize floats
  bool terminal(int game) const { return games_[size_t(game)].terminal; }

 private:
  struct Car {
    int x = 0, countdown = 0, velocity = 0;  // velocity: the signed period
  };
  struct Game {
    std::array<Car, kCars> cars;
    int chicken = 9, moveTimer = kMoveEvery, stepsLeft = kTimeLimit;
    bool terminal = false;
  };
  CarDraw drawCars(int game);
  std::vector<Game> games_;
  std::vector<GameRandom> random_;  // per game
  std::vector<StickyAction> sticky_;  // per game; a reset leaves it
};

}  // namespace cas::env
