// Device helpers every generated kernel may call. The arithmetic is core/ir/ops.hpp's (the op
// table's CUDA column names these functions); cas_tanh, generated from the same constants as
// the CPU backend's fastTanh, precedes this file in a module.
// Thread-safety: pure device functions.

__device__ __forceinline__ float cas_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float cas_gelu_derivative(float x) {
  const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
  return cdf + x * pdf;
}
// Dropout's keep decision for element `index` (core/ir/ops.hpp, dropoutKeeps).
__device__ __forceinline__ bool cas_dropout_keep(unsigned long long seed, unsigned long long index, float rate) {
  unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53 >= double(rate);
}
// Step kernels may start before the previous kernel in the stream has finished (programmatic
// dependent launch, sm_90 and later): each waits here, before it touches memory, until that
// kernel has finished and its writes are visible.
__device__ __forceinline__ void cas_wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ float cas_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float cas_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  return v;
}
// Float max through integer atomics: non-negative floats order as ints, negative ones reversed
// as unsigned ints.
__device__ __forceinline__ void cas_atomic_max(float* address, float v) {
  if (v >= 0.f) atomicMax(reinterpret_cast<int*>(address), __float_as_int(v));
  else atomicMin(reinterpret_cast<unsigned int*>(address), __float_as_uint(v));
}
__device__ __forceinline__ float cas_negative_infinity() { return __int_as_float(0xff800000); }
