#pragma once
// PPO's per-sample arithmetic, compiled for the host and the device (CAS_HD), so that the CPU
// rollout (ppo.cpp) and the device rollout (gpu/env/rollout_kernels.cu) sample the same actions
// from the same logits and draws and estimate the same advantages: the log-normaliser of a row
// of logits, an action drawn by inverse CDF with one uniform draw, and GAE(lambda) down one
// environment's column of a [T][N] rollout (gae.hpp states the recurrence). Sums in double.
// Thread-safety: pure functions (the generator is the caller's).
#include <cstdint>

#include "core/env/game_random.hpp"
#include "core/support/host_device.hpp"

#ifndef __CUDACC__
#include <cmath>
#endif

namespace cas::train::ppo_math {

// log(sum(exp(logits))) of one row.
CAS_HD inline double logSumExp(const float* logits, int actions) {
  double top = logits[0];
  for (int a = 1; a < actions; ++a) top = double(logits[a]) > top ? double(logits[a]) : top;
  double sum = 0;
  for (int a = 0; a < actions; ++a) sum += exp(double(logits[a]) - top);
  return top + log(sum);
}

// The most probable action of one row (the first of equals).
CAS_HD inline int greedyAction(const float* logits, int actions) {
  int best = 0;
  for (int a = 1; a < actions; ++a) best = logits[a] > logits[best] ? a : best;
  return best;
}

// An action drawn from softmax(logits) with one uniform draw (inverse CDF).
CAS_HD inline int sampleAction(const float* logits, int actions, double logNormaliser, env::GameRandom& random) {
  const double u = random.uniform();
  double cumulative = 0;
  for (int a = 0; a < actions - 1; ++a) {
    cumulative += exp(double(logits[a]) - logNormaliser);
    if (u < cumulative) return a;
  }
  return actions - 1;
}

// Advantages and value targets of environment e, t = steps-1 down to 0, at index t * envs + e.
CAS_HD inline void gaeColumn(const float* rewards, const float* values, const float* dones, float lastValue, std::int64_t steps, std::int64_t envs,
                             std::int64_t e, double gamma, double lambda, float* advantages, float* returns) {
  double next = lastValue, carried = 0;  // V(s_{t+1}) and A_{t+1}, in double: T terms add up
  for (std::int64_t t = steps; t-- > 0;) {
    const std::int64_t i = t * envs + e;
    const double live = 1.0 - double(dones[i]);
    const double delta = double(rewards[i]) + gamma * live * next - double(values[i]);
    carried = delta + gamma * lambda * live * carried;
    advantages[i] = float(carried);
    returns[i] = float(carried + double(values[i]));
    next = values[i];
  }
}

}  // namespace cas::train::ppo_math
