#pragma once
// The replay store in device memory (search::ReplayStore; its header draws the layout and the
// sampling), which exec::DeviceServices::createReplayStore hands out on the CUDA backend:
//
//   ring              [capacity] rows      training's batches are gathered from it on the device
//   fresh regions     2 x [freshCapacity]  self-play writes one (the device search's
//                                          recordAndPlay, or add() from the host) while the other
//                                          is committed into the ring on the sync stream
//   symmetry tables   the game's symmetries as gathers, probed from the CPU game's applySymmetry
//
// Streams: self-play's writes are on the compute stream; commit() runs on the sync stream after
// them; sample() queues on the training program's stream (moving the program to the runtime's
// training stream on first use) after the last commit. So training reads the ring while
// self-play fills a fresh region, side by side, and nothing is copied to the host but the ring
// for a checkpoint. The CPU store (core/train/replay_buffer.hpp) is the spec:
// tests/gpu/test_device_replay.cpp compares the two.
// Thread-safety: driven by one thread, as every ReplayStore.
#include <memory>
#include <string>

#include "core/search/replay_store.hpp"
#include "gpu/device_runtime.hpp"
#include "gpu/event_timer.hpp"
#include "gpu/search/replay_launch.hpp"

namespace cas::gpu {

class DeviceReplay final : public cas::search::ReplayStore {
 public:
  // Throws DeviceOutOfMemory naming the parameter to reduce, std::invalid_argument for a game
  // whose symmetries are not permutations.
  DeviceReplay(const cas::search::ReplaySetup& setup, std::shared_ptr<DeviceRuntime> runtime);
  ~DeviceReplay() override;
  DeviceReplay(const DeviceReplay&) = delete;
  DeviceReplay& operator=(const DeviceReplay&) = delete;

  std::string device() const override { return "cuda"; }
  const cas::search::ReplaySetup& setup() const override { return setup_; }
  std::int64_t size() const override { return size_; }
  std::int64_t fresh() const override { return fresh_; }
  void add(const float* observation, const float* policy, float value) override;
  void commit() override;
  void sample(std::int64_t batch, std::uint64_t seed, exec::Executable& training) override;
  cas::search::ReplayRing ring() const override;
  void load(cas::search::ReplayRing ring) override;
  double dataSeconds() const override;

  // For the device search's self-play (the same runtime): the fresh region it writes now, from
  // its first unwritten row; then how many rows it wrote, and the timer its kernels report to.
  const std::shared_ptr<DeviceRuntime>& runtime() const { return rt_; }
  search::FreshRegion freshRegion() const;
  void addedOnDevice(std::int64_t rows);
  EventTimer& timer() { return timer_; }

 private:
  search::SampleArrays arrays(CUdeviceptr base, std::int64_t rows) const;
  CUdeviceptr take(std::uint64_t bytes, const std::string& what);
  void release();

  cas::search::ReplaySetup setup_;
  std::shared_ptr<DeviceRuntime> rt_;
  CUdeviceptr ring_ = 0, freshRegions_[2] = {0, 0}, obsFrom_ = 0, policyFrom_ = 0;
  int symmetries_ = 0;
  int half_ = 0;  // the fresh region self-play writes
  std::int64_t size_ = 0, next_ = 0, fresh_ = 0;
  CUevent written_ = nullptr, committed_[2] = {nullptr, nullptr};
  int lastCommitted_ = -1;  // the region whose commit training waits for
  EventTimer timer_;
  std::vector<CUdeviceptr> owned_;
};

std::unique_ptr<cas::search::ReplayStore> makeDeviceReplay(const cas::search::ReplaySetup& setup, std::shared_ptr<DeviceRuntime> runtime,
                                                            std::string* reason);

}  // namespace cas::gpu
