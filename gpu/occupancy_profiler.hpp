#pragma once
// Achieved occupancy of kernels through CUPTI's range profiler (metric
// sm__warps_active.avg.pct_of_peak_sustained_active): every kernel `launch` starts becomes a range
// of its own (auto range), and CUPTI replays each one until the metric's passes are collected
// (kernel replay, which restores device memory between passes).
// Thread-safety: CUPTI's profiler is process-wide, so measurements are serialised internally;
// the caller's thread must not hold another profiling session.
#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

namespace cas::gpu {

struct OccupancyMeasurement {
  std::vector<double> achieved;  // per launched kernel, in launch order, 0..1
  std::string error;             // why nothing was measured (then `achieved` is empty)
};

// `launch` launches `kernels` kernels on `context` (current on this thread) and returns.
OccupancyMeasurement measureAchievedOccupancy(CUcontext context, CUdevice device, int kernels, const std::function<void()>& launch);

}  // namespace cas::gpu
