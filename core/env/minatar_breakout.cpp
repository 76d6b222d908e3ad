#include "core/env/minatar_breakout.hpp"

#include <algorithm>

namespace cas::env {
namespace {

constexpr std::uint16_t kFullRow = (1u << MinAtarBreakout::kColumns) - 1;
// minatar's action numbers for our minimal set (none, left, right).
constexpr int kMinatarAction[MinAtarBreakout::kActions] = {0, 1, 3};
// Direction 0 up-left, 1 up-right, 2 down-right, 3 down-left, and how each bounce maps them.
constexpr int kStepX[4] = {-1, 1, 1, -1}, kStepY[4] = {-1, -1, 1, 1};
constexpr int kBounceSideways[4] = {1, 0, 3, 2}, kBounceVertically[4] = {3, 2, 1, 0}, kBounceBack[4] = {2, 3, 0, 1};

void fillBricks(std::uint16_t* bricks) {
  for (int r = 1; r <= 3; ++r) bricks[r] = kFullRow;
}

}  // namespace

MinAtarBreakout::MinAtarBreakout(int games, std::uint64_t seed) : games_(size_t(games)), sticky_(size_t(games)) {
  for (int g = 0; g < games; ++g) random_.push_back(GameRandom::forGame(seed, g));
  for (int g = 0; g < games; ++g) reset(g);
}

void MinAtarBreakout::reset(int game) { reset(game, random_[size_t(game)].below(2)); }

void MinAtarBreakout::reset(int game, int ballStart) {
  Game& s = games_[size_t(game)];
  s = Game{};
  s.ballY = 3;
  s.ballX = ballStart == 0 ? 0 : 9;
  s.direction = ballStart == 0 ? 2 : 3;
  s.lastX = s.ballX;
  s.lastY = s.ballY;
  fillBricks(s.bricks);
}

MinAtarBreakout::StepResult MinAtarBreakout::step(int game, int action) {
  return step(game, action, random_[size_t(game)].uniform());
}

// minatar's Breakout `act`, branch for branch.
MinAtarBreakout::StepResult MinAtarBreakout::step(int game, int action, double stickyDraw) {
  Game& s = games_[size_t(game)];
  const int a = sticky_[size_t(game)].take(kMinatarAction[std::clamp(action, 0, kActions - 1)], stickyDraw);
  if (s.terminal) return {0.0f, true};
  float reward = 0;
  if (a == 1) s.paddle = std::max(0, s.paddle - 1);
  else if (a == 3) s.paddle = std::min(9, s.paddle + 1);

  s.lastX = s.ballX;
  s.lastY = s.ballY;
  int x = s.ballX + kStepX[s.direction], y = s.ballY + kStepY[s.direction];
  bool struck = false;
  if (x < 0 || x > 9) {
    x = std::clamp(x, 0, 9);
    s.direction = kBounceSideways[s.direction];
  }
  if (y < 0) {
    y = 0;
    s.direction = kBounceVertically[s.direction];
  } else if (s.bricks[y] & (1u << x)) {
    struck = true;
    if (!s.strike) {  // a second brick in a row is passed through, as in minatar
      reward += 1;
      s.strike = true;
      s.bricks[y] &= std::uint16_t(~(1u << x));
      y = s.lastY;
      s.direction = kBounceVertically[s.direction];
    }
  } else if (y == 9) {
    bool empty = true;
    for (std::uint16_t row : s.bricks) empty = empty && row == 0;
    if (empty) fillBricks(s.bricks);
    if (s.ballX == s.paddle) {
      s.direction = kBounceVertically[s.direction];
      y = s.lastY;
    } else if (x == s.paddle) {
      s.direction = kBounceBack[s.direction];
      y = s.lastY;
    } else {
      s.terminal = true;
    }
  }
  if (!struck) s.strike = false;
  s.ballX = x;
  s.ballY = y;
  return {reward, s.terminal};
}

void MinAtarBreakout::observe(int game, float* out) const {
  const Game& s = games_[size_t(game)];
  std::fill(out, out + kObservationSize, 0.0f);
  auto at = [out](int channel, int row, int column) -> float& { return out[(channel * kRows + row) * kColumns + column]; };
  at(0, 9, s.paddle) = 1;
  at(1, s.ballY, s.ballX) = 1;
  at(2, s.lastY, s.lastX) = 1;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kColumns; ++c)
      if (s.bricks[r] & (1u << c)) at(3, r, c) = 1;
}

}  // namespace cas::env
