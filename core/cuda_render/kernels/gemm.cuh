// The generated GEMMs: C[M,N] = A[M,K] x B[K,N] in fp32 (either operand optionally transposed:
// A^T stored [K][M], B^T stored [N][K]), each output then handed to an epilogue functor
// epi(i, acc) with i = row * N + col, which computes the fused elementwise nodes (or, split
// along K, adds the partial sum atomically). The schedule's GemmVariant picks the function:
//
//   cas_gemm_narrow  N <= 16 (policy and value heads): a warp per row, lanes stride over K,
//                    the row's N sums reduced across the warp. 256 threads, 8 rows a block.
//   cas_gemm_skinny  M <= 8 (batch-1 forward passes): lanes own columns, the 8 warps split K,
//                    shared memory sums the warps' partial dot products. 256 threads, 32
//                    columns a block.
//   cas_gemm_tiled   BM x BN output tiles; (BM/TM)*(BN/TN) threads compute TM x TN outputs
//                    each; K in steps of BK through shared memory, the next step's tiles loaded
//                    into registers while this one is multiplied. Grid (N/BN, M/BM * Chunks);
//                    Chunks > 1 splits K (the epilogue adds atomically).
//
// Shared tiles of cas_gemm_tiled, K-major, rows padded by 4 floats (16-byte aligned for vector
// loads; column stores of the untransposed operand spread over 8 banks):
//
//   As [BK][BM + 4]:  As[k][m] = A(row0 + m, k0 + k)
//   Bs [BK][BN + 4]:  Bs[k][n] = B(k0 + k, col0 + n)
//
// Thread-safety: pure device functions; split-K needs a filled (zeroed) output.

template <int M, int K, bool TA>
__device__ __forceinline__ float cas_load_a(const float* a, int row, int col) {
  return TA ? a[col * M + row] : a[row * K + col];
}
template <int K, int N, bool TB>
__device__ __forceinline__ float cas_load_b(const float* b, int row, int col) {
  return TB ? b[col * K + row] : b[row * N + col];
}

template <int M, int N, int K, bool TA, bool TB, typename Epilogue>
__device__ __forceinline__ void cas_gemm_narrow(const float* a, const float* b, Epilogue&& epi) {
  const int lane = threadIdx.x & 31, row = blockIdx.x * 8 + (threadIdx.x >> 5);
  if (row >= M) return;
  float sum[N] = {};
  for (int k = lane; k < K; k += 32) {
    const float ak = cas_load_a<M, K, TA>(a, row, k);
#pragma unroll
    for (int c = 0; c < N; ++c) sum[c] += ak * cas_load_b<K, N, TB>(b, k, c);
  }
#pragma unroll
  for (int c = 0; c < N; ++c) sum[c] = cas_warp_sum(sum[c]);
#pragma unroll
  for (int col = 0; col < N; ++col) {
    if (lane != col) continue;
    epi(row * N + col, sum[col]);
  }
}

