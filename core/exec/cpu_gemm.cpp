// SGEMM on the CPU. B (or B^T) is packed, one K-block at a time, into panels of 16 columns
// ([panel][k][16], zero-padded); a micro-kernel keeps an 8x16 tile of C in registers across the
// K-block, so each step is 8 broadcasts and 8 vector FMAs. Row blocks are spread over the pool.
// Fewer than 8 rows (a decision at batch 1) read B in place where they can, with the same bits.
// Built with -O3; the micro-kernel is cloned for AVX-512, AVX2 and baseline x86-64 and chosen at
// load time.
#include "core/exec/cpu_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/ir/ops.hpp"

namespace cas::exec {
namespace {

constexpr std::int64_t kBlockK = 256;
constexpr std::int64_t kPanel = 16;
constexpr std::int64_t kRows = 8;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CAS_GEMM_CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))
#else
#define CAS_GEMM_CLONES
#endif

// C[rows, cols] += A[rows, k] * P[k, 16] for rows <= 8, cols <= 16; A row-major (stride lda), P's
// rows `ldp` apart (16 in a packed panel; B's own row stride when B is read in place).
// Eight rows keep eight accumulators of 16 in flight: enough independent FMAs to cover their
// latency on two FMA ports (four left half of them idle). Rows past `rows` read row 0. Written
// out row by row: the compiler keeps them in registers only when they are named.
CAS_GEMM_CLONES
void microKernel(std::int64_t rows, std::int64_t cols, std::int64_t k, const float* a, std::int64_t lda, const float* panel,
                 std::int64_t ldp, float* c, std::int64_t ldc) {
  float acc[kRows][kPanel] = {};
  auto rowOf = [&](std::int64_t r) { return a + (rows > r ? r * lda : 0); };
  const float *a0 = a, *a1 = rowOf(1), *a2 = rowOf(2), *a3 = rowOf(3), *a4 = rowOf(4), *a5 = rowOf(5), *a6 = rowOf(6), *a7 = rowOf(7);
  for (std::int64_t p = 0; p < k; ++p) {
    const float* b = panel + p * ldp;
    const float v0 = a0[p], v1 = a1[p], v2 = a2[p], v3 = a3[p], v4 = a4[p], v5 = a5[p], v6 = a6[p], v7 = a7[p];
    for (int j = 0; j < kPanel; ++j) {
      acc[0][j] += v0 * b[j];
      acc[1][j] += v1 * b[j];
      acc[2][j] += v2 * b[j];
      acc[3][j] += v3 * b[j];
      acc[4][j] += v4 * b[j];
      acc[5][j] += v5 * b[j];
      acc[6][j] += v6 * b[j];
      acc[7][j] += v7 * b[j];
    }
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) c[r * ldc + j] += acc[r][j];
}

// microKernel for one row: c[cols] += a[k] * P[k, 16], each column's sum formed as microKernel
// forms it (the same multiply-adds in the same order: the same bits), without its seven other
// rows, which a product of one row would only have repeated.
CAS_GEMM_CLONES
void rowKernel(std::int64_t cols, std::int64_t k, const float* a, const float* panel, std::int64_t ldp, float* c) {
  float acc[kPanel] = {};
  for (std::int64_t p = 0; p < k; ++p) {
    const float* b = panel + p * ldp;
    const float v = a[p];
    for (int j = 0; j < kPanel; ++j) acc[j] += v * b[j];
  }
  for (std::int64_t j = 0; j < cols; ++j) c[j] += acc[j];
}

// out[cols, rows] (row-major) = in[rows, cols]^T (in's row stride ld), a kTile x kTile tile at a
// time through a local buffer: rows of `in` read contiguously, rows of `out` written contiguously
// (writing a column of `out` directly strides by its row length, often 4 KiB, and every store of
// a tile then lands in the same cache set). Tile rows are spread over the pool.
void transposeInto(ThreadPool* pool, const float* in, std::int64_t ld, std::int64_t rows, std::int64_t cols, float* out) {
  constexpr std::int64_t kTile = 32;
  const std::int64_t tileRows = (rows + kTile - 1) / kTile;
  auto tiles = [&](std::int64_t t0, std::int64_t t1) {
    float tile[kTile][kTile];
    for (std::int64_t t = t0; t < t1; ++t)
      for (std::int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const std::int64_t r0 = t * kTile, nr = std::min(kTile, rows - r0), nc = std::min(kTile, cols - j0);
        for (std::int64_t r = 0; r < nr; ++r)
          for (std::int64_t j = 0; j < nc; ++j) tile[j][r] = in[(r0 + r) * ld + j0 + j];
        for (std::int64_t j = 0; j < nc; ++j) std::copy_n(tile[j], nr, out + (j0 + j) * rows + r0);
      }
  };
  if (pool && rows * cols > (1 << 16)) pool->parallelFor(tileRows, 1, tiles);
  else tiles(0, tileRows);
}

