#pragma once
// Page-locked host memory that the copy engines read and write directly, so that a copy queued on
// a stream is truly asynchronous and ordered with the stream's kernels. Taken with its context
// current and freed with it pushed again, whichever thread drops the last owner; zeroed when taken.
// Thread-safety: the owner synchronises access to the memory with the streams that copy it.
#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "gpu/cuda_check.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu {

class PinnedBuffer {
 public:
  PinnedBuffer(CUcontext context, std::size_t bytes) : context_(context), bytes_(std::max<std::size_t>(bytes, 64)) {
    ContextScope scope(context_);
    CAS_CU(cuMemHostAlloc(&data_, bytes_, 0));
    std::memset(data_, 0, bytes_);
  }
  ~PinnedBuffer() {
    if (cuCtxPushCurrent(context_) != CUDA_SUCCESS) return;
    cuMemFreeHost(data_);
    CUcontext c;
    cuCtxPopCurrent(&c);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  CUcontext context_;
  std::size_t bytes_;
  void* data_ = nullptr;
};

}  // namespace cas::gpu
