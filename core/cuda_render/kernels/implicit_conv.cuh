// The tensor-core convolutions of bf16/fp16 layers: implicit GEMMs over the IR's fp32 NCHW
// tensors, so no im2col matrix and no layout copy is ever stored.
//
//   col[m][kc] = x[n][c][oy*SH - PT + r][ox*SW - PL + s]   (0 outside the image)
//     m  = (n*HO + oy)*WO + ox    M  = N*HO*WO rows, the output pixels
//     kc = (c*R + r)*S + s        Kc = C*R*S columns, the filter taps in KCRS order
//
//   cas_conv_forward   y[m][k]  = sum_kc col[m][kc] * w[k][kc], then epi(i, acc) at the NCHW
//                      index i of y. Grid (ceil(M / 128), ceil(K / BN)).
//   cas_conv_wgrad     dw[k][kc] = sum_m dy[m][k] * col[m][kc], m split into slabs of Chunk
//                      pixels, one block each, added atomically (dw is filled with 0 first).
//                      Grid (ceil(Kc / 128), ceil(K / BN) * slabs).
//
// A block of 256 threads owns a 128 x BN tile of the result (rows m forward, rows kc for the
// weight gradient; BN = 32 or 64 filters k). Per reduction step of 32 it gathers its tiles of
// col and of w or dy from global memory (a lane owns one pixel m and loads V taps at once),
// rounds them to 16 bits into shared memory, and its 8 warps (4 x 2, each 32 x BN/2) multiply
// them with wmma m16n16k16 at fp32; the next step's loads are in flight meanwhile.
// Shared memory, reused for the epilogue:
//
//   +----------------------------------------+------------------------+
//   | A: col, 16-bit, [taps][pixels]         | B: w [BN][32 taps] or  |
//   |   forward:         [32][128 + 8]       |    dy [BN][32 pixels], |
//   |   weight gradient: [128][32 + 8]       |    16-bit, rows + 8    |
//   +----------------------------------------+------------------------+
//   | C: fp32 [BN][128 + 4], column-major (C[k][row]): consecutive    |
//   |    threads read consecutive rows, so NCHW writes coalesce       |
//   +-----------------------------------------------------------------+
//   Rows are padded so that wmma's 16-byte row reads fall on distinct banks.
//
// Rounding and the wmma operations go through PTX: the fragments' register layout is the
// hardware's, so only addresses and strides appear here.
// Thread-safety: pure device functions; the weight gradient needs a zeroed output.

// The tile's constants (an enum: unused ones draw no warnings in modules without convolutions).
enum : int {
  kConvRows = 128,                                      // tile rows per block
  kConvStep = 32,                                       // reduction per shared tile
  kConvPitch = kConvStep + 8,                           // 16-bit elements per row of a [rows][32] tile
  kConvWidePitch = kConvRows + 8,                       // ... of the forward's [32][128] tile of col
  kConvOutPitch = kConvRows + 4,                        // floats per column of C
  kConvThreads = 256,
  kConvGathers = kConvRows * kConvStep / kConvThreads,  // col elements a thread per step
};

template <bool BF16>
__device__ __forceinline__ unsigned short cas_round16(float v) {
  unsigned short h;
  if constexpr (BF16) asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  else asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}

__device__ __forceinline__ unsigned cas_shared_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// A fragment load: bf16 fragments are 4 registers, fp16 ones 8.
#define CAS_WMMA_LOAD(name, operand, layout)                                                                              \
  template <bool BF16>                                                                                                    \
  __device__ __forceinline__ void name(unsigned* v, const unsigned short* p, int stride) {                                \
    if constexpr (BF16)                                                                                                   \
      asm volatile("wmma.load." operand ".sync.aligned." layout ".m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;"         \
                   : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])                                                       \
                   : "r"(cas_shared_address(p)), "r"(stride)                                                              \
                   : "memory");                                                                                           \
    else                                                                                                                  \
      asm volatile("wmma.load." operand ".sync.aligned." layout ".m16n16k16.shared.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;" \
                   : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7])       \
                   : "r"(cas_shared_address(p)), "r"(stride)                                                              \
                   : "memory");                                                                                           \
  }
CAS_WMMA_LOAD(cas_wmma_load_a_row, "a", "row")
CAS_WMMA_LOAD(cas_wmma_load_a_col, "a", "col")
CAS_WMMA_LOAD(cas_wmma_load_b_col, "b", "col")
#undef CAS_WMMA_LOAD

