// Attention's forward pass on tensor cores, for a bf16 or fp16 Attention node whose heads are a
// multiple of 16 values wide (core/ir/schedule.hpp, attentionOnTensorCores): the flash-style
// loop of attention.cuh's cas_attention_forward, with the products in mma.sync.m16n8k16
// (16-bit operands, fp32 sums) and the softmax in fp32. Same layouts, same masks (causal,
// lengths); the CPU reference is core/exec/cpu_transformer.cpp.
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
// The tests run this code on the CPU (tests/support/cuda_on_cpu.hpp), which supplies
// cas_pack_half2 and cas_mma_m16n8k16 in place of the instructions below.
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
  p[0] = cas_pack_half2<BF16>(s[0][0], s[0][1]);
  p[1] = cas_pack_half2<BF16>(s[0][2], s[0][3]);
  p[2] = cas_pack_half2<BF16>(s[1][0], s[1][1]);
  p[3] = cas_pack_half2<BF16>(s[1][2], s[1][3]);
}

// out = softmax(q k^T / sqrt(Dh), masked) v on tensor cores; Rows = B * H * T queries, a warp
// per 16 queries of a head.
template <int Rows, int T, int S, int D, int H, bool Causal, bool BF16>
__device__ __forceinline__ bool cas_attention_forward_mma(int& b, const float* q, const float* k, const float* v, const float* lengths, float* out) {
  constexpr int Dh = D / H, QTiles = (T + 15) / 16, Warps = Rows / T * QTiles,  // Rows / T: B * H
                KSteps = Dh / 16, DTiles = Dh / 8;
  static_assert(Dh % 16 == 0, "tensor-core attention takes heads a multiple of 16 values wide");
  return cas_segment<Warps * 32>(b, [&](int thread) {
    const int warp = thread / 32, lane = thread % 32, g = lane / 4, c = 2 * (lane % 4);
    if (warp >= Warps) return;  // whole warps: the shuffles below stay convergent
    const int tile = warp % QTiles, h = (warp / QTiles) % H, seq = warp / (QTiles * H), q0 = 16 * tile;
    const float* qh = q + (seq * T) * D + h * Dh;
    const float* kh = k + (seq * S) * D + h * Dh;
    const float* vh = v + (seq * S) * D + h * Dh;
    const float scale = rsqrtf(float(Dh)) * 1.44269504088896341f;  // log2(e): exp2 below
    unsigned qa[KSteps][4];
#pragma unroll
    for (int ks = 0; ks < KSteps; ++ks) {
      qa[ks][0] = cas_attention_pair<BF16, D>(qh, q0 + g, T, 16 * ks + c, scale);
      qa[ks][1] = cas_attention_pair<BF16, D>(qh, q0 + g + 8, T, 16 * ks + c, scale);
      qa[ks][2] = cas_attention_pair<BF16, D>(qh, q0 + g, T, 16 * ks + c + 8, scale);
      qa[ks][3] = cas_attention_pair<BF16, D>(qh, q0 + g + 8, T, 16 * ks + c + 8, scale);
    }
    const int end[2] = {q0 + g < T ? cas_attention_visible_keys<S, Causal>(q0 + g, lengths, seq) : 0,
                        q0 + g + 8 < T ? cas_attention_visible_keys<S, Causal>(q0 + g + 8, lengths, seq) : 0};
    const int last = q0 + 15 < T ? q0 + 15 : T - 1;
    const int keys = cas_attention_visible_keys<S, Causal>(last, lengths, seq);  // the most any row of the warp sees
    float m[2] = {cas_negative_infinity(), cas_negative_infinity()}, l[2] = {0.f, 0.f}, o[DTiles][4] = {};
    for (int j0 = 0; j0 < keys; j0 += 16) {
      float s[2][4] = {};
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int ks = 0; ks < KSteps; ++ks) {
          const unsigned kb[2] = {cas_attention_pair<BF16, D>(kh, j0 + 8 * n + g, S, 16 * ks + c, 1.f),
                                  cas_attention_pair<BF16, D>(kh, j0 + 8 * n + g, S, 16 * ks + c + 8, 1.f)};
          cas_mma_m16n8k16<BF16>(s[n], qa[ks], kb);
        }
      unsigned pa[4];
      cas_attention_mma_softmax<BF16, DTiles>(s, j0, c, end, m, l, o, pa);
#pragma unroll
      for (int t = 0; t < DTiles; ++t) {
        const int column = 8 * t + g;
        auto value = [&](int key) { return key < S ? vh[key * D + column] : 0.f; };
        const unsigned vb[2] = {cas_pack_half2<BF16>(value(j0 + c), value(j0 + c + 1)), cas_pack_half2<BF16>(value(j0 + c + 8), value(j0 + c + 9))};
        cas_mma_m16n8k16<BF16>(o[t], pa, vb);
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = q0 + g + 8 * r;
      if (row >= T) continue;
      float* to = out + (seq * T + row) * D + h * Dh;
#pragma unroll
      for (int t = 0; t < DTiles; ++t) {
        to[8 * t + c] = o[t][2 * r] / l[r];
        to[8 * t + c + 1] = o[t][2 * r + 1] / l[r];
      }
    }
  });
}
