#include "gpu/blas_call.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu {
namespace {

// A runtime cast kernel (fp32 to bf16 or fp16), grid-stride over `count` values.
void cast(DeviceRuntime& rt, const char* kernel, CUdeviceptr from, CUdeviceptr to, std::int64_t count, CUstream s) {
  CUfunction f = rt.castKernel(kernel);
  int n = int(count);
  void* args[] = {&from, &to, &n};
  const unsigned blocks = unsigned(std::min<std::int64_t>((count + 255) / 256, std::int64_t(rt.smCount) * 16));
  CAS_CU(cuLaunchKernel(f, std::max(blocks, 1u), 1, 1, 256, 1, 1, 0, s, args, nullptr));
}

}  // namespace

BlasCall planBlasCall(const ir::Graph& g, const ir::Node& n) {
  BlasCall c;
  const ir::Shape &as = g.node(n.inputs[0]).shape, &bs = g.node(n.inputs[1]).shape;
  const bool ta = n.attrs.transposeA, tb = n.attrs.transposeB;
  const std::int64_t m = n.shape[n.shape.size() - 2], nn = n.shape.back(), k = ta ? as[as.size() - 2] : as.back();
  const ir::Shape lead(n.shape.begin(), n.shape.end() - 2), aLead(as.begin(), as.end() - 2), bLead(bs.begin(), bs.end() - 2);
  const std::int64_t batches = ir::numel(lead), aSize = as[as.size() - 2] * as.back(), bSize = bs[bs.size() - 2] * bs.back();
  c.precision = n.precision;
  c.opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.n = int(m);  // column-major view: C^T[nn x m] = op(B)^T op(A)^T
  c.m = int(nn);
  c.k = int(k);
  c.lda = int(as.back());
  c.ldb = int(bs.back());
  c.ldc = int(nn);
  if (!ta && ir::numel(bLead) == 1 && ir::numel(aLead) == batches) {
    c.n = int(batches * m);  // a dense layer: one product over all rows
  } else if ((ir::numel(aLead) == batches || ir::numel(aLead) == 1) && (ir::numel(bLead) == batches || ir::numel(bLead) == 1)) {
    c.strided = batches > 1;
    c.batches = int(batches);
    c.strideA = ir::numel(aLead) == 1 ? 0 : aSize;
    c.strideB = ir::numel(bLead) == 1 ? 0 : bSize;
    c.strideC = m * nn;
  } else {
    ir::Shape pa(lead.size() - aLead.size(), 1), pb(lead.size() - bLead.size(), 1);
    pa.insert(pa.end(), aLead.begin(), aLead.end());
    pb.insert(pb.end(), bLead.begin(), bLead.end());
    c.batches = int(batches);
    for (std::int64_t i = 0; i < batches; ++i) {
      std::int64_t rest = i, ai = 0, bi = 0, sa = 1, sb = 1;
      for (size_t d = lead.size(); d-- > 0;) {
        const std::int64_t coord = rest % lead[d];
        rest /= lead[d];
        if (pa[d] != 1) ai += coord * sa;
        if (pb[d] != 1) bi += coord * sb;
        sa *= pa[d];
        sb *= pb[d];
      }
      c.perBatch.push_back({ai * aSize, bi * bSize});
    }
  }
  return c;
}

void enqueueBlasCall(DeviceRuntime& rt, const BlasCall& c, CUdeviceptr a, CUdeviceptr b, CUdeviceptr out, std::int64_t aCount,
                     std::int64_t bCount, CUstream s) {
  const float one = 1.0f, zero = 0.0f;
  cublasHandle_t h = rt.blas;
  if (c.precision == ir::Precision::F32) {
    auto fa = reinterpret_cast<const float*>(a), fb = reinterpret_cast<const float*>(b);
    auto fc = reinterpret_cast<float*>(out);
    if (!c.perBatch.empty()) {
      for (int i = 0; i < c.batches; ++i)
        CAS_BLAS(cublasSgemm(h, c.opB, c.opA, c.m, c.n, c.k, &one, fb + c.perBatch[size_t(i)].second, c.ldb, fa + c.perBatch[size_t(i)].first,
                             c.lda, &zero, fc + std::int64_t(i) * c.m * c.n, c.ldc));
    } else if (c.strided) {
      CAS_BLAS(cublasSgemmStridedBatched(h, c.opB, c.opA, c.m, c.n, c.k, &one, fb, c.ldb, c.strideB, fa, c.lda, c.strideA, &zero, fc, c.ldc,
                                         c.strideC, c.batches));
    } else {
      CAS_BLAS(cublasSgemm(h, c.opB, c.opA, c.m, c.n, c.k, &one, fb, c.ldb, fa, c.lda, &zero, fc, c.ldc));
    }
    return;
  }
  // The tensor-core products: tf32 multiplies the fp32 buffers themselves (cuBLAS rounds the
  // operands); bf16/fp16 multiply the 16-bit copies the cast kernels make. Sums are fp32.
  const bool tf32 = c.precision == ir::Precision::TF32;
  cudaDataType_t type = CUDA_R_32F;
  std::size_t elementBytes = sizeof(float);
  CUdeviceptr pa = a, pb = b;
  if (!tf32) {
    const bool bf16 = c.precision == ir::Precision::BF16;
    cast(rt, bf16 ? "cas_to_bf16" : "cas_to_f16", a, c.lowA, aCount, s);
    cast(rt, bf16 ? "cas_to_bf16" : "cas_to_f16", b, c.lowB, bCount, s);
    type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
    elementBytes = sizeof(std::uint16_t);
    pa = c.lowA;
    pb = c.lowB;
  }
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  auto operand = [&](CUdeviceptr base, long long elements) { return reinterpret_cast<const void*>(base + CUdeviceptr(elements) * elementBytes); };
  auto fc = reinterpret_cast<float*>(out);
  if (!c.perBatch.empty()) {
    for (int i = 0; i < c.batches; ++i)
      CAS_BLAS(cublasGemmEx(h, c.opB, c.opA, c.m, c.n, c.k, &one, operand(pb, c.perBatch[size_t(i)].second), type, c.ldb,
                            operand(pa, c.perBatch[size_t(i)].first), type, c.lda, &zero, fc + std::int64_t(i) * c.m * c.n, CUDA_R_32F, c.ldc,
                            compute, CUBLAS_GEMM_DEFAULT));
  } else if (c.strided) {
    CAS_BLAS(cublasGemmStridedBatchedEx(h, c.opB, c.opA, c.m, c.n, c.k, &one, operand(pb, 0), type, c.ldb, c.strideB, operand(pa, 0), type, c.lda,
                                        c.strideA, &zero, fc, CUDA_R_32F, c.ldc, c.strideC, c.batches, compute, CUBLAS_GEMM_DEFAULT));
  } else {
    CAS_BLAS(cublasGemmEx(h, c.opB, c.opA, c.m, c.n, c.k, &one, operand(pb, 0), type, c.ldb, operand(pa, 0), type, c.lda, &zero, fc, CUDA_R_32F,
                          c.ldc, compute, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace cas::gpu
