// Fused attention (core/ir/ops.hpp's Attention, AttentionStats, AttentionGradQ, AttentionGradKV)
// in fp32 on the CUDA cores; the CPU reference is core/exec/cpu_transformer.cpp, whose layouts
// these share:
//
//   q, g, out, dq   [B, T, D]     head h: columns h*Dh .. h*Dh + Dh - 1, Dh = D / H
//   k, v            [B, S, D]
//   stats           [B, H, T, 2]  per query: log-sum-exp of its scaled scores, g . out
//   dkv             [B, S, 2D]    dk in columns 0 .. D-1, dv in D .. 2D-1
//   lengths         [B, 1]        key j of sequence b is visible when j < max(lengths[b], 1)
//
// Launch: a segment of Rows * 32 threads (cas_segment, elementwise.cuh): a warp per row, a row
// being one query of one head (forward, statistics, dq) or one key of one head (dk, dv). The warp
// walks the other side 32 at a time, a lane per key (or query): each lane takes its own dot
// products, the warp shares the softmax's running maximum and sum (online softmax: the scores
// are never stored), and every lane then adds the 32 weighted rows into the output columns it
// owns (lane, lane + 32, ...), reading each row's columns coalesced.
//
//   warp w: row r = w      lanes 0..31 -> keys j0 .. j0+31   (scores, probabilities)
//                          lanes 0..31 -> columns c, c+32..  (out[c] += p_j * v[j][c])
//
// Thread-safety: pure device functions.

// The keys query i of sequence `seq` sees are 0 .. end - 1 (core/exec/cpu_transformer.cpp's
// `visible`: causal hides j > i, lengths hide j >= max(length, 1)).
template <int S, bool Causal>
__device__ __forceinline__ int cas_attention_visible_keys(int i, const float* lengths, int seq) {
  int end = Causal && i + 1 < S ? i + 1 : S;
  if (lengths) {
    const float length = fmaxf(lengths[seq], 1.f);
    if (length < float(end)) end = int(ceilf(length));
  }
  return end;
}

template <int Dh>
__device__ __forceinline__ float cas_attention_dot(const float (&row)[Dh], const float* other) {
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < Dh; ++c) s += row[c] * other[c];
  return s;
}

template <int Dh>
__device__ __forceinline__ void cas_attention_load(float (&row)[Dh], const float* from, float scale) {
#pragma unroll
  for (int c = 0; c < Dh; ++c) row[c] = from[c] * scale;
}

// One query's softmax-weighted sum of values over keys 0 .. end - 1: on return each lane holds
// its columns of the unnormalised sum in acc, and every lane the running maximum m and sum l.
template <int D, int Dh>
__device__ __forceinline__ void cas_attention_row(const float (&qScaled)[Dh], const float* k, const float* v, int end, int lane,
                                                  float (&acc)[(Dh + 31) / 32], float& m, float& l) {
  m = cas_negative_infinity();
  l = 0.f;
  for (int c = 0; c < (Dh + 31) / 32; ++c) acc[c] = 0.f;
  for (int j0 = 0; j0 < end; j0 += 32) {
    const int j = j0 + lane;
    const float s = j < end ? cas_attention_dot<Dh>(qScaled, k + j * D) : cas_negative_infinity();
    const float blockMax = cas_warp_max(s);
    const float mNew = blockMax > m ? blockMax : m;
    const float p = j < end ? expf(s - mNew) : 0.f;
    const float correction = expf(m - mNew);
    l = l * correction + cas_warp_sum(p);
    const int count = end - j0 < 32 ? end - j0 : 32;
#pragma unroll
    for (int c = 0; c < (Dh + 31) / 32; ++c) acc[c] *= correction;
    for (int t = 0; t < count; ++t) {
      const float pt = __shfl_sync(0xffffffffu, p, t);
      const float* vt = v + (j0 + t) * D;
#pragma unroll
      for (int c = 0; c < (Dh + 31) / 32; ++c)
        if (lane + 32 * c < Dh) acc[c] += pt * vt[lane + 32 * c];
    }
    m = mNew;
  }
}

// The first element of row `index` of a [B, L, D] tensor within head h.
template <int L, int D, int Dh>
__device__ __forceinline__ int cas_attention_offset(int seq, int index, int h) {
  return (seq * L + index) * D + h * Dh;
}

// out = softmax(q k^T / sqrt(Dh), masked) v for Rows = B * H * T query rows.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_forward(int& b, const float* q, const float* k, const float* v, const float* lengths, float* out) {
  return cas_segment<Rows * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int row = thread / 32, lane = thread % 32;
    if (row >= Rows) return;
    const int i = row % T, h = (row / T) % H, seq = row / (T * H);
    float qs[Dh], acc[Cols], m, l;
    cas_attention_load<Dh>(qs, q + cas_attention_offset<T, D, Dh>(seq, i, h), rsqrtf(float(Dh)));
    const int keys = cas_attention_offset<S, D, Dh>(seq, 0, h);
    cas_attention_row<D, Dh>(qs, k + keys, v + keys, cas_attention_visible_keys<S, Causal>(i, lengths, seq), lane, acc, m, l);
    float* o = out + cas_attention_offset<T, D, Dh>(seq, i, h);
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) o[lane + 32 * c] = acc[c] / l;
  });
}

