// Attention on tensor cores, forward and backward, for bf16 or fp16 attention nodes whose heads
// are a multiple of 16 values wide (core/ir/schedule.hpp, attentionOnTensorCores): the
// flash-style loops of attention.cuh (forward, statistics, dq, [dk | dv]) with the products in
// mma.sync.m16n8k16 (16-bit operands, fp32 sums) and the softmax in fp32. Same layouts, same
// masks (causal, lengths); the CPU reference is core/exec/cpu_transformer.cpp.
//
// A warp owns 16 queries of one head (one sequence) and walks the keys 16 at a time:
//
//   S[16 q][16 keys] = Q[16][Dh] . K^T      Dh/16 k-steps x 2 n8 tiles of mma
//   online softmax over S's rows in fp32    (exp2, the scale log2(e)/sqrt(Dh) folded into Q)
//   O[16 q][Dh]     += P[16][16 keys] . V   Dh/8 n8 tiles of mma, P as the A operand
//
// mma.sync.m16n8k16's fragments, per lane (g = lane / 4, c = 2 * (lane % 4)); two 16-bit values
// per register, the lower column in the lower half:
//
//   A (16x16, rows x k)   a0: (g, c..c+1)   a1: (g+8, c..c+1)   a2: (g, c+8..c+9)   a3: (g+8, c+8..c+9)
//   B (16x8,  k x cols)   b0: (c..c+1, g)   b1: (c+8..c+9, g)
//   C (16x8,  rows x cols) c0,c1: (g, c..c+1)   c2,c3: (g+8, c..c+1)
//
// so the two C tiles of S for 16 keys are, element for element, the A fragment of P for P.V (no
// shuffle between the two products). Q's fragments stay in registers; K and V are read from
// global memory (fp32, rounded to 16 bits as they are loaded) and shared through L1 by the
// warps of one head. A lane holds two query rows (g and g + 8) and shares their maxima and sums
// with the three other lanes of its quad.
//
// The backward pass recomputes P from the statistics (log-sum-exp, g . out) as attention.cuh's
// does, with dS = P (dP - delta) rounded to 16 bits as P is:
//
//   dq (a warp per 16 queries):  S = Q.K^T, dP = G.V^T, dQ += dS.K          over the key tiles
//   [dk | dv] (a warp per 16 keys): S^T = K.Q^T, dP^T = V.G^T, dV += P^T.G, dK += dS^T.Q
//                                                                           over the query tiles
//
// the C tiles of S^T and dS^T again serving as A fragments, and the row operands (Q, G in dq;
// K, V in [dk | dv]) held in registers.
//
// The tests run this code on the CPU (tests/support/cuda_on_cpu.hpp), which supplies
// cas_pack_half2, cas_rounded16 and cas_mma_m16n8k16 in place of the instructions below.
// Thread-safety: pure device functions.

#ifndef CAS_CUDA_ON_CPU
// Two floats rounded to 16 bits (round to nearest even), `lo` in the lower half.
template <bool BF16>
__device__ __forceinline__ unsigned cas_pack_half2(float lo, float hi) {
  unsigned packed;
  if constexpr (BF16) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  else asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

// x rounded to the 16-bit type and widened back: the value a product's operand holds.
template <bool BF16>
__device__ __forceinline__ float cas_rounded16(float x) {
  const unsigned packed = cas_pack_half2<BF16>(x, 0.f);
  float v;
  if constexpr (BF16) v = __uint_as_float(packed << 16);
  else asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(static_cast<unsigned short>(packed & 0xffffu)));
  return v;
}

