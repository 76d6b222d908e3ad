// Layout kernels around cuDNN's NHWC convolutions of bf16/fp16 input gradients: 16-bit NHWC
// copies of the fp32 NCHW operands, and the result back to NCHW fp32. An unpadded convolution
// whose kernel is a multiple of its stride s folds (space-to-depth): an s x s block of pixels
// becomes s*s channels, so cuDNN sees stride 1 and a kernel R/s x S/s over C*s*s channels.
//
//   cas_to_nhwc        dst[n][y][x][c] = src[n][c][y][x]           (Fold 1: 32 x 32 shared tiles)
//   cas_to_nhwc_fold   dst[n][y][x][(c*F + dy)*F + dx] = src[n][c][y*F + dy][x*F + dx]
//   cas_from_nhwc      the inverse of either, through 32 x 32 shared tiles; pixels no output
//                      covers (y >= (H/F)*F) get 0.
//
// Tiled transposes: per image a [rows][cols] -> [cols][rows] transpose; blocks stride over the
// 32 x 32 tiles (p0 along the pixels, c0 along the channels); `read` fills tile[j][tx] and
// `write` stores tile[tx][j], so both global reads and writes coalesce.
// Launch: 256 threads a block, any grid (blocks stride).
// Thread-safety: pure device functions.

template <bool BF16>
__device__ __forceinline__ float cas_widen16(unsigned short h) {
  float v;
  if constexpr (BF16) v = __uint_as_float(unsigned(h) << 16);
  else asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(h));
  return v;
}

template <int Images, int PixelTiles, int ChannelTiles, typename Read, typename Write>
__device__ __forceinline__ void cas_tiled_transpose(Read&& read, Write&& write) {
  __shared__ float tile[32][33];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  for (int b = blockIdx.x; b < Images * PixelTiles * ChannelTiles; b += gridDim.x) {
    const int p0 = (b % PixelTiles) * 32, c0 = ((b / PixelTiles) % ChannelTiles) * 32, n = b / (PixelTiles * ChannelTiles);
    for (int j = ty; j < 32; j += 8) tile[j][tx] = read(n, p0, c0, j, tx);
    __syncthreads();
    for (int j = ty; j < 32; j += 8) write(n, p0, c0, j, tx, tile[tx][j]);
    __syncthreads();
  }
}

template <bool BF16, int N, int C, int H, int W>
__device__ __forceinline__ void cas_to_nhwc(const float* __restrict__ src, unsigned short* __restrict__ dst) {
  constexpr int HW = H * W;
  cas_tiled_transpose<N, (HW + 31) / 32, (C + 31) / 32>(
      [&](int n, int p0, int c0, int j, int tx) {
        const int c = c0 + j, p = p0 + tx;
        return c < C && p < HW ? src[(n * C + c) * HW + p] : 0.f;
      },
      [&](int n, int p0, int c0, int j, int tx, float v) {
        const int p = p0 + j, c = c0 + tx;
        if (p >= HW || c >= C) return;
        dst[(n * HW + p) * C + c] = cas_round16<BF16>(v);
      });
}

template <bool BF16, int N, int C, int H, int W, int F>
__device__ __forceinline__ void cas_to_nhwc_fold(const float* __restrict__ src, unsigned short* __restrict__ dst) {
  constexpr int Hs = H / F, Ws = W / F, Cs = C * F * F;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N * Hs * Ws * Cs; i += gridDim.x * blockDim.x) {
    const int cs = i % Cs, x = (i / Cs) % Ws, y = (i / (Cs * Ws)) % Hs, n = i / (Cs * Ws * Hs);
    const int c = cs / (F * F), dy = (cs / F) % F, dx = cs % F;
    dst[i] = cas_round16<BF16>(src[((n * C + c) * H + y * F + dy) * W + x * F + dx]);
  }
}

template <bool BF16, int N, int C, int H, int W, int F>
__device__ __forceinline__ void cas_from_nhwc(const unsigned short* __restrict__ src, float* __restrict__ dst) {
  constexpr int Hs = H / F, Ws = W / F, Cs = C * F * F, P = Hs * Ws;
  cas_tiled_transpose<N, (P + 31) / 32, (Cs + 31) / 32>(
      [&](int n, int p0, int c0, int j, int tx) {
        const int p = p0 + j, cs = c0 + tx;
        return p < P && cs < Cs ? cas_widen16<BF16>(src[(n * P + p) * Cs + cs]) : 0.f;
      },
      [&](int n, int p0, int c0, int j, int tx, float v) {
        const int cs = c0 + j, p = p0 + tx;
        if (p >= P || cs >= Cs) return;
        const int c = cs / (F * F), dy = (cs / F) % F, dx = cs % F, ys = p / Ws, xs = p % Ws;
        dst[((n * C + c) * H + ys * F + dy) * W + xs * F + dx] = v;
      });
  if constexpr (Hs * F != H || Ws * F != W)  // pixels no output covers
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N * C * H * W; i += gridDim.x * blockDim.x) {
      const int x = i % W, y = (i / W) % H;
      if (y >= Hs * F || x >= Ws * F) dst[i] = 0.f;
    }
}
