#include "gpu/nvrtc_compiler.hpp"

#include <chrono>

#include "gpu/cuda_check.hpp"

namespace cas::gpu {

std::string nvrtcVersionText() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

CompiledKernel compileToCubin(const std::string& source, const std::string& name, int arch,
                              const std::vector<std::string>& extraOptions) {
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram program = nullptr;
  CAS_NVRTC(nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  std::vector<std::string> options = {"--gpu-architecture=sm_" + std::to_string(arch), "--std=c++17"};
  options.insert(options.end(), extraOptions.begin(), extraOptions.end());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());

  CompiledKernel out;
  nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  out.log.resize(logSize);
  if (logSize > 0) nvrtcGetProgramLog(program, out.log.data());
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  if (compiled != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    throw CudaError("NVRTC could not compile " + name + ": " + nvrtcGetErrorString(compiled) + "\n" + out.log);
  }
  size_t size = 0;
  CAS_NVRTC(nvrtcGetCUBINSize(program, &size));
  out.cubin.resize(size);
  CAS_NVRTC(nvrtcGetCUBIN(program, out.cubin.data()));
  nvrtcDestroyProgram(&program);
  out.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace cas::gpu
