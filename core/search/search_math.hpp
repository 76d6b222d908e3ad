#pragma once
// The arithmetic of the search, written once for the CPU reference (mcts.cpp) and the device
// search (gpu/search): random numbers, exp and log, the PUCT score, the priors of a node's
// children, Gumbel's completed-Q transform and the hashed test evaluator; for the search over a
// learned model (learned_search.cpp and its device twin, gpu/search/learned_steps.cuh) its Q,
// min-max normalisation, virtual loss and PUCT score, and the hashed test model. With the same
// inputs both sides compute the same bits, because
//   - every operation is a single IEEE float operation in a fixed order (the device search is
//     compiled with -fmad=false; g++ in ISO C++ mode does not contract either),
//   - exp and log are our own (searchExp, searchLog) instead of the two libraries' versions,
//     which differ in the last bit, and sqrt and division are correctly rounded on both,
//   - random numbers come from a counter-based generator (Philox4x32-10) addressed by
//     (seed; game, draw, purpose, index), so no generator state is carried between calls.
// Thread-safety: pure functions.
#include <cmath>
#include <cstdint>

#include "core/support/host_device.hpp"

namespace cas::search {

// --- random numbers ---------------------------------------------------------------------------

// What a stream of random numbers is drawn for: part of the counter, so the purposes never
// share numbers.
enum class RandomPurpose : std::uint32_t { Dirichlet = 1, Gumbel = 2, Temperature = 3 };

CAS_HD inline void philox4x32(std::uint32_t c[4], std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t(0xD2511F53u) * c[0];
    const std::uint64_t p1 = std::uint64_t(0xCD9E8D57u) * c[2];
    const std::uint32_t n0 = std::uint32_t(p1 >> 32) ^ c[1] ^ k0;
    const std::uint32_t n2 = std::uint32_t(p0 >> 32) ^ c[3] ^ k1;
    c[1] = std::uint32_t(p1);
    c[3] = std::uint32_t(p0);
    c[0] = n0;
    c[2] = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// The numbers of one (game, draw, purpose), in order. `draw` counts the game's root
// preparations, so each search of a position draws fresh noise.
struct RandomStream {
  std::uint64_t seed;
  std::uint32_t game, draw;
  RandomPurpose purpose;
  std::uint32_t index = 0;

  CAS_HD std::uint32_t next() {
    std::uint32_t c[4] = {game, draw, std::uint32_t(purpose), index >> 2};
    philox4x32(c, std::uint32_t(seed), std::uint32_t(seed >> 32));
    return c[index++ & 3];
  }
  // Uniform in the open interval (0, 1): odd multiples of 2^-24, each exact in a float.
  CAS_HD float uniform() { return float(((next() >> 9) << 1) | 1u) * (1.0f / 16777216.0f); }
};

// --- exp and log --------------------------------------------------------------------------------

// e^x to about 2 ulp; 0 below -87.3, +inf above 88.7.
CAS_HD inline float searchExp(float x) {
  if (!(x > -87.3f)) return 0.0f;  // also for NaN's sake: exp of a NaN logit is 0 weight
  if (x > 88.7f) return bitsFloat(0x7F800000u);
  const float k = float(int(x * 1.44269504f + (x < 0 ? -0.5f : 0.5f)));
  const float r = (x - k * 0.693145752f) - k * 1.42860677e-6f;  // ln 2 split in two parts
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int e = int(k);
  // 2^e in two factors so that e down to -126 - 23 stays representable.
  const int half = e / 2;
  e -= half;
  return p * bitsFloat(std::uint32_t(half + 127) << 23) * bitsFloat(std::uint32_t(e + 127) << 23);
}

// ln x for normal positive x to about 2 ulp; -inf for 0 and below.
CAS_HD inline float searchLog(float x) {
  if (!(x > 0.0f)) return -bitsFloat(0x7F800000u);
  std::uint32_t bits = floatBits(x);
  int e = int(bits >> 23) - 127;
  float m = bitsFloat((bits & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
  if (m > 1.41421356f) {
    m = m * 0.5f;
    e += 1;
  }
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float s2 = s * s;
  float p = 2.0f / 11.0f;
  p = p * s2 + 2.0f / 9.0f;
  p = p * s2 + 2.0f / 7.0f;
  p = p * s2 + 2.0f / 5.0f;
  p = p * s2 + 2.0f / 3.0f;
  p = p * s2 + 2.0f;
  return float(e) * 0.693145752f + (s * p + float(e) * 1.42860677e-6f);
}

// --- distributions ------------------------------------------------------------------------------

// A standard normal number (Marsaglia's polar method: no trigonometry, so both sides agree).
CAS_HD inline float normalSample(RandomStream& r) {
  for (int tries = 0; tries < 64; ++tries) {
    const float x = 2.0f * r.uniform() - 1.0f, y = 2.0f * r.uniform() - 1.0f;
    const float s = x * x + y * y;
    if (s > 0.0f && s < 1.0f) return x * sqrtf(-2.0f * searchLog(s) / s);
  }
  return 0.0f;  // 64 rejections in a row: probability below 1e-43
}

// Gamma(alpha, 1) by Marsaglia and Tsang's method (boosted by u^(1/alpha) for alpha < 1).
CAS_HD inline float gammaSample(float alpha, RandomStream& r) {
  const bool boost = alpha < 1.0f;
  const float a = boost ? alpha + 1.0f : alpha;
  const float d = a - 1.0f / 3.0f, c = 1.0f / sqrtf(9.0f * d);
  float g = d;
  for (int tries = 0; tries < 64; ++tries) {
    const float x = normalSample(r);
    float v = 1.0f + c * x;
    if (v <= 0.0f) continue;
    v = v * v * v;
    const float u = r.uniform();
    if (u < 1.0f - 0.0331f * (x * x) * (x * x) || searchLog(u) < 0.5f * x * x + d * (1.0f - v + searchLog(v))) {
      g = d * v;
      break;
    }
  }
  if (boost) g = g * searchExp(searchLog(r.uniform()) / alpha);
  return g;
}

CAS_HD inline float gumbelSample(RandomStream& r) { return -searchLog(-searchLog(r.uniform())); }

// --- the search's formulas ------------------------------------------------------------------------

// Q + U of a child with n visits and total value w (from the point of view of the player who
// moved into it), prior p, below a parent whose visits' square root is sqrtParent.
CAS_HD inline float puctScore(float w, std::int32_t n, float p, float sqrtParent, float cPuct) {
  const float q = n > 0 ? w / float(n) : 0.0f;
  return q + cPuct * p * sqrtParent / float(1 + n);
}

CAS_HD inline float parentSqrt(std::int32_t visits) { return sqrtf(float(visits > 1 ? visits : 1)); }

// The priors of a node's children: softmax of the logits over the legal moves (bit a of `legal`),
// written in action order into priors[0 .. popcount(legal)).
CAS_HD inline int legalPriors(const float* logits, std::uint32_t legal, int actions, float* priors) {
  float top = -bitsFloat(0x7F800000u);
  for (int a = 0; a < actions; ++a)
    if ((legal >> a) & 1u) top = logits[a] > top ? logits[a] : top;
  float sum = 0.0f;
  int n = 0;
  for (int a = 0; a < actions; ++a)
    if ((legal >> a) & 1u) {
      priors[n] = searchExp(logits[a] - top);
      sum = sum + priors[n];
      ++n;
    }
  for (int i = 0; i < n; ++i) priors[i] = priors[i] / sum;
  return n;
}

// Gumbel MuZero's monotone transform of a completed Q in [-1, 1] (c_visit 50, c_scale 0.1).
CAS_HD inline float gumbelSigma(float q, std::int32_t maxVisits) { return (50.0f + float(maxVisits)) * 0.1f * (q + 1.0f) / 2.0f; }

// Sequential halving: the number of phases for `arms` arms, and the simulations of one phase.
CAS_HD inline int gumbelPhaseLength(int arms, int gumbelArms, int simulations) {
  int field = arms * 2 < gumbelArms ? arms * 2 : gumbelArms;
  int phases = 0;
  while ((1 << phases) < field) ++phases;  // ceil(log2(field))
  if (phases < 1) phases = 1;
  const int share = simulations / phases;
  return arms > share ? arms : share;
}

// --- the hashed test evaluator -------------------------------------------------------------------

// Logits and a value that depend only on the observation, computed bit-identically on both
// sides, so a CPU and a device search can be compared without a network's float differences.
// Values are multiples of 1/128, so that their sums in the tree are exact.
CAS_HD inline void hashedEvaluation(const float* obs, int obsSize, int actions, float* logits, float* value) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (int i = 0; i < obsSize; ++i)
    if (obs[i] > 0.5f) h = (h ^ std::uint64_t(i + 1)) * 0x100000001B3ull;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  for (int a = 0; a < actions; ++a) logits[a] = float(int((h >> (4 * (a % 10))) & 15u) - 8) * 0.25f;
  *value = float(int((h >> 40) & 255u) - 128) * (1.0f / 128.0f);
}

// --- the learned-model search (learned_search.hpp) ----------------------------------------------

// Q of a child in a single-agent tree: the edge's reward plus the discounted mean value below it,
// (w / n) first, then the product, then the sum.
CAS_HD inline float learnedQ(float reward, float w, std::int32_t n, float discount) { return reward + discount * (w / float(n)); }

// MuZero's min-max normalisation into [0, 1] over the Q values a game's tree has backed up; 0
// while fewer than two distinct values have been seen (max <= min), and clamped into [0, 1] for
// values that did not enter the bounds (a completed Q, the root value). `floor`: the smallest
// span divided by (0: the span seen, as MuZero does), so that a tree whose values differ by a
// model's noise alone (rewards all zero) is not stretched to [0, 1].
CAS_HD inline float minMaxNormalize(float q, float lo, float hi, float floor) {
  if (!(hi > lo)) return 0.0f;
  const float span = hi - lo < floor ? floor : hi - lo;
  const float x = (q - lo) / span;
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}

// Virtual loss on a normalised Q: `pending` selections still awaiting evaluation count as extra
// visits of the lowest normalised value (0), so the mean over completed + pending visits is
// qn * n / (n + pending); 0 without completed visits.
CAS_HD inline float pendingQ(float qn, std::int32_t completed, std::int32_t pending) {
  return completed > 0 ? (qn * float(completed)) / float(completed + pending) : 0.0f;
}

// PUCT over a normalised Q: qn + cPuct * p * sqrt(N_parent) / (1 + n), in puctScore's order.
CAS_HD inline float normalizedPuctScore(float qn, std::int32_t n, float p, float sqrtParent, float cPuct) {
  return qn + cPuct * p * sqrtParent / float(1 + n);
}

// --- the hashed learned model (tests; the device twin runs it as kernels) ----------------------

// A model whose latent states, rewards, logits and values come from hashes of their inputs'
// bits: the same bits on host and device. State entries, rewards and values are multiples of
// 1/128 in [-1, 1) (their sums in a tree stay exact for short paths); logits multiples of 1/4.
CAS_HD inline std::uint64_t hashMix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

CAS_HD inline std::uint64_t hashFloats(const float* x, int n, std::uint64_t h) {
  for (int i = 0; i < n; ++i) h = (h ^ std::uint64_t(floatBits(x[i]))) * 0x100000001B3ull;
  return h;
}

CAS_HD inline float hashedUnit(std::uint64_t h) { return float(int(h & 255u) - 128) * (1.0f / 128.0f); }

// represent: observation -> latent state.
CAS_HD inline void hashedRepresentation(const float* obs, int obsSize, int stateSize, float* state) {
  const std::uint64_t h = hashFloats(obs, obsSize, 0xCBF29CE484222325ull);
  for (int i = 0; i < stateSize; ++i) state[i] = hashedUnit(hashMix(h + 0x9E3779B97F4A7C15ull * std::uint64_t(i + 1)));
}

// dynamics: (state, action) -> (next state, reward).
CAS_HD inline void hashedDynamics(const float* state, int stateSize, int action, float* next, float* reward) {
  const std::uint64_t h = hashFloats(state, stateSize, 0x84222325CBF29CE4ull ^ std::uint64_t(action + 1));
  for (int i = 0; i < stateSize; ++i) next[i] = hashedUnit(hashMix(h + 0x9E3779B97F4A7C15ull * std::uint64_t(i + 1)));
  *reward = hashedUnit(hashMix(h ^ 0x5851F42D4C957F2Dull));
}

// prediction: state -> (logits, value).
CAS_HD inline void hashedPrediction(const float* state, int stateSize, int actions, float* logits, float* value) {
  const std::uint64_t h = hashMix(hashFloats(state, stateSize, 0x2325CBF29CE48422ull));
  for (int a = 0; a < actions; ++a) logits[a] = float(int((h >> (4 * (a % 12))) & 15u) - 8) * 0.25f;
  *value = hashedUnit(h >> 48);
}

}  // namespace cas::search
