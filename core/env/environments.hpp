#pragma once
// The catalogue of environments a project may name: observation shape, action count and the
// algorithms each suits. PDL shape inference and project validation read it.
// Thread-safety: immutable, readable from any thread.
#include <string>
#include <string_view>
#include <vector>

namespace cas::env {

struct EnvironmentInfo {
  std::string name;
  std::string summary;
  std::vector<int> observationShape;  // per sample, without the batch axis
  int actionCount = 0;
  bool twoPlayer = false;  // AlphaZero needs a two-player, zero-sum, perfect-information game
};

const std::vector<EnvironmentInfo>& environments();
const EnvironmentInfo* findEnvironment(std::string_view name);

}  // namespace cas::env
