#include "gpu/env/device_environments.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/env/device_series.hpp"
#include "gpu/env/environment_launch.hpp"
#include "gpu/event_timer.hpp"

namespace cas::gpu::env {
namespace {

class DeviceEnvironments final : public cas::env::VectorEnvironments {
 public:
  DeviceEnvironments(const EnvironmentKernels& kernels, int count, std::uint64_t seed, const cas::env::EnvironmentData& data,
                     std::shared_ptr<DeviceRuntime> runtime)
      : k_(kernels), count_(count), rt_(std::move(runtime)) {
    if (k_.needsSeries) series_ = std::make_unique<DeviceSeries>(data, rt_);
    ContextScope scope(rt_->context);
    const auto n = std::uint64_t(count);
    try {
      states_ = take(n * k_.stateBytes, "environment states");
      observations_ = take(n * std::uint64_t(k_.observationSize) * sizeof(float), "environment observations");
      actions_ = take(n * sizeof(std::int32_t), "environment actions");
      rewards_ = take(n * sizeof(float), "environment rewards");
      ends_ = take(2 * n, "environment episode ends");
      // step()'s host side goes through page-locked memory: copies that are truly asynchronous,
      // ordered on the stream like the kernels.
      CAS_CU(cuMemHostAlloc(reinterpret_cast<void**>(&staging_), stagingBytes(), 0));
      k_.init(reinterpret_cast<void*>(states_), count_, seed, series_ ? &series_->view() : nullptr, rt_->compute);
      CAS_CU(cuStreamSynchronize(rt_->compute));
    } catch (...) {
      release();
      throw;
    }
  }
  ~DeviceEnvironments() override {
    ContextScope scope(rt_->context);
    cuStreamSynchronize(rt_->compute);
    release();
  }
  DeviceEnvironments(const DeviceEnvironments&) = delete;
  DeviceEnvironments& operator=(const DeviceEnvironments&) = delete;

  int size() const override { return count_; }
  int observationSize() const override { return k_.observationSize; }
  int actionCount() const override { return k_.actionCount; }

  void step(const int* actions, float* rewards, std::uint8_t* terminated, std::uint8_t* truncated) override {
    ContextScope scope(rt_->context);
    const auto n = std::uint64_t(count_);
    static_assert(sizeof(int) == sizeof(std::int32_t));
    // staging_: actions [n] int32 | rewards [n] float | terminated [n] | truncated [n]
    std::memcpy(staging_, actions, n * sizeof(std::int32_t));
    std::uint8_t* stagedRewards = staging_ + n * sizeof(std::int32_t);
    std::uint8_t* stagedEnds = stagedRewards + n * sizeof(float);
    CAS_CU(cuMemcpyHtoDAsync(actions_, staging_, n * sizeof(std::int32_t), rt_->compute));
    auto* ends = reinterpret_cast<std::uint8_t*>(ends_);
    k_.step(reinterpret_cast<void*>(states_), reinterpret_cast<const std::int32_t*>(actions_), reinterpret_cast<float*>(rewards_), ends,
            ends + n, count_, rt_->compute);
    CAS_CU(cuMemcpyDtoHAsync(stagedRewards, rewards_, n * sizeof(float), rt_->compute));
    CAS_CU(cuMemcpyDtoHAsync(stagedEnds, ends_, 2 * n, rt_->compute));
    CAS_CU(cuStreamSynchronize(rt_->compute));
    std::memcpy(rewards, stagedRewards, n * sizeof(float));
    std::memcpy(terminated, stagedEnds, n);
    std::memcpy(truncated, stagedEnds + n, n);
  }

  void observe(float* observations) override {
    ContextScope scope(rt_->context);
    k_.observe(reinterpret_cast<const void*>(states_), reinterpret_cast<float*>(observations_), count_, rt_->compute);
    CAS_CU(cuMemcpyDtoHAsync(observations, observations_, std::uint64_t(count_) * std::uint64_t(k_.observationSize) * sizeof(float),
                             rt_->compute));
    CAS_CU(cuStreamSynchronize(rt_->compute));
  }

