// Finds and loads the MPI plugin (built from plugins/mpi/ as libcas_mpi.so) for a process mpirun
// started, and turns every way that can fail into a sentence a user can act on.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "core/collective/mpi_world.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/executable_dir.hpp"
#include "core/support/printable.hpp"

namespace cas::dist {
namespace {

constexpr const char* kPluginFile = "libcas_mpi.so";

std::optional<int> positive(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > INT_MAX) return std::nullopt;
  return int(value);
}

}  // namespace

std::optional<int> mpiWorldSizeFromEnvironment() {
  // Open MPI's mpirun; PMI-1/2 launchers (MPICH's Hydra, Intel MPI, srun --mpi=pmi2); PMIx's.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (auto size = positive(name)) return size;
  return std::nullopt;
}

std::optional<HostPlace> mpiHostPlaceFromEnvironment() {
  for (const auto& [rank, size] : {std::pair{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}, std::pair{"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}}) {
    const char* rankText = std::getenv(rank);
    const auto localSize = positive(size);
    if (!rankText || !*rankText || !localSize) continue;
    char* end = nullptr;
    const long localRank = std::strtol(rankText, &end, 10);
    if (*end == '\0' && localRank >= 0 && localRank < *localSize) return HostPlace{int(localRank), *localSize};
  }
  return std::nullopt;
}

namespace {
std::unique_ptr<MpiWorld> loadMpiWorldFrom(const std::filesystem::path& path, std::string* reason);
}  // namespace

std::unique_ptr<MpiWorld> loadMpiWorld(std::string* reason) {
  const std::filesystem::path path = pluginPath("CAS_MPI_PLUGIN", kPluginFile);
  std::unique_ptr<MpiWorld> world = loadMpiWorldFrom(path, reason);
  if (!world) *reason = printableQuoting(*reason, path.string());  // CAS_MPI_PLUGIN's value is anything at all
  return world;
}

namespace {

std::unique_ptr<MpiWorld> loadMpiWorldFrom(const std::filesystem::path& path, std::string* reason) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
#ifdef CAS_MPI_PLUGIN_BUILT
    *reason = "the MPI plugin is missing (" + path.string() + ")";
#else
    *reason = "this build has no MPI plugin (the MPI development files, Debian's libopenmpi-dev, were not found when it was configured); "
              "install them and build again";
#endif
    return nullptr;
  }
  // Checked to be a regular file without blocking first: dlopen of a named pipe waits forever.
  std::string notFile;
  const int fd = openRegularFile(path, FileLimit{"the MPI plugin", 0}, &notFile);
  if (fd < 0) {
    *reason = notFile;
    return nullptr;
  }
  ::close(fd);
  // RTLD_GLOBAL: Open MPI loads its own components with dlopen, and they look for the MPI
  // library's symbols in the global scope.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* err = ::dlerror();
    *reason = std::string("the MPI plugin could not be loaded (is the MPI library that it was built with installed here?): ") +
              (err ? err : "unknown error");
    return nullptr;
  }
  using AbiFn = int (*)();
  using CreateFn = MpiWorld* (*)(char*, unsigned long);
  auto abi = reinterpret_cast<AbiFn>(::dlsym(handle, "cas_mpi_plugin_abi"));
  auto create = reinterpret_cast<CreateFn>(::dlsym(handle, "cas_create_mpi_world"));
  if (!abi || !create) {
    *reason = "the MPI plugin " + path.string() + " lacks its entry points";
    ::dlclose(handle);
    return nullptr;
  }
  if (abi() != kMpiPluginAbi) {
    *reason = "the MPI plugin was built for another version of this program; build it again";
    ::dlclose(handle);
    return nullptr;
  }
  char message[512] = {0};
  MpiWorld* world = create(message, sizeof message);
  if (!world) {
    *reason = message[0] ? message : "MPI failed to start";
    ::dlclose(handle);
    return nullptr;
  }
  // The plugin stays loaded for the life of the process: its code backs the returned object.
  return std::unique_ptr<MpiWorld>(world);
}

}  // namespace
}  // namespace cas::dist