// d += a . b for the warp's 16x16 A and 16x8 B fragments (layouts above).
template <bool BF16>
__device__ __forceinline__ void cas_mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (BF16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

// Element `column` and the next of `row` of a [rows, D] tensor, 0 past `rows`.
template <bool BF16, int D>
__device__ __forceinline__ unsigned cas_attention_pair(const float* t, int row, int rows, int column, float scale) {
  if (row >= rows) return 0u;
  const float* p = t + row * D + column;
  return cas_pack_half2<BF16>(p[0] * scale, p[1] * scale);
}

// The two n8 C tiles of a 16x16 product, rounded to 16 bits, as the A fragment of the next
// product (the layouts above: C's elements are A's, element for element).
template <bool BF16>
__device__ __forceinline__ void cas_attention_c_as_a(const float (&c)[2][4], unsigned (&a)[4]) {
  a[0] = cas_pack_half2<BF16>(c[0][0], c[0][1]);
  a[1] = cas_pack_half2<BF16>(c[0][2], c[0][3]);
  a[2] = cas_pack_half2<BF16>(c[1][0], c[1][1]);
  a[3] = cas_pack_half2<BF16>(c[1][2], c[1][3]);
}

// One step of the online softmax for the lane's two rows over 16 keys: s[n][e] (n: the key tile
// of 8, e: C's element) masked where the key is not visible, in log2 units; m, l running maxima
// and sums; o rescaled. Returns P as the A fragment of the P.V product.
template <bool BF16, int DTiles>
__device__ __forceinline__ void cas_attention_mma_softmax(float (&s)[2][4], int j0, int c, const int (&end)[2], float (&m)[2], float (&l)[2],
                                                          float (&o)[DTiles][4], unsigned (&p)[4]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float rowMax = cas_negative_infinity();
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& x = s[n][2 * r + e];
        if (j0 + 8 * n + c + e >= end[r]) x = cas_negative_infinity();
        rowMax = x > rowMax ? x : rowMax;
      }
    for (int o2 = 1; o2 < 4; o2 <<= 1) {
      const float w = __shfl_xor_sync(0xffffffffu, rowMax, o2);
      rowMax = w > rowMax ? w : rowMax;
    }
    const float mNew = rowMax > m[r] ? rowMax : m[r];
    const bool none = mNew == cas_negative_infinity();  // no visible key yet (a padding row)
    const float correction = none ? 1.f : exp2f(m[r] - mNew);
    float rowSum = 0.f;
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& x = s[n][2 * r + e];
        x = none || x == cas_negative_infinity() ? 0.f : exp2f(x - mNew);
        rowSum += x;
      }
    rowSum += __shfl_xor_sync(0xffffffffu, rowSum, 1);
    rowSum += __shfl_xor_sync(0xffffffffu, rowSum, 2);
    l[r] = l[r] * correction + rowSum;
    m[r] = mNew;
#pragma unroll
    for (int t = 0; t < DTiles; ++t) {
      o[t][2 * r] *= correction;
      o[t][2 * r + 1] *= correction;
    }
  }
  cas_attention_c_as_a<BF16>(s, p);
}

// Where a warp's 16 rows (queries, or keys in [dk | dv]) lie: sequence, head, first row; and the
// lane's place in the fragments (g: rows g and g + 8; c: columns c and c + 1).
struct CasMmaWarp {
  int seq, h, r0, g, c;
};
template <int L, int H>
__device__ __forceinline__ CasMmaWarp cas_attention_mma_warp(int thread) {
  constexpr int Tiles = (L + 15) / 16;
  const int warp = thread / 32, lane = thread % 32;
  return {warp / (Tiles * H), (warp / Tiles) % H, 16 * (warp % Tiles), lane / 4, 2 * (lane % 4)};
}

// The A fragments of rows r0 .. r0 + 15 of a head's [rows, Dh] slice (`t` at its first column, D
// apart), times `scale`, 0 past `rows`.
template <bool BF16, int D, int KSteps>
__device__ __forceinline__ void cas_attention_rows_a(unsigned (&a)[KSteps][4], const float* t, int r0, int rows, int g, int c, float scale) {
#pragma unroll
  for (int ks = 0; ks < KSteps; ++ks) {
    a[ks][0] = cas_attention_pair<BF16, D>(t, r0 + g, rows, 16 * ks + c, scale);
    a[ks][1] = cas_attention_pair<BF16, D>(t, r0 + g + 8, rows, 16 * ks + c, scale);
    a[ks][2] = cas_attention_pair<BF16, D>(t, r0 + g, rows, 16 * ks + c + 8, scale);
    a[ks][3] = cas_attention_pair<BF16, D>(t, r0 + g + 8, rows, 16 * ks + c + 8, scale);
  }
}

// acc[n] += A . B^T for 16 rows of `b` from r0 (two n8 tiles): B's rows hold the product's
// columns (K in Q.K^T), Dh values each.
template <bool BF16, int D, int KSteps>
__device__ __forceinline__ void cas_attention_mma_rows(float (&acc)[2][4], const unsigned (&a)[KSteps][4], const float* t, int r0, int rows, int g, int c) {
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int ks = 0; ks < KSteps; ++ks) {
      const unsigned bf[2] = {cas_attention_pair<BF16, D>(t, r0 + 8 * n + g, rows, 16 * ks + c, 1.f),
                              cas_attention_pair<BF16, D>(t, r0 + 8 * n + g, rows, 16 * ks + c + 8, 1.f)};
      cas_mma_m16n8k16<BF16>(acc[n], a[ks], bf);
    }
}

