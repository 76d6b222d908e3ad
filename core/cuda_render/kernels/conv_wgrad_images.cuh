// The fp32 weight gradient of a convolution over small images (MinAtar's 10 x 10 boards), where
// cuDNN's timed algorithms are slow for a large batch: about 9.8 ms for Breakout's update at
// 65,536 x 4 x 10 x 10 on an H100, against 0.86 ms for the bf16 implicit GEMM of
// implicit_conv.cuh. Plain fp32 FMAs, as the CPU backend computes it:
//
//   dw[k][c][r][s] = sum over n, oy, ox of dy[n][k][oy][ox] * x[n][c][oy*SH - PT + r][ox*SW - PL + s]
//                    (taps outside the image add nothing)
//
// A block takes the images n = blockIdx.x, + gridDim.x, ... one at a time: it stages the image
// and its output gradient in shared memory, the gradient transposed so that one pixel's filters
// lie together, and each thread adds, over the image's pixels, the products of its tap
// kc = (c, r, s) with TK consecutive filters, in registers across the block's images. At the end each thread adds its TK sums to dw atomically (dw is filled with 0
// first), so the order of the blocks' additions, and the last bits of dw, vary between runs.
//
//   threads:  t = group * Kc + kc   (Kc = C*R*S taps; group g holds filters g*TK .. g*TK+TK-1),
//             Kc * ceil(K / TK) of them; the block's other threads only stage
//   shared:   | x[n]: C x H x W floats | dy[n]: [HO*WO pixels][Pitch] floats |
//             Pitch: Groups*TK rounded up to a multiple of 4, plus 4 where that is a multiple
//             of 8 (staging writes a pixel per lane: rows 4 banks apart conflict at most 4 ways);
//             the filters past K are 0
//
// Per pixel a thread reads one x value and its TK filters' dy values (cas_shared_row from
// conv_forward_images.cuh, which precedes this file: 16-byte loads where TK is a multiple of 4;
// the lanes of one filter group read the same addresses, a broadcast).
// Launch: grid (blocks) of any size up to N, block of at least one warp.
// Thread-safety: pure device function; dw must be zeroed before the launch.

template <int N, int C, int H, int W, int K, int R, int S, int HO, int WO, int SH, int SW, int PT, int PL, int TK>
__device__ __forceinline__ void cas_conv_wgrad_images(const float* x, const float* dy, float* dw) {
  constexpr int Kc = C * R * S, Groups = (K + TK - 1) / TK, Owners = Kc * Groups;
  constexpr int Rounded = (Groups * TK + 3) / 4 * 4, Pitch = Rounded % 8 == 0 ? Rounded + 4 : Rounded;
  constexpr int ImageSize = C * H * W, Pixels = HO * WO, GradientSize = K * Pixels;
  static_assert(Owners <= 1024, "a block holds a thread per tap and group of filters");
  static_assert(4 * (ImageSize + Pixels * Pitch) <= 48 * 1024, "an image and its gradient fit static shared memory");
  __shared__ float image[ImageSize];
  __shared__ __align__(16) float gradient[Pixels * Pitch];
  for (int i = threadIdx.x; i < Pixels * (Pitch - K); i += blockDim.x) gradient[(i / (Pitch - K)) * Pitch + K + i % (Pitch - K)] = 0.f;
  const int t = threadIdx.x;
  const bool owner = t < Owners;
  const int kc = t % Kc, k0 = (t / Kc) * TK;
  const int c = kc / (R * S), r = (kc / S) % R, s = kc % S;
  float sum[TK];
#pragma unroll
  for (int j = 0; j < TK; ++j) sum[j] = 0.f;
  for (int n = blockIdx.x; n < N; n += gridDim.x) {
    __syncthreads();  // every thread is done with the last image
    const float* xn = x + (long long)n * ImageSize;
    const float* dyn = dy + (long long)n * GradientSize;
    for (int i = t; i < ImageSize; i += blockDim.x) image[i] = xn[i];
    for (int i = t; i < GradientSize; i += blockDim.x) gradient[(i % Pixels) * Pitch + i / Pixels] = dyn[i];  // [k][p] -> [p][k]
    __syncthreads();
    if (!owner) continue;
    for (int oy = 0; oy < HO; ++oy) {
      const int iy = oy * SH - PT + r;
      if (iy < 0 || iy >= H) continue;
      for (int ox = 0; ox < WO; ++ox) {
        const int ix = ox * SW - PL + s;
        if (ix < 0 || ix >= W) continue;
        const float v = image[(c * H + iy) * W + ix];
        float g[TK];
        cas_shared_row<TK>(gradient + (oy * WO + ox) * Pitch + k0, g);
#pragma unroll
        for (int j = 0; j < TK; ++j) sum[j] = fmaf(g[j], v, sum[j]);
      }
    }
  }
  if (!owner) return;
#pragma unroll
  for (int j = 0; j < TK; ++j)
    if (k0 + j < K) atomicAdd(dw + (k0 + j) * Kc + kc, sum[j]);
}
