#pragma once
// A matmul through cuBLAS: the row-major IR product mapped once, when a graph is compiled, onto
// cuBLAS's column-major calls (C^T = op(B)^T op(A)^T), and enqueued on a stream at every run.
// fp32 stays fp32 (no TF32); tf32 passes the fp32 operands with CUBLAS_COMPUTE_32F_FAST_TF32;
// bf16/fp16 products take 16-bit copies of the operands (made by the runtime's cast kernels into
// lowA/lowB) and accumulate in fp32 on tensor cores.
// Thread-safety: a BlasCall is a plain value; enqueueBlasCall uses the runtime's cuBLAS handle,
// so it runs on the thread that drives that runtime.
#include <cublas_v2.h>
#include <cuda.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::gpu {

struct DeviceRuntime;

// A cuBLAS call, prepared at compile time (row-major operands mapped onto column-major calls).
struct BlasCall {
  cublasOperation_t opA = CUBLAS_OP_N, opB = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  long long strideA = 0, strideB = 0, strideC = 0;
  int batches = 1;
  bool strided = false;
  std::vector<std::pair<long long, long long>> perBatch;  // (A offset, B offset) when broadcast is irregular
  ir::Precision precision = ir::Precision::F32;
  CUdeviceptr lowA = 0, lowB = 0;  // bf16/fp16 copies of the operands
};

// The call for matmul node `n` of `g` (lowA/lowB are the caller's to allocate for bf16/fp16).
BlasCall planBlasCall(const ir::Graph& g, const ir::Node& n);

// Enqueues the product on stream `s`: a, b the operands (aCount, bCount floats), out the result.
void enqueueBlasCall(DeviceRuntime& rt, const BlasCall& c, CUdeviceptr a, CUdeviceptr b, CUdeviceptr out, std::int64_t aCount,
                     std::int64_t bCount, CUstream s);

}  // namespace cas::gpu
