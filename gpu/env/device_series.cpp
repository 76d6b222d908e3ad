#include "gpu/env/device_series.hpp"

#include <stdexcept>

#include "core/env/trading.hpp"
#include "gpu/cuda_check.hpp"

namespace cas::gpu::env {

DeviceSeries::DeviceSeries(const cas::env::EnvironmentData& data, std::shared_ptr<DeviceRuntime> runtime) : rt_(std::move(runtime)) {
  // The catalogue's one trading environment trades stocks-v0's window, the device rows' width.
  const cas::env::TradingSetup setup = cas::env::stocksSetup(data);
  static_assert(2 * cas::env::TradingSetup{}.window == cas::env::TradingRules::kObservationSize);
  const std::shared_ptr<const cas::env::PriceSeries> part = cas::env::tradingPart(data, setup);
  std::vector<float> prices, diffs;
  view_ = cas::env::tradingView(*part, setup, prices, diffs);
  ContextScope scope(rt_->context);
  const std::uint64_t bytes = prices.size() * sizeof(float);
  try {
    prices_ = rt_->pool.allocate(bytes, "price series");
    diffs_ = rt_->pool.allocate(bytes, "price series diffs");
    CAS_CU(cuMemcpyHtoD(prices_, prices.data(), bytes));
    CAS_CU(cuMemcpyHtoD(diffs_, diffs.data(), bytes));
  } catch (...) {
    if (prices_) rt_->pool.release(prices_);
    if (diffs_) rt_->pool.release(diffs_);
    throw;
  }
  view_.prices = reinterpret_cast<const float*>(prices_);
  view_.diffs = reinterpret_cast<const float*>(diffs_);
}

DeviceSeries::~DeviceSeries() {
  ContextScope scope(rt_->context);
  rt_->pool.release(prices_);
  rt_->pool.release(diffs_);
}

}  // namespace cas::gpu::env
