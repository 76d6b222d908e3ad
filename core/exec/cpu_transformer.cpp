// The CPU reference of the fused Transformer ops (cpu_transformer.hpp draws the layouts).
#include "core/exec/cpu_transformer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace cas::exec {
namespace {

float dot(const float* a, const float* b, std::int64_t n) {
  float s = 0;
  for (std::int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

// Whether query i of sequence b sees key j.
bool visible(const AttentionGeometry& a, std::int64_t b, std::int64_t i, std::int64_t j) {
  if (a.causal && j > i) return false;
  return !a.lengths || float(j) < std::max(a.lengths[b], 1.0f);
}

float scaleOf(const AttentionGeometry& a) { return 1.0f / std::sqrt(float(a.headWidth())); }

// Calls body(b, h, i) for every query row of every head, in parallel.
template <typename Body>
void forEachQuery(ThreadPool& pool, const AttentionGeometry& a, Body&& body) {
  pool.parallelFor(a.batch * a.heads * a.queries, 16, [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t r = from; r < to; ++r) body(r / (a.heads * a.queries), (r / a.queries) % a.heads, r % a.queries);
  });
}

// Query i's probabilities over the keys (0 where hidden) and their log-sum-exp.
float probabilities(const AttentionGeometry& a, const float* q, const float* k, std::int64_t b, std::int64_t h, std::int64_t i,
                    std::vector<float>& p) {
  const std::int64_t dh = a.headWidth(), d = a.width;
  const float* qi = q + (b * a.queries + i) * d + h * dh;
  const float scale = scaleOf(a);
  float m = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < a.keys; ++j) {
    p[size_t(j)] = visible(a, b, i, j) ? dot(qi, k + (b * a.keys + j) * d + h * dh, dh) * scale : -std::numeric_limits<float>::infinity();
    m = std::max(m, p[size_t(j)]);
  }
  float sum = 0;
  for (std::int64_t j = 0; j < a.keys; ++j) sum += p[size_t(j)] = std::exp(p[size_t(j)] - m);
  for (float& x : p) x /= sum;
  return m + std::log(sum);
}

// Query i's output (its head's dh values) from its probabilities.
void weightedValues(const AttentionGeometry& a, const float* v, std::int64_t b, std::int64_t h, const std::vector<float>& p, float* o) {
  const std::int64_t dh = a.headWidth();
  std::fill(o, o + dh, 0.0f);
  for (std::int64_t j = 0; j < a.keys; ++j)
    if (p[size_t(j)] != 0.0f)
      for (std::int64_t c = 0; c < dh; ++c) o[c] += p[size_t(j)] * v[(b * a.keys + j) * a.width + h * dh + c];
}

// A row's mean and 1 / sqrt(variance + eps), the variance around the mean.
std::pair<float, float> moments(const float* xr, std::int64_t width, float eps) {
  float mean = 0, var = 0;
  for (std::int64_t c = 0; c < width; ++c) mean += xr[c];
  mean /= float(width);
  for (std::int64_t c = 0; c < width; ++c) var += (xr[c] - mean) * (xr[c] - mean);
  return {mean, 1.0f / std::sqrt(var / float(width) + eps)};
}

}  // namespace

void attentionForward(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, float* out) {
  forEachQuery(pool, a, [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    std::vector<float> p(size_t(a.keys));
    probabilities(a, q, k, b, h, i, p);
    weightedValues(a, v, b, h, p, out + (b * a.queries + i) * a.width + h * a.headWidth());
  });
}

void attentionStats(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, const float* g,
                    float* stats) {
  forEachQuery(pool, a, [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    std::vector<float> p(size_t(a.keys)), o(size_t(a.headWidth()));
    float* s = stats + ((b * a.heads + h) * a.queries + i) * 2;
    s[0] = probabilities(a, q, k, b, h, i, p);
    weightedValues(a, v, b, h, p, o.data());
    s[1] = dot(g + (b * a.queries + i) * a.width + h * a.headWidth(), o.data(), a.headWidth());
  });
}

