// Products and convolutions without vendor libraries: what a schedule planned without cuBLAS and
// cuDNN (ir::ScheduleTarget::vendorLibraries = false, the standalone CUDA export) runs where the
// backend would call them or split K with atomics: products whose right operand is batched
// (attention), products with a long K, fp32 convolutions. Plain fp32 FMAs, no tensor cores.
//
//   cas_matmul_direct  c[m][r][j] = sum_p A(m)[r][p] * B(m)[p][j]; offsets(m) gives the first
//                      element of matrix m of a and of b (broadcast leading axes, generated)
//   cas_conv2d_direct  NCHW input x [N, C, H, W], weights [O, C, KH, KW], output [N, O, OH, OW]
//
// Launch: a segment of Count * Lanes threads (cas_segment, elementwise.cuh). Lanes threads share
// an output (ir::directLanes: 32, a warp, when the outputs are too few to fill the GPU, else 1):
// lane l adds the terms l, l + Lanes, ... and the warp adds the lanes' sums in a fixed order,
// so the result is the same on every run.
//
//   threads:  | out 0: lanes 0..31 | out 1: lanes 0..31 | ...      (Lanes = 32)
//
// Thread-safety: pure device functions.

// The sum over the Lanes threads that share an output (all of a warp's lanes are present: a
// segment's threads come in whole warps, and Count * Lanes is a multiple of 32 when Lanes is).
template <int Lanes>
__device__ __forceinline__ float cas_lane_sum(float v) {
  return Lanes == 1 ? v : cas_warp_sum(v);
}

// Matrices of M x K (K x M when TransposeA) and K x N (N x K when TransposeB), Count = the
// number of matrices * M * N.
template <int Count, int M, int N, int K, bool TransposeA, bool TransposeB, int Lanes, typename Offsets>
__device__ __forceinline__ bool cas_matmul_direct(int& b, const float* a, const float* bm, float* c, Offsets&& offsets) {
  return cas_segment<Count * Lanes>(b, [&](int thread) {
    const int t = thread / Lanes, lane = thread % Lanes;
    if (t >= Count) return;
    const int matrix = t / (M * N), r = (t / N) % M, j = t % N;
    const int2 first = offsets(matrix);
    const float* x = a + first.x;
    const float* y = bm + first.y;
    float acc = 0.f;
    for (int p = lane; p < K; p += Lanes) acc += (TransposeA ? x[p * M + r] : x[r * K + p]) * (TransposeB ? y[j * K + p] : y[p * N + j]);
    acc = cas_lane_sum<Lanes>(acc);
    if (lane == 0) c[t] = acc;
  });
}

// Each output sums over its taps (channel, row, column) in that order, lane by lane.
template <int Count, int C, int H, int W, int O, int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL, int Lanes>
__device__ __forceinline__ bool cas_conv2d_direct(int& b, const float* x, const float* w, float* y) {
  return cas_segment<Count * Lanes>(b, [&](int thread) {
    const int t = thread / Lanes, lane = thread % Lanes;
    if (t >= Count) return;
    const int n = t / (O * OH * OW), oc = (t / (OH * OW)) % O, oy = (t / OW) % OH, ox = t % OW;
    const float* plane = x + n * (C * H * W);
    const float* filter = w + oc * (C * KH * KW);
    float acc = 0.f;
    for (int tap = lane; tap < C * KH * KW; tap += Lanes) {
      const int ic = tap / (KH * KW), i = (tap / KW) % KH, j = tap % KW;
      const int yy = oy * SH + i - PT, xx = ox * SW + j - PL;
      if (yy >= 0 && yy < H && xx >= 0 && xx < W) acc += plane[(ic * H + yy) * W + xx] * filter[tap];
    }
    acc = cas_lane_sum<Lanes>(acc);
    if (lane == 0) y[t] = acc;
  });
}
