#pragma once
// Batched MinAtar Asterix with the rules of the `minatar` package: the player moves on rows 1-8
// of a 10x10 grid; enemies and gold enter lanes 1-8 from either side (one per lane at most) and
// cross it; touching gold pays +1 and removes it, touching an enemy ends the episode. Entities
// spawn every 10 steps and move every 5 at first; every 100 steps the difficulty ramps (spawns
// one step sooner, and every other ramp moves one step sooner) down to 1. Sticky actions as
// minatar's Environment wrapper (probability 0.1, the previous action survives a reset).
// Actions are minatar's minimal set: 0 none, 1 left, 2 up, 3 right, 4 down.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 4 x 10 x 10 floats          lane i is row i + 1
//   channel 0 player | 1 enemies | 2 trail (the cell behind each entity) | 3 gold
//
// The random draws (at a spawn: the side, whether it is gold, which free lane; the sticky-action
// draw at a step) can be given, so that a recorded minatar trace is replayed step for step
// (tests/golden/minatar); without them they come from the game's own generator.
// Thread-safety: distinct games may be stepped from distinct threads.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/env/game_random.hpp"
#include "core/env/minatar_sticky.hpp"

namespace cas::env {

class MinAtarAsterix {
 public:
  static constexpr int kRows = 10, kColumns = 10, kChannels = 4, kActions = 5, kLanes = 8;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr int kRampInterval = 100, kInitialSpawnInterval = 10, kInitialMoveInterval = 5;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  // minatar's draws at a spawn: two uniforms (from the left when the first is below 1/2; gold
  // when the second is below 1/3), then the index among the free lanes (only when one is free).
  struct SpawnDraw {
    double side = 0, gold = 0;
    int freeLane = 0;
  };

  MinAtarAsterix(int games, std::uint64_t seed);
  int size() const { return int(games_.size()); }

  void reset(int game);
  struct StepResult {
    float reward;
    bool terminal;
  };
  StepResult step(int game, int action);
  // `stickyDraw` in [0, 1); `spawn`: the draws used if an entity spawns this step.
  StepResult step(int game, int action, double stickyDraw, const SpawnDraw& spawn);
  bool spawnsNext(int game) const;  // whether the next step spawns (and so draws)
  int freeLanes(int game) const;
  int difficulty(int game) const { return games_[size_t(game)].rampIndex; }
  void observe(int game, float* out) const;  // kObservationSize floats
  bool terminal(int game) const { return games_[size_t(game)].terminal; }

 private:
  struct Entity {
    bool present = false, fromLeft = false, gold = false;
    int x = 0;
  };
  struct Game {
    std::array<Entity, kLanes> lanes;  // lane i: row i + 1
    int playerX = 5, playerY = 5;
    int spawnInterval = kInitialSpawnInterval, spawnTimer = kInitialSpawnInterval;
    int moveInterval = kInitialMoveInterval, moveTimer = kInitialMoveInterval;
    int rampTimer = kRampInterval, rampIndex = 0;
    bool terminal = false;
  };
  std::vector<Game> games_;
  std::vector<GameRandom> random_;  // per game
  std::vector<StickyAction> sticky_;  // per game; a reset leaves it
};

}  // namespace cas::env
