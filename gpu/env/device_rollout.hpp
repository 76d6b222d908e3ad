#pragma once
// train::Rollout on the CUDA backend (core/train/rollout.hpp says what it does):
// the copies' states and generators, the rollout's arrays and the per-copy episode sums in the
// runtime's pool; the inference program's input written and its outputs read in place
// (DeviceProgram's addresses); steps on the inference program's stream, the minibatch gathers on
// the update program's, ordered by events.
// Thread-safety: one thread at a time (the backend's contract).
#include <memory>
#include <string>

#include "core/train/rollout.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu::env {

// Null with `reason` when the environment has no device twin, a program was not compiled by this
// runtime's backend, or the memory cannot be had.
std::unique_ptr<cas::train::Rollout> makeDeviceRollout(const cas::train::RolloutSetup& setup, std::shared_ptr<DeviceRuntime> runtime,
                                                             std::string* reason);

}  // namespace cas::gpu::env
