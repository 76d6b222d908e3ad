#pragma once
// The one backend interface. The CPU reference backend (cpu_backend.cpp) is always present; the
// CUDA backend is another implementation living in a run-time plugin built from gpu/, found by
// plugin_loader.cpp, so that no executable links a CUDA library and both start without a driver.
// Thread-safety: a Backend is driven from one thread at a time (the engine thread); the
// registry's discovery runs once, guarded, and its results are immutable afterwards.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/exec/device_services.hpp"
#include "core/exec/kernel_report.hpp"
#include "core/exec/runtime_stat.hpp"
#include "core/ir/graph.hpp"

namespace cas::exec {

// Bumped whenever the Backend class layout changes, so a stale plugin is refused, not crashed.
inline constexpr int kBackendPluginAbi = 12;

struct ProbeReport {
  bool passed = false;
  std::string summary;  // one sentence: what ran and what came out
  double compileMs = 0;
  double runMs = 0;
};

class ThreadPool;

// A graph compiled for one backend. It owns storage for every input of the graph (parameters
// and optimizer state stay resident between runs); after each run, every (output, input) pair in
// the graph's `updates` list copies the output's value into that input, which is how a training
// step updates its parameters in place.
class Executable {
 public:
  virtual ~Executable() = default;
  virtual const ir::Graph& graph() const = 0;
  // Copy values in or out by input (output) name; count must equal its element count. Checked
  // here for every backend, before the backend's copy runs: std::invalid_argument naming the
  // input (output) otherwise, and std::logic_error for an output read before the first run.
  void setInput(const std::string& name, const float* data, std::size_t count);
  void readInput(const std::string& name, float* data, std::size_t count) const;
  void readOutput(const std::string& name, float* data, std::size_t count) const;
  virtual void run() = 0;  // throws NonFiniteError when checking is on and a node made NaN/Inf
  // Runs as run() does, and hands each output named in `outputs` to `ready` (its index in
  // `outputs`, its values, their count) as soon as its value is final, on this thread, before
  // returning: data-parallel training starts a gradient bucket's all-reduce while the rest of the
  // backward pass still runs. The order is the program's, the same on every run of it; the values
  // are valid during the call only. An exception from `ready` ends the run. The default (a
  // device's queued work) runs, then hands the outputs over in the order given. Names are checked
  // as readOutput checks them, before anything runs.
  using HandOver = std::function<void(std::size_t index, const float* values, std::size_t count)>;
  void runHandingOver(const std::vector<std::string>& outputs, const HandOver& ready);
  // Check every node's result for NaN/Inf (slower; names the first node that produced one).
  virtual void setFiniteCheck(bool on) = 0;
  // Waits until the work that run() queued has finished (readOutput waits by itself).
  virtual void finish() {}
  // Copies `source`'s input `sourceInput` into this program's input `name` (the same element
  // count; std::invalid_argument otherwise): new weights from the training program to the
  // inference program. On a device the copy stays there, ordered after `source`'s queued runs
  // and before this program's next run.
  void copyInputFrom(const std::string& name, const Executable& source, const std::string& sourceInput);
  // The seconds the device spent in this program's runs so far, measured there (CUDA events);
  // nullopt where runs are not timed apart from the host (the CPU backend: time them there).
  // Waits for the runs queued so far.
  virtual std::optional<double> deviceSeconds() const { return std::nullopt; }
  // Times each kernel over `runs` runs (outside any captured graph). Empty when the backend
  // has no kernels to report (the CPU backend interprets the graph node by node).
  virtual std::vector<KernelReport> profileKernels(int runs) { (void)runs; return {}; }
  // Lines about the compiled program: memory pool, kernel cache, graph capture.
  virtual std::vector<RuntimeStat> runtimeStats() const { return {}; }

 protected:
  // The backend's copies, given the checked node (an Input node of graph(), or the node an
  // output names) and its element count; doReadOutput only after a run (hasRun).
  virtual void doSetInput(ir::NodeId input, const float* data, std::size_t count) = 0;
  virtual void doReadInput(ir::NodeId input, float* data, std::size_t count) const = 0;
  virtual void doReadOutput(ir::NodeId output, float* data, std::size_t count) const = 0;
  // runHandingOver's run, given the checked output nodes.
  virtual void doRunHandingOver(const std::vector<ir::NodeId>& outputs, const HandOver& ready);
  // copyInputFrom's copy, given both checked nodes; the default goes through host memory.
  virtual void doCopyInputFrom(ir::NodeId input, const Executable& source, ir::NodeId sourceInput, std::size_t count);
  // Whether the outputs hold a run's results (readOutput refuses with std::logic_error before).
  virtual bool hasRun() const = 0;
};

struct NonFiniteError : std::runtime_error {
  using std::runtime_error::runtime_error;
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
  // Compiles a graph (after the IR passes) for this backend.
  virtual std::unique_ptr<Executable> compile(const ir::Graph& graph) = 0;
  // What the backend's device adds (search, replay store, environments, rollout, ranks on
  // devices: device_services.hpp); null when it has no device (the CPU reference backend).
  virtual DeviceServices* deviceServices() { return nullptr; }
};

struct BackendEntry {
  std::string id;     // "cpu", "cuda"
  std::string title;  // "CPU reference backend", "CUDA backend"
  std::shared_ptr<Backend> backend;  // null when unavailable
  std::string unavailableReason;     // set when backend is null
  bool available() const { return backend != nullptr; }
};

// Which backend a device choice ("auto", "cpu" or "cuda") gets, and why the CUDA backend is not
// the one, when it is not: the facts behind every backend status sentence.
struct BackendStatus {
  std::shared_ptr<Backend> backend;  // null when the choice cannot be met
  std::string refusal;               // when backend is null: why (select's error)
  std::string cudaUnavailable;       // why the CUDA backend did not load; empty when it did
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
  // The backend `device` gets and why CUDA is not used, when it is not.
  BackendStatus status(std::string_view device) const;
  // status(device) as an English sentence, for the CLI (the studio's words, translated, are
  // widgets/metrics/backend_status.hpp's).
  std::string statusLine(std::string_view device = "auto") const;

 private:
  BackendRegistry();
  std::vector<BackendEntry> entries_;
};

std::shared_ptr<Backend> makeCpuBackend();

// Loads the CUDA backend plugin. On failure returns null and a reason a user can act on.
std::shared_ptr<Backend> loadCudaPlugin(std::string* reason);

}  // namespace cas::exec
