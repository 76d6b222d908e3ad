#pragma once
// Error handling for CUDA driver and NVRTC calls inside the plugin: failures become exceptions
// carrying the call and the error's name, caught at the plugin boundary and turned into text.
#include <cuda.h>
#include <nvrtc.h>

#include <stdexcept>
#include <string>

namespace cas::gpu {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string driverErrorText(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + " (" + (text ? text : "no description") + ")";
}

inline void checkDriver(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) throw CudaError(std::string(call) + " failed: " + driverErrorText(r));
}

inline void checkNvrtc(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS) throw CudaError(std::string(call) + " failed: " + nvrtcGetErrorString(r));
}

#define CAS_CU(call) ::cas::gpu::checkDriver((call), #call)
#define CAS_NVRTC(call) ::cas::gpu::checkNvrtc((call), #call)

}  // namespace cas::gpu
