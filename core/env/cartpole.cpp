#include "core/env/cartpole.hpp"

namespace cas::env {

CartPole::CartPole(int games, std::uint64_t seed) : states_(std::size_t(games)) {
  for (int g = 0; g < games; ++g) states_[std::size_t(g)].random = GameRandom::forGame(seed, g);
  for (int g = 0; g < games; ++g) reset(g);
}

}  // namespace cas::env
