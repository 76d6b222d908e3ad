#include "core/env/environments.hpp"

namespace cas::env {

const std::vector<EnvironmentInfo>& environments() {
  static const std::vector<EnvironmentInfo> all = {
      {"tictactoe", "Tic-tac-toe on a 3x3 board; planes: own stones, opponent stones.", {2, 3, 3}, 9, true},
      {"connect4", "Connect Four on a 6x7 board; planes: own stones, opponent stones.", {2, 6, 7}, 7, true},
      {"cartpole", "Balance a pole on a cart (Gymnasium CartPole-v1 dynamics).", {4}, 2, false},
  };
  return all;
}

const EnvironmentInfo* findEnvironment(std::string_view name) {
  for (const EnvironmentInfo& e : environments())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace cas::env
