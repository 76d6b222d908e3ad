#pragma once
// The policy's forward pass as standalone CUDA: one .cu and one .h that depend on the CUDA
// runtime only (no cuBLAS, no cuDNN, no NVRTC, nothing of ours). The kernels are the CUDA
// backend's own: the forward graph at a fixed batch is planned without vendor libraries
// (ir::ScheduleTarget::vendorLibraries = false), rendered by render.hpp, and written after the
// kernel templates (core/cuda_render/kernels/*.cuh), so the file compiles with `nvcc -arch=sm_90 -c`. The
// host code uploads the weights (static arrays in the .cu) once, captures the whole pass as a
// CUDA graph on a stream of its own and replays it per call:
//
//   policy_cuda_create   cudaMalloc one arena ─► weights up ─► block sizes ─► capture the graph
//   policy_cuda_forward  obs (host or device) ─► arena ─► graph launch ─► outputs (host or device)
//
// Arena: every stored IR value at a 256-byte aligned offset (fills' accumulators, the
// observation, parameters, constants, intermediate values; no reuse: an inference pass is small).
// Step kernels launch with programmatic dependent launch on sm_90 and later, as the backend's do.
// Thread-safety: pure functions; the generated API is one thread (one stream) at a time per
// policy_cuda object, any number of objects at once.
#include <cstdint>
#include <string>

#include "core/export/c_export.hpp"
#include "core/export/exportable_policy.hpp"

namespace cas::gpu {

// `forward` is forwardGraph's form at batch `batch` (its observation input "obs" [batch, ...]).
// Throws exports::ExportError naming the node that has no kernel without vendor libraries.
exports::CSource writeStandaloneCuda(const ir::Graph& forward, const exports::Weights& weights, const exports::ExportMetadata& metadata,
                                     const std::string& headerName);

exports::CSource exportCuda(const exports::ExportablePolicy& policy, std::int64_t batch, const std::string& headerName);

}  // namespace cas::gpu
