#pragma once
// Uniform values in [-1, 1) from a seeded stream: the tests' inputs for kernels and ops.
#include <cstddef>
#include <random>
#include <vector>

namespace cas::test {

inline std::vector<float> randomValues(std::size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(count);
  for (float& e : v) e = uniform(random);
  return v;
}

}  // namespace cas::test