// acc[t] += P . X for a 16x16 A fragment p over rows r0 .. r0 + 15 of `x` (V in P.V), all Dh
// columns: B's k runs down x's rows.
template <bool BF16, int D, int DTiles>
__device__ __forceinline__ void cas_attention_mma_columns(float (&acc)[DTiles][4], const unsigned (&p)[4], const float* x, int r0, int rows, int g, int c) {
#pragma unroll
  for (int t = 0; t < DTiles; ++t) {
    const int column = 8 * t + g;
    auto at = [&](int row) { return row < rows ? x[row * D + column] : 0.f; };
    const unsigned bf[2] = {cas_pack_half2<BF16>(at(r0 + c), at(r0 + c + 1)), cas_pack_half2<BF16>(at(r0 + c + 8), at(r0 + c + 9))};
    cas_mma_m16n8k16<BF16>(acc[t], p, bf);
  }
}

// The flash loop of a warp's 16 queries: their running maxima m (log2 units), sums l and
// unnormalised outputs o over the keys each sees.
template <int T, int S, int D, int H, bool Causal, bool BF16>
__device__ __forceinline__ void cas_attention_mma_queries(const CasMmaWarp& w, const float* q, const float* k, const float* v, const float* lengths,
                                                          float (&m)[2], float (&l)[2], float (&o)[D / H / 8][4]) {
  constexpr int Dh = D / H, KSteps = Dh / 16, DTiles = Dh / 8;
  static_assert(Dh % 16 == 0, "tensor-core attention takes heads a multiple of 16 values wide");
  const float* kh = k + (w.seq * S) * D + w.h * Dh;
  const float* vh = v + (w.seq * S) * D + w.h * Dh;
  unsigned qa[KSteps][4];
  cas_attention_rows_a<BF16, D, KSteps>(qa, q + (w.seq * T) * D + w.h * Dh, w.r0, T, w.g, w.c, rsqrtf(float(Dh)) * 1.44269504088896341f);  // log2(e): exp2
  const int end[2] = {w.r0 + w.g < T ? cas_attention_visible_keys<S, Causal>(w.r0 + w.g, lengths, w.seq) : 0,
                      w.r0 + w.g + 8 < T ? cas_attention_visible_keys<S, Causal>(w.r0 + w.g + 8, lengths, w.seq) : 0};
  const int last = w.r0 + 15 < T ? w.r0 + 15 : T - 1;
  const int keys = cas_attention_visible_keys<S, Causal>(last, lengths, w.seq);  // the most any row of the warp sees
  m[0] = m[1] = cas_negative_infinity();
  l[0] = l[1] = 0.f;
#pragma unroll
  for (int t = 0; t < DTiles; ++t) o[t][0] = o[t][1] = o[t][2] = o[t][3] = 0.f;
  for (int j0 = 0; j0 < keys; j0 += 16) {
    float s[2][4] = {};
    cas_attention_mma_rows<BF16, D, KSteps>(s, qa, kh, j0, S, w.g, w.c);
    unsigned pa[4];
    cas_attention_mma_softmax<BF16, DTiles>(s, j0, w.c, end, m, l, o, pa);
    cas_attention_mma_columns<BF16, D, DTiles>(o, pa, vh, j0, S, w.g, w.c);
  }
}

// out = softmax(q k^T / sqrt(Dh), masked) v on tensor cores; Rows = B * H * T queries, a warp
// per 16 queries of a head.
template <int Rows, int T, int S, int D, int H, bool Causal, bool BF16>
__device__ __forceinline__ bool cas_attention_forward_mma(int& b, const float* q, const float* k, const float* v, const float* lengths, float* out) {
  constexpr int Dh = D / H, Warps = Rows / T * ((T + 15) / 16), DTiles = Dh / 8;  // Rows / T: B * H
  return cas_segment<Warps * 32>(b, [&](int thread) {
    if (thread / 32 >= Warps) return;  // whole warps: the shuffles stay convergent
    const CasMmaWarp w = cas_attention_mma_warp<T, H>(thread);
    float m[2], l[2], o[DTiles][4];
    cas_attention_mma_queries<T, S, D, H, Causal, BF16>(w, q, k, v, lengths, m, l, o);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = w.r0 + w.g + 8 * r;
      if (row >= T) continue;
      float* to = out + (w.seq * T + row) * D + w.h * Dh;
#pragma unroll
      for (int t = 0; t < DTiles; ++t) {
        to[8 * t + w.c] = o[t][2 * r] / l[r];
        to[8 * t + w.c + 1] = o[t][2 * r + 1] / l[r];
      }
    }
  });
}