// stats[b][h][i] = (log-sum-exp of the scaled scores, g . out) for Rows = B * H * T query rows.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_stats(int& b, const float* q, const float* k, const float* v, const float* g, const float* lengths,
                                                    float* stats) {
  return cas_segment<Rows * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int row = thread / 32, lane = thread % 32;
    if (row >= Rows) return;
    const int i = row % T, h = (row / T) % H, seq = row / (T * H);
    float qs[Dh], acc[Cols], m, l;
    cas_attention_load<Dh>(qs, q + cas_attention_offset<T, D, Dh>(seq, i, h), rsqrtf(float(Dh)));
    const int keys = cas_attention_offset<S, D, Dh>(seq, 0, h);
    cas_attention_row<D, Dh>(qs, k + keys, v + keys, cas_attention_visible_keys<S, Causal>(i, lengths, seq), lane, acc, m, l);
    const float* gi = g + cas_attention_offset<T, D, Dh>(seq, i, h);
    float delta = 0.f;
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) delta += gi[lane + 32 * c] * (acc[c] / l);
    delta = cas_warp_sum(delta);
    if (lane == 0) {
      stats[row * 2] = m + logf(l);  // rows run (seq, h, i): stats' own order
      stats[row * 2 + 1] = delta;
    }
  });
}

// dq for Rows = B * H * T query rows: sum over visible keys of p (g.v_j - delta) k_j / sqrt(Dh).
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_grad_q(int& b, const float* q, const float* k, const float* v, const float* g, const float* stats,
                                                     const float* lengths, float* dq) {
  return cas_segment<Rows * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int row = thread / 32, lane = thread % 32;
    if (row >= Rows) return;
    const int i = row % T, h = (row / T) % H, seq = row / (T * H);
    const float scale = rsqrtf(float(Dh)), lse = stats[row * 2], delta = stats[row * 2 + 1];
    float qs[Dh], gi[Dh], acc[Cols];
    cas_attention_load<Dh>(qs, q + cas_attention_offset<T, D, Dh>(seq, i, h), scale);
    cas_attention_load<Dh>(gi, g + cas_attention_offset<T, D, Dh>(seq, i, h), 1.f);
    for (int c = 0; c < Cols; ++c) acc[c] = 0.f;
    const float* kh = k + cas_attention_offset<S, D, Dh>(seq, 0, h);
    const float* vh = v + cas_attention_offset<S, D, Dh>(seq, 0, h);
    const int end = cas_attention_visible_keys<S, Causal>(i, lengths, seq);
    for (int j0 = 0; j0 < end; j0 += 32) {
      const int j = j0 + lane;
      float ds = 0.f;
      if (j < end) ds = expf(cas_attention_dot<Dh>(qs, kh + j * D) - lse) * (cas_attention_dot<Dh>(gi, vh + j * D) - delta) * scale;
      const int count = end - j0 < 32 ? end - j0 : 32;
      for (int t = 0; t < count; ++t) {
        const float dst = __shfl_sync(0xffffffffu, ds, t);
        for (int c = 0; c < Cols; ++c)
          if (lane + 32 * c < Dh) acc[c] += dst * kh[(j0 + t) * D + lane + 32 * c];
      }
    }
    float* o = dq + cas_attention_offset<T, D, Dh>(seq, i, h);
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) o[lane + 32 * c] = acc[c];
  });
}

// [dk | dv] for Rows = B * H * S key rows, over the queries that see the key.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_grad_kv(int& b, const float* q, const float* k, const float* v, const float* g, const float* stats,
                                                      const float* lengths, float* dkv) {
  return cas_segment<Rows * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int row = thread / 32, lane = thread % 32;
    if (row >= Rows) return;
    const int j = row % S, h = (row / S) % H, seq = row / (S * H);
    const float scale = rsqrtf(float(Dh));
    float kj[Dh], vj[Dh], dk[Cols], dv[Cols];
    cas_attention_load<Dh>(kj, k + cas_attention_offset<S, D, Dh>(seq, j, h), scale);
    cas_attention_load<Dh>(vj, v + cas_attention_offset<S, D, Dh>(seq, j, h), 1.f);
    for (int c = 0; c < Cols; ++c) dk[c] = dv[c] = 0.f;
    const bool hidden = lengths && !(float(j) < fmaxf(lengths[seq], 1.f));
    const float* qh = q + cas_attention_offset<T, D, Dh>(seq, 0, h);
    const float* gh = g + cas_attention_offset<T, D, Dh>(seq, 0, h);
    const float* st = stats + (seq * H + h) * T * 2;
    for (int i0 = Causal ? j : 0; i0 < (hidden ? 0 : T); i0 += 32) {
      const int i = i0 + lane;
      float p = 0.f, ds = 0.f;
      if (i < T) {
        p = expf(cas_attention_dot<Dh>(kj, qh + i * D) - st[i * 2]);
        ds = p * (cas_attention_dot<Dh>(vj, gh + i * D) - st[i * 2 + 1]) * scale;
      }
      const int count = T - i0 < 32 ? T - i0 : 32;
      for (int t = 0; t < count; ++t) {
        const float pt = __shfl_sync(0xffffffffu, p, t), dst = __shfl_sync(0xffffffffu, ds, t);
        for (int c = 0; c < Cols; ++c)
          if (lane + 32 * c < Dh) {
            dk[c] += dst * qh[(i0 + t) * D + lane + 32 * c];
            dv[c] += pt * gh[(i0 + t) * D + lane + 32 * c];
          }
      }
    }
    float* o = dkv + (seq * S + j) * 2 * D + h * Dh;
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) {
        o[lane + 32 * c] = dk[c];
        o[D + lane + 32 * c] = dv[c];
      }
  });
}
