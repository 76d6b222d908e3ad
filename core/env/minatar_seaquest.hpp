#pragma once
// MinAtar Seaquest with the rules of the `minatar` package: a submarine (front and back cell, so
// its heading shows) moves on rows 0-8 and fires sideways (at most once every 5 steps); enemy
// fish and subs enter lanes 1-8 from either side and cross them, the subs firing every 11 steps;
// +1 per enemy hit. Divers cross the lanes too; the submarine picks them up (6 at most). Oxygen
// (200) runs down below the surface (row 0); surfacing with divers refills it and drops one
// diver, or with 6 drops them all and pays 1 per tenth of oxygen left; each surfacing ramps the
// difficulty (enemies spawn one step sooner, from every 20 steps down to every step, and every
// other ramp move one step sooner, down to every 3rd step). An enemy, an enemy bullet, running
// out of oxygen or surfacing without a diver end the episode. Sticky actions as minatar's
// Environment wrapper (probability 0.1, the previous action survives a reset). Actions are
// minatar's minimal set, all six: 0 none, 1 left, 2 up, 3 right, 4 down, 5 fire.
//
// Observation of one game, channels first (PDL's conv2d layout), 0 or 1:
//
//   [channel][row][column], 10 x 10 x 10 floats          lane i is row i
//   channel 0 submarine's front | 1 its back | 2 its bullets | 3 trail (the cell behind each enemy
//   and diver) | 4 enemy bullets | 5 enemy fish | 6 enemy subs | 7 oxygen gauge (row 9, a cell
//   per tenth) | 8 divers gauge (row 9, columns 8 down) | 9 divers
//
// minatar keeps its entities in Python lists, walks them newest first (reversed) while removing
// from them, and removes by value (list.remove: the first element equal to the one meant, which
// can be another equal one; the walk's index then meets the moved one again). The lists here
// are arrays in Python's order, walked and removed from the same way, so the twin stays minatar's
// step for step even then. Their sizes are bounds of the rules, not of a policy:
//   the submarine's bullets   2   one shot per 5 steps, gone within 10
//   divers                    2   one spawn per 30 steps, gone within 60 (a move per 6 steps)
//   fish, subs                32  spawns at most one per step and an enemy leaves within
//                                 10 (m + 1) steps at move interval m; m = 2 from the 6th
//                                 ramp on, and before it spawns are 15+ steps apart: <= 30 + 2
//   enemy bullets             32  each lives 10 steps and a sub fires once per 11: at most
//                                 one per sub alive 10 steps before
// (append keeps to them should a rule be misread, rather than write past the array).
//
// Draws (minatar_games.hpp): when an enemy is due, the side, whether it is a sub and its lane
// (drawn even when the spawn is cancelled: an enemy heading the other way in the lane); when a
// diver is due, the side and the lane; the sticky-action draw at a step, first.
// Thread-safety: static functions over the caller's state.
#include <cstdint>

#include "core/env/minatar_games.hpp"

namespace cas::env {

struct SeaquestRules {
  static constexpr int kRows = 10, kColumns = 10, kChannels = 10, kActions = 6;
  static constexpr int kObservationSize = kChannels * kRows * kColumns;
  static constexpr int kMaxOxygen = 200, kInitialSpawnInterval = 20, kDiverSpawnInterval = 30, kInitialMoveInterval = 5;
  static constexpr int kShotCoolDown = 5, kEnemyShotInterval = 10, kDiverMoveInterval = 5, kMaxDivers = 6;
  static constexpr double kStickyActionProbability = kMinatarStickyProbability;

  // minatar's draws when an enemy is due: two uniforms (from the left when the first is below
  // 1/2, a sub when the second is below 1/3) and the lane (randint(1, 9): 1-8).
  struct EnemyDraw {
    double side = 0, sub = 0;
    int lane = 1;
  };
  // When a diver is due: a uniform (from the left below 1/2) and the lane, 1-8.
  struct DiverDraw {
    double side = 0;
    int lane = 1;
  };
  struct SpawnDraws {
    EnemyDraw enemy;
    DiverDraw diver;
  };

  // One of minatar's list entries: [x, y, heading right, move timer, shot timer]. Fish and
  // divers have no shot timer, bullets no timers (0 here: minatar's equality compares entries of
  // one list, which all have the same fields).
  struct Entity {
    std::int8_t x = 0, y = 0;
    bool right = false;
    std::int8_t moveTimer = 0, shotTimer = 0;
  };
  template <int N>
  struct Entities {
    Entity item[N];
    int count = 0;

