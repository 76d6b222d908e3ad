#pragma once
// The CPU replay store (search::ReplayStore, whose header draws the layout): host arrays for the
// ring and the fresh positions, symmetries applied by the game's own applySymmetry. It is the
// spec of the device store (gpu/search/device_replay.hpp): for the same positions and draws both
// give the same batches (tests/gpu/test_device_replay.cpp).
// Thread-safety: driven by one thread (the engine thread).
#include <chrono>
#include <cstdint>
#include <memory>

#include "core/env/games.hpp"
#include "core/search/replay_store.hpp"

namespace cas::train {

class ReplayBuffer final : public search::ReplayStore {
 public:
  explicit ReplayBuffer(search::ReplaySetup setup);

  std::string device() const override { return "cpu"; }
  const search::ReplaySetup& setup() const override { return setup_; }
  std::int64_t size() const override { return ring_.size; }
  std::int64_t fresh() const override { return fresh_; }
  void add(const float* observation, const float* policy, float value) override;
  void commit() override;
  void sample(std::int64_t batch, std::uint64_t seed, exec::Executable& training) override;
  search::ReplayRing ring() const override { return ring_; }
  void load(search::ReplayRing ring) override { ring_ = std::move(ring); }
  double dataSeconds() const override { return dataSeconds_; }

  // The samples sample() would give, into host arrays (obs [batch, observationSize],
  // policy [batch, actions], value [batch]).
  void draw(std::int64_t batch, std::uint64_t seed, float* obs, float* policy, float* value) const;

 private:
  search::ReplaySetup setup_;
  std::unique_ptr<env::BoardGames> game_;  // its symmetries
  search::ReplayRing ring_, freshRing_;            // freshRing_ holds the fresh positions from slot 0
  std::int64_t fresh_ = 0;
  double dataSeconds_ = 0;
};

}  // namespace cas::train
