#pragma once
// search::DeviceSunburst on the CUDA backend: a game's tree gathered on the device by its search,
// laid out by tree_geometry.cu's kernels into layout arrays from the runtime's pool, and written
// into OpenGL buffers registered with CUDA (cuGraphicsGLRegisterBuffer, once per buffer and size),
// mapped for the write on the compute stream.
// Thread-safety: one thread at a time; it must not outlive the search that made it.
#include <functional>
#include <memory>

#include "core/search/device_sunburst.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu::search {

// `gather(game)` queues the copy of that game's tree into contiguous arrays (gatherTreeKernel's
// layout, `budget` nodes) on the runtime's compute stream and returns where they are.
std::unique_ptr<cas::search::DeviceSunburst> makeDeviceSunburst(std::shared_ptr<DeviceRuntime> runtime, int budget,
                                                                std::function<CUdeviceptr(int game)> gather);

}  // namespace cas::gpu::search
