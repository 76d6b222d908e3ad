#pragma once
// CAS_HD marks a function that is compiled for the host and, when nvcc includes the header from
// gpu/, for the device as well: the arithmetic the CPU reference and the GPU kernels must share
// bit for bit (core/search/search_math.hpp) is written once. No CUDA header is included here;
// under g++ the macro is empty.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define CAS_HD __host__ __device__
#else
#define CAS_HD
#endif

namespace cas {

CAS_HD inline std::uint32_t floatBits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

CAS_HD inline float bitsFloat(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

}  // namespace cas
