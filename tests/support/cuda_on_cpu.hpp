#pragma once
// Runs a kernel template's device function (core/cuda_render/kernels/*.cuh) on the CPU, so that a test can
// hold the kernel's own code, not a rewrite of it, against the CPU backend on a machine without a
// GPU: a block's threads are std::threads, __syncthreads is a std::barrier (a thread that returns
// drops out of it, as an exited CUDA thread does), __shared__ arrays are static (the blocks run
// one after another), atomicAdd is std::atomic_ref, float4 a 16-byte aligned struct, a warp's
// shuffles an exchange through a slot per thread between two waits on the warp's own barrier
// (so a kernel's warps must shuffle convergently, as the full-mask shuffles it uses require). What it cannot show is the GPU's own
// compilation: the GPU suite still runs the kernel there.
// Thread-safety: one runOnCpu at a time.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

namespace cas::test {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

}  // namespace cas::test

inline thread_local cas::test::Dim3 threadIdx, blockIdx;
inline cas::test::Dim3 blockDim, gridDim;
inline std::barrier<>* casBlockBarrier = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> casWarpBarriers;  // one per warp of the running block
inline float casWarpSlots[1024];

#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct alignas(16) float4 {
  float x, y, z, w;
};

inline void __syncthreads() { casBlockBarrier->arrive_and_wait(); }
inline float atomicAdd(float* address, float value) { return std::atomic_ref<float>(*address).fetch_add(value); }
inline int atomicMax(int* address, int value) {
  std::atomic_ref<int> a(*address);
  int old = a.load();
  while (old < value && !a.compare_exchange_weak(old, value)) {
  }
  return old;
}
inline unsigned atomicMin(unsigned* address, unsigned value) {
  std::atomic_ref<unsigned> a(*address);
  unsigned old = a.load();
  while (old > value && !a.compare_exchange_weak(old, value)) {
  }
  return old;
}
inline int __float_as_int(float v) { return std::bit_cast<int>(v); }
inline unsigned __float_as_uint(float v) { return std::bit_cast<unsigned>(v); }
inline float __int_as_float(int v) { return std::bit_cast<float>(v); }
inline float __int_as_float(unsigned v) { return std::bit_cast<float>(v); }
inline float rsqrtf(float v) { return 1.0f / std::sqrt(v); }

// Lane `source`'s value of v, for every lane of the calling thread's warp.
inline float casWarpExchange(float v, unsigned source) {
  const unsigned t = threadIdx.x, first = t / 32 * 32;
  std::barrier<>& warp = *casWarpBarriers[t / 32];
  casWarpSlots[t] = v;
  warp.arrive_and_wait();
  const float value = casWarpSlots[first + source % 32];
  warp.arrive_and_wait();
  return value;
}
inline float __shfl_sync(unsigned, float v, int source) { return casWarpExchange(v, unsigned(source)); }
inline float __shfl_xor_sync(unsigned, float v, int laneMask) { return casWarpExchange(v, (threadIdx.x % 32) ^ unsigned(laneMask)); }

// The tensor-core instructions of attention_mma.cuh, emulated: the kernel's own fragments
// exchanged through the warp's shuffles, the products of the 16-bit values summed in fp32.
#define CAS_CUDA_ON_CPU 1

template <bool BF16>
inline unsigned short casRound16(float v) {
  if constexpr (BF16) {
    const unsigned u = std::bit_cast<unsigned>(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);  // NaN stays NaN
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                  // to nearest, ties to even
  } else {
    return std::bit_cast<unsigned short>(static_cast<_Float16>(v));
  }
}
template <bool BF16>
inline float casWiden16(unsigned short h) {
  if constexpr (BF16) return std::bit_cast<float>(unsigned(h) << 16);
  else return static_cast<float>(std::bit_cast<_Float16>(h));
}
template <bool BF16>
inline unsigned cas_pack_half2(float lo, float hi) {
  return unsigned(casRound16<BF16>(lo)) | (unsigned(casRound16<BF16>(hi)) << 16);
}
template <bool BF16>
inline float cas_rounded16(float x) {
  return casWiden16<BF16>(casRound16<BF16>(x));
}
// Element e (0 lower, 1 upper) of lane `source`'s register r, fetched by every lane.
inline float casHalfOf(unsigned reg, int source, int e, bool bf16) {
  const unsigned bits = std::bit_cast<unsigned>(casWarpExchange(std::bit_cast<float>(reg), unsigned(source)));
  const auto h = static_cast<unsigned short>(e ? bits >> 16 : bits & 0xffffu);
  return bf16 ? casWiden16<true>(h) : casWiden16<false>(h);
}
// mma.sync.m16n8k16 (row.col, fp32 sums): d += a . b with the PTX fragment layouts
// (attention_mma.cuh draws them). Every lane of the warp calls it, as the instruction requires.
template <bool BF16>
inline void cas_mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  const int lane = int(threadIdx.x % 32), g = lane / 4, c = 2 * (lane % 4);
  float A[2][16], B[2][16];  // the lane's rows g, g + 8 of A; its columns c, c + 1 of B
  for (int quad = 0; quad < 4; ++quad)
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < 2; ++e) {
        // a[r] of lane 4 * row + quad holds row (r & 1 ? +8), columns 2 * quad + e (r >= 2 ? +8)
        const float mine = casHalfOf(a[r], 4 * g + quad, e, BF16);
        A[r & 1][2 * quad + e + (r >= 2 ? 8 : 0)] = mine;
      }
  for (int col = 0; col < 2; ++col)
    for (int quad = 0; quad < 4; ++quad)
      for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 2; ++e)  // b[r] of lane 4 * column + quad holds k = 2 * quad + e (r ? +8)
          B[col][2 * quad + e + 8 * r] = casHalfOf(b[r], 4 * (c + col) + quad, e, BF16);
  for (int r = 0; r < 2; ++r)
    for (int col = 0; col < 2; ++col) {
      float sum = 0.f;
      for (int k = 0; k < 16; ++k) sum += A[r][k] * B[col][k];
      d[2 * r + col] += sum;
    }
}
inline float exp2f(float v) { return std::exp2(v); }

namespace cas::test {

// Runs `body` (a call of the device function) as a grid of `grid` blocks of `block` threads.
template <typename Body>
void runOnCpu(unsigned grid, unsigned block, Body body) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    std::barrier<> sync(static_cast<std::ptrdiff_t>(block));
    casBlockBarrier = &sync;
    casWarpBarriers.clear();
    for (unsigned w = 0; w < (block + 31) / 32; ++w) casWarpBarriers.push_back(std::make_unique<std::barrier<>>(std::min(32u, block - w * 32)));
    std::vector<std::jthread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, b, t] {
        blockIdx = {b, 0, 0};
        threadIdx = {t, 0, 0};
        body();
        sync.arrive_and_drop();
        casWarpBarriers[t / 32]->arrive_and_drop();
      });
  }  // the jthreads join here, before the next block reuses the static shared arrays
  casBlockBarrier = nullptr;
}

}  // namespace cas::test
