#include "gpu/env/device_rollout.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_program.hpp"
#include "gpu/env/device_series.hpp"
#include "gpu/env/environment_launch.hpp"
#include "gpu/env/rollout_launch.hpp"

namespace cas::gpu::env {
namespace {

class DeviceRollout final : public cas::train::Rollout {
 public:
  DeviceRollout(const cas::train::RolloutSetup& setup, const EnvironmentKernels& kernels, DeviceProgram& inference, DeviceProgram& update,
                std::shared_ptr<DeviceRuntime> runtime)
      : k_(kernels),
        inference_(inference),
        update_(update),
        rt_(std::move(runtime)),
        n_(setup.envs),
        t_(setup.steps),
        minibatch_(setup.minibatch) {
    if (k_.needsSeries) series_ = std::make_unique<DeviceSeries>(setup.data, rt_);
    ContextScope scope(rt_->context);
    const auto n = std::uint64_t(n_), rows = n * std::uint64_t(t_), obs = std::uint64_t(k_.observationSize);
    try {
      states_ = take(n * k_.stateBytes, "PPO environment states");
      random_ = take(n * sizeof(cas::env::GameRandom), "PPO action generators");
      a_.obs = floats(rows * obs, "PPO rollout observations");
      for (float** p : {&a_.actions, &a_.logProbs, &a_.values, &a_.rewards, &a_.dones, &a_.advantages, &a_.returns})
        *p = floats(rows, "PPO rollout");
      a_.lastValues = floats(n, "PPO last values");
      truncated_ = take(n, "PPO truncations");
      finalObs_ = k_.canTruncate ? floats(n * obs, "PPO final observations") : nullptr;
      for (double** p : {&episodeReturn_, &episodeLength_, &endedCount_, &endedReturn_, &endedLength_})
        *p = reinterpret_cast<double*>(take(n * sizeof(double), "PPO episode sums"));
      slices_ = int(rows / std::uint64_t(minibatch_));
      rowsOnDevice_ = take(rows * sizeof(std::int64_t), "PPO minibatch rows");
      CAS_CU(cuMemHostAlloc(reinterpret_cast<void**>(&rowsStaged_), rows * sizeof(std::int64_t), 0));
      sliceDone_.assign(size_t(slices_), nullptr);
      for (CUevent& e : sliceDone_) CAS_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
      CAS_CU(cuEventCreate(&rolloutWritten_, CU_EVENT_DISABLE_TIMING));
      CAS_CU(cuEventCreate(&gathersDone_, CU_EVENT_DISABLE_TIMING));
      CUstream s = inference_.stream();
      k_.init(reinterpret_cast<void*>(states_), int(n_), setup.environmentSeed, series_ ? &series_->view() : nullptr, s);
      CAS_CU(cuMemcpyHtoDAsync(random_, setup.actionRandom.data(), n * sizeof(cas::env::GameRandom), s));
      for (double* p : {episodeReturn_, episodeLength_, endedCount_, endedReturn_, endedLength_})
        CAS_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p), 0, n * sizeof(double), s));
      // Rows of copies not cut go through the policy too (their values are not used): zeros, not
      // whatever the pool held.
      if (finalObs_) CAS_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(finalObs_), 0, n * obs * sizeof(float), s));
      CAS_CU(cuStreamSynchronize(s));  // setup.actionRandom is the caller's
    } catch (...) {
      release();
      throw;
    }
  }
  ~DeviceRollout() override {
    ContextScope scope(rt_->context);
    cuStreamSynchronize(inference_.stream());
    cuStreamSynchronize(update_.stream());
    release();
  }
  DeviceRollout(const DeviceRollout&) = delete;
  DeviceRollout& operator=(const DeviceRollout&) = delete;

  cas::train::RolloutEpisodes collect(double gamma) override {
    ContextScope scope(rt_->context);
    CUstream s = inference_.stream();
    // The last update's gathers read the arrays this rollout overwrites.
    CAS_CU(cuEventRecord(gathersDone_, update_.stream()));
    CAS_CU(cuStreamWaitEvent(s, gathersDone_, 0));
    const std::uint64_t obs = std::uint64_t(k_.observationSize), rowBytes = std::uint64_t(n_) * obs * sizeof(float);
    const CUdeviceptr input = inference_.inputAddress("obs");
    const auto* logits = reinterpret_cast<const float*>(inference_.outputAddress("logits"));
    const auto* values = reinterpret_cast<const float*>(inference_.outputAddress("value"));
    for (std::int64_t t = 0; t < t_; ++t) {
      const std::int64_t row = t * n_;
      float* rowObs = a_.obs + std::uint64_t(row) * obs;
      k_.observe(reinterpret_cast<const void*>(states_), rowObs, int(n_), s);
      CAS_CU(cuMemcpyDtoDAsync(input, reinterpret_cast<CUdeviceptr>(rowObs), rowBytes, s));
      inference_.markWrittenOnDevice("obs");
      inference_.run();
      RolloutStepArrays step{logits,          values,           a_.actions + row, a_.logProbs + row,
                             a_.values + row, a_.rewards + row, a_.dones + row,   reinterpret_cast<std::uint8_t*>(truncated_),
                             finalObs_,       episodeReturn_,   episodeLength_,   endedCount_,
                             endedReturn_,    endedLength_};
      k_.rolloutStep(reinterpret_cast<void*>(states_), reinterpret_cast<cas::env::GameRandom*>(random_), step, int(n_), s);
      if (k_.canTruncate) {  // the cut episodes' last states through the policy (the others' rows are not used)
        CAS_CU(cuMemcpyDtoDAsync(input, reinterpret_cast<CUdeviceptr>(finalObs_), rowBytes, s));
        inference_.markWrittenOnDevice("obs");
        inference_.run();
        launchBootstrap(a_.rewards + row, reinterpret_cast<const std::uint8_t*>(truncated_), values, gamma, int(n_), s);
      }
    }
    k_.observe(reinterpret_cast<const void*>(states_), reinterpret_cast<float*>(input), int(n_), s);
    inference_.markWrittenOnDevice("obs");
    inference_.run();
    CAS_CU(cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(a_.lastValues), reinterpret_cast<CUdeviceptr>(values),
                             std::uint64_t(n_) * sizeof(float), s));

    const auto n = size_t(n_);
    std::vector<double> ended(3 * n);
    CAS_CU(cuMemcpyDtoHAsync(ended.data(), reinterpret_cast<CUdeviceptr>(endedCount_), n * sizeof(double), s));
    CAS_CU(cuMemcpyDtoHAsync(ended.data() + n, reinterpret_cast<CUdeviceptr>(endedReturn_), n * sizeof(double), s));
    CAS_CU(cuMemcpyDtoHAsync(ended.data() + 2 * n, reinterpret_cast<CUdeviceptr>(endedLength_), n * sizeof(double), s));
    for (double* p : {endedCount_, endedReturn_, endedLength_})
      CAS_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p), 0, n * sizeof(double), s));
    CAS_CU(cuStreamSynchronize(s));
    cas::train::RolloutEpisodes out;
    for (size_t e = 0; e < n; ++e) {
      out.episodes += std::int64_t(ended[e]);
      out.returnSum += ended[n + e];
      out.lengthSum += ended[2 * n + e];
    }
    return out;
  }

  void estimateAdvantages(double gamma, double lambda) override {
    ContextScope scope(rt_->context);
    launchGae(a_, t_, n_, gamma, lambda, inference_.stream());
    CAS_CU(cuEventRecord(rolloutWritten_, inference_.stream()));
    CAS_CU(cuStreamWaitEvent(update_.stream(), rolloutWritten_, 0));
    slice_ = 0;
  }

  void gather(const std::int64_t* rows) override {
    ContextScope scope(rt_->context);
    CUstream s = update_.stream();
    // Each minibatch of an epoch has its own slice of the staged rows; a slice is written again
    // (next epoch) only after its last gather has run.
    const int k = slice_;
    slice_ = (slice_ + 1) % slices_;
    if (sliceUsed_) CAS_CU(cuEventSynchronize(sliceDone_[size_t(k)]));
    std::int64_t* staged = rowsStaged_ + std::int64_t(k) * minibatch_;
    std::memcpy(staged, rows, std::uint64_t(minibatch_) * sizeof(std::int64_t));
    const CUdeviceptr onDevice = rowsOnDevice_ + std::uint64_t(k) * std::uint64_t(minibatch_) * sizeof(std::int64_t);
    CAS_CU(cuMemcpyHtoDAsync(onDevice, staged, std::uint64_t(minibatch_) * sizeof(std::int64_t), s));
    const MinibatchInputs out{address("obs"),        address("actions"),    address("old_log_probs"),
                              address("old_values"), address("advantages"), address("returns")};
    launchGather(a_, reinterpret_cast<const std::int64_t*>(onDevice), minibatch_, k_.observationSize, out, s);
    CAS_CU(cuEventRecord(sliceDone_[size_t(k)], s));
    if (slice_ == 0) sliceUsed_ = true;
    for (const char* input : {"obs", "actions", "old_log_probs", "old_values", "advantages", "returns"}) update_.markWrittenOnDevice(input);
  }

  cas::train::RolloutArrays read() const override {
    ContextScope scope(rt_->context);
    CAS_CU(cuStreamSynchronize(inference_.stream()));
    CAS_CU(cuStreamSynchronize(update_.stream()));
    const auto rows = size_t(n_ * t_);
    cas::train::RolloutArrays out;
    auto copy = [](std::vector<float>& to, const float* from, size_t count) {
      to.resize(count);
      CAS_CU(cuMemcpyDtoH(to.data(), reinterpret_cast<CUdeviceptr>(from), count * sizeof(float)));
    };
    copy(out.obs, a_.obs, rows * size_t(k_.observationSize));
    copy(out.actions, a_.actions, rows);
    copy(out.logProbs, a_.logProbs, rows);
    copy(out.values, a_.values, rows);
    copy(out.rewards, a_.rewards, rows);
    copy(out.dones, a_.dones, rows);
    copy(out.advantages, a_.advantages, rows);
    copy(out.returns, a_.returns, rows);
    copy(out.lastValues, a_.lastValues, size_t(n_));
    return out;
  }

 private:
  CUdeviceptr take(std::uint64_t bytes, const char* what) {
    const CUdeviceptr p = rt_->pool.allocate(std::max<std::uint64_t>(bytes, 8), what);
    owned_.push_back(p);
    return p;
  }
  float* floats(std::uint64_t count, const char* what) { return reinterpret_cast<float*>(take(count * sizeof(float), what)); }
  float* address(const char* input) { return reinterpret_cast<float*>(update_.inputAddress(input)); }
  void release() {
    for (CUevent e : sliceDone_)
      if (e) cuEventDestroy(e);
    sliceDone_.clear();
    for (CUevent* e : {&rolloutWritten_, &gathersDone_})
      if (*e) cuEventDestroy(*e), *e = nullptr;
    if (rowsStaged_) cuMemFreeHost(rowsStaged_);
    rowsStaged_ = nullptr;
    for (CUdeviceptr p : owned_) rt_->pool.release(p);
    owned_.clear();
  }

  const EnvironmentKernels& k_;
  DeviceProgram& inference_;
  DeviceProgram& update_;
  std::shared_ptr<DeviceRuntime> rt_;
  std::int64_t n_, t_, minibatch_;
  CUdeviceptr states_ = 0, random_ = 0, truncated_ = 0, rowsOnDevice_ = 0;
  RolloutArraysOnDevice a_{};
  float* finalObs_ = nullptr;
  double *episodeReturn_ = nullptr, *episodeLength_ = nullptr, *endedCount_ = nullptr, *endedReturn_ = nullptr, *endedLength_ = nullptr;
  std::int64_t* rowsStaged_ = nullptr;  // page-locked, one slice per minibatch of an epoch
  int slices_ = 0, slice_ = 0;
  bool sliceUsed_ = false;  // every slice has been gathered from once (its event is recorded)
  std::vector<CUevent> sliceDone_;
  CUevent rolloutWritten_ = nullptr, gathersDone_ = nullptr;
  std::vector<CUdeviceptr> owned_;
  std::unique_ptr<DeviceSeries> series_;  // a trading environment's, released after the states
};

}  // namespace

