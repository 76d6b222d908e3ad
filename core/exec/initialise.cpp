#include "core/exec/initialise.hpp"

#include <cmath>
#include <random>

namespace cas::exec {

std::vector<float> initialValues(const ir::Node& p, std::uint64_t seed) {
  std::uint64_t h = 14695981039346656037ull ^ seed;
  for (char c : p.attrs.name) h = (h ^ std::uint8_t(c)) * 1099511628211ull;
  std::mt19937_64 rng(h);
  std::vector<float> v(size_t(ir::numel(p.shape)));
  switch (p.attrs.init) {
    case ir::Init::FanInUniform: {
      const float bound = 1.0f / std::sqrt(float(std::max<std::int64_t>(1, p.attrs.fanIn)));
      std::uniform_real_distribution<float> d(-bound, bound);
      for (float& x : v) x = d(rng);
      break;
    }
    case ir::Init::Normal: {
      std::normal_distribution<float> d(0.0f, 1.0f);
      for (float& x : v) x = d(rng);
      break;
    }
    case ir::Init::Ones: std::fill(v.begin(), v.end(), 1.0f); break;
    case ir::Init::Zeros:
    case ir::Init::None: break;
  }
  return v;
}

}  // namespace cas::exec
