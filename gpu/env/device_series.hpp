#pragma once
// A trading environment's price series on the device: the training part of the project's series
// (env::tradingPart) as the two float arrays TradingRules reads, prices and diffs [bars] each, in
// the runtime's pool, and the view over them that every device copy holds.
// Thread-safety: one thread at a time (the backend's contract); the arrays are read-only once
// uploaded.
#include <memory>
#include <vector>

#include "core/env/environments.hpp"
#include "core/env/trading_rules.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu::env {

class DeviceSeries {
 public:
  // Uploads the training part of `data`'s series (synchronously); throws std::invalid_argument
  // as the CPU twin does (no series, one too short), or when the series has none to upload.
  DeviceSeries(const cas::env::EnvironmentData& data, std::shared_ptr<DeviceRuntime> runtime);
  ~DeviceSeries();
  DeviceSeries(const DeviceSeries&) = delete;
  DeviceSeries& operator=(const DeviceSeries&) = delete;

  // The view with device pointers, for EnvironmentKernels::init.
  const cas::env::TradingSeriesView& view() const { return view_; }

 private:
  std::shared_ptr<DeviceRuntime> rt_;
  CUdeviceptr prices_ = 0, diffs_ = 0;
  cas::env::TradingSeriesView view_;
};

}  // namespace cas::gpu::env