std::unique_ptr<cas::train::Rollout> makeDeviceRollout(const cas::train::RolloutSetup& setup, std::shared_ptr<DeviceRuntime> runtime,
                                                       std::string* reason) {
  const EnvironmentKernels* kernels = findEnvironmentKernels(setup.environment);
  if (!kernels) {
    if (reason) *reason = "the environment '" + setup.environment + "' has no device twin";
    return nullptr;
  }
  auto* inference = dynamic_cast<DeviceProgram*>(setup.inference);
  auto* update = dynamic_cast<DeviceProgram*>(setup.update);
  if (!inference || !update || inference->runtime() != runtime || update->runtime() != runtime) {
    if (reason) *reason = "the rollout's programs were not compiled by this CUDA backend";
    return nullptr;
  }
  if (setup.envs < 1 || setup.steps < 1 || setup.minibatch < 1 || (setup.envs * setup.steps) % setup.minibatch != 0 ||
      setup.actionRandom.size() != size_t(setup.envs)) {
    if (reason) *reason = "the rollout's sizes do not fit (envs, steps, minibatch, one action generator per copy)";
    return nullptr;
  }
  try {
    return std::make_unique<DeviceRollout>(setup, *kernels, *inference, *update, std::move(runtime));
  } catch (const std::exception& e) {
    if (reason) *reason = e.what();
    return nullptr;
  }
}

}  // namespace cas::gpu::env
