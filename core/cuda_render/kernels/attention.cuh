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
// Launch: a segment of a warp per row, a row being one query of one head (forward, statistics,
// dq) or one key of one head (dk, dv); each head's L rows are padded to Lp, a multiple of
// kCasAttentionRowGroup, so that a block of up to that many warps (256 threads) holds rows of
// one head only. The warp walks the other side 32 at a time, a lane per key (or query): each
// lane takes its own dot products, the warp shares the softmax's running maximum and sum (online
// softmax: the scores are never stored), and every lane then adds the 32 weighted rows into the
// output columns it owns (lane, lane + 32, ...).
//
//   warp w: row r          lanes 0..31 -> keys j0 .. j0+31   (scores, probabilities)
//                          lanes 0..31 -> columns c, c+32..  (out[c] += p_j * v[j][c])
//
// Tiles: for heads of at most 64 values, the block's warps (rows of one head) load each 32-row
// tile of the other side into shared memory once, coalesced, and all read it there:
//
//   kt[c][j]   the tile transposed, 33 apart, for the lane-per-key dot products (no conflicts)
//   vs[j][c]   the tile as stored, for the column-per-lane sums
//
// A block whose rows span two heads (a block of 96 or 160 threads can) and heads wider than 64
// read global memory directly, row by row (cas_attention_*_direct).
//
// Thread-safety: pure device functions.

// kCasAttentionRowGroup: core/ir/schedule.hpp's kAttentionRowGroup (enumerators: a module that
// calls no attention kernel has no unused variables to warn about).
enum { kCasAttentionRowGroup = 8, kCasAttentionMaxTiledWidth = 64 };

// One head's rows (queries or keys), padded to a whole number of row groups.
__device__ __forceinline__ constexpr int cas_attention_padded(int rows) {
  return (rows + kCasAttentionRowGroup - 1) / kCasAttentionRowGroup * kCasAttentionRowGroup;
}

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

// row . column `lane` of a transposed tile (33 apart).
template <int Dh>
__device__ __forceinline__ float cas_attention_dot_tile(const float (&row)[Dh], const float (*tile)[33], int lane) {
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < Dh; ++c) s += row[c] * tile[c][lane];
  return s;
}

template <int Dh>
__device__ __forceinline__ void cas_attention_load(float (&row)[Dh], const float* from, float scale) {
#pragma unroll
  for (int c = 0; c < Dh; ++c) row[c] = from[c] * scale;
}

// Where a warp's row lies: sequence, head and index among the head's L rows (padded to Lp); and
// whether every row of the calling block belongs to this head (then the block may share tiles).
struct CasAttentionRow {
  int seq, h, index, lastIndex;
  bool valid, blockShared;
};
template <int Heads, int L, int Count>
__device__ __forceinline__ CasAttentionRow cas_attention_row_of(int thread) {
  constexpr int Lp = cas_attention_padded(L);
  const int row = thread / 32, first = (thread - int(threadIdx.x)) / 32, last = first + int(blockDim.x) / 32 - 1;
  CasAttentionRow r;
  r.index = row % Lp;
  r.h = (row / Lp) % Heads;
  r.seq = row / (Lp * Heads);
  r.valid = row < Count * Lp && r.index < L;
  r.blockShared = first / Lp == last / Lp && last < Count * Lp;
  r.lastIndex = last % Lp < L ? last % Lp : L - 1;
  return r;
}

// The first element of row `index` of a [B, L, D] tensor within head h.
template <int L, int D, int Dh>
__device__ __forceinline__ int cas_attention_offset(int seq, int index, int h) {
  return (seq * L + index) * D + h * Dh;
}

// One step of the online softmax over a block of 32 keys: lane's score s (-inf when hidden), the
// running maximum m and sum l, the accumulated columns rescaled; returns the lane's probability.
template <int Cols>
__device__ __forceinline__ float cas_attention_softmax_step(float s, float& m, float& l, float (&acc)[Cols]) {
  const float blockMax = cas_warp_max(s);
  const float mNew = blockMax > m ? blockMax : m;
  const float p = s == cas_negative_infinity() ? 0.f : expf(s - mNew);
  const float correction = expf(m - mNew);
  l = l * correction + cas_warp_sum(p);
#pragma unroll
  for (int c = 0; c < Cols; ++c) acc[c] *= correction;
  m = mNew;
  return p;
}

