// Blocked SGEMM: B (or its transpose) is packed into row-major panels so the inner loop runs
// over contiguous columns of C and B, which the compiler vectorises; rows of C are spread over
// the pool. Built with -O3; the inner kernel is cloned for AVX-512, AVX2 and baseline x86-64 and
// chosen at load time.
#include "core/exec/cpu_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cas::exec {
namespace {

constexpr std::int64_t kBlockK = 256;
constexpr std::int64_t kBlockN = 1024;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CAS_GEMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CAS_GEMM_CLONES
#endif

// C[rows, n] += A[rows, k] * Bp[k, n] where A is row-major (stride lda) and Bp packed (stride n).
CAS_GEMM_CLONES
void kernel(std::int64_t rows, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* bp,
            float* c, std::int64_t ldc) {
  std::int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    float* c0 = c + (i + 0) * ldc;
    float* c1 = c + (i + 1) * ldc;
    float* c2 = c + (i + 2) * ldc;
    float* c3 = c + (i + 3) * ldc;
    for (std::int64_t p = 0; p < k; ++p) {
      const float a0 = a[(i + 0) * lda + p], a1 = a[(i + 1) * lda + p], a2 = a[(i + 2) * lda + p], a3 = a[(i + 3) * lda + p];
      const float* __restrict brow = bp + p * n;
      for (std::int64_t j = 0; j < n; ++j) {
        const float bv = brow[j];
        c0[j] += a0 * bv;
        c1[j] += a1 * bv;
        c2[j] += a2 * bv;
        c3[j] += a3 * bv;
      }
    }
  }
  for (; i < rows; ++i) {
    float* ci = c + i * ldc;
    for (std::int64_t p = 0; p < k; ++p) {
      const float av = a[i * lda + p];
      const float* __restrict brow = bp + p * n;
      for (std::int64_t j = 0; j < n; ++j) ci[j] += av * brow[j];
    }
  }
}

}  // namespace

void gemm(ThreadPool* pool, bool transposeA, bool transposeB, std::int64_t m, std::int64_t n, std::int64_t k,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (!accumulate)
    for (std::int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, size_t(n) * sizeof(float));
  if (k <= 0) return;

  // A^T is made row-major once; it is small next to the work for the shapes policies use.
  std::vector<float> aRowMajor;
  if (transposeA) {
    aRowMajor.resize(size_t(m * k));
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t i = 0; i < m; ++i) aRowMajor[size_t(i * k + p)] = a[p * lda + i];
    a = aRowMajor.data();
    lda = k;
  }
  std::vector<float> panel;
  for (std::int64_t p0 = 0; p0 < k; p0 += kBlockK) {
    const std::int64_t kb = std::min(kBlockK, k - p0);
    for (std::int64_t j0 = 0; j0 < n; j0 += kBlockN) {
      const std::int64_t nb = std::min(kBlockN, n - j0);
      panel.resize(size_t(kb * nb));
      for (std::int64_t p = 0; p < kb; ++p)
        for (std::int64_t j = 0; j < nb; ++j)
          panel[size_t(p * nb + j)] = transposeB ? b[(j0 + j) * ldb + (p0 + p)] : b[(p0 + p) * ldb + (j0 + j)];
      auto rows = [&](std::int64_t r0, std::int64_t r1) {
        kernel(r1 - r0, nb, kb, a + r0 * lda + p0, lda, panel.data(), c + r0 * ldc + j0, ldc);
      };
      const std::int64_t work = m * nb * kb;
      if (pool && work > (1 << 16)) pool->parallelFor(m, std::max<std::int64_t>(4, (1 << 16) / (nb * kb)), rows);
      else rows(0, m);
    }
  }
}

}  // namespace cas::exec
