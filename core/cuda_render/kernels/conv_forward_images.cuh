// The fp32 forward convolution over small images (MinAtar's 10 x 10 boards), with the bias and
// activation after it as its epilogue. cuDNN took about 1.0 ms for Breakout's 65,536 x 4 x 10 x 10
// images and 16 filters on an H100, and a separate pass over its 419 MB output added the bias and
// ReLU (0.47 ms). Plain fp32 FMAs, as the CPU backend computes it:
//
//   y[n][k][oy][ox] = sum over c, r, s of w[k][c][r][s] * x[n][c][oy*SH - PT + r][ox*SW - PL + s]
//                     (taps outside the image add nothing), then epi(i, y) at its NCHW index i
//
// A block stages the filters once, transposed so that one tap's filters lie together (rows
// padded with zeros to whole groups of TK), then takes
// the images n = blockIdx.x, + gridDim.x, ... one at a time: it stages the image in shared memory
// (the next one's loads in flight in registers meanwhile), and each thread sums P horizontally
// adjacent output pixels for TK consecutive filters in registers, then runs the epilogue on them.
//
//   threads:  t = group * Slots + slot   (Slots = HO * ceil(WO / P); slot = oy * ceil(WO / P) + ox / P;
//             group g holds filters g*TK .. g*TK+TK-1), Slots * ceil(K / TK) of them; the block's
//             other threads only stage
//   shared:   | filters: [C*R*S taps][Groups*TK] floats | x[n]: C x H x W floats |
//
// Per tap a thread reads its TK filters (16-byte loads where TK is a multiple of 4; the same
// addresses for the lanes of a group: a broadcast) and P image values, for TK * P products. Consecutive threads own consecutive
// pixels, so the epilogue's NCHW writes of one filter fall together.
// Launch: grid (blocks) of any size up to N, block of at least Owners threads.
// Thread-safety: pure device function.

// TK consecutive floats of shared memory into registers, in 16-byte loads where TK is a multiple
// of 4 (p is then 16-byte aligned). conv_wgrad_images.cuh, which follows, reads its rows so too.
template <int TK>
__device__ __forceinline__ void cas_shared_row(const float* p, float (&v)[TK]) {
  if constexpr (TK % 4 == 0) {
#pragma unroll
    for (int q = 0; q < TK / 4; ++q) {
      const float4 f = reinterpret_cast<const float4*>(p)[q];
      v[4 * q] = f.x;
      v[4 * q + 1] = f.y;
      v[4 * q + 2] = f.z;
      v[4 * q + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int q = 0; q < TK; ++q) v[q] = p[q];
  }
}

template <int N, int C, int H, int W, int K, int R, int S, int HO, int WO, int SH, int SW, int PT, int PL, int TK, int P, typename Epilogue>
__device__ __forceinline__ void cas_conv_forward_images(const float* x, const float* w, Epilogue epi) {
  constexpr int Kc = C * R * S, Groups = (K + TK - 1) / TK, Columns = (WO + P - 1) / P, Slots = HO * Columns;
  constexpr int Owners = Slots * Groups, ImageSize = C * H * W, Pitch = Groups * TK;
  static_assert(Owners <= 1024, "a block holds a thread per group of pixels and of filters");
  static_assert(4 * (Kc * Pitch + ImageSize) <= 48 * 1024, "the filters and an image fit static shared memory");
  __shared__ __align__(16) float filters[Kc * Pitch];
  __shared__ float image[ImageSize];
  constexpr int Staged = (ImageSize + Owners - 1) / Owners;  // image values a thread stages (blockDim >= Owners)
  const int t = threadIdx.x;
  const int step = blockDim.x;
  for (int i = t; i < Kc * Pitch; i += step) {  // w[k][kc] -> filters[kc][k], 0 past the last filter
    const int kc = i / Pitch, k = i % Pitch;
    filters[i] = k < K ? w[k * Kc + kc] : 0.f;
  }
  const bool owner = t < Owners;
  const int slot = t % Slots, k0 = (t / Slots) * TK;
  const int oy = slot / Columns, ox0 = (slot % Columns) * P;
  // The next image's share of this thread, loaded before the current one is used.
  float next[Staged];
  auto load = [&](int n) {
    const float* xn = x + (long long)n * ImageSize;
#pragma unroll
    for (int j = 0; j < Staged; ++j) {
      const int i = t + j * step;
      next[j] = i < ImageSize ? xn[i] : 0.f;
    }
  };
  int n = blockIdx.x;
  if (n < N) load(n);
  for (; n < N; n += gridDim.x) {
    __syncthreads();  // every thread is done with the last image (and the filters are staged)
#pragma unroll
    for (int j = 0; j < Staged; ++j) {
      const int i = t + j * step;
      if (i < ImageSize) image[i] = next[j];
    }
    __syncthreads();
    if (n + int(gridDim.x) < N) load(n + int(gridDim.x));
    if (!owner) continue;
    float sum[TK][P];
#pragma unroll
    for (int q = 0; q < TK; ++q)
#pragma unroll
      for (int j = 0; j < P; ++j) sum[q][j] = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int iy = oy * SH - PT + r;
        if (iy < 0 || iy >= H) continue;
#pragma unroll
        for (int s = 0; s < S; ++s) {
          float f[TK];
          cas_shared_row<TK>(filters + ((c * R + r) * S + s) * Pitch + k0, f);
          float v[P];
#pragma unroll
          for (int j = 0; j < P; ++j) {
            const int ix = (ox0 + j) * SW - PL + s;
            v[j] = ix >= 0 && ix < W ? image[(c * H + iy) * W + ix] : 0.f;
          }
#pragma unroll
          for (int q = 0; q < TK; ++q)
#pragma unroll
            for (int j = 0; j < P; ++j) sum[q][j] = fmaf(f[q], v[j], sum[q][j]);
        }
      }
#pragma unroll
    for (int q = 0; q < TK; ++q)
#pragma unroll
      for (int j = 0; j < P; ++j)
        if (k0 + q < K && ox0 + j < WO) epi(((n * K + k0 + q) * HO + oy) * WO + ox0 + j, sum[q][j]);
  }
}