template <bool BF16>
__device__ __forceinline__ void cas_wmma_mma(float* d, const unsigned* a, const unsigned* b) {
  if constexpr (BF16)
    asm volatile(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, "
        "{%0,%1,%2,%3,%4,%5,%6,%7};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]));
  else
    asm volatile(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11,%12,%13,%14,%15}, "
        "{%16,%17,%18,%19,%20,%21,%22,%23}, {%0,%1,%2,%3,%4,%5,%6,%7};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]), "r"(b[0]), "r"(b[1]), "r"(b[2]),
          "r"(b[3]), "r"(b[4]), "r"(b[5]), "r"(b[6]), "r"(b[7]));
}

__device__ __forceinline__ void cas_wmma_store_col(float* p, const float* d, int stride) {
  asm volatile("wmma.store.d.sync.aligned.col.m16n16k16.shared.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;" ::"r"(cas_shared_address(p)),
               "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]), "f"(d[4]), "f"(d[5]), "f"(d[6]), "f"(d[7]), "r"(stride)
               : "memory");
}

// V consecutive floats of x (one 16- or 8-byte load where V allows), or zeros.
template <int V>
__device__ __forceinline__ void cas_gather(float* d, const float* p, bool in) {
  if constexpr (V == 4) {
    const float4 q = in ? *reinterpret_cast<const float4*>(p) : make_float4(0.f, 0.f, 0.f, 0.f);
    d[0] = q.x;
    d[1] = q.y;
    d[2] = q.z;
    d[3] = q.w;
  } else if constexpr (V == 2) {
    const float2 q = in ? *reinterpret_cast<const float2*>(p) : make_float2(0.f, 0.f);
    d[0] = q.x;
    d[1] = q.y;
  } else {
    d[0] = in ? *p : 0.f;
  }
}

// The multiply of one reduction step's tiles into sum, A and B 16-bit in shared memory.
template <bool BF16, bool Forward, int BN>
__device__ __forceinline__ void cas_conv_multiply(float (&sum)[2][BN / 32][8], const unsigned short* As, const unsigned short* Bs, int wr, int wn) {
  constexpr int f = BF16 ? 4 : 8;
#pragma unroll
  for (int kk = 0; kk < kConvStep; kk += 16) {
    unsigned a[2][f], b[BN / 32][f];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if constexpr (Forward)  // col is [tap][pixel]: A (pixels x taps) column-major
        cas_wmma_load_a_col<BF16>(a[i], As + kk * kConvWidePitch + wr + 16 * i, kConvWidePitch);
      else  // col is [tap][pixel]: A (taps x pixels) row-major
        cas_wmma_load_a_row<BF16>(a[i], As + (wr + 16 * i) * kConvPitch + kk, kConvPitch);
    }
#pragma unroll
    for (int j = 0; j < BN / 32; ++j) cas_wmma_load_b_col<BF16>(b[j], Bs + (wn + 16 * j) * kConvPitch + kk, kConvPitch);
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < BN / 32; ++j) cas_wmma_mma<BF16>(sum[i][j], a[i], b[j]);
  }
}

// The reduction over [first, end) in steps of 32: gather(at) loads a step's tiles into
// registers, store() puts them into shared memory; the next step's loads are in flight while
// this one is multiplied.
template <bool BF16, bool Forward, int BN, typename Gather, typename Store>
__device__ __forceinline__ void cas_conv_pipeline(float (&sum)[2][BN / 32][8], const unsigned short* As, const unsigned short* Bs, int wr, int wn,
                                                  int first, int end, Gather&& gather, Store&& store) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < BN / 32; ++j)
#pragma unroll
      for (int e = 0; e < 8; ++e) sum[i][j][e] = 0.f;
  gather(first);
  for (int step = first; step < end; step += kConvStep) {
    store();
    __syncthreads();
    if (step + kConvStep < end) gather(step + kConvStep);
    cas_conv_multiply<BF16, Forward, BN>(sum, As, Bs, wr, wn);
    __syncthreads();
  }
}

// The finished tile to shared memory, column-major (C[k][row]), then out(row, col, acc) by
// consecutive rows.
template <int BN, typename Out>
__device__ __forceinline__ void cas_conv_write(float (&sum)[2][BN / 32][8], float* Cs, int wr, int wn, Out&& out) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < BN / 32; ++j) cas_wmma_store_col(Cs + (wn + 16 * j) * kConvOutPitch + wr + 16 * i, sum[i][j], kConvOutPitch);
  __syncthreads();
  for (int e = threadIdx.x; e < kConvRows * BN; e += kConvThreads) {
    const int row = e % kConvRows, col = e / kConvRows;
    out(row, col, Cs[col * kConvOutPitch + row]);
  }
}

