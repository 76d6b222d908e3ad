#pragma once
// Compiles CUDA C++ source to a cubin for one architecture with NVRTC.
// Thread-safety: each call is independent (NVRTC programs are not shared).
#include <string>
#include <vector>

namespace cas::gpu {

struct CompiledKernel {
  std::vector<char> cubin;
  std::string log;
  double compileMs = 0;
};

// `arch` is e.g. 90 for sm_90. Throws CudaError with NVRTC's log when compilation fails.
CompiledKernel compileToCubin(const std::string& source, const std::string& name, int arch,
                              const std::vector<std::string>& extraOptions = {});

// "13.0"
std::string nvrtcVersionText();

}  // namespace cas::gpu