void attentionGradQ(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, const float* g,
                    const float* stats, float* dq) {
  const std::int64_t dh = a.headWidth(), d = a.width;
  const float scale = scaleOf(a);
  forEachQuery(pool, a, [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    const float* s = stats + ((b * a.heads + h) * a.queries + i) * 2;
    const float *qi = q + (b * a.queries + i) * d + h * dh, *gi = g + (b * a.queries + i) * d + h * dh;
    float* out = dq + (b * a.queries + i) * d + h * dh;
    std::fill(out, out + dh, 0.0f);
    for (std::int64_t j = 0; j < a.keys; ++j) {
      if (!visible(a, b, i, j)) continue;
      const float *kj = k + (b * a.keys + j) * d + h * dh, *vj = v + (b * a.keys + j) * d + h * dh;
      const float p = std::exp(dot(qi, kj, dh) * scale - s[0]);
      const float ds = p * (dot(gi, vj, dh) - s[1]) * scale;
      for (std::int64_t c = 0; c < dh; ++c) out[c] += ds * kj[c];
    }
  });
}

void attentionGradKV(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, const float* g,
                     const float* stats, float* dkv) {
  const std::int64_t dh = a.headWidth(), d = a.width;
  const float scale = scaleOf(a);
  pool.parallelFor(a.batch * a.heads * a.keys, 16, [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t r = from; r < to; ++r) {
      const std::int64_t b = r / (a.heads * a.keys), h = (r / a.keys) % a.heads, j = r % a.keys;
      const float *kj = k + (b * a.keys + j) * d + h * dh, *vj = v + (b * a.keys + j) * d + h * dh;
      float* dk = dkv + (b * a.keys + j) * 2 * d + h * dh;
      float* dv = dk + d;
      std::fill(dk, dk + dh, 0.0f);
      std::fill(dv, dv + dh, 0.0f);
      for (std::int64_t i = 0; i < a.queries; ++i) {
        if (!visible(a, b, i, j)) continue;
        const float* s = stats + ((b * a.heads + h) * a.queries + i) * 2;
        const float *qi = q + (b * a.queries + i) * d + h * dh, *gi = g + (b * a.queries + i) * d + h * dh;
        const float p = std::exp(dot(qi, kj, dh) * scale - s[0]);
        const float ds = p * (dot(gi, vj, dh) - s[1]) * scale;
        for (std::int64_t c = 0; c < dh; ++c) {
          dk[c] += ds * qi[c];
          dv[c] += p * gi[c];
        }
      }
    }
  });
}

void layerNormForward(ThreadPool& pool, std::int64_t rows, std::int64_t width, float eps, const float* x, const float* gamma,
                      const float* beta, float* out) {
  pool.parallelFor(rows, 16, [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t r = from; r < to; ++r) {
      const float* xr = x + r * width;
      const auto [mean, inverse] = moments(xr, width, eps);
      for (std::int64_t c = 0; c < width; ++c) out[r * width + c] = (xr[c] - mean) * inverse * gamma[c] + beta[c];
    }
  });
}

void layerNormGrad(ThreadPool& pool, std::int64_t rows, std::int64_t width, float eps, const float* x, const float* gamma, const float* g,
                   float* dx) {
  pool.parallelFor(rows, 16, [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t r = from; r < to; ++r) {
      const float *xr = x + r * width, *gr = g + r * width;
      const auto [mean, inverse] = moments(xr, width, eps);
      float meanG = 0, meanGX = 0;  // of g * gamma and g * gamma * xhat
      for (std::int64_t c = 0; c < width; ++c) {
        meanG += gr[c] * gamma[c];
        meanGX += gr[c] * gamma[c] * (xr[c] - mean) * inverse;
      }
      meanG /= float(width);
      meanGX /= float(width);
      for (std::int64_t c = 0; c < width; ++c)
        dx[r * width + c] = inverse * (gr[c] * gamma[c] - meanG - (xr[c] - mean) * inverse * meanGX);
    }
  });
}

}  // namespace cas::exec