template <int BN, int AElements>
__host__ __device__ constexpr int cas_conv_shared_bytes() {
  return 2 * (AElements + kConvPitch * BN) > 4 * kConvOutPitch * BN ? 2 * (AElements + kConvPitch * BN) : 4 * kConvOutPitch * BN;
}

// A block's view of its shared memory (A and B tiles, then C over both) and of its threads: lane,
// warp, and the warp's rows wr and columns wn of the 128 x BN result (warps 4 x 2).
template <int BN, int AElements>
struct cas_conv_block {
  unsigned short* As;
  unsigned short* Bs;
  float* Cs;
  int lane, warp, wr, wn;
  __device__ __forceinline__ explicit cas_conv_block(unsigned char* smem)
      : As(reinterpret_cast<unsigned short*>(smem)),
        Bs(As + AElements),
        Cs(reinterpret_cast<float*>(smem)),
        lane(threadIdx.x & 31),
        warp(threadIdx.x >> 5),
        wr((warp & 3) * 32),
        wn((warp >> 2) * (BN / 2)) {}
};

// x [N][C][H][W], w [K][C][R][S]; V taps gathered at a time (the host picks V so that every
// group of V stays aligned and wholly inside or outside the image).
template <bool BF16, int N, int C, int H, int W, int K, int R, int S, int HO, int WO, int SH, int SW, int PT, int PL, bool Padded, int BN, int V,
          typename Epilogue>
__device__ __forceinline__ void cas_conv_forward(const float* x, const float* w, Epilogue&& epi) {
  constexpr int M = N * HO * WO, Kc = C * R * S, HoWo = HO * WO, CHW = C * H * W, RS = R * S;
  constexpr int gathersB = BN * kConvStep / kConvThreads, tasks = kConvGathers / V;
  constexpr int aElements = kConvStep * kConvWidePitch;
  __shared__ __align__(128) unsigned char smem[cas_conv_shared_bytes<BN, aElements>()];
  // As: col, [32 taps][128 pixels]; Bs: w, [BN filters][32 taps].
  const cas_conv_block<BN, aElements> block(smem);
  unsigned short *const As = block.As, *const Bs = block.Bs;
  float* const Cs = block.Cs;
  const int lane = block.lane, warp = block.warp, wr = block.wr, wn = block.wn;
  // This thread's pixel is row (warp & 3) * 32 + lane; its tap groups are (warp >> 2) + 2j.
  const int m0 = blockIdx.x * kConvRows, n0 = blockIdx.y * BN;
  const int m = m0 + wr + lane, n = m / HoWo, oy = (m / WO) % HO, ox = m % WO;
  // Where the pixel's window starts in x; padded: past M never inside the image.
  const int iy0 = Padded ? (m < M ? oy * SH - PT : -65536) : 0, ix0 = Padded ? ox * SW - PL : 0;
  const int window = Padded ? n * CHW + iy0 * W + ix0 : n * CHW + oy * (SH * W) + ox * SW;
  // Hoisted: computed inside the loop, the compiler rematerialises it from threadIdx.x every
  // step (6 more instructions in the main loop; 9% of a Nature-CNN forward pass on the H200).
  const int group = warp >> 2;
  float ra[kConvGathers], rb[gathersB];
  auto gather = [&](int at) {
#pragma unroll
    for (int j = 0; j < tasks; ++j) {
      const int kc = at + (group + 2 * j) * V, c = kc / RS, r = (kc / S) % R, s = kc % S;
      const bool inside = Padded ? (unsigned(iy0 + r) < unsigned(H) && unsigned(ix0 + s) < unsigned(W)) : (M % kConvRows == 0 || m < M);
      cas_gather<V>(ra + V * j, x + window + (c * H + r) * W + s, inside && (Kc % kConvStep == 0 || kc < Kc));
    }
#pragma unroll
    for (int q = 0; q < gathersB; ++q) {
      const int k = n0 + warp + 8 * q, kc = at + lane;
      rb[q] = (K % BN == 0 || k < K) && (Kc % kConvStep == 0 || kc < Kc) ? w[k * Kc + kc] : 0.f;
    }
  };
  auto store = [&] {
#pragma unroll
    for (int j = 0; j < tasks; ++j)
#pragma unroll
      for (int e = 0; e < V; ++e) As[((group + 2 * j) * V + e) * kConvWidePitch + wr + lane] = cas_round16<BF16>(ra[V * j + e]);
#pragma unroll
    for (int q = 0; q < gathersB; ++q) Bs[(warp + 8 * q) * kConvPitch + lane] = cas_round16<BF16>(rb[q]);
  };
  float sum[2][BN / 32][8];
  cas_conv_pipeline<BF16, true, BN>(sum, As, Bs, wr, wn, 0, Kc, gather, store);
  cas_conv_write<BN>(sum, Cs, wr, wn, [&](int row, int col, float acc) {
    const int mm = m0 + row, k = n0 + col;
    if ((M % kConvRows != 0 && mm >= M) || (K % BN != 0 && k >= K)) return;
    epi(((mm / HoWo) * K + k) * HoWo + mm % HoWo, acc);
  });
}