// stats[b][h][i] = (log-sum-exp of the scaled scores, g . out), as cas_attention_stats; a warp per
// 16 queries.
template <int Rows, int T, int S, int D, int H, bool Causal, bool BF16>
__device__ __forceinline__ bool cas_attention_stats_mma(int& b, const float* q, const float* k, const float* v, const float* g, const float* lengths,
                                                        float* stats) {
  constexpr int Dh = D / H, Warps = Rows / T * ((T + 15) / 16), DTiles = Dh / 8;
  return cas_segment<Warps * 32>(b, [&](int thread) {
    if (thread / 32 >= Warps) return;
    const CasMmaWarp w = cas_attention_mma_warp<T, H>(thread);
    float m[2], l[2], o[DTiles][4];
    cas_attention_mma_queries<T, S, D, H, Causal, BF16>(w, q, k, v, lengths, m, l, o);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = w.r0 + w.g + 8 * r;
      const float* gi = g + (w.seq * T + (row < T ? row : 0)) * D + w.h * Dh;
      // g as the products of dP = G.V^T see it (16 bits): where one key takes all the weight,
      // dP - delta then cancels to fp32 rounding instead of g's 16-bit rounding.
      float delta = 0.f;
#pragma unroll
      for (int t = 0; t < DTiles; ++t)
        delta += cas_rounded16<BF16>(gi[8 * t + w.c]) * o[t][2 * r] + cas_rounded16<BF16>(gi[8 * t + w.c + 1]) * o[t][2 * r + 1];
      delta += __shfl_xor_sync(0xffffffffu, delta, 1);  // the quad holds the row's columns
      delta += __shfl_xor_sync(0xffffffffu, delta, 2);
      if (row < T && w.c == 0) {
        float* st = stats + ((w.seq * H + w.h) * T + row) * 2;
        st[0] = m[r] * 0.693147180559945309f + logf(l[r]);  // m in log2 units
        st[1] = delta / l[r];
      }
    }
  });
}

// dS = P (dP - delta) for one C element, P recomputed from s (log2 units) and the row's lse2
// (its log-sum-exp in log2 units); 0 where the key is hidden.
__device__ __forceinline__ float cas_attention_mma_ds(float s, float dp, float lse2, float delta, bool visible, float& p) {
  p = visible ? exp2f(s - lse2) : 0.f;
  return p * (dp - delta);
}

// dq on tensor cores; Rows = B * H * T queries, a warp per 16 queries, stats from the statistics
// kernel.
template <int Rows, int T, int S, int D, int H, bool Causal, bool BF16>
__device__ __forceinline__ bool cas_attention_grad_q_mma(int& b, const float* q, const float* k, const float* v, const float* g, const float* stats,
                                                         const float* lengths, float* dq) {
  constexpr int Dh = D / H, Warps = Rows / T * ((T + 15) / 16), KSteps = Dh / 16, DTiles = Dh / 8;
  constexpr float kLog2e = 1.44269504088896341f;
  return cas_segment<Warps * 32>(b, [&](int thread) {
    if (thread / 32 >= Warps) return;
    const CasMmaWarp w = cas_attention_mma_warp<T, H>(thread);
    const float* kh = k + (w.seq * S) * D + w.h * Dh;
    const float* vh = v + (w.seq * S) * D + w.h * Dh;
    unsigned qa[KSteps][4], ga[KSteps][4];
    cas_attention_rows_a<BF16, D, KSteps>(qa, q + (w.seq * T) * D + w.h * Dh, w.r0, T, w.g, w.c, rsqrtf(float(Dh)) * kLog2e);
    cas_attention_rows_a<BF16, D, KSteps>(ga, g + (w.seq * T) * D + w.h * Dh, w.r0, T, w.g, w.c, 1.f);
    int end[2];
    float lse2[2], delta[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = w.r0 + w.g + 8 * r;
      const float* st = stats + ((w.seq * H + w.h) * T + (row < T ? row : 0)) * 2;
      end[r] = row < T ? cas_attention_visible_keys<S, Causal>(row, lengths, w.seq) : 0;
      lse2[r] = st[0] * kLog2e;
      delta[r] = st[1];
    }
    const int last = w.r0 + 15 < T ? w.r0 + 15 : T - 1;
    const int keys = cas_attention_visible_keys<S, Causal>(last, lengths, w.seq);
    float acc[DTiles][4] = {};
    for (int j0 = 0; j0 < keys; j0 += 16) {
      float s[2][4] = {}, dp[2][4] = {};
      cas_attention_mma_rows<BF16, D, KSteps>(s, qa, kh, j0, S, w.g, w.c);
      cas_attention_mma_rows<BF16, D, KSteps>(dp, ga, vh, j0, S, w.g, w.c);
      float p;
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e / 2, key = j0 + 8 * n + w.c + e % 2;
          s[n][e] = cas_attention_mma_ds(s[n][e], dp[n][e], lse2[r], delta[r], key < end[r], p);
        }
      unsigned da[4];
      cas_attention_c_as_a<BF16>(s, da);
      cas_attention_mma_columns<BF16, D, DTiles>(acc, da, kh, j0, S, w.g, w.c);
    }
    const float scale = rsqrtf(float(Dh));
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = w.r0 + w.g + 8 * r;
      if (row >= T) continue;
      float* to = dq + (w.seq * T + row) * D + w.h * Dh;
#pragma unroll
      for (int t = 0; t < DTiles; ++t) {
        to[8 * t + w.c] = acc[t][2 * r] * scale;
        to[8 * t + w.c + 1] = acc[t][2 * r + 1] * scale;
      }
    }
  });
}