// acc[c] += sum over t < count of (lane t's w) * rows[t][lane + 32c], rows `stride` apart.
template <int Dh>
__device__ __forceinline__ void cas_attention_accumulate(float w, int count, const float* rows, int stride, int lane, float (&acc)[(Dh + 31) / 32]) {
  for (int t = 0; t < count; ++t) {
    const float wt = __shfl_sync(0xffffffffu, w, t);
#pragma unroll
    for (int c = 0; c < (Dh + 31) / 32; ++c)
      if (lane + 32 * c < Dh) acc[c] += wt * rows[t * stride + lane + 32 * c];
  }
}

// One query's softmax-weighted sum of values over keys 0 .. end - 1, from global memory: on
// return each lane holds its columns of the unnormalised sum in acc, every lane m and l.
template <int D, int Dh>
__device__ __forceinline__ void cas_attention_row_direct(const float (&qScaled)[Dh], const float* k, const float* v, int end, int lane,
                                                         float (&acc)[(Dh + 31) / 32], float& m, float& l) {
  m = cas_negative_infinity();
  l = 0.f;
  for (int c = 0; c < (Dh + 31) / 32; ++c) acc[c] = 0.f;
  for (int j0 = 0; j0 < end; j0 += 32) {
    const int j = j0 + lane;
    const float p = cas_attention_softmax_step(j < end ? cas_attention_dot<Dh>(qScaled, k + j * D) : cas_negative_infinity(), m, l, acc);
    cas_attention_accumulate<Dh>(p, end - j0 < 32 ? end - j0 : 32, v + j0 * D, D, lane, acc);
  }
}

// The same with the block's keys in shared tiles (every row of the block in one head; blockEnd:
// the most keys any of its rows sees). Every thread of the block calls it.
template <int S, int D, int Dh>
__device__ __forceinline__ void cas_attention_row_tiled(const float (&qScaled)[Dh], const float* k, const float* v, int end, int blockEnd, int lane,
                                                        float (&acc)[(Dh + 31) / 32], float& m, float& l) {
  __shared__ float kt[Dh][33];
  __shared__ float vs[32][Dh];
  m = cas_negative_infinity();
  l = 0.f;
  for (int c = 0; c < (Dh + 31) / 32; ++c) acc[c] = 0.f;
  for (int j0 = 0; j0 < blockEnd; j0 += 32) {
    __syncthreads();  // the previous tile is no longer read
    for (int e = int(threadIdx.x); e < 32 * Dh; e += int(blockDim.x)) {
      const int key = e / Dh, c = e % Dh, j = j0 + key;
      kt[c][key] = j < S ? k[j * D + c] : 0.f;
      vs[key][c] = j < S ? v[j * D + c] : 0.f;
    }
    __syncthreads();
    if (j0 >= end) continue;  // this warp's row sees no key of the tile
    const int j = j0 + lane;
    const float p = cas_attention_softmax_step(j < end ? cas_attention_dot_tile<Dh>(qScaled, kt, lane) : cas_negative_infinity(), m, l, acc);
    cas_attention_accumulate<Dh>(p, end - j0 < 32 ? end - j0 : 32, &vs[0][0], Dh, lane, acc);
  }
}

