#pragma once
// Single-precision matrix product on the CPU: C[M,N] = op(A) op(B) (+ C when accumulate),
// row-major with leading dimensions; op transposes when asked.
#include <cstdint>

#include "core/exec/thread_pool.hpp"

namespace cas::exec {

void gemm(ThreadPool* pool, bool transposeA, bool transposeB, std::int64_t m, std::int64_t n, std::int64_t k,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate);

// out[i] = tanh(x[i]) for i < n, as ir::fastTanh computes it (the same bits), compiled for
// AVX-512, AVX2 and baseline x86-64 and chosen at load time: the rational function is a dozen
// multiply-adds and a division, which the baseline's 4-wide vectors leave the costliest
// elementwise op of a tanh network.
void tanhRows(const float* x, float* out, std::int64_t n);

}  // namespace cas::exec