// [dk | dv] on tensor cores; Rows = B * H * S keys, a warp per 16 keys walking the queries that
// see them (from its own first key on when causal).
template <int Rows, int T, int S, int D, int H, bool Causal, bool BF16>
__device__ __forceinline__ bool cas_attention_grad_kv_mma(int& b, const float* q, const float* k, const float* v, const float* g, const float* stats,
                                                          const float* lengths, float* dkv) {
  constexpr int Dh = D / H, Warps = Rows / S * ((S + 15) / 16), KSteps = Dh / 16, DTiles = Dh / 8;
  constexpr float kLog2e = 1.44269504088896341f;
  return cas_segment<Warps * 32>(b, [&](int thread) {
    if (thread / 32 >= Warps) return;
    const CasMmaWarp w = cas_attention_mma_warp<S, H>(thread);
    const float* qh = q + (w.seq * T) * D + w.h * Dh;
    const float* gh = g + (w.seq * T) * D + w.h * Dh;
    const float* st = stats + (w.seq * H + w.h) * T * 2;
    unsigned ka[KSteps][4], va[KSteps][4];
    cas_attention_rows_a<BF16, D, KSteps>(ka, k + (w.seq * S) * D + w.h * Dh, w.r0, S, w.g, w.c, rsqrtf(float(Dh)) * kLog2e);
    cas_attention_rows_a<BF16, D, KSteps>(va, v + (w.seq * S) * D + w.h * Dh, w.r0, S, w.g, w.c, 1.f);
    // Keys from the sequence's length on are hidden from every query: their gradients are 0.
    const int limit = lengths ? int(ceilf(fmaxf(lengths[w.seq], 1.f))) : S;
    float dk[DTiles][4] = {}, dv[DTiles][4] = {};
    for (int i0 = Causal ? w.r0 : 0; i0 < T && w.r0 < limit; i0 += 16) {
      float s[2][4] = {}, dp[2][4] = {};
      cas_attention_mma_rows<BF16, D, KSteps>(s, ka, qh, i0, T, w.g, w.c);
      cas_attention_mma_rows<BF16, D, KSteps>(dp, va, gh, i0, T, w.g, w.c);
      float p[2][4];
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = w.r0 + w.g + 8 * (e / 2), query = i0 + 8 * n + w.c + e % 2;
          const bool visible = query < T && key < S && key < cas_attention_visible_keys<S, Causal>(query, lengths, w.seq);
          const float* sq = st + (query < T ? query : 0) * 2;
          s[n][e] = cas_attention_mma_ds(s[n][e], dp[n][e], sq[0] * kLog2e, sq[1], visible, p[n][e]);
        }
      unsigned pa[4], da[4];
      cas_attention_c_as_a<BF16>(p, pa);
      cas_attention_c_as_a<BF16>(s, da);
      cas_attention_mma_columns<BF16, D, DTiles>(dv, pa, gh, i0, T, w.g, w.c);
      cas_attention_mma_columns<BF16, D, DTiles>(dk, da, qh, i0, T, w.g, w.c);
    }
    const float scale = rsqrtf(float(Dh));
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int key = w.r0 + w.g + 8 * r;
      if (key >= S) continue;
      float* to = dkv + (w.seq * S + key) * 2 * D + w.h * Dh;
#pragma unroll
      for (int t = 0; t < DTiles; ++t) {
        to[8 * t + w.c] = dk[t][2 * r] * scale;
        to[8 * t + w.c + 1] = dk[t][2 * r + 1] * scale;
        to[D + 8 * t + w.c] = dv[t][2 * r];
        to[D + 8 * t + w.c + 1] = dv[t][2 * r + 1];
      }
    }
  });
}
