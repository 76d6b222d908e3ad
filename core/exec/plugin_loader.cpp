// Finds and loads the CUDA backend plugin (built from gpu/ as libcas_cuda_backend.so) with
// dlopen, and turns every way that can fail into a sentence a user can act on.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/exec/backend.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/executable_dir.hpp"
#include "core/support/printable.hpp"

namespace cas::exec {
namespace {

constexpr const char* kPluginFile = "libcas_cuda_backend.so";

std::string explainDlopenError(const std::string& err) {
  if (err.find("libcuda.so") != std::string::npos) return "no NVIDIA driver (libcuda.so.1 not found)";
  if (err.find("libnvrtc") != std::string::npos)
    return "NVRTC not found; add the CUDA toolkit's lib64 folder to LD_LIBRARY_PATH (" + err + ")";
  if (err.find("libnccl") != std::string::npos)
    return "NCCL not found; add the folder holding libnccl.so.2 (the CUDA toolkit's lib64, or python3's site-packages/nvidia/nccl/lib) to "
           "LD_LIBRARY_PATH (" + err + ")";
  return "the CUDA backend plugin could not be loaded: " + err;
}

std::shared_ptr<Backend> loadFrom(const std::filesystem::path& path, std::string* reason);

}  // namespace

std::shared_ptr<Backend> loadCudaPlugin(std::string* reason) {
  const std::filesystem::path path = pluginPath("CAS_CUDA_PLUGIN", kPluginFile);
  std::shared_ptr<Backend> backend = loadFrom(path, reason);
  if (!backend) *reason = printableQuoting(*reason, path.string());  // CAS_CUDA_PLUGIN's value is anything at all
  return backend;
}

namespace {

std::shared_ptr<Backend> loadFrom(const std::filesystem::path& path, std::string* reason) {

  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
#ifdef CAS_GPU_PLUGIN_BUILT
    *reason = "the CUDA backend plugin is missing (" + path.string() + ")";
#else
    *reason = "this build has no CUDA backend (nvcc was not found when it was configured)";
#endif
    return nullptr;
  }

  // dlopen of a named pipe waits for a writer forever (every command loads the plugin, --device
  // cpu too), and of a device or folder fails obscurely: it is opened without blocking first and
  // checked to be a regular file, as every file the program reads is.
  std::string notFile;
  const int fd = openRegularFile(path, FileLimit{"the CUDA backend plugin", 0}, &notFile);
  if (fd < 0) {
    *reason = notFile;
    return nullptr;
  }
  ::close(fd);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    *reason = explainDlopenError(err ? err : "unknown error");
    return nullptr;
  }
  using AbiFn = int (*)();
  using CreateFn = Backend* (*)(char*, unsigned long);
  auto abi = reinterpret_cast<AbiFn>(::dlsym(handle, "cas_backend_plugin_abi"));
  auto create = reinterpret_cast<CreateFn>(::dlsym(handle, "cas_create_backend"));
  if (!abi || !create) {
    *reason = "the CUDA backend plugin " + path.string() + " lacks its entry points";
    ::dlclose(handle);
    return nullptr;
  }
  if (abi() != kBackendPluginAbi) {
    *reason = "the CUDA backend plugin was built for another version of this program; rebuild it";
    ::dlclose(handle);
    return nullptr;
  }
  char message[512] = {0};
  Backend* backend = create(message, sizeof message);
  if (!backend) {
    *reason = message[0] ? message : "the CUDA backend failed to start";
    ::dlclose(handle);
    return nullptr;
  }
  // The plugin stays loaded for the life of the process: its code backs the returned object.
  return std::shared_ptr<Backend>(backend);
}

}  // namespace

}  // namespace cas::exec
