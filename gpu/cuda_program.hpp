#pragma once
// A graph compiled for the CUDA backend: the schedule from render.hpp, turned into one NVRTC
// module (all generated kernels of the graph), cuBLAS and cuDNN calls and fills, recorded once
// into a CUDA graph on the compute stream and replayed by every run().
//
//   setInput ─► pinned staging ─(data stream, only what changed)─► device inputs
//   run      ─► cuGraphLaunch on the compute stream (fills, kernels, GEMMs, convolutions, copies)
//   readOutput ─► waits for the compute stream, copies one buffer back
//
// Inputs that an update writes (parameters, optimizer state) live only on the device; the rest
// (observations, targets, optimizer scalars) are staged in pinned memory so run() can upload
// them asynchronously. All device buffers come from the runtime's pool at compile time.
// Thread-safety: one thread at a time, as every Executable.
#include <memory>

#include "core/exec/backend.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu {

// A compiled program as the plugin's own kernels see it (the device search writes observations
// into its input and reads its outputs, and records its work into the search's graphs).
class DeviceProgram : public exec::Executable {
 public:
  virtual CUdeviceptr inputAddress(const std::string& name) const = 0;
  virtual CUdeviceptr outputAddress(const std::string& name) const = 0;
  // Uploads what setInput staged (parameters after a training step) on the compute stream.
  virtual void flushInputs() = 0;
  // Queues the program's steps one by one on the runtime's compute stream, which is capturing
  // the caller's graph (a graph launch cannot be captured into another graph).
  virtual void recordOnCompute() = 0;
  virtual const std::shared_ptr<DeviceRuntime>& runtime() const = 0;
};

std::unique_ptr<exec::Executable> compileForCuda(const ir::Graph& graph, std::shared_ptr<DeviceRuntime> runtime);

}  // namespace cas::gpu
