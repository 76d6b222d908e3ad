#pragma once
// Runs a kernel template's device function (core/cuda_render/kernels/*.cuh) on the CPU, so that a test can
// hold the kernel's own code, not a rewrite of it, against the CPU backend on a machine without a
// GPU: a block's threads are std::threads, __syncthreads is a std::barrier (a thread that returns
// drops out of it, as an exited CUDA thread does), __shared__ arrays are static (the blocks run
// one after another), atomicAdd is std::atomic_ref, float4 a 16-byte aligned struct. What it cannot show is the GPU's own
// compilation: the GPU suite still runs the kernel there.
// Thread-safety: one runOnCpu at a time.
#include <atomic>
#include <barrier>
#include <cmath>
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

#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct alignas(16) float4 {
  float x, y, z, w;
};

inline void __syncthreads() { casBlockBarrier->arrive_and_wait(); }
inline float atomicAdd(float* address, float value) { return std::atomic_ref<float>(*address).fetch_add(value); }

namespace cas::test {

// Runs `body` (a call of the device function) as a grid of `grid` blocks of `block` threads.
template <typename Body>
void runOnCpu(unsigned grid, unsigned block, Body body) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    std::barrier<> sync(static_cast<std::ptrdiff_t>(block));
    casBlockBarrier = &sync;
    std::vector<std::jthread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, b, t] {
        blockIdx = {b, 0, 0};
        threadIdx = {t, 0, 0};
        body();
        sync.arrive_and_drop();
      });
  }  // the jthreads join here, before the next block reuses the static shared arrays
  casBlockBarrier = nullptr;
}

}  // namespace cas::test
