// Fused layer normalisation (core/ir/ops.hpp's LayerNorm and LayerNormGrad) over rows of W
// values, in fp32; the CPU reference is core/exec/cpu_transformer.cpp.
//
//   x, out, g, dx   [Rows, W]   (any leading axes flattened: the last axis is normalised)
//   gamma, beta     [W]
//
// Launch: a segment of Rows * 32 threads (cas_segment, elementwise.cuh), a warp per row; lane l
// holds columns l, l + 32, ... of its row in registers, so x is read once: the mean and the
// variance are two warp sums over registers (the variance around the mean, as the CPU
// reference computes it, not E[x^2] - mean^2, which cancels).
//
// Thread-safety: pure device functions.

template <int W>
__device__ __forceinline__ void cas_layer_norm_moments(const float* xr, int lane, float eps, float (&xs)[(W + 31) / 32], float& mean,
                                                       float& inverse) {
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < (W + 31) / 32; ++c) {
    xs[c] = lane + 32 * c < W ? xr[lane + 32 * c] : 0.f;
    sum += xs[c];
  }
  mean = cas_warp_sum(sum) / float(W);
  float squares = 0.f;
#pragma unroll
  for (int c = 0; c < (W + 31) / 32; ++c)
    if (lane + 32 * c < W) squares += (xs[c] - mean) * (xs[c] - mean);
  inverse = 1.f / sqrtf(cas_warp_sum(squares) / float(W) + eps);
}

// out = (x - mean) / sqrt(var + eps) * gamma + beta, row by row.
template <int Rows, int W>
__device__ __forceinline__ bool cas_layer_norm(int& b, const float* x, const float* gamma, const float* beta, float eps, float* out) {
  return cas_segment<Rows * 32>(b, [&](int thread) {
    const int row = thread / 32, lane = thread % 32;
    if (row >= Rows) return;
    float xs[(W + 31) / 32], mean, inverse;
    cas_layer_norm_moments<W>(x + size_t(row) * W, lane, eps, xs, mean, inverse);
    float* o = out + size_t(row) * W;
#pragma unroll
    for (int c = 0; c < (W + 31) / 32; ++c)
      if (lane + 32 * c < W) o[lane + 32 * c] = (xs[c] - mean) * inverse * gamma[lane + 32 * c] + beta[lane + 32 * c];
  });
}

// dx of cas_layer_norm given the output gradient g:
// inverse * (g*gamma - mean(g*gamma) - xhat * mean(g*gamma*xhat)).
template <int Rows, int W>
__device__ __forceinline__ bool cas_layer_norm_grad(int& b, const float* x, const float* gamma, const float* g, float eps, float* dx) {
  return cas_segment<Rows * 32>(b, [&](int thread) {
    const int row = thread / 32, lane = thread % 32;
    if (row >= Rows) return;
    float xs[(W + 31) / 32], gg[(W + 31) / 32], mean, inverse;
    cas_layer_norm_moments<W>(x + size_t(row) * W, lane, eps, xs, mean, inverse);
    const float* gr = g + size_t(row) * W;
    float meanG = 0.f, meanGX = 0.f;
#pragma unroll
    for (int c = 0; c < (W + 31) / 32; ++c) {
      gg[c] = lane + 32 * c < W ? gr[lane + 32 * c] * gamma[lane + 32 * c] : 0.f;
      meanG += gg[c];
      meanGX += gg[c] * (xs[c] - mean) * inverse;
    }
    meanG = cas_warp_sum(meanG) / float(W);
    meanGX = cas_warp_sum(meanGX) / float(W);
    float* o = dx + size_t(row) * W;
#pragma unroll
    for (int c = 0; c < (W + 31) / 32; ++c)
      if (lane + 32 * c < W) o[lane + 32 * c] = inverse * (gg[c] - meanG - (xs[c] - mean) * inverse * meanGX);
  });
}
