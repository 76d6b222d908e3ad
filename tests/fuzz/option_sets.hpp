#pragma once
// The compile options every fuzz input is tried with, shared by the fuzzer and the corpus replay.
#include <vector>

#include "core/pdl/compiler.hpp"

namespace pdl_fuzz {

inline std::vector<cas::pdl::CompileOptions> optionSets() {
  std::vector<cas::pdl::CompileOptions> sets(3);
  sets[0].observationShape = {4, 84, 84};
  sets[0].actionCount = 6;
  sets[1].observationShape = {2, 6, 7};
  sets[1].actionCount = 7;
  sets[1].algorithm = "alphazero";
  sets[2].observationShape = {4};
  sets[2].actionCount = 2;
  sets[2].batch = 3;
  return sets;
}

}  // namespace pdl_fuzz
