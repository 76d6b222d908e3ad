#include "gpu/kernel_cache.hpp"

#include <cstdlib>

#include "core/support/atomic_file.hpp"
#include "core/support/binary_io.hpp"
#include "gpu/nvrtc_compiler.hpp"

namespace cas::gpu {
namespace {

constexpr std::uint32_t kMagic = 0x4B534143;  // "CASK"
constexpr std::uint32_t kFormat = 1;

std::uint64_t fnv1a(std::string_view data) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string hex(std::uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[size_t(i)] = digits[v & 15];
  return s;
}

}  // namespace

std::filesystem::path KernelCache::defaultFolder() {
  if (const char* env = std::getenv("CAS_KERNEL_CACHE"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "cuda-agent" / "kernels";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "cuda-agent" / "kernels";
  return {};
}

KernelCache::KernelCache(std::filesystem::path folder) : folder_(std::move(folder)) {}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::vector<char> KernelCache::cubin(const std::string& source, const std::string& name, int arch,
                                     const std::vector<std::string>& options, CacheOutcome* outcome) {
  std::string key = "nvrtc " + nvrtcVersionText() + "\nsm_" + std::to_string(arch) + "\n";
  for (const std::string& o : options) key += o + "\n";
  key += source;
  const std::filesystem::path file = folder_.empty() ? std::filesystem::path() : folder_ / (hex(fnv1a(key)) + ".cubin");

  bool existed = false;
  if (!file.empty()) {
    if (auto bytes = readFile(file, kKernelCacheFileLimit)) {
      existed = true;
      Reader r(*bytes);
      const auto magic = r.pod<std::uint32_t>();
      const auto format = r.pod<std::uint32_t>();
      const std::string storedKey = r.string(1u << 30);
      const std::string body = r.string(1u << 30);
      const auto checksum = r.pod<std::uint64_t>();
      if (r.ok() && r.atEnd() && magic == kMagic && format == kFormat && storedKey == key && checksum == fnv1a(storedKey + body)) {
        std::lock_guard lock(mutex_);
        ++stats_.hits;
        if (outcome) *outcome = CacheOutcome::Hit;
        return std::vector<char>(body.begin(), body.end());
      }
    }
  }
  CompiledKernel compiled = compileToCubin(source, name, arch, options);
  {
    std::lock_guard lock(mutex_);
    ++(existed ? stats_.rebuilt : stats_.compiled);
    stats_.compileMs += compiled.compileMs;
  }
  if (outcome) *outcome = existed ? CacheOutcome::Rebuilt : CacheOutcome::Compiled;
  if (!file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
    const std::string body(compiled.cubin.begin(), compiled.cubin.end());
    Writer w;
    w.pod(kMagic);
    w.pod(kFormat);
    w.string(key);
    w.string(body);
    w.pod(fnv1a(key + body));
    writeFileAtomic(file, w.bytes());  // a cache that cannot be written is only slower
  }
  return std::move(compiled.cubin);
}

}  // namespace cas::gpu