// x [N][C][H][W], dy [N][K][HO][WO] -> dw [K][C][R][S], the pixels in slabs of Chunk.
template <bool BF16, int N, int C, int H, int W, int K, int R, int S, int HO, int WO, int SH, int SW, int PT, int PL, bool Padded, int BN, int V,
          int Chunk>
__device__ __forceinline__ void cas_conv_wgrad(const float* x, const float* dy, float* dw) {
  constexpr int M = N * HO * WO, Kc = C * R * S, HoWo = HO * WO, CHW = C * H * W, RS = R * S;
  constexpr int gathersB = BN * kConvStep / kConvThreads, tasks = kConvGathers / V;
  constexpr int aElements = kConvRows * kConvPitch, kTiles = (K + BN - 1) / BN;
  __shared__ __align__(128) unsigned char smem[cas_conv_shared_bytes<BN, aElements>()];
  // As: col, [128 taps][32 pixels]; Bs: dy, [BN filters][32 pixels].
  const cas_conv_block<BN, aElements> block(smem);
  unsigned short *const As = block.As, *const Bs = block.Bs;
  float* const Cs = block.Cs;
  const int lane = block.lane, warp = block.warp, wr = block.wr, wn = block.wn;
  // This thread's tap groups are rows (warp + 8q) * V of the tile; its pixel is lane.
  const int kc0 = blockIdx.x * kConvRows, n0 = (blockIdx.y % kTiles) * BN;
  const int mBegin = (blockIdx.y / kTiles) * Chunk, mEnd = min(M, mBegin + Chunk);
  // Each tap group's offset in a window (unpadded, past Kc: -1), and, padded, its filter row
  // (past Kc: never inside the image) and column.
  int tap[tasks], tapR[tasks], tapS[tasks];
#pragma unroll
  for (int q = 0; q < tasks; ++q) {
    const int kc = kc0 + (warp + 8 * q) * V, c = kc / RS, r = (kc / S) % R, s = kc % S;
    tap[q] = Padded || Kc % kConvRows == 0 || kc < Kc ? (c * H + r) * W + s : -1;
    tapR[q] = kc < Kc ? r : -65536;
    tapS[q] = s;
  }
  float ra[kConvGathers], rb[gathersB];
  auto gather = [&](int at) {
    const int m = at + lane, n = m / HoWo, oy = (m / WO) % HO, ox = m % WO, pix = m % HoWo;
    const bool rowIn = m < mEnd;
    const int iy0 = oy * SH - PT, ix0 = ox * SW - PL;
    const int window = Padded ? n * CHW + iy0 * W + ix0 : n * CHW + oy * (SH * W) + ox * SW;
#pragma unroll
    for (int q = 0; q < tasks; ++q) {
      const bool inside = Padded ? unsigned(iy0 + tapR[q]) < unsigned(H) && unsigned(ix0 + tapS[q]) < unsigned(W)
                                 : Kc % kConvRows == 0 || tap[q] >= 0;
      cas_gather<V>(ra + V * q, x + window + tap[q], rowIn && inside);
    }
#pragma unroll
    for (int q = 0; q < gathersB; ++q) {
      const int k = n0 + warp + 8 * q;
      rb[q] = rowIn && (K % BN == 0 || k < K) ? dy[n * (K * HoWo) + k * HoWo + pix] : 0.f;
    }
  };
  auto store = [&] {
#pragma unroll
    for (int q = 0; q < tasks; ++q)
#pragma unroll
      for (int e = 0; e < V; ++e) As[((warp + 8 * q) * V + e) * kConvPitch + lane] = cas_round16<BF16>(ra[V * q + e]);
#pragma unroll
    for (int q = 0; q < gathersB; ++q) Bs[(warp + 8 * q) * kConvPitch + lane] = cas_round16<BF16>(rb[q]);
  };
  float sum[2][BN / 32][8];
  cas_conv_pipeline<BF16, false, BN>(sum, As, Bs, wr, wn, mBegin, mEnd, gather, store);
  cas_conv_write<BN>(sum, Cs, wr, wn, [&](int row, int col, float acc) {
    const int kc = kc0 + row, k = n0 + col;
    if ((Kc % kConvRows != 0 && kc >= Kc) || (K % BN != 0 && k >= K)) return;
    atomicAdd(&dw[k * Kc + kc], acc);
  });
}
