#pragma once
// Positions for comparing searches: random play from the start to a depth drawn uniformly from
// [0, maxDepth], kept only when the game is not over, as move strings in the game's notation.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/env/games.hpp"

namespace cas::test {

inline std::vector<std::string> randomPositions(const std::string& environment, int count, int maxDepth, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto board = env::makeBoardGames(environment, 1);
  std::vector<std::string> out;
  while (int(out.size()) < count) {
    board->reset(0);
    std::string moves;
    const int depth = std::uniform_int_distribution<int>(0, maxDepth)(rng);
    for (int d = 0; d < depth && !board->terminal(0); ++d) {
      std::vector<int> legal;
      for (int a = 0; a < board->actionCount(); ++a)
        if (board->legal(0, a)) legal.push_back(a);
      const int a = legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)];
      board->play(0, a);
      moves += char('1' + a);
    }
    if (!board->terminal(0)) out.push_back(moves);
  }
  return out;
}

}  // namespace cas::test