    CAS_HD void append(const Entity& e) {
      if (count < N) item[count++] = e;
    }
    CAS_HD void removeAt(int i) {
      for (int k = i; k + 1 < count; ++k) item[k] = item[k + 1];
      --count;
    }
    // Python's list.remove: the first element equal to `e` goes (`e` is one of them); its index.
    CAS_HD int remove(Entity e) {
      int i = 0;
      while (i < count && !same(item[i], e)) ++i;
      if (i < count) removeAt(i);
      return i;
    }
    // The first entry in the cell of `e`, or -1.
    CAS_HD int firstAt(const Entity& e) const {
      for (int i = 0; i < count; ++i)
        if (item[i].x == e.x && item[i].y == e.y) return i;
      return -1;
    }
  };
  static constexpr int kBulletCapacity = 2, kDiverCapacity = 2, kEnemyCapacity = 32;

  struct Game {
    Entities<kBulletCapacity> bullets;  // the submarine's
    Entities<kEnemyCapacity> enemyBullets, fish, subs;
    Entities<kDiverCapacity> divers;
    int subX = 5, subY = 0;
    bool facingRight = false;
    int oxygen = kMaxOxygen, diverCount = 0, shotTimer = 0;
    int spawnInterval = kInitialSpawnInterval, spawnTimer = kInitialSpawnInterval, diverSpawnTimer = kDiverSpawnInterval;
    int moveInterval = kInitialMoveInterval, rampIndex = 0;
    bool surfaced = true, terminal = false;
  };
  using State = MinatarState<Game>;

  CAS_HD static void reset(State& state) { state.game = Game{}; }

  CAS_HD static bool enemySpawnsNext(const State& state) { return !state.game.terminal && state.game.spawnTimer == 0; }
  CAS_HD static bool diverSpawnsNext(const State& state) { return !state.game.terminal && state.game.diverSpawnTimer == 0; }
  CAS_HD static int difficulty(const State& state) { return state.game.rampIndex; }

  CAS_HD static MinatarStep step(State& state, int action) {
    GameRandom& r = state.random;
    const double sticky = r.uniform();
    SpawnDraws draws;
    if (enemySpawnsNext(state)) {
      draws.enemy.side = r.uniform();
      draws.enemy.sub = r.uniform();
      draws.enemy.lane = 1 + r.below(8);
    }
    if (diverSpawnsNext(state)) {
      draws.diver.side = r.uniform();
      draws.diver.lane = 1 + r.below(8);
    }
    return step(state, action, sticky, draws);
  }

  // minatar's Seaquest `act`, branch for branch; `draws`: those used if an enemy or a diver is due.
  CAS_HD static MinatarStep step(State& state, int action, double stickyDraw, const SpawnDraws& draws) {
    // The minimal set is minatar's actions 0-5.
    const int a = state.sticky.take(grid::clampInt(action, 0, kActions - 1), stickyDraw);
    Game& s = state.game;
    if (s.terminal) return {0.0f, true};
    int reward = 0;

    if (s.spawnTimer == 0) {
      spawnEnemy(s, draws.enemy);
      s.spawnTimer = s.spawnInterval;
    }
    if (s.diverSpawnTimer == 0) {
      const bool fromLeft = draws.diver.side < 0.5;
      s.divers.append(entity(fromLeft ? 0 : 9, draws.diver.lane, fromLeft, kDiverMoveInterval, 0));
      s.diverSpawnTimer = kDiverSpawnInterval;
    }

    if (a == 5 && s.shotTimer == 0) {
      s.bullets.append(entity(s.subX, s.subY, s.facingRight, 0, 0));
      s.shotTimer = kShotCoolDown;
    } else if (a == 1) {
      s.subX = grid::maxInt(0, s.subX - 1);
      s.facingRight = false;
    } else if (a == 3) {
      s.subX = grid::minInt(9, s.subX + 1);
      s.facingRight = true;
    } else if (a == 2) {
      s.subY = grid::maxInt(0, s.subY - 1);
    } else if (a == 4) {
      s.subY = grid::minInt(8, s.subY + 1);
    }

    moveBullets(s, reward);
    moveDivers(s);
    moveSubs(s, reward);
    moveEnemyBullets(s);
    moveFish(s, reward);

    s.spawnTimer -= s.spawnTimer > 0;
    s.diverSpawnTimer -= s.diverSpawnTimer > 0;
    s.shotTimer -= s.shotTimer > 0;
    if (s.oxygen <= 0) s.terminal = true;
    if (s.subY > 0) {
      s.oxygen -= 1;
      s.surfaced = false;
    } else if (!s.surfaced) {
      if (s.diverCount == 0) s.terminal = true;
      else reward += surface(s);
    }
    return {float(reward), s.terminal};
  }

