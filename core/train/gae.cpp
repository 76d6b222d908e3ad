#include "core/train/gae.hpp"

#include <stdexcept>

#include "core/train/ppo_math.hpp"

namespace cas::train {

Advantages computeGae(const std::vector<float>& rewards, const std::vector<float>& values, const std::vector<float>& dones,
                      const std::vector<float>& lastValues, std::int64_t steps, std::int64_t envs, double gamma, double lambda) {
  const auto n = size_t(steps * envs);
  if (rewards.size() != n || values.size() != n || dones.size() != n || lastValues.size() != size_t(envs))
    throw std::invalid_argument("computeGae: rewards, values and dones need steps x envs entries and lastValues one per environment");
  Advantages out;
  out.advantages.resize(n);
  out.returns.resize(n);
  for (std::int64_t e = 0; e < envs; ++e)
    ppo_math::gaeColumn(rewards.data(), values.data(), dones.data(), lastValues[size_t(e)], steps, envs, e, gamma, lambda, out.advantages.data(),
                        out.returns.data());
  return out;
}

}  // namespace cas::train
