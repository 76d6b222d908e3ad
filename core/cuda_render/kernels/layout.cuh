// The schedule's Special units: one node each, with its own index space. Every function is a
// segment (elementwise.cuh's cas_segment): it takes the block counter b and returns true when
// the block was its own.
//   cas_softmax_rows     a thread per row of Length values Inner apart: max, sum, write
//   cas_map              out[t] = in[map(t)]: transposes and slices (map generated)
//   cas_pool2d           max or average pooling of NCHW planes, a thread per output
//   cas_pool2d_grad      their gradients, a thread per output gradient, added atomically
//   cas_gather_rows      out[t] = table[ids[t / Width]][t % Width], 0 for an invalid id
//   cas_scatter_add_rows out[ids[t / Width]][t % Width] += g[t], atomically
// Thread-safety: pure device functions; the atomic ones need a filled (zeroed) output.

template <int Rows, int Length, int Inner, bool Log>
__device__ __forceinline__ bool cas_softmax_rows(int& b, const float* x, float* out) {
  return cas_segment<Rows>(b, [&](int t) {
    if (t >= Rows) return;
    const int base = (t / Inner) * (Length * Inner) + t % Inner;
    float m = cas_negative_infinity();
    for (int k = 0; k < Length; ++k) {
      const float v = x[base + k * Inner];
      m = v > m ? v : m;
    }
    float sum = 0.f;
    for (int k = 0; k < Length; ++k) sum += expf(x[base + k * Inner] - m);
    if (Log) {
      const float logSum = logf(sum);
      for (int k = 0; k < Length; ++k) out[base + k * Inner] = x[base + k * Inner] - m - logSum;
    } else {
      for (int k = 0; k < Length; ++k) out[base + k * Inner] = expf(x[base + k * Inner] - m) / sum;
    }
  });
}

template <int Count, typename Map>
__device__ __forceinline__ bool cas_map(int& b, const float* in, float* out, Map&& map) {
  return cas_segment<Count>(b, [&](int t) {
    if (t < Count) out[t] = in[map(t)];
  });
}

// Pooling windows KH x KW with strides SH, SW and padding PT, PL over H x W planes; the output
// planes are OH x OW; Count outputs in all.
template <int Count, int H, int W, int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL, bool IsMax>
__device__ __forceinline__ bool cas_pool2d(int& b, const float* x, float* out) {
  return cas_segment<Count>(b, [&](int t) {
    if (t >= Count) return;
    const int plane = t / (OH * OW), oy = (t / OW) % OH, ox = t % OW;
    float acc = IsMax ? cas_negative_infinity() : 0.f;
    for (int i = 0; i < KH; ++i)
      for (int j = 0; j < KW; ++j) {
        const int y = oy * SH + i - PT, xx = ox * SW + j - PL;
        if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
        const float v = x[plane * (H * W) + y * W + xx];
        if (IsMax) acc = v > acc ? v : acc;
        else acc += v;
      }
    out[t] = IsMax ? acc : acc / float(KH * KW);
  });
}

// Max pooling's gradient goes to the window's (first) maximum of x; average pooling's is
// shared by the window. Count output gradients gy in all.
template <int Count, int H, int W, int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL, bool IsMax>
__device__ __forceinline__ bool cas_pool2d_grad(int& b, const float* x, const float* gy, float* out) {
  return cas_segment<Count>(b, [&](int t) {
    if (t >= Count) return;
    const int plane = t / (OH * OW), oy = (t / OW) % OH, ox = t % OW;
    float best = cas_negative_infinity();
    int bestAt = -1;
    for (int i = 0; i < KH; ++i)
      for (int j = 0; j < KW; ++j) {
        const int y = oy * SH + i - PT, xx = ox * SW + j - PL;
        if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
        const int at = plane * (H * W) + y * W + xx;
        if (IsMax) {
          const float v = x[at];
          if (v > best) {
            best = v;
            bestAt = at;
          }
        } else {
          atomicAdd(&out[at], gy[t] / float(KH * KW));
        }
      }
    if (IsMax && bestAt >= 0) atomicAdd(&out[bestAt], gy[t]);
  });
}

template <int Count, int Rows, int Width>
__device__ __forceinline__ bool cas_gather_rows(int& b, const float* table, const float* ids, float* out) {
  return cas_segment<Count>(b, [&](int t) {
    if (t >= Count) return;
    const float id = ids[t / Width];
    const bool valid = id >= 0.f && id < float(Rows) && id == floorf(id);
    out[t] = valid ? table[int(id) * Width + t % Width] : 0.f;
  });
}

template <int Count, int Rows, int Width>
__device__ __forceinline__ bool cas_scatter_add_rows(int& b, const float* ids, const float* g, float* out) {
  return cas_segment<Count>(b, [&](int t) {
    if (t >= Count) return;
    const int row = int(ids[t / Width]);
    if (row >= 0 && row < Rows) atomicAdd(&out[row * Width + t % Width], g[t]);
  });
}
