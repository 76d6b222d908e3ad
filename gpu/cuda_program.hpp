#pragma once
// A graph compiled for the CUDA backend: the schedule from codegen.hpp, turned into one NVRTC
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

std::unique_ptr<exec::Executable> compileForCuda(const ir::Graph& graph, std::shared_ptr<DeviceRuntime> runtime);

}  // namespace cas::gpu
