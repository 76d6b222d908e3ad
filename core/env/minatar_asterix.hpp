#pragma once
// MinAtar Asterix with the rules of the `minatar` package: the player moves on rows 1-8 of a
// 10x10 grid; enemies and gold enter lanes 1-8 from either side (one per lane at most) and cross
// it; touching gold pays +1 and removes it, touching an enemy ends the episode. Entities spawn
// every 10 steps and move every 5 at first; every 100 steps the difficulty ramps (spawns one step
// sooner, and every other ramp moves one step sooner) down to 1. Sticky actions as minatar's
// Environment wrapper (probability 0.1, the previous action survives a reset). Actions are
// minatar's minimal set: 0 none, 1 left, 2 up, 3 right, 4 down.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 4 x 10 x 10 floats          lane i is row i + 1
//   channel 0 player | 1 enemies | 2 trail (the cell behind each entity) | 3 gold
//
// Draws (minatar_games.hpp): at a spawn, the side, whether it is gold and which free lane; the
// sticky-action draw at a step.
// Thread-safety: static functions over the caller's state.
#include "core/env/minatar_games.hpp"

namespace cas::env {

struct AsterixRules {
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
  struct Entity {
    bool present = false, fromLeft = false, gold = false;
    int x = 0;
  };
  struct Game {
    Entity lanes[kLanes];  // lane i: row i + 1
    int playerX = 5, playerY = 5;
    int spawnInterval = kInitialSpawnInterval, spawnTimer = kInitialSpawnInterval;
    int moveInterval = kInitialMoveInterval, moveTimer = kInitialMoveInterval;
    int rampTimer = kRampInterval, rampIndex = 0;
    bool terminal = false;
  };
  using State = MinatarState<Game>;

  CAS_HD static void reset(State& state) { state.game = Game{}; }

  CAS_HD static bool spawnsNext(const State& state) { return !state.game.terminal && state.game.spawnTimer == 0; }
  CAS_HD static int freeLanes(const State& state) {
    int free = 0;
    for (const Entity& e : state.game.lanes) free += !e.present;
    return free;
  }
  CAS_HD static int difficulty(const State& state) { return state.game.rampIndex; }

  CAS_HD static MinatarStep step(State& state, int action) {
    GameRandom& r = state.random;
    const double sticky = r.uniform();
    SpawnDraw spawn;
    if (spawnsNext(state)) {
      spawn.side = r.uniform();
      spawn.gold = r.uniform();
      const int free = freeLanes(state);
      spawn.freeLane = free > 0 ? r.below(free) : 0;
    }
    return step(state, action, sticky, spawn);
  }

  // minatar's Asterix `act`, branch for branch; `spawn`: the draws used if an entity spawns.
  CAS_HD static MinatarStep step(State& state, int action, double stickyDraw, const SpawnDraw& spawn) {
    // The minimal set is minatar's actions 0-4.
    const int a = state.sticky.take(grid::clampInt(action, 0, kActions - 1), stickyDraw);
    Game& s = state.game;
    if (s.terminal) return {0.0f, true};
    float reward = 0;

    if (s.spawnTimer == 0) {
      const bool fromLeft = spawn.side < 0.5, gold = spawn.gold < 1.0 / 3.0;
      int seen = 0;
      for (Entity& e : s.lanes)
        if (!e.present && seen++ == spawn.freeLane) e = {true, fromLeft, gold, fromLeft ? 0 : 9};
      s.spawnTimer = s.spawnInterval;
    }

    if (a == 1) s.playerX = grid::maxInt(0, s.playerX - 1);
    else if (a == 3) s.playerX = grid::minInt(9, s.playerX + 1);
    else if (a == 2) s.playerY = grid::maxInt(1, s.playerY - 1);
    else if (a == 4) s.playerY = grid::minInt(8, s.playerY + 1);

    for (int i = 0; i < kLanes; ++i) {
      Entity& e = s.lanes[i];
      if (e.present && e.x == s.playerX && i + 1 == s.playerY) touch(s, e, reward);
    }
    if (s.moveTimer == 0) {
      s.moveTimer = s.moveInterval;
      for (int i = 0; i < kLanes; ++i) {
        Entity& e = s.lanes[i];
        if (!e.present) continue;
        e.x += e.fromLeft ? 1 : -1;
        if (e.x < 0 || e.x > 9) e.present = false;
        else if (e.x == s.playerX && i + 1 == s.playerY) touch(s, e, reward);
      }
    }
    s.spawnTimer -= 1;
    s.moveTimer -= 1;

    if (s.spawnInterval > 1 || s.moveInterval > 1) {
      if (s.rampTimer >= 0) {
        s.rampTimer -= 1;
      } else {
        if (s.moveInterval > 1 && s.rampIndex % 2) s.moveInterval -= 1;
        if (s.spawnInterval > 1) s.spawnInterval -= 1;
        s.rampIndex += 1;
        s.rampTimer = kRampInterval;
      }
    }
    return {reward, s.terminal};
  }

  // The observation's ones, into `out` already zero (observeMinatar clears it first; the device
  // kernels clear the row in 16-byte stores).
  CAS_HD static void mark(const State& state, float* out) {
    const Game& s = state.game;
    grid::cell(out, 0, s.playerY, s.playerX) = 1;
    for (int i = 0; i < kLanes; ++i) {
      const Entity& e = s.lanes[i];
      if (!e.present) continue;
      grid::cell(out, e.gold ? 3 : 1, i + 1, e.x) = 1;
      const int back = e.fromLeft ? e.x - 1 : e.x + 1;
      if (back >= 0 && back <= 9) grid::cell(out, 2, i + 1, back) = 1;
    }
  }

 private:
  CAS_HD static void touch(Game& s, Entity& e, float& reward) {
    if (e.gold) {
      e.present = false;
      reward += 1;
    } else {
      s.terminal = true;
    }
  }
};

using MinAtarAsterix = MinAtarGames<AsterixRules>;

}  // namespace cas::env
