#include "core/env/minatar_asterix.hpp"

#include <algorithm>

namespace cas::env {

MinAtarAsterix::MinAtarAsterix(int games, std::uint64_t seed) : games_(size_t(games)), sticky_(size_t(games)) {
  for (int g = 0; g < games; ++g) random_.push_back(GameRandom::forGame(seed, g));
  for (int g = 0; g < games; ++g) reset(g);
}

void MinAtarAsterix::reset(int game) { games_[size_t(game)] = Game{}; }

bool MinAtarAsterix::spawnsNext(int game) const {
  const Game& s = games_[size_t(game)];
  return !s.terminal && s.spawnTimer == 0;
}

int MinAtarAsterix::freeLanes(int game) const {
  const Game& s = games_[size_t(game)];
  return int(std::count_if(s.lanes.begin(), s.lanes.end(), [](const Entity& e) { return !e.present; }));
}

MinAtarAsterix::StepResult MinAtarAsterix::step(int game, int action) {
  GameRandom& r = random_[size_t(game)];
  const double sticky = r.uniform();
  SpawnDraw spawn;
  if (spawnsNext(game)) {
    spawn.side = r.uniform();
    spawn.gold = r.uniform();
    const int free = freeLanes(game);
    spawn.freeLane = free > 0 ? r.below(free) : 0;
  }
  return step(game, action, sticky, spawn);
}

// minatar's Asterix `act`, branch for branch.
MinAtarAsterix::StepResult MinAtarAsterix::step(int game, int action, double stickyDraw, const SpawnDraw& spawn) {
  Game& s = games_[size_t(game)];
  // The minimal set is minatar's actions 0-4.
  const int a = sticky_[size_t(game)].take(std::clamp(action, 0, kActions - 1), stickyDraw);
  if (s.terminal) return {0.0f, true};
  float reward = 0;

  if (s.spawnTimer == 0) {
    const bool fromLeft = spawn.side < 0.5, gold = spawn.gold < 1.0 / 3.0;
    int seen = 0;
    for (Entity& e : s.lanes)
      if (!e.present && seen++ == spawn.freeLane) e = {true, fromLeft, gold, fromLeft ? 0 : 9};
    s.spawnTimer = s.spawnInterval;
  }

  if (a == 1) s.playerX = std::max(0, s.playerX - 1);
  else if (a == 3) s.playerX = std::min(9, s.playerX + 1);
  else if (a == 2) s.playerY = std::max(1, s.playerY - 1);
  else if (a == 4) s.playerY = std::min(8, s.playerY + 1);

  auto touch = [&](Entity& e) {
    if (e.gold) {
      e.present = false;
      reward += 1;
    } else {
      s.terminal = true;
    }
  };
  for (int i = 0; i < kLanes; ++i) {
    Entity& e = s.lanes[size_t(i)];
    if (e.present && e.x == s.playerX && i + 1 == s.playerY) touch(e);
  }
  if (s.moveTimer == 0) {
    s.moveTimer = s.moveInterval;
    for (int i = 0; i < kLanes; ++i) {
      Entity& e = s.lanes[size_t(i)];
      if (!e.present) continue;
      e.x += e.fromLeft ? 1 : -1;
      if (e.x < 0 || e.x > 9) e.present = false;
      else if (e.x == s.playerX && i + 1 == s.playerY) touch(e);
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

void MinAtarAsterix::observe(int game, float* out) const {
  const Game& s = games_[size_t(game)];
  std::fill(out, out + kObservationSize, 0.0f);
  auto at = [out](int channel, int row, int column) -> float& { return out[(channel * kRows + row) * kColumns + column]; };
  at(0, s.playerY, s.playerX) = 1;
  for (int i = 0; i < kLanes; ++i) {
    const Entity& e = s.lanes[size_t(i)];
    if (!e.present) continue;
    at(e.gold ? 3 : 1, i + 1, e.x) = 1;
    const int back = e.fromLeft ? e.x - 1 : e.x + 1;
    if (back >= 0 && back <= 9) at(2, i + 1, back) = 1;
  }
}

}  // namespace cas::env
