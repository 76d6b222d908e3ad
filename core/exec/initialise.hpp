#pragma once
// Seeded parameter initialisation, the same on every backend: each parameter draws from its own
// stream (seed mixed with its name), so adding a layer does not change the others' values.
//   FanInUniform  U(-1/sqrt(fan_in), 1/sqrt(fan_in))  (dense and conv2d weights and biases, as PyTorch)
//   Normal        N(0, 1)                            (embedding tables)
//   Ones, Zeros                                      (layer_norm gamma, beta)
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::exec {

std::vector<float> initialValues(const ir::Node& parameter, std::uint64_t seed);

}  // namespace cas::exec
