#include "gpu/device_runtime.hpp"

#include <cstdlib>

#include "gpu/cuda_check.hpp"

namespace cas::gpu {
namespace {

// Precision conversions for bf16/fp16 matmul operands (round to nearest even).
constexpr const char* kCastSource = R"(
extern "C" __global__ void cas_to_bf16(const float* x, unsigned short* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x[i])); y[i] = h;
  }
}
extern "C" __global__ void cas_to_f16(const float* x, unsigned short* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x[i])); y[i] = h;
  }
}
)";

}  // namespace

void checkBlas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw CudaError(std::string(call) + " failed: " + cublasGetStatusString(s));
}

void checkDnn(cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS) throw CudaError(std::string(call) + " failed: " + cudnnGetErrorString(s));
}

ContextScope::ContextScope(CUcontext c) { CAS_CU(cuCtxPushCurrent(c)); }
ContextScope::~ContextScope() {
  CUcontext c;
  cuCtxPopCurrent(&c);
}

DeviceRuntime::DeviceRuntime(CUdevice d) : device(d) {
  int major = 0, minor = 0;
  CAS_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CAS_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  CAS_CU(cuDeviceGetAttribute(&smCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  CAS_CU(cuDeviceGetAttribute(&maxThreadsPerSm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, device));
  arch = major * 10 + minor;
  CAS_CU(cuDevicePrimaryCtxRetain(&context, device));
  ContextScope scope(context);
  CAS_CU(cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING));
  CAS_CU(cuStreamCreate(&data, CU_STREAM_NON_BLOCKING));
  CAS_CU(cuStreamCreate(&training, CU_STREAM_NON_BLOCKING));
  CAS_CU(cuStreamCreate(&sync, CU_STREAM_NON_BLOCKING));
  CAS_BLAS(cublasCreate(&blas));
  CAS_BLAS(cublasSetStream(blas, reinterpret_cast<cudaStream_t>(compute)));
  // A workspace of our own: cuBLAS then allocates nothing while a graph is being captured.
  blasWorkspace = pool.allocate(DeviceRuntime::kBlasWorkspaceBytes, "the cuBLAS workspace");
  CAS_BLAS(cublasSetWorkspace(blas, reinterpret_cast<void*>(blasWorkspace), DeviceRuntime::kBlasWorkspaceBytes));
  CAS_BLAS(cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH));  // fp32 stays fp32: no TF32
  if (const char* env = std::getenv("CAS_GPU_THREADS_PER_BLOCK"); env && *env) threadsPerBlock = std::atoi(env);
}

DeviceRuntime::~DeviceRuntime() {
  cuCtxPushCurrent(context);
  if (dnn_) cudnnDestroy(dnn_);
  if (blas) cublasDestroy(blas);
  if (castModule_) cuModuleUnload(castModule_);
  if (compute) cuStreamDestroy(compute);
  if (data) cuStreamDestroy(data);
  if (training) cuStreamDestroy(training);
  if (sync) cuStreamDestroy(sync);
  pool.release(blasWorkspace);
  CUcontext c;
  cuCtxPopCurrent(&c);
  cuDevicePrimaryCtxRelease(device);
}

cudnnHandle_t DeviceRuntime::dnn() {
  if (!dnn_) {
    CAS_DNN(cudnnCreate(&dnn_));
    CAS_DNN(cudnnSetStream(dnn_, reinterpret_cast<cudaStream_t>(compute)));
  }
  return dnn_;
}

CUfunction DeviceRuntime::castKernel(const char* name) {
  if (!castModule_) {
    std::vector<char> cubin = cache.cubin(kCastSource, "cas_casts.cu", arch, {});
    CAS_CU(cuModuleLoadData(&castModule_, cubin.data()));
  }
  CUfunction f = nullptr;
  CAS_CU(cuModuleGetFunction(&f, castModule_, name));
  return f;
}

}  // namespace cas::gpu