// The softmax-weighted sum for the calling warp's query (acc, m, l as above): tiled when the
// block shares a head of at most 64 values, else direct. Returns false for a padding row.
template <int T, int S, int D, int H, bool Causal, int Count>
__device__ __forceinline__ bool cas_attention_query(int thread, const float* q, const float* k, const float* v, const float* lengths,
                                                    CasAttentionRow& r, float (&acc)[(D / H + 31) / 32], float& m, float& l) {
  constexpr int Dh = D / H;
  const int lane = thread % 32;
  r = cas_attention_row_of<H, T, Count>(thread);
  float qs[Dh];
  if (r.valid) cas_attention_load<Dh>(qs, q + cas_attention_offset<T, D, Dh>(r.seq, r.index, r.h), rsqrtf(float(Dh)));
  const int end = r.valid ? cas_attention_visible_keys<S, Causal>(r.index, lengths, r.seq) : 0;
  const int keys = cas_attention_offset<S, D, Dh>(r.seq, 0, r.h);
  if constexpr (Dh <= kCasAttentionMaxTiledWidth) {
    if (r.blockShared) {
      const int blockEnd = cas_attention_visible_keys<S, Causal>(r.lastIndex, lengths, r.seq);
      cas_attention_row_tiled<S, D, Dh>(qs, k + keys, v + keys, end, blockEnd, lane, acc, m, l);
      return r.valid;
    }
  }
  if (r.valid) cas_attention_row_direct<D, Dh>(qs, k + keys, v + keys, end, lane, acc, m, l);
  return r.valid;
}

// out = softmax(q k^T / sqrt(Dh), masked) v; Rows = B * H * T queries.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_forward(int& b, const float* q, const float* k, const float* v, const float* lengths, float* out) {
  constexpr int Count = Rows / T, Lp = cas_attention_padded(T);
  return cas_segment<Count * Lp * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int lane = thread % 32;
    CasAttentionRow r;
    float acc[Cols], m, l;
    if (!cas_attention_query<T, S, D, H, Causal, Count>(thread, q, k, v, lengths, r, acc, m, l)) return;
    float* o = out + cas_attention_offset<T, D, Dh>(r.seq, r.index, r.h);
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) o[lane + 32 * c] = acc[c] / l;
  });
}

// stats[b][h][i] = (log-sum-exp of the scaled scores, g . out); Rows = B * H * T queries.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_stats(int& b, const float* q, const float* k, const float* v, const float* g, const float* lengths,
                                                    float* stats) {
  constexpr int Count = Rows / T, Lp = cas_attention_padded(T);
  return cas_segment<Count * Lp * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int lane = thread % 32;
    CasAttentionRow r;
    float acc[Cols], m, l;
    if (!cas_attention_query<T, S, D, H, Causal, Count>(thread, q, k, v, lengths, r, acc, m, l)) return;
    const float* gi = g + cas_attention_offset<T, D, Dh>(r.seq, r.index, r.h);
    float delta = 0.f;
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) delta += gi[lane + 32 * c] * (acc[c] / l);
    delta = cas_warp_sum(delta);
    const int row = (r.seq * H + r.h) * T + r.index;  // stats' own order
    if (lane == 0) {
      stats[row * 2] = m + logf(l);
      stats[row * 2 + 1] = delta;
    }
  });
}

// dq of one query: the sum over its visible keys of p (g . v_j - delta) k_j / sqrt(Dh). With
// tiles, kt and vt hold the block's 32 keys and values transposed, ks the keys as stored.
template <int S, int D, int Dh, bool Tiled>
__device__ __forceinline__ void cas_attention_grad_q_row(const float (&qs)[Dh], const float (&gi)[Dh], float lse, float delta, const float* kh,
                                                         const float* vh, int end, int blockEnd, int lane, float (&acc)[(Dh + 31) / 32]) {
  __shared__ float kt[Tiled ? Dh : 1][33], vt[Tiled ? Dh : 1][33], ks[Tiled ? 32 : 1][Tiled ? Dh : 1];
  const float scale = rsqrtf(float(Dh));
  for (int c = 0; c < (Dh + 31) / 32; ++c) acc[c] = 0.f;
  for (int j0 = 0; j0 < (Tiled ? blockEnd : end); j0 += 32) {
    if constexpr (Tiled) {
      __syncthreads();
      for (int e = int(threadIdx.x); e < 32 * Dh; e += int(blockDim.x)) {
        const int key = e / Dh, c = e % Dh, j = j0 + key;
        kt[c][key] = ks[key][c] = j < S ? kh[j * D + c] : 0.f;
        vt[c][key] = j < S ? vh[j * D + c] : 0.f;
      }
      __syncthreads();
      if (j0 >= end) continue;
    }
    const int j = j0 + lane;
    float ds = 0.f;
    if (j < end) {
      const float s = Tiled ? cas_attention_dot_tile<Dh>(qs, kt, lane) : cas_attention_dot<Dh>(qs, kh + j * D);
      const float dp = Tiled ? cas_attention_dot_tile<Dh>(gi, vt, lane) : cas_attention_dot<Dh>(gi, vh + j * D);
      ds = expf(s - lse) * (dp - delta) * scale;
    }
    cas_attention_accumulate<Dh>(ds, end - j0 < 32 ? end - j0 : 32, Tiled ? &ks[0][0] : kh + j0 * D, Tiled ? Dh : D, lane, acc);
  }
}

