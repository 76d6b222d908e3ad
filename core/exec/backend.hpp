#pragma once
// The one backend interface. The CPU reference backend (cpu_backend.cpp) is always present; the
// CUDA backend is another implementation living in a run-time plugin built from gpu/, found by
// plugin_loader.cpp, so that no executable links a CUDA library and both start without a driver.
// Thread-safety: a Backend is driven from one thread at a time (the engine thread); the
// registry's discovery runs once, guarded, and its results are immutable afterwards.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cas::exec {

// Bumped whenever the Backend class layout changes, so a stale plugin is refused, not crashed.
inline constexpr int kBackendPluginAbi = 1;

struct ProbeReport {
  bool passed = false;
  std::string summary;  // one sentence: what ran and what came out
  double compileMs = 0;
  double runMs = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string id() const = 0;           // "cpu" or "cuda"
  virtual std::string statusText() const = 0;   // e.g. "CUDA: NVIDIA H200, sm_90, 132 SMs"
  // Name/value lines for `cuda-agent devices`.
  virtual std::vector<std::pair<std::string, std::string>> properties() const = 0;
  // A small self-test (the CUDA backend compiles and runs a kernel with NVRTC); nullopt when the
  // backend has none.
  virtual std::optional<ProbeReport> probe() { return std::nullopt; }
};

struct BackendEntry {
  std::string id;     // "cpu", "cuda"
  std::string title;  // "CPU reference backend", "CUDA backend"
  std::shared_ptr<Backend> backend;  // null when unavailable
  std::string unavailableReason;     // set when backend is null
  bool available() const { return backend != nullptr; }
};

class BackendRegistry {
 public:
  // Discovers the backends on first use (loading the CUDA plugin if there is one).
  static BackendRegistry& instance();

  const std::vector<BackendEntry>& entries() const { return entries_; }
  const BackendEntry* find(std::string_view id) const;

  // device: "auto" (CUDA when available, else CPU), "cpu" or "cuda". Returns null with `error`
  // filled when the requested backend is unavailable.
  std::shared_ptr<Backend> select(std::string_view device, std::string* error) const;

  // The status-bar sentence for `device`: the backend in use, and why CUDA is not, when it is not.
  std::string statusLine(std::string_view device = "auto") const;

 private:
  BackendRegistry();
  std::vector<BackendEntry> entries_;
};

std::shared_ptr<Backend> makeCpuBackend();

// Loads the CUDA backend plugin. On failure returns null and a reason a user can act on.
std::shared_ptr<Backend> loadCudaPlugin(std::string* reason);

}  // namespace cas::exec
