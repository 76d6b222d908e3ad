#pragma once
// What every compiled program of one device shares: the primary context, the named streams, the
// memory pool, the kernel cache, and the cuBLAS and cuDNN handles bound to the compute stream.
//   compute   graphs: the search with its network (self-play), and every program by default
//   data      host copies of parameters and optimizer state
//   training  the training program, once the device replay store feeds it (beside self-play)
//   sync      the replay store's commits: fresh positions into the ring between the two
// Thread-safety: a DeviceRuntime is used by one thread at a time (the backend's contract); the
// pool and the cache are internally synchronised. ContextScope makes the context current.
#include <cublas_v2.h>
#include <cuda.h>
#include <cudnn.h>

#include <memory>
#include <string>

#include "gpu/device_pool.hpp"
#include "gpu/kernel_cache.hpp"

namespace cas::gpu {

struct DeviceRuntime {
  explicit DeviceRuntime(CUdevice device);
  ~DeviceRuntime();
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;

  cudnnHandle_t dnn();  // created on first use, so MLP-only programs never load cuDNN's engines
  CUfunction castKernel(const char* name);  // cas_to_bf16, cas_to_f16

  CUdevice device = 0;
  CUcontext context = nullptr;
  int arch = 0, smCount = 0, maxThreadsPerSm = 0;
  CUstream compute = nullptr, data = nullptr, training = nullptr, sync = nullptr;
  DevicePool pool;
  KernelCache cache;
  cublasHandle_t blas = nullptr;
  static constexpr std::uint64_t kBlasWorkspaceBytes = 32ull << 20;
  CUdeviceptr blasWorkspace = 0;
  int threadsPerBlock = 0;  // 0: the occupancy calculator decides (CAS_GPU_THREADS_PER_BLOCK overrides)

 private:
  cudnnHandle_t dnn_ = nullptr;
  CUmodule castModule_ = nullptr;
};

struct ContextScope {
  explicit ContextScope(CUcontext c);
  ~ContextScope();
};

void checkBlas(cublasStatus_t s, const char* call);
void checkDnn(cudnnStatus_t s, const char* call);
#define CAS_BLAS(call) ::cas::gpu::checkBlas((call), #call)
#define CAS_DNN(call) ::cas::gpu::checkDnn((call), #call)

}  // namespace cas::gpu
