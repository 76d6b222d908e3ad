#include "gpu/device_pool.hpp"

#include <cstdio>
#include <cstdlib>

#include "gpu/cuda_check.hpp"

namespace cas::gpu {

static constexpr std::uint64_t kAlignment = 256;

double PoolStats::fragmentation() const {
  const std::uint64_t freeBytes = reservedBytes - inUseBytes;
  return freeBytes == 0 ? 0.0 : 1.0 - double(largestFreeBytes) / double(freeBytes);
}

std::string formatBytes(std::uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 30)) std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
  else if (bytes >= (1ull << 20)) std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1ull << 20));
  else std::snprintf(text, sizeof text, "%.1f KiB", double(bytes) / 1024.0);
  return text;
}

DevicePool::DevicePool(std::uint64_t chunkBytes, std::uint64_t limitBytes) : chunkBytes_(chunkBytes), limitBytes_(limitBytes) {
  if (const char* env = std::getenv("CAS_GPU_MEMORY_LIMIT_MB"); env && *env) limitBytes_ = std::strtoull(env, nullptr, 10) << 20;
}

DevicePool::~DevicePool() {
  for (const Chunk& c : chunks_) cuMemFree(c.base);
}

void DevicePool::addChunkLocked(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t size = std::max(chunkBytes_, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (limitBytes_ != 0 && counters_.reservedBytes + size > limitBytes_)
    throw DeviceOutOfMemory("out of GPU memory: " + what + " needs " + formatBytes(bytes) + ", a new chunk of " + formatBytes(size) +
                            " would pass the pool's limit of " + formatBytes(limitBytes_) + " (pool: " + describeLocked().value() + ")");
  CUdeviceptr base = 0;
  const CUresult r = cuMemAlloc(&base, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t freeBytes = 0, totalBytes = 0;
    cuMemGetInfo(&freeBytes, &totalBytes);
    throw DeviceOutOfMemory("out of GPU memory: " + what + " needs " + formatBytes(bytes) + "; the device has " +
                            formatBytes(freeBytes) + " free of " + formatBytes(totalBytes) + " (pool: " + describeLocked().value() + ")");
  }
  checkDriver(r, "cuMemAlloc");
  chunks_.push_back({base, size});
  free_[base] = size;
  counters_.reservedBytes += size;
  ++counters_.deviceAllocations;
}

CUdeviceptr DevicePool::allocate(std::uint64_t bytes, const std::string& what) {
  std::lock_guard lock(mutex_);
  const std::uint64_t need = std::max<std::uint64_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  auto bestFit = [&] {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= need && (best == free_.end() || it->second < best->second)) best = it;
    return best;
  };
  auto best = bestFit();
  if (best == free_.end()) {
    addChunkLocked(need, what);
    best = bestFit();
  }
  const CUdeviceptr ptr = best->first;
  const std::uint64_t have = best->second;
  free_.erase(best);
  if (have > need) free_[ptr + need] = have - need;
  used_[ptr] = need;
  counters_.inUseBytes += need;
  counters_.peakInUseBytes = std::max(counters_.peakInUseBytes, counters_.inUseBytes);
  ++counters_.allocations;
  return ptr;
}

void DevicePool::release(CUdeviceptr ptr) {
  if (ptr == 0) return;
  std::lock_guard lock(mutex_);
  auto it = used_.find(ptr);
  if (it == used_.end()) return;
  std::uint64_t size = it->second;
  used_.erase(it);
  counters_.inUseBytes -= size;
  ++counters_.releases;
  // Coalesce with the free neighbours inside the same chunk.
  auto chunkOf = [&](CUdeviceptr p) {
    for (const Chunk& c : chunks_)
      if (p >= c.base && p < c.base + c.size) return c.base;
    return CUdeviceptr(0);
  };
  CUdeviceptr start = ptr;
  auto next = free_.lower_bound(ptr);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == ptr && chunkOf(prev->first) == chunkOf(ptr)) {
      start = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  next = free_.lower_bound(ptr);
  if (next != free_.end() && ptr + (size - (ptr - start)) == next->first && chunkOf(next->first) == chunkOf(ptr)) {
    size += next->second;
    free_.erase(next);
  }
  free_[start] = size;
}

PoolStats DevicePool::statsLocked() const {
  PoolStats s = counters_;
  for (const auto& [ptr, size] : free_) s.largestFreeBytes = std::max(s.largestFreeBytes, size);
  return s;
}

PoolStats DevicePool::stats() const {
  std::lock_guard lock(mutex_);
  return statsLocked();
}

exec::RuntimeStat DevicePool::describeLocked() const {
  const PoolStats s = statsLocked();
  char fragmentation[32];
  std::snprintf(fragmentation, sizeof fragmentation, "%.1f", 100.0 * s.fragmentation());
  return {QT_TRANSLATE_NOOP("cas::RuntimeStats", "pool"),
          QT_TRANSLATE_NOOP("cas::RuntimeStats", "reserved %1 in %2 chunk(s), in use %3, peak %4, fragmentation %5%, %6 allocations, %7 releases"),
          {formatBytes(s.reservedBytes), std::to_string(s.deviceAllocations), formatBytes(s.inUseBytes), formatBytes(s.peakInUseBytes),
           fragmentation, std::to_string(s.allocations), std::to_string(s.releases)}};
}

exec::RuntimeStat DevicePool::describe() const {
  std::lock_guard lock(mutex_);
  return describeLocked();
}

}  // namespace cas::gpu