  // The observation's ones, into `out` already zero (observeMinatar clears it first; the device
  // kernels clear the row in 16-byte stores).
  CAS_HD static void mark(const State& state, float* out) {
    const Game& s = state.game;
    grid::cell(out, 0, s.subY, s.subX) = 1;
    // The back is on the grid: the submarine reaches column 0 only heading left, 9 only right.
    grid::cell(out, 1, s.subY, s.facingRight ? s.subX - 1 : s.subX + 1) = 1;
    for (int c = 0; c < grid::maxInt(0, s.oxygen) * 10 / kMaxOxygen; ++c) grid::cell(out, 7, 9, c) = 1;
    // numpy's [9 - count : 9]: empty for the negative counts a surfacing with 6 divers leaves.
    for (int c = 9 - s.diverCount; c < 9; ++c) grid::cell(out, 8, 9, c) = 1;
    // Entries leaving the grid are removed within the step that moves them there.
    for (int i = 0; i < s.bullets.count; ++i) grid::cell(out, 2, s.bullets.item[i].y, s.bullets.item[i].x) = 1;
    for (int i = 0; i < s.enemyBullets.count; ++i) grid::cell(out, 4, s.enemyBullets.item[i].y, s.enemyBullets.item[i].x) = 1;
    for (int i = 0; i < s.fish.count; ++i) withTrail(out, 5, s.fish.item[i]);
    for (int i = 0; i < s.subs.count; ++i) withTrail(out, 6, s.subs.item[i]);
    for (int i = 0; i < s.divers.count; ++i) withTrail(out, 9, s.divers.item[i]);
  }

 private:
  CAS_HD static bool same(const Entity& a, const Entity& b) {
    return a.x == b.x && a.y == b.y && a.right == b.right && a.moveTimer == b.moveTimer && a.shotTimer == b.shotTimer;
  }
  CAS_HD static Entity entity(int x, int y, bool right, int moveTimer, int shotTimer) {
    Entity e;
    e.x = std::int8_t(x);
    e.y = std::int8_t(y);
    e.right = right;
    e.moveTimer = std::int8_t(moveTimer);
    e.shotTimer = std::int8_t(shotTimer);
    return e;
  }
  CAS_HD static bool atSub(const Game& s, const Entity& e) { return e.x == s.subX && e.y == s.subY; }
  CAS_HD static bool offGrid(const Entity& e) { return e.x < 0 || e.x > 9; }
  CAS_HD static void advance(Entity& e) { e.x = std::int8_t(e.x + (e.right ? 1 : -1)); }

  // minatar's `list.remove(current)` inside a reversed walk: when an equal element before the
  // current one goes instead, the current one moves down a place (and the walk meets it again);
  // when the current one goes, `detached` keeps it, since minatar goes on reading it. Where the
  // current entry now is.
  template <int N>
  CAS_HD static Entity* removeCurrent(Entities<N>& list, int index, Entity& detached) {
    detached = list.item[index];
    return list.remove(detached) == index ? &detached : &list.item[index - 1];
  }

  CAS_HD static void spawnEnemy(Game& s, const EnemyDraw& d) {
    const bool fromLeft = d.side < 0.5, sub = d.sub < 1.0 / 3.0;
    // No spawn in a lane where an enemy heads the other way.
    for (int i = 0; i < s.subs.count; ++i)
      if (s.subs.item[i].y == d.lane && s.subs.item[i].right != fromLeft) return;
    for (int i = 0; i < s.fish.count; ++i)
      if (s.fish.item[i].y == d.lane && s.fish.item[i].right != fromLeft) return;
    if (sub) s.subs.append(entity(fromLeft ? 0 : 9, d.lane, fromLeft, s.moveInterval, kEnemyShotInterval));
    else s.fish.append(entity(fromLeft ? 0 : 9, d.lane, fromLeft, s.moveInterval, 0));
  }

  // The moves walk each list as Python's reversed(list) while it changes: an index counts down
  // from the last element, and the walk stops at an index past the end.
  CAS_HD static void moveBullets(Game& s, int& reward) {
    for (int it = s.bullets.count - 1; it >= 0 && it < s.bullets.count;) {
      Entity& b = s.bullets.item[it--];
      advance(b);
      if (offGrid(b)) {
        s.bullets.remove(b);
        continue;
      }
      // The first fish in the bullet's cell, else the first sub, goes with the bullet.
      int hit = s.fish.firstAt(b);
      if (hit >= 0) {
        s.fish.removeAt(hit);
      } else {
        hit = s.subs.firstAt(b);
        if (hit >= 0) s.subs.removeAt(hit);
      }
      if (hit >= 0) {
        s.bullets.remove(b);
        reward += 1;
      }
    }
  }