// dq; Rows = B * H * T queries, stats from cas_attention_stats.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_grad_q(int& b, const float* q, const float* k, const float* v, const float* g, const float* stats,
                                                     const float* lengths, float* dq) {
  constexpr int Count = Rows / T, Lp = cas_attention_padded(T);
  return cas_segment<Count * Lp * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int lane = thread % 32;
    const CasAttentionRow r = cas_attention_row_of<H, T, Count>(thread);
    const int row = (r.seq * H + r.h) * T + r.index;
    float qs[Dh], gi[Dh], acc[Cols];
    if (r.valid) {
      cas_attention_load<Dh>(qs, q + cas_attention_offset<T, D, Dh>(r.seq, r.index, r.h), rsqrtf(float(Dh)));
      cas_attention_load<Dh>(gi, g + cas_attention_offset<T, D, Dh>(r.seq, r.index, r.h), 1.f);
    }
    const float lse = r.valid ? stats[row * 2] : 0.f, delta = r.valid ? stats[row * 2 + 1] : 0.f;
    const int end = r.valid ? cas_attention_visible_keys<S, Causal>(r.index, lengths, r.seq) : 0;
    const float* kh = k + cas_attention_offset<S, D, Dh>(r.seq, 0, r.h);
    const float* vh = v + cas_attention_offset<S, D, Dh>(r.seq, 0, r.h);
    bool done = false;
    if constexpr (Dh <= kCasAttentionMaxTiledWidth) {
      if (r.blockShared) {
        const int blockEnd = cas_attention_visible_keys<S, Causal>(r.lastIndex, lengths, r.seq);
        cas_attention_grad_q_row<S, D, Dh, true>(qs, gi, lse, delta, kh, vh, end, blockEnd, lane, acc);
        done = true;
      }
    }
    if (!r.valid) return;
    if (!done) cas_attention_grad_q_row<S, D, Dh, false>(qs, gi, lse, delta, kh, vh, end, end, lane, acc);
    float* o = dq + cas_attention_offset<T, D, Dh>(r.seq, r.index, r.h);
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) o[lane + 32 * c] = acc[c];
  });
}

