// The CUDA backend plugin: device discovery, properties, the NVRTC probe kernel, compile(),
// which hands graphs to cuda_program.cpp, and the NCCL communicator of data-parallel training.
// Entry points (C linkage, looked up by core/exec/plugin_loader.cpp):
//   int cas_backend_plugin_abi();                          -> kBackendPluginAbi
//   Backend* cas_create_backend(char* reason, size_t n);   -> null with reason on failure
#include <chrono>
#include <cstring>
#include <sstream>

#include "core/exec/backend.hpp"
#include "core/search/learned_search.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_program.hpp"
#include "gpu/nccl/nccl_communicator.hpp"
#include "gpu/env/device_environments.hpp"
#include "gpu/env/device_rollout.hpp"
#include "gpu/nvrtc_compiler.hpp"
#include "gpu/search/device_replay.hpp"
#include "gpu/search/gpu_learned_search.hpp"
#include "gpu/search/gpu_search.hpp"

namespace cas::gpu {
namespace {

// The probe kernel: out[i] = 3*i + 1 over a grid-stride loop, with one block-wide reduction of
// the values into `sum` so that both the write path and atomics are exercised.
constexpr const char* kProbeSource = R"(
extern "C" __global__ void cas_probe(unsigned int* out, unsigned long long* sum, unsigned int n) {
  unsigned long long local = 0;
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned int v = 3u * i + 1u;
    out[i] = v;
    local += v;
  }
  atomicAdd(sum, local);
}
)";

