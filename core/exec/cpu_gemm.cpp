// SGEMM on the CPU. B (or B^T) is packed, one K-block at a time, into panels of 16 columns
// ([panel][k][16], zero-padded); a micro-kernel keeps a 4x16 tile of C in registers across the
// K-block, so each step is 4 broadcasts and 4 vector FMAs. Row blocks are spread over the pool.
// Built with -O3; the micro-kernel is cloned for AVX-512, AVX2 and baseline x86-64 and chosen at
// load time.
#include "core/exec/cpu_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cas::exec {
namespace {

constexpr std::int64_t kBlockK = 256;
constexpr std::int64_t kPanel = 16;
constexpr std::int64_t kRows = 4;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CAS_GEMM_CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))
#else
#define CAS_GEMM_CLONES
#endif

// C[rows, cols] += A[rows, k] * P[k, 16] for rows <= 4, cols <= 16; A row-major (stride lda).
CAS_GEMM_CLONES
void microKernel(std::int64_t rows, std::int64_t cols, std::int64_t k, const float* a, std::int64_t lda, const float* panel,
                 float* c, std::int64_t ldc) {
  float acc[kRows][kPanel] = {};
  const float* a0 = a;
  const float* a1 = a + (rows > 1 ? lda : 0);
  const float* a2 = a + (rows > 2 ? 2 * lda : 0);
  const float* a3 = a + (rows > 3 ? 3 * lda : 0);
  for (std::int64_t p = 0; p < k; ++p) {
    const float* b = panel + p * kPanel;
    const float v0 = a0[p], v1 = a1[p], v2 = a2[p], v3 = a3[p];
    for (int j = 0; j < kPanel; ++j) {
      acc[0][j] += v0 * b[j];
      acc[1][j] += v1 * b[j];
      acc[2][j] += v2 * b[j];
      acc[3][j] += v3 * b[j];
    }
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) c[r * ldc + j] += acc[r][j];
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
  const std::int64_t panels = (n + kPanel - 1) / kPanel;
  std::vector<float> packed;
  for (std::int64_t p0 = 0; p0 < k; p0 += kBlockK) {
    const std::int64_t kb = std::min(kBlockK, k - p0);
    packed.assign(size_t(panels * kb * kPanel), 0.0f);
    for (std::int64_t p = 0; p < kb; ++p)
      for (std::int64_t j = 0; j < n; ++j)
        packed[size_t(((j / kPanel) * kb + p) * kPanel + j % kPanel)] = transposeB ? b[j * ldb + p0 + p] : b[(p0 + p) * ldb + j];
    const std::int64_t rowBlocks = (m + kRows - 1) / kRows;
    auto blocks = [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t rb = r0; rb < r1; ++rb) {
        const std::int64_t i = rb * kRows, rows = std::min(kRows, m - i);
        for (std::int64_t q = 0; q < panels; ++q)
          microKernel(rows, std::min(kPanel, n - q * kPanel), kb, a + i * lda + p0, lda, packed.data() + q * kb * kPanel,
                      c + i * ldc + q * kPanel, ldc);
      }
    };
    const std::int64_t work = m * n * kb;
    if (pool && work > (1 << 16)) pool->parallelFor(rowBlocks, std::max<std::int64_t>(1, (1 << 16) / (kRows * n * kb)), blocks);
    else blocks(0, rowBlocks);
  }
}

}  // namespace cas::exec
