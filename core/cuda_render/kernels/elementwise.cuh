// Segments, elementwise kernels and reductions: the templates of the schedule's Elementwise,
// Reduction and (with layout.cuh) Special units. Generated code supplies the functors: `f(i)`
// computes a unit's fused members at flat index i (and stores the stored ones), `index(o, r)`
// maps output o and reduced position r to the input's flat index, `value(i)` computes the
// members at i and returns the value the reduction takes.
//
// Launch: a 1-D grid whose blocks are shared out among the step's segments in order; segment k
// owns the next ceil(Threads_k / blockDim.x) blocks. Each segment call takes the block counter
// b, runs when b falls into its range (returning true: the kernel is done) and otherwise
// subtracts its blocks from b.
//
//   blocks:  | segment 0 (Adam, weight 0) | segment 1 (weight 1) | ... | segment k |
//   b:         0 ............ B0-1         B0 ....... B0+B1-1
//
// Thread-safety: pure device functions; reductions with Chunks > 1 add atomically into an
// accumulator that a Fill step has set.

template <int Threads, typename Body>
__device__ __forceinline__ bool cas_segment(int& b, Body&& body) {
  const int blocks = (Threads + blockDim.x - 1) / blockDim.x;
  if (b >= blocks) {
    b -= blocks;
    return false;
  }
  body(int(b * blockDim.x + threadIdx.x));
  return true;
}

// f(i) for every i < Count.
template <int Count, typename F>
__device__ __forceinline__ bool cas_elementwise(int& b, F&& f) {
  return cas_segment<Count>(b, [&](int t) {
    if (t < Count) f(t);
  });
}

template <bool IsMax>
__device__ __forceinline__ float cas_reduce_init() { return IsMax ? cas_negative_infinity() : 0.f; }
template <bool IsMax>
__device__ __forceinline__ float cas_combine(float acc, float v) { return IsMax ? (v > acc ? v : acc) : acc + v; }

// Reduced positions not contiguous (over the batch of a dense layer): lanes take neighbouring
// outputs o; Chunks threads stride over r for one output. Chunks == 1 stores, else the partial
// results are added atomically (first across the warp when there is one output).
template <int Outputs, int Length, int Chunks, bool IsMax, typename Index, typename Value>
__device__ __forceinline__ bool cas_reduce_columns(int& b, float* out, Index&& index, Value&& value) {
  constexpr int threads = Outputs * Chunks;
  return cas_segment<threads>(b, [&](int t) {
    float acc = cas_reduce_init<IsMax>();
    const int o = t % Outputs;
    if (t < threads)
      for (int r = t / Outputs; r < Length; r += Chunks) acc = cas_combine<IsMax>(acc, value(index(o, r)));
    if constexpr (Chunks == 1) {
      if (t < threads) out[o] = acc;
    } else if constexpr (Outputs == 1) {
      acc = IsMax ? cas_warp_max(acc) : cas_warp_sum(acc);
      if ((threadIdx.x & 31) == 0) {
        if constexpr (IsMax) cas_atomic_max(out, acc);
        else atomicAdd(out, acc);
      }
    } else {
      if (t < threads) {
        if constexpr (IsMax) cas_atomic_max(&out[o], acc);
        else atomicAdd(&out[o], acc);
      }
    }
  });
}

// Reduced positions contiguous (a bias gradient over N, H, W): Chunks (a multiple of 32)
// threads per output stride over r, sum across the warp and add atomically.
template <int Outputs, int Length, int Chunks, bool IsMax, typename Index, typename Value>
__device__ __forceinline__ bool cas_reduce_rows(int& b, float* out, Index&& index, Value&& value) {
  constexpr int threads = Outputs * Chunks;
  return cas_segment<threads>(b, [&](int t) {
    float acc = cas_reduce_init<IsMax>();
    const int o = t / Chunks;
    if (t < threads)
      for (int r = t % Chunks; r < Length; r += Chunks) acc = cas_combine<IsMax>(acc, value(index(o, r)));
    acc = IsMax ? cas_warp_max(acc) : cas_warp_sum(acc);
    if ((threadIdx.x & 31) == 0 && t < threads) {
      if constexpr (IsMax) cas_atomic_max(&out[o], acc);
      else atomicAdd(&out[o], acc);
    }
  });
}

// Softmax or log-softmax of one element of a row of Length values Inner apart (computed per
// element so that it fuses with its readers; short rows only). load(j) reads the input at j.
template <int Length, int Inner, bool Log, typename Load>
__device__ __forceinline__ float cas_softmax_element(int i, Load&& load) {
  const int base = (i / (Length * Inner)) * (Length * Inner) + i % Inner;
  float m = cas_negative_infinity(), sum = 0.f;
  for (int k = 0; k < Length; ++k) {
    const float x = load(base + k * Inner);
    m = x > m ? x : m;
  }
  for (int k = 0; k < Length; ++k) sum += expf(load(base + k * Inner) - m);
  return Log ? load(i) - m - logf(sum) : expf(load(i) - m) / sum;
}
