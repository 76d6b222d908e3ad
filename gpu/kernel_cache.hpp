#pragma once
// The on-disk cubin cache. An entry's key is a hash of everything that decides the machine code:
// the CUDA source, the NVRTC options, NVRTC's version and the target architecture. An entry stores
// that full key text next to the cubin and a checksum over both, so a collision, a truncated file
// or flipped bits are detected; such an entry is compiled again and rewritten (atomically).
//
// Folder: $CAS_KERNEL_CACHE, else $XDG_CACHE_HOME/cuda-agent/kernels, else
// ~/.cache/cuda-agent/kernels. When the folder cannot be written the cache works in memory only.
// Thread-safety: one mutex guards the counters; files are written atomically, so two processes
// sharing the folder at worst both compile the same kernel.
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace cas::gpu {

struct KernelCacheStats {
  int hits = 0;       // loaded from disk
  int compiled = 0;   // compiled by NVRTC (not in the cache before)
  int rebuilt = 0;    // found corrupt or mismatched, compiled again
  double compileMs = 0;
};

enum class CacheOutcome { Hit, Compiled, Rebuilt };

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path folder = defaultFolder());
  static std::filesystem::path defaultFolder();

  // The cubin of `source` for sm_<arch>; compiles on a miss. Throws CudaError on a compile error.
  std::vector<char> cubin(const std::string& source, const std::string& name, int arch, const std::vector<std::string>& options,
                          CacheOutcome* outcome = nullptr);
  KernelCacheStats stats() const;
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  mutable std::mutex mutex_;
  KernelCacheStats stats_;
};

}  // namespace cas::gpu
