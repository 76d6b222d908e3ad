#pragma once
// A graph compiled for the CUDA backend: the schedule from render.hpp, turned into one NVRTC
// module (all generated kernels of the graph), cuBLAS and cuDNN calls and fills, recorded once
// into a CUDA graph on the compute stream and replayed by every run() on the program's stream
// (the compute stream, or the training stream once the device replay store feeds the program).
//
//   setInput ─► pinned staging ─(the program's stream, only the inputs that changed)─► device
//   run      ─► cuGraphLaunch on the program's stream (fills, kernels, GEMMs, convolutions, copies)
//   readOutput ─► waits for the program's stream, copies one buffer back
//   copyInputFrom ─► a device-to-device copy between two programs' streams, ordered both ways
//
// Inputs that an update writes (parameters, optimizer state) live only on the device; the rest
// (observations, targets, optimizer scalars) are staged in pinned memory so run() can upload
// them asynchronously; a staged input that a kernel or a copy wrote on the device is read back
// from there. All device buffers come from the runtime's pool at compile time. A program with
// cuBLAS calls captures them with a cuBLAS workspace of its own, so that two programs' graphs
// can run side by side.
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
  // The stream run() launches on, and a move to another (after the queued work has finished);
  // false, staying, when the program is not a captured graph (its library calls are bound to
  // the compute stream).
  virtual CUstream stream() const = 0;
  virtual bool moveToStream(CUstream s) = 0;
  // A staged input written on the device by the caller's kernel: reads come from the device
  // until the next setInput.
  virtual void markWrittenOnDevice(const std::string& input) = 0;
};

std::unique_ptr<exec::Executable> compileForCuda(const ir::Graph& graph, std::shared_ptr<DeviceRuntime> runtime);

}  // namespace cas::gpu
