#pragma once
// Device memory for the CUDA backend: large chunks taken from the driver (cuMemAlloc) and
// sub-allocated best-fit in 256-byte units, with coalescing on release. An executable takes all
// of its buffers when it is compiled, so steady-state training allocates nothing: the statistics
// (deviceAllocations in particular) show it. Running out of memory throws DeviceOutOfMemory
// carrying the pool's state.
// Thread-safety: all members are guarded by one mutex; any thread may allocate or release.
#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/exec/runtime_stat.hpp"

namespace cas::gpu {

struct PoolStats {
  std::uint64_t reservedBytes = 0;    // taken from the driver
  std::uint64_t inUseBytes = 0;       // handed out
  std::uint64_t peakInUseBytes = 0;
  std::uint64_t largestFreeBytes = 0;
  std::uint64_t allocations = 0;      // allocate() calls served
  std::uint64_t releases = 0;
  std::uint64_t deviceAllocations = 0;  // cuMemAlloc calls (chunks)
  // 1 - largest free block / all free bytes: 0 when the free space is one block.
  double fragmentation() const;
};

struct DeviceOutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DevicePool {
 public:
  // chunkBytes: the size of each driver allocation (larger requests get a chunk of their own).
  // limitBytes: the most the pool may reserve (0: whatever the device has); the environment
  // variable CAS_GPU_MEMORY_LIMIT_MB overrides it, for trying out-of-memory handling.
  explicit DevicePool(std::uint64_t chunkBytes = 256ull << 20, std::uint64_t limitBytes = 0);
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // `what` names the buffer in the error message.
  CUdeviceptr allocate(std::uint64_t bytes, const std::string& what);
  void release(CUdeviceptr ptr);
  PoolStats stats() const;
  exec::RuntimeStat describe() const;  // "pool": reserved, in use, peak, fragmentation, counts

 private:
  struct Chunk {
    CUdeviceptr base;
    std::uint64_t size;
  };
  PoolStats statsLocked() const;
  exec::RuntimeStat describeLocked() const;
  void addChunkLocked(std::uint64_t bytes, const std::string& what);

  mutable std::mutex mutex_;
  std::uint64_t chunkBytes_, limitBytes_;
  std::vector<Chunk> chunks_;
  std::map<CUdeviceptr, std::uint64_t> free_;  // address -> size, address-ordered for coalescing
  std::map<CUdeviceptr, std::uint64_t> used_;
  PoolStats counters_;
};

std::string formatBytes(std::uint64_t bytes);  // "12.5 MiB"

}  // namespace cas::gpu