// C[m, n] += A[m, k] op(B) for fewer than kRows rows, with no allocation, row by row: the row
// kernel reads B's full 16-column panels in place; B^T's panels and the last, narrower panel are
// packed one at a time into a buffer on the stack. The micro-kernel's sums over the same
// K-blocks: the bits of the packed path. A policy's decision at batch 1 spent most of its time packing all of B
// (a copy of the weights per call) and allocating the panels.
void fewRows(bool transposeB, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
             float* c, std::int64_t ldc) {
  float panel[kBlockK * kPanel];
  for (std::int64_t p0 = 0; p0 < k; p0 += kBlockK) {
    const std::int64_t kb = std::min(kBlockK, k - p0);
    for (std::int64_t j0 = 0; j0 < n; j0 += kPanel) {
      const std::int64_t width = std::min(kPanel, n - j0);
      const float* source = b + p0 * ldb + j0;
      std::int64_t stride = ldb;
      if (transposeB || width < kPanel) {
        std::fill_n(panel, kb * kPanel, 0.0f);
        for (std::int64_t p = 0; p < kb; ++p)
          for (std::int64_t j = 0; j < width; ++j) panel[p * kPanel + j] = transposeB ? b[(j0 + j) * ldb + p0 + p] : b[(p0 + p) * ldb + j0 + j];
        source = panel;
        stride = kPanel;
      }
      for (std::int64_t i = 0; i < m; ++i) rowKernel(width, kb, a + i * lda + p0, source, stride, c + i * ldc + j0);
    }
  }
}

}  // namespace

// Without contraction into FMAs, which the AVX2 and AVX-512 clones would otherwise form: the
// baseline has none, and every clone must give ir::fastTanh's bits.
CAS_GEMM_CLONES __attribute__((optimize("fp-contract=off")))
void tanhRows(const float* x, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = ir::fastTanh(x[i]);
}

void gemm(ThreadPool* pool, bool transposeA, bool transposeB, std::int64_t m, std::int64_t n, std::int64_t k,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (!accumulate)
    for (std::int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, size_t(n) * sizeof(float));
  if (k <= 0) return;

  // A^T is made row-major once, tile by tile (a weight gradient's A^T is [units, batch]: copied
  // element by element it cost more than the product itself).
  std::vector<float> aRowMajor;
  if (transposeA) {
    aRowMajor.resize(size_t(m * k));
    transposeInto(pool, a, lda, k, m, aRowMajor.data());
    a = aRowMajor.data();
    lda = k;
  }
  if (m < kRows) return fewRows(transposeB, m, n, k, a, lda, b, ldb, c, ldc);
  const std::int64_t panels = (n + kPanel - 1) / kPanel;
  std::vector<float> packed;
  for (std::int64_t p0 = 0; p0 < k; p0 += kBlockK) {
    const std::int64_t kb = std::min(kBlockK, k - p0);
    packed.assign(size_t(panels * kb * kPanel), 0.0f);
    // Panel by panel over the pool. Read along B's rows either way (B^T's rows are its columns):
    // a read down a column strides by ldb, which for a layer's width is often a multiple of 4 KiB.
    auto pack = [&](std::int64_t q0, std::int64_t q1) {
      for (std::int64_t q = q0; q < q1; ++q) {
        float* panel = packed.data() + q * kb * kPanel;
        const std::int64_t j0 = q * kPanel, width = std::min(kPanel, n - j0);
        if (transposeB)
          for (std::int64_t j = 0; j < width; ++j)
            for (std::int64_t p = 0; p < kb; ++p) panel[p * kPanel + j] = b[(j0 + j) * ldb + p0 + p];
        else
          for (std::int64_t p = 0; p < kb; ++p) std::copy_n(b + (p0 + p) * ldb + j0, width, panel + p * kPanel);
      }
    };
    if (pool && n * kb > (1 << 15)) pool->parallelFor(panels, 1, pack);
    else pack(0, panels);
    const std::int64_t rowBlocks = (m + kRows - 1) / kRows;
    auto blocks = [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t rb = r0; rb < r1; ++rb) {
        const std::int64_t i = rb * kRows, rows = std::min(kRows, m - i);
        for (std::int64_t q = 0; q < panels; ++q)
          microKernel(rows, std::min(kPanel, n - q * kPanel), kb, a + i * lda + p0, lda, packed.data() + q * kb * kPanel, kPanel,
                      c + i * ldc + q * kPanel, ldc);
      }
    };
    const std::int64_t work = m * n * kb;
    if (pool && work > (1 << 16)) pool->parallelFor(rowBlocks, std::max<std::int64_t>(1, (1 << 16) / (kRows * n * kb)), blocks);
    else blocks(0, rowBlocks);
  }
}

}  // namespace cas::exec