  CAS_HD static void moveDivers(Game& s) {
    for (int it = s.divers.count - 1; it >= 0 && it < s.divers.count;) {
      Entity& d = s.divers.item[it--];
      if (atSub(s, d) && s.diverCount < kMaxDivers) {
        s.divers.remove(d);
        s.diverCount += 1;
      } else if (d.moveTimer == 0) {
        d.moveTimer = kDiverMoveInterval;
        advance(d);
        if (offGrid(d)) {
          s.divers.remove(d);
        } else if (atSub(s, d) && s.diverCount < kMaxDivers) {
          s.divers.remove(d);
          s.diverCount += 1;
        }
      } else {
        d.moveTimer -= 1;
      }
    }
  }

  CAS_HD static void moveSubs(Game& s, int& reward) {
    for (int it = s.subs.count - 1; it >= 0 && it < s.subs.count;) {
      const int index = it--;
      Entity* e = &s.subs.item[index];
      Entity detached;
      if (atSub(s, *e)) s.terminal = true;
      if (e->moveTimer == 0) {
        e->moveTimer = std::int8_t(s.moveInterval);
        advance(*e);
        if (offGrid(*e)) {
          e = removeCurrent(s.subs, index, detached);
        } else if (atSub(s, *e)) {
          s.terminal = true;
        } else {
          const int hit = s.bullets.firstAt(*e);
          if (hit >= 0) {
            e = removeCurrent(s.subs, index, detached);
            s.bullets.removeAt(hit);
            reward += 1;
          }
        }
      } else {
        e->moveTimer -= 1;
      }
      // A sub removed this step still fires when due (from its last cell, possibly off the grid:
      // that bullet leaves in this step's bullet move).
      if (e->shotTimer == 0) {
        e->shotTimer = kEnemyShotInterval;
        s.enemyBullets.append(entity(e->x, e->y, e->right, 0, 0));
      } else {
        e->shotTimer -= 1;
      }
    }
  }

  CAS_HD static void moveEnemyBullets(Game& s) {
    for (int it = s.enemyBullets.count - 1; it >= 0 && it < s.enemyBullets.count;) {
      Entity& b = s.enemyBullets.item[it--];
      if (atSub(s, b)) s.terminal = true;
      advance(b);
      if (offGrid(b)) s.enemyBullets.remove(b);
      else if (atSub(s, b)) s.terminal = true;
    }
  }

  CAS_HD static void moveFish(Game& s, int& reward) {
    for (int it = s.fish.count - 1; it >= 0 && it < s.fish.count;) {
      Entity& f = s.fish.item[it--];
      if (atSub(s, f)) s.terminal = true;
      if (f.moveTimer == 0) {
        f.moveTimer = std::int8_t(s.moveInterval);
        advance(f);
        if (offGrid(f)) {
          s.fish.remove(f);
        } else if (atSub(s, f)) {
          s.terminal = true;
        } else {
          const int hit = s.bullets.firstAt(f);
          if (hit >= 0) {
            s.fish.remove(f);
            s.bullets.removeAt(hit);
            reward += 1;
          }
        }
      } else {
        f.moveTimer -= 1;
      }
    }
  }

  // minatar's _surface: with 6 divers, all of them go and the oxygen left pays; otherwise one
  // goes. minatar takes one away after emptying too, leaving -1: from then on surfacing never
  // ends the episode, and the gauge shows no diver until the count is positive again.
  CAS_HD static int surface(Game& s) {
    s.surfaced = true;
    int reward = 0;
    if (s.diverCount == kMaxDivers) {
      s.diverCount = 0;
      reward = s.oxygen * 10 / kMaxOxygen;  // oxygen >= 0 here: the episode ends before it goes below
    }
    s.oxygen = kMaxOxygen;
    s.diverCount -= 1;
    if (s.spawnInterval > 1 || s.moveInterval > 2) {
      if (s.moveInterval > 2 && s.rampIndex % 2) s.moveInterval -= 1;
      if (s.spawnInterval > 1) s.spawnInterval -= 1;
      s.rampIndex += 1;
    }
    return reward;
  }

  CAS_HD static void withTrail(float* out, int channel, const Entity& e) {
    grid::cell(out, channel, e.y, e.x) = 1;
    const int back = e.right ? e.x - 1 : e.x + 1;
    if (back >= 0 && back <= 9) grid::cell(out, 3, e.y, back) = 1;
  }
};

using MinAtarSeaquest = MinAtarGames<SeaquestRules>;

}  // namespace cas::env