// dk and dv of one key j over the queries from `first` on that see it (none when `hidden`). With
// tiles: the block's 32 queries and output gradients transposed (qt, gt) and as stored (qs, gs),
// and their statistics.
template <int T, int D, int H, bool Causal, bool Tiled>
__device__ __forceinline__ void cas_attention_grad_kv_row(const float (&kj)[D / H], const float (&vj)[D / H], int j, bool hidden, int blockFirst,
                                                          const float* qh, const float* gh, const float* st, int lane, float (&dk)[(D / H + 31) / 32],
                                                          float (&dv)[(D / H + 31) / 32]) {
  constexpr int Dh = D / H, TileDh = Tiled ? Dh : 1, TileRows = Tiled ? 32 : 1;
  __shared__ float qt[TileDh][33], gt[TileDh][33], qs[TileRows][TileDh], gs[TileRows][TileDh], lse[TileRows], delta[TileRows];
  const float scale = rsqrtf(float(Dh));
  const int first = Causal ? j / 32 * 32 : 0;
  for (int i0 = Tiled ? blockFirst : first; i0 < T; i0 += 32) {
    if constexpr (Tiled) {
      __syncthreads();
      for (int e = int(threadIdx.x); e < 32 * Dh; e += int(blockDim.x)) {
        const int query = e / Dh, c = e % Dh, i = i0 + query;
        qt[c][query] = qs[query][c] = i < T ? qh[i * D + c] : 0.f;
        gt[c][query] = gs[query][c] = i < T ? gh[i * D + c] : 0.f;
        if (c == 0) lse[query] = i < T ? st[i * 2] : 0.f;
        if (c == 0) delta[query] = i < T ? st[i * 2 + 1] : 0.f;
      }
      __syncthreads();
    }
    if (hidden || i0 + 31 < first) continue;
    const int i = i0 + lane;
    float p = 0.f, ds = 0.f;
    if (i < T && (!Causal || i >= j)) {
      const float s = (Tiled ? cas_attention_dot_tile<Dh>(kj, qt, lane) : cas_attention_dot<Dh>(kj, qh + i * D)) * scale;
      p = expf(s - (Tiled ? lse[lane] : st[i * 2]));
      ds = p * ((Tiled ? cas_attention_dot_tile<Dh>(vj, gt, lane) : cas_attention_dot<Dh>(vj, gh + i * D)) - (Tiled ? delta[lane] : st[i * 2 + 1])) * scale;
    }
    const int count = T - i0 < 32 ? T - i0 : 32;
    cas_attention_accumulate<Dh>(ds, count, Tiled ? &qs[0][0] : qh + i0 * D, Tiled ? Dh : D, lane, dk);
    cas_attention_accumulate<Dh>(p, count, Tiled ? &gs[0][0] : gh + i0 * D, Tiled ? Dh : D, lane, dv);
  }
}

// [dk | dv]; Rows = B * H * S keys.
template <int Rows, int T, int S, int D, int H, bool Causal>
__device__ __forceinline__ bool cas_attention_grad_kv(int& b, const float* q, const float* k, const float* v, const float* g, const float* stats,
                                                      const float* lengths, float* dkv) {
  constexpr int Count = Rows / S, Lp = cas_attention_padded(S);
  return cas_segment<Count * Lp * 32>(b, [&](int thread) {
    constexpr int Dh = D / H, Cols = (Dh + 31) / 32;
    const int lane = thread % 32;
    const CasAttentionRow r = cas_attention_row_of<H, S, Count>(thread);
    float kj[Dh], vj[Dh], dk[Cols], dv[Cols];
    for (int c = 0; c < Cols; ++c) dk[c] = dv[c] = 0.f;
    if (r.valid) {
      cas_attention_load<Dh>(kj, k + cas_attention_offset<S, D, Dh>(r.seq, r.index, r.h), 1.f);
      cas_attention_load<Dh>(vj, v + cas_attention_offset<S, D, Dh>(r.seq, r.index, r.h), 1.f);
    }
    const bool hidden = !r.valid || (lengths && !(float(r.index) < fmaxf(lengths[r.seq], 1.f)));
    const float* qh = q + cas_attention_offset<T, D, Dh>(r.seq, 0, r.h);
    const float* gh = g + cas_attention_offset<T, D, Dh>(r.seq, 0, r.h);
    const float* st = stats + (r.seq * H + r.h) * T * 2;
    bool done = false;
    if constexpr (Dh <= kCasAttentionMaxTiledWidth) {
      if (r.blockShared) {  // the block's first key decides where its query tiles start
        const int blockFirst = Causal ? (r.index - int(threadIdx.x) / 32) / 32 * 32 : 0;
        cas_attention_grad_kv_row<T, D, H, Causal, true>(kj, vj, r.index, hidden, blockFirst, qh, gh, st, lane, dk, dv);
        done = true;
      }
    }
    if (!r.valid) return;
    if (!done) cas_attention_grad_kv_row<T, D, H, Causal, false>(kj, vj, r.index, hidden, 0, qh, gh, st, lane, dk, dv);
    float* o = dkv + (r.seq * S + r.index) * 2 * D + r.h * Dh;
    for (int c = 0; c < Cols; ++c)
      if (lane + 32 * c < Dh) {
        o[lane + 32 * c] = dk[c];
        o[D + lane + 32 * c] = dv[c];
      }
  });
}
