#pragma once
// Generalised advantage estimation (Schulman et al. 2016) over a rollout of T steps of N
// environments, arrays laid out [T][N] (step t of environment e at t * N + e):
//   delta_t = r_t + gamma * (1 - done_t) * V(s_{t+1}) - V(s_t)
//   A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1}
//   R_t     = A_t + V(s_t)                                  (the value targets)
// done_t: the episode ended at step t, so nothing beyond it counts; V(s_T) is `lastValues`, the
// value of the observation after the rollout. An episode cut by a time limit (truncated) is not
// done here: its next state's value belongs in r_t (PPO adds gamma * V(final observation)).
// Thread-safety: a plain function.
#include <cstdint>
#include <vector>

namespace cas::train {

struct Advantages {
  std::vector<float> advantages, returns;  // [T][N]
};

Advantages computeGae(const std::vector<float>& rewards, const std::vector<float>& values, const std::vector<float>& dones,
                      const std::vector<float>& lastValues, std::int64_t steps, std::int64_t envs, double gamma, double lambda);

}  // namespace cas::train