class CudaBackend final : public exec::Backend, public exec::DeviceServices {
 public:
  explicit CudaBackend(CUdevice device) : device_(device) {
    char name[256] = {0};
    CAS_CU(cuDeviceGetName(name, sizeof name, device_));
    name_ = name;
    CAS_CU(cuDeviceGetAttribute(&ccMajor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_));
    CAS_CU(cuDeviceGetAttribute(&ccMinor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_));
    CAS_CU(cuDeviceGetAttribute(&smCount_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
    CAS_CU(cuDeviceTotalMem(&memoryBytes_, device_));
    CAS_CU(cuDriverGetVersion(&driverVersion_));
    CAS_CU(cuDevicePrimaryCtxRetain(&context_, device_));
  }
  ~CudaBackend() override { cuDevicePrimaryCtxRelease(device_); }

  std::string id() const override { return "cuda"; }
  std::string statusText() const override {
    return "CUDA: " + name_ + ", sm_" + std::to_string(arch()) + ", " + std::to_string(smCount_) + " SMs";
  }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    std::ostringstream mem;
    mem.precision(1);
    mem << std::fixed << double(memoryBytes_) / (1024.0 * 1024.0 * 1024.0) << " GiB";
    return {{"device", name_},
            {"compute capability", std::to_string(ccMajor_) + "." + std::to_string(ccMinor_)},
            {"SMs", std::to_string(smCount_)},
            {"memory", mem.str()},
            {"driver CUDA version", std::to_string(driverVersion_ / 1000) + "." + std::to_string(driverVersion_ % 1000 / 10)},
            {"NVRTC", nvrtcVersionText()}};
  }

  std::unique_ptr<exec::Executable> compile(const ir::Graph& graph) override {
    if (!runtime_) runtime_ = std::make_shared<DeviceRuntime>(device_);  // cuBLAS and streams on first use
    return compileForCuda(graph, runtime_);
  }

  exec::DeviceServices* deviceServices() override { return this; }

  std::unique_ptr<cas::search::SelfPlaySearch> createSearch(const cas::search::SearchSetup& setup, std::string* reason) override {
    return startRuntime(reason) ? makeDeviceSearch(setup, runtime_, reason) : nullptr;
  }

  std::unique_ptr<cas::search::LearnedSearch> createLearnedSearch(const cas::search::LearnedSearchSetup& setup, std::string* reason) override {
    return startRuntime(reason) ? makeDeviceLearnedSearch(setup, runtime_, reason) : nullptr;
  }

  std::unique_ptr<cas::search::ReplayStore> createReplayStore(const cas::search::ReplaySetup& setup, std::string* reason) override {
    return startRuntime(reason) ? makeDeviceReplay(setup, runtime_, reason) : nullptr;
  }

  std::unique_ptr<cas::env::VectorEnvironments> createEnvironments(std::string_view environment, int count, std::uint64_t seed,
                                                                   const cas::env::EnvironmentData& data, std::string* reason) override {
    return startRuntime(reason) ? env::makeDeviceEnvironments(environment, count, seed, data, runtime_, reason) : nullptr;
  }

  std::unique_ptr<cas::train::Rollout> createRollout(const cas::train::RolloutSetup& setup, std::string* reason) override {
    return startRuntime(reason) ? env::makeDeviceRollout(setup, runtime_, reason) : nullptr;
  }

  int deviceCount() const override {
    int count = 0;
    return cuDeviceGetCount(&count) == CUDA_SUCCESS ? count : 0;
  }

  std::shared_ptr<exec::Backend> onDevice(int ordinal, std::string* reason) override {
    const int count = deviceCount();
    if (ordinal < 0 || ordinal >= count) {
      *reason = "there is no CUDA device " + std::to_string(ordinal) + " (this process sees " + std::to_string(count) +
                "; CUDA_VISIBLE_DEVICES chooses which)";
      return nullptr;
    }
    try {
      CUdevice device = 0;
      CAS_CU(cuDeviceGet(&device, ordinal));
      return std::make_shared<CudaBackend>(device);
    } catch (const std::exception& e) {
      *reason = "CUDA device " + std::to_string(ordinal) + " did not start: " + e.what();
      return nullptr;
    }
  }

  std::string makeCommunicatorId(std::string* reason) override {
    try {
      return makeNcclGroupId();
    } catch (const std::exception& e) {
      *reason = e.what();
      return {};
    }
  }

  std::unique_ptr<dist::Communicator> createCommunicator(const std::string& id, int rank, int size, double timeoutSeconds,
                                                         std::string* reason) override {
    try {
      if (!runtime_) runtime_ = std::make_shared<DeviceRuntime>(device_);
      return std::make_unique<NcclCommunicator>(runtime_, id, rank, size, timeoutSeconds);
    } catch (const std::exception& e) {
      *reason = e.what();
      return nullptr;
    }
  }

  std::optional<exec::ProbeReport> probe() override {
    exec::ProbeReport report;
    try {
      runProbe(report);
    } catch (const std::exception& e) {
      report.passed = false;
      report.summary = std::string("probe failed: ") + e.what();
    }
    return report;
  }

 private:
  int arch() const { return ccMajor_ * 10 + ccMinor_; }

  // cuBLAS, streams and the memory pool, made on first use; false with `reason` when they fail.
  bool startRuntime(std::string* reason) {
    try {
      if (!runtime_) runtime_ = std::make_shared<DeviceRuntime>(device_);
      return true;
    } catch (const std::exception& e) {
      *reason = std::string("the CUDA runtime did not start: ") + e.what();
      return false;
    }
  }

  void runProbe(exec::ProbeReport& report) {
    CAS_CU(cuCtxPushCurrent(context_));
    struct PopContext {
      ~PopContext() { CUcontext c; cuCtxPopCurrent(&c); }
    } pop;

    CompiledKernel compiled = compileToCubin(kProbeSource, "cas_probe.cu", arch());
    report.compileMs = compiled.compileMs;

    CUmodule module = nullptr;
    CAS_CU(cuModuleLoadData(&module, compiled.cubin.data()));
    CUfunction fn = nullptr;
    CUstream stream = nullptr;
    CUdeviceptr out = 0, sum = 0;
    struct Release {
      CUmodule& m; CUstream& s; CUdeviceptr& o; CUdeviceptr& u;
      ~Release() { if (o) cuMemFree(o); if (u) cuMemFree(u); if (s) cuStreamDestroy(s); if (m) cuModuleUnload(m); }
    } release{module, stream, out, sum};

    CAS_CU(cuModuleGetFunction(&fn, module, "cas_probe"));
    CAS_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    unsigned int n = 1u << 20;
    CAS_CU(cuMemAlloc(&out, n * sizeof(unsigned int)));
    CAS_CU(cuMemAlloc(&sum, sizeof(unsigned long long)));
    CAS_CU(cuMemsetD8Async(sum, 0, sizeof(unsigned long long), stream));
    void* args[] = {&out, &sum, &n};
    const auto start = std::chrono::steady_clock::now();
    CAS_CU(cuLaunchKernel(fn, unsigned(smCount_) * 4, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
    CAS_CU(cuStreamSynchronize(stream));
    report.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    std::vector<unsigned int> host(n);
    unsigned long long deviceSum = 0;
    CAS_CU(cuMemcpyDtoHAsync(host.data(), out, n * sizeof(unsigned int), stream));
    CAS_CU(cuMemcpyDtoHAsync(&deviceSum, sum, sizeof deviceSum, stream));
    CAS_CU(cuStreamSynchronize(stream));

    unsigned long long expectedSum = 0;
    unsigned int wrong = 0;
    for (unsigned int i = 0; i < n; ++i) {
      expectedSum += 3ull * i + 1ull;
      if (host[i] != 3u * i + 1u) ++wrong;
    }
    report.passed = wrong == 0 && deviceSum == expectedSum;
    std::ostringstream s;
    s << "probe kernel cas_probe over " << n << " elements: sum " << deviceSum << (report.passed ? " == " : " != ")
      << expectedSum << " expected, " << wrong << " wrong elements";
    report.summary = s.str();
  }

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::shared_ptr<DeviceRuntime> runtime_;
  std::string name_;
  int ccMajor_ = 0, ccMinor_ = 0, smCount_ = 0, driverVersion_ = 0;
  size_t memoryBytes_ = 0;
};

void copyReason(char* reason, unsigned long size, const std::string& text) {
  if (!reason || size == 0) return;
  std::strncpy(reason, text.c_str(), size - 1);
  reason[size - 1] = '\0';
}

}  // namespace
}  // namespace cas::gpu

extern "C" __attribute__((visibility("default"))) int cas_backend_plugin_abi() { return cas::exec::kBackendPluginAbi; }

extern "C" __attribute__((visibility("default"))) cas::exec::Backend* cas_create_backend(char* reason, unsigned long size) {
  using namespace cas::gpu;
  CUresult r = cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    copyReason(reason, size, "no CUDA device found");
    return nullptr;
  }
  if (r != CUDA_SUCCESS) {
    copyReason(reason, size, "the NVIDIA driver did not start: " + driverErrorText(r));
    return nullptr;
  }
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    copyReason(reason, size, "no CUDA device found");
    return nullptr;
  }
  try {
    CUdevice device = 0;
    CAS_CU(cuDeviceGet(&device, 0));
    return new CudaBackend(device);
  } catch (const std::exception& e) {
    copyReason(reason, size, e.what());
    return nullptr;
  }
}
