#pragma once
// The CPU reference of the fused Transformer ops (core/ir/ops.hpp's Attention, AttentionStats,
// AttentionGradQ, AttentionGradKV, LayerNorm, LayerNormGrad): plain loops in fp32, one query
// (or key, or row) per task on the thread pool. The CUDA kernels (core/cuda_render/kernels/
// attention.cuh, layer_norm.cuh) are tested against these; these are tested against the
// compositions the ops replace (core/ir/decompose.hpp).
//
//   q, g, out, dq   [B, T, D]    head h: columns h*dh .. (h+1)*dh - 1, dh = D / H
//   k, v            [B, S, D]
//   stats           [B, H, T, 2] per query: log-sum-exp of its scaled scores, g . out
//   dkv             [B, S, 2D]   dk in columns 0 .. D-1, dv in D .. 2D-1
//   lengths         [B, 1]       key j of sequence b is visible when j < max(lengths[b], 1)
// Thread-safety: the functions write only their outputs.
#include <cstdint>

#include "core/exec/thread_pool.hpp"

namespace cas::exec {

struct AttentionGeometry {
  std::int64_t batch = 0, queries = 0, keys = 0, width = 0, heads = 1;
  bool causal = false;
  const float* lengths = nullptr;  // [batch], or null: every key visible (but for causal)
  std::int64_t headWidth() const { return width / heads; }
};

void attentionForward(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, float* out);
void attentionStats(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, const float* g,
                    float* stats);
void attentionGradQ(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, const float* g,
                    const float* stats, float* dq);
void attentionGradKV(ThreadPool& pool, const AttentionGeometry& a, const float* q, const float* k, const float* v, const float* g,
                     const float* stats, float* dkv);

// Rows of `width` values: out = (x - mean) / sqrt(var + eps) * gamma + beta.
void layerNormForward(ThreadPool& pool, std::int64_t rows, std::int64_t width, float eps, const float* x, const float* gamma,
                      const float* beta, float* out);
// dx of layerNormForward given the output gradient g.
void layerNormGrad(ThreadPool& pool, std::int64_t rows, std::int64_t width, float eps, const float* x, const float* gamma, const float* g,
                   float* dx);

}  // namespace cas::exec