template <int M, int N, int K, bool TA, bool TB, typename Epilogue>
__device__ __forceinline__ void cas_gemm_skinny(const float* a, const float* b, Epilogue&& epi) {
  constexpr int slice = (K + 7) / 8;  // K per warp
  __shared__ float partial[8][M][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, col = blockIdx.x * 32 + lane;
  float sum[M] = {};
  if (col < N) {
    const int k0 = warp * slice, k1 = min(K, k0 + slice);
#pragma unroll 8
    for (int k = k0; k < k1; ++k) {
      const float bk = cas_load_b<K, N, TB>(b, k, col);
#pragma unroll
      for (int r = 0; r < M; ++r) sum[r] += cas_load_a<M, K, TA>(a, r, k) * bk;
    }
  }
#pragma unroll
  for (int r = 0; r < M; ++r) partial[warp][r][lane] = sum[r];
  __syncthreads();
  if (warp != 0 || col >= N) return;
#pragma unroll
  for (int row = 0; row < M; ++row) {
    float acc = 0.f;
#pragma unroll
    for (int w = 0; w < 8; ++w) acc += partial[w][row][lane];
    epi(row * N + col, acc);
  }
}

template <int BM, int BN, int BK>
struct cas_gemm_tiles {
  float As[BK][BM + 4];
  float Bs[BK][BN + 4];
};

// Count consecutive floats of a shared row in 16- or 8-byte loads where Count allows.
template <int Count>
__device__ __forceinline__ void cas_fragment(float (&dst)[Count], const float* row) {
  constexpr int width = Count % 4 == 0 ? 4 : Count % 2 == 0 ? 2 : 1;
#pragma unroll
  for (int v = 0; v < Count; v += width) {
    if constexpr (width == 4) {
      const float4 q = *reinterpret_cast<const float4*>(row + v);
      dst[v] = q.x;
      dst[v + 1] = q.y;
      dst[v + 2] = q.z;
      dst[v + 3] = q.w;
    } else if constexpr (width == 2) {
      const float2 q = *reinterpret_cast<const float2*>(row + v);
      dst[v] = q.x;
      dst[v + 1] = q.y;
    } else {
      dst[v] = row[v];
    }
  }
}

// One block's tile at block coordinates (bx, by). Bounds are checked only where the sizes do
// not divide into whole tiles (and K steps).
template <int M, int N, int K, bool TA, bool TB, int BM, int BN, int BK, int TM, int TN, int Chunks, typename Epilogue>
__device__ __forceinline__ void cas_gemm_tiled(const float* a, const float* b, int bx, int by, cas_gemm_tiles<BM, BN, BK>& tiles,
                                               Epilogue&& epi) {
  constexpr int threads = (BM / TM) * (BN / TN), colsPerPass = BN / TN;
  constexpr int loadsA = BM * BK / threads, loadsB = BK * BN / threads;
  constexpr int chunkK = Chunks > 1 ? (K + Chunks - 1) / Chunks : K;
  constexpr int rowTiles = (M + BM - 1) / BM;
  constexpr bool wholeK = chunkK % BK == 0 && (Chunks > 1 ? K % chunkK == 0 : true) && K % BK == 0;
  constexpr bool wholeM = M % BM == 0, wholeN = N % BN == 0;
  auto& As = tiles.As;
  auto& Bs = tiles.Bs;
  const int tx = threadIdx.x % colsPerPass, ty = threadIdx.x / colsPerPass;
  const int row0 = (by % rowTiles) * BM, col0 = bx * BN;
  const int kBegin = (by / rowTiles) * chunkK, kEnd = min(K, kBegin + chunkK);
  float acc[TM][TN] = {};
  float ra[loadsA], rb[loadsB];
  // Element e of a tile: neighbouring threads take neighbouring addresses of the operand.
  auto aRow = [](int e) { return TA ? e % BM : e / BK; };
  auto aCol = [](int e) { return TA ? e / BM : e % BK; };
  auto bRow = [](int e) { return TB ? e % BK : e / BN; };
  auto bCol = [](int e) { return TB ? e / BK : e % BN; };
  auto loadTiles = [&](int k0) {
#pragma unroll
    for (int q = 0; q < loadsA; ++q) {
      const int e = threadIdx.x + threads * q;
      const int m = row0 + aRow(e), k = k0 + aCol(e);
      ra[q] = ((wholeM || m < M) && (wholeK || k < kEnd)) ? cas_load_a<M, K, TA>(a, m, k) : 0.f;
    }
#pragma unroll
    for (int q = 0; q < loadsB; ++q) {
      const int e = threadIdx.x + threads * q;
      const int n = col0 + bCol(e), k = k0 + bRow(e);
      rb[q] = ((wholeN || n < N) && (wholeK || k < kEnd)) ? cas_load_b<K, N, TB>(b, k, n) : 0.f;
    }
  };
  loadTiles(kBegin);
  for (int k0 = kBegin; k0 < kEnd; k0 += BK) {
#pragma unroll
    for (int q = 0; q < loadsA; ++q) {
      const int e = threadIdx.x + threads * q;
      As[aCol(e)][aRow(e)] = ra[q];
    }
#pragma unroll
    for (int q = 0; q < loadsB; ++q) {
      const int e = threadIdx.x + threads * q;
      Bs[bRow(e)][bCol(e)] = rb[q];
    }
    __syncthreads();
    if (k0 + BK < kEnd) loadTiles(k0 + BK);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float fa[TM], fb[TN];
      cas_fragment<TM>(fa, &As[kk][ty * TM]);
      cas_fragment<TN>(fb, &Bs[kk][tx * TN]);
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] += fa[r] * fb[c];
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r)
#pragma unroll
    for (int c = 0; c < TN; ++c) {
      const int row = row0 + ty * TM + r, col = col0 + tx * TN + c;
      if (row >= M || col >= N) continue;
      epi(row * N + col, acc[r][c]);
    }
}