  RandomRun stepRandomly(int steps, std::uint64_t actionSeed) override {
    ContextScope scope(rt_->context);
    const auto n = std::uint64_t(count_);
    // The totals and the action generators live only for this run.
    const CUdeviceptr random = rt_->pool.allocate(n * sizeof(cas::env::GameRandom), "random actions");
    const CUdeviceptr totals = rt_->pool.allocate(n * (sizeof(float) + sizeof(std::int32_t)), "random-run totals");
    RandomRun run;
    try {
      CAS_CU(cuMemsetD8Async(totals, 0, n * (sizeof(float) + sizeof(std::int32_t)), rt_->compute));
      launchSeedActions(reinterpret_cast<cas::env::GameRandom*>(random), count_, actionSeed, rt_->compute);
      const RandomTotals sums{reinterpret_cast<float*>(totals), reinterpret_cast<std::int32_t*>(totals + n * sizeof(float))};
      EventTimer timer;
      timer.begin(rt_->compute);
      for (int s = 0; s < steps; ++s)
        k_.stepRandomly(reinterpret_cast<void*>(states_), reinterpret_cast<cas::env::GameRandom*>(random),
                        reinterpret_cast<float*>(observations_), sums, count_, rt_->compute);
      timer.end(rt_->compute);
      run.seconds = timer.seconds();
      std::vector<float> reward(n);
      std::vector<std::int32_t> episodes(n);
      CAS_CU(cuMemcpyDtoH(reward.data(), totals, n * sizeof(float)));
      CAS_CU(cuMemcpyDtoH(episodes.data(), totals + n * sizeof(float), n * sizeof(std::int32_t)));
      for (std::uint64_t g = 0; g < n; ++g) {
        run.reward += reward[g];
        run.episodes += episodes[g];
      }
    } catch (...) {
      rt_->pool.release(random);
      rt_->pool.release(totals);
      throw;
    }
    rt_->pool.release(random);
    rt_->pool.release(totals);
    return run;
  }

 private:
  CUdeviceptr take(std::uint64_t bytes, const char* what) {
    const CUdeviceptr p = rt_->pool.allocate(std::max<std::uint64_t>(bytes, 4), what);
    owned_.push_back(p);
    return p;
  }
  std::uint64_t stagingBytes() const { return std::uint64_t(count_) * (sizeof(std::int32_t) + sizeof(float) + 2); }
  void release() {
    for (CUdeviceptr p : owned_) rt_->pool.release(p);
    owned_.clear();
    if (staging_) cuMemFreeHost(staging_);
    staging_ = nullptr;
  }

  const EnvironmentKernels& k_;
  int count_;
  std::shared_ptr<DeviceRuntime> rt_;
  CUdeviceptr states_ = 0, observations_ = 0, actions_ = 0, rewards_ = 0, ends_ = 0;
  std::uint8_t* staging_ = nullptr;  // page-locked
  std::vector<CUdeviceptr> owned_;
  std::unique_ptr<DeviceSeries> series_;  // a trading environment's, released after the states
};

}  // namespace

std::unique_ptr<cas::env::VectorEnvironments> makeDeviceEnvironments(std::string_view environment, int count, std::uint64_t seed,
                                                                     const cas::env::EnvironmentData& data,
                                                                     std::shared_ptr<DeviceRuntime> runtime, std::string* reason) {
  const EnvironmentKernels* kernels = findEnvironmentKernels(environment);
  if (!kernels) {
    if (reason) *reason = "the environment '" + std::string(environment) + "' has no device twin";
    return nullptr;
  }
  if (count < 1) {
    if (reason) *reason = "at least one environment copy is needed";
    return nullptr;
  }
  try {
    return std::make_unique<DeviceEnvironments>(*kernels, count, seed, data, std::move(runtime));
  } catch (const std::exception& e) {
    if (reason) *reason = e.what();
    return nullptr;
  }
}

}  // namespace cas::gpu::env
