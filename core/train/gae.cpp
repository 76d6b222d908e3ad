#include "core/train/gae.hpp"

#include <stdexcept>

namespace cas::train {

Advantages computeGae(const std::vector<float>& rewards, const std::vector<float>& values, const std::vector<float>& dones,
                      const std::vector<float>& lastValues, std::int64_t steps, std::int64_t envs, double gamma, double lambda) {
  const auto n = size_t(steps * envs);
  if (rewards.size() != n || values.size() != n || dones.size() != n || lastValues.size() != size_t(envs))
    throw std::invalid_argument("computeGae: rewards, values and dones need steps x envs entries and lastValues one per environment");
  Advantages out;
  out.advantages.resize(n);
  out.returns.resize(n);
  for (std::int64_t e = 0; e < envs; ++e) {
    double next = lastValues[size_t(e)], carried = 0;  // V(s_{t+1}) and A_{t+1}, in double: T terms add up
    for (std::int64_t t = steps; t-- > 0;) {
      const auto i = size_t(t * envs + e);
      const double live = 1.0 - double(dones[i]);
      const double delta = double(rewards[i]) + gamma * live * next - double(values[i]);
      carried = delta + gamma * lambda * live * carried;
      out.advantages[i] = float(carried);
      out.returns[i] = float(carried + double(values[i]));
      next = values[i];
    }
  }
  return out;
}

}  // namespace cas::train
