#include "core/env/minatar_space_invaders.hpp"

#include <algorithm>
#include <bit>

namespace cas::env {
namespace {

using Rows = std::array<std::uint16_t, MinAtarSpaceInvaders::kRows>;
constexpr std::uint16_t kAllColumns = (1u << MinAtarSpaceInvaders::kColumns) - 1;
constexpr int kMinatarAction[MinAtarSpaceInvaders::kActions] = {0, 1, 3, 5};  // none, left, right, fire

bool at(const Rows& rows, int r, int c) { return (rows[size_t(r)] >> c) & 1u; }
int count(const Rows& rows) {
  int n = 0;
  for (std::uint16_t row : rows) n += std::popcount(row);
  return n;
}
bool anyInColumn(const Rows& rows, int c) {
  for (std::uint16_t row : rows)
    if ((row >> c) & 1u) return true;
  return false;
}
// numpy's roll along the rows: row r moves to r + shift, wrapping around.
Rows rollRows(const Rows& rows, int shift) {
  Rows out{};
  for (int r = 0; r < MinAtarSpaceInvaders::kRows; ++r) out[size_t((r + shift + 10) % 10)] = rows[size_t(r)];
  return out;
}
// numpy's roll along the columns by one: column c moves to c + shift, wrapping around.
std::uint16_t rollColumns(std::uint16_t row, int shift) {
  if (shift > 0) return std::uint16_t(((row << 1) | (row >> 9)) & kAllColumns);
  return std::uint16_t(((row >> 1) | (row << 9)) & kAllColumns);
}
void fillAliens(Rows& aliens) {
  for (int r = 0; r < 4; ++r) aliens[size_t(r)] = 0b0011111100;  // columns 2-7
}

}  // namespace

MinAtarSpaceInvaders::MinAtarSpaceInvaders(int games, std::uint64_t seed) : games_(size_t(games)), sticky_(size_t(games)) {
  for (int g = 0; g < games; ++g) random_.push_back(GameRandom::forGame(seed, g));
  for (int g = 0; g < games; ++g) reset(g);
}

void MinAtarSpaceInvaders::reset(int game) {
  Game& s = games_[size_t(game)];
  s = Game{};
  fillAliens(s.aliens);
}

MinAtarSpaceInvaders::StepResult MinAtarSpaceInvaders::step(int game, int action) {
  return step(game, action, random_[size_t(game)].uniform());
}

// minatar's Space Invaders `act`, branch for branch.
MinAtarSpaceInvaders::StepResult MinAtarSpaceInvaders::step(int game, int action, double stickyDraw) {
  Game& s = games_[size_t(game)];
  const int a = sticky_[size_t(game)].take(kMinatarAction[std::clamp(action, 0, kActions - 1)], stickyDraw);
  if (s.terminal) return {0.0f, true};

  if (a == 5 && s.shotTimer == 0) {
    s.bullets[9] |= std::uint16_t(1u << s.cannon);
    s.shotTimer = kShotCoolDown;
  } else if (a == 1) {
    s.cannon = std::max(0, s.cannon - 1);
  } else if (a == 3) {
    s.cannon = std::min(9, s.cannon + 1);
  }

  s.bullets = rollRows(s.bullets, -1);  // up one row; those past the top are gone
  s.bullets[9] = 0;
  s.alienBullets = rollRows(s.alienBullets, 1);  // down one row; those past the bottom are gone
  s.alienBullets[0] = 0;
  if (at(s.alienBullets, 9, s.cannon)) s.terminal = true;

  if (at(s.aliens, 9, s.cannon)) s.terminal = true;
  if (s.moveTimer == 0) {
    s.moveTimer = std::min(count(s.aliens), s.moveInterval);
    if ((anyInColumn(s.aliens, 0) && s.direction < 0) || (anyInColumn(s.aliens, 9) && s.direction > 0)) {
      s.direction = -s.direction;
      if (s.aliens[9] != 0) s.terminal = true;
      s.aliens = rollRows(s.aliens, 1);
    } else {
      for (std::uint16_t& row : s.aliens) row = rollColumns(row, s.direction);
    }
    if (at(s.aliens, 9, s.cannon)) s.terminal = true;
  }
  if (s.alienShotTimer == 0) {
    s.alienShotTimer = kAlienShotInterval;
    // The alien nearest the cannon: columns by distance (the left one first at a tie), the
    // lowest alien of the first column that has one.
    for (int d = 0; d < kColumns; ++d) {
      int column = -1;
      if (s.cannon - d >= 0 && anyInColumn(s.aliens, s.cannon - d)) column = s.cannon - d;
      else if (d > 0 && s.cannon + d < kColumns && anyInColumn(s.aliens, s.cannon + d)) column = s.cannon + d;
      if (column < 0) continue;
      int row = kRows - 1;
      while (!at(s.aliens, row, column)) --row;
      s.alienBullets[size_t(row)] |= std::uint16_t(1u << column);
      break;
    }
  }

  float reward = 0;
  for (int r = 0; r < kRows; ++r) {
    const std::uint16_t hits = s.aliens[size_t(r)] & s.bullets[size_t(r)];
    reward += float(std::popcount(hits));
    s.aliens[size_t(r)] &= std::uint16_t(~hits);
    s.bullets[size_t(r)] &= std::uint16_t(~hits);
  }

  s.shotTimer -= s.shotTimer > 0;
  s.moveTimer -= 1;
  s.alienShotTimer -= 1;
  if (count(s.aliens) == 0) {
    if (s.moveInterval > kFastestMoveInterval) {
      s.moveInterval -= 1;
      s.rampIndex += 1;
    }
    fillAliens(s.aliens);
  }
  return {reward, s.terminal};
}

void MinAtarSpaceInvaders::observe(int game, float* out) const {
  const Game& s = games_[size_t(game)];
  std::fill(out, out + kObservationSize, 0.0f);
  auto plane = [out](int channel, const Rows& rows) {
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kColumns; ++c)
        if (at(rows, r, c)) out[(channel * kRows + r) * kColumns + c] = 1;
  };
  out[(0 * kRows + 9) * kColumns + s.cannon] = 1;
  plane(1, s.aliens);
  plane(s.direction < 0 ? 2 : 3, s.aliens);
  plane(4, s.bullets);
  plane(5, s.alienBullets);
}

}  // namespace cas::env
