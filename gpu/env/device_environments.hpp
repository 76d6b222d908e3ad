#pragma once
// env::VectorEnvironments on the CUDA backend: the copies' states, observations and per-copy
// results in the runtime's memory pool, stepped by environment_kernels.cu on the compute stream.
// Thread-safety: one thread at a time (the backend's contract).
#include <memory>
#include <string>
#include <string_view>

#include "core/env/environments.hpp"
#include "core/env/vector_environments.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu::env {

// Null with `reason` when `environment` has no device twin, `data` lacks what it needs (a trading
// environment's series) or the memory cannot be had.
std::unique_ptr<cas::env::VectorEnvironments> makeDeviceEnvironments(std::string_view environment, int count, std::uint64_t seed,
                                                                     const cas::env::EnvironmentData& data, std::shared_ptr<DeviceRuntime> runtime,
                                                                     std::string* reason);

}  // namespace cas::gpu::env
