#include "core/train/replay_buffer.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/exec/backend.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

ReplayBuffer::ReplayBuffer(search::ReplaySetup setup)
    : setup_(std::move(setup)), game_(env::makeBoardGames(setup_.environment, 1)),
      ring_(setup_.capacity, setup_.observationSize, setup_.actions), freshRing_(setup_.freshCapacity, setup_.observationSize, setup_.actions) {
  if (!game_) throw std::invalid_argument("'" + setup_.environment + "' is not a board game with a replay buffer");
}

void ReplayBuffer::add(const float* observation, const float* policy, float value) {
  const auto start = Clock::now();
  if (fresh_ >= setup_.freshCapacity) throw std::length_error("the replay buffer's fresh positions are full; commit them first");
  const auto o = size_t(setup_.observationSize), a = size_t(setup_.actions), i = size_t(fresh_);
  std::copy(observation, observation + o, freshRing_.obs.begin() + std::ptrdiff_t(i * o));
  std::copy(policy, policy + a, freshRing_.policy.begin() + std::ptrdiff_t(i * a));
  freshRing_.value[i] = value;
  ++fresh_;
  dataSeconds_ += since(start);
}

void ReplayBuffer::commit() {
  const auto start = Clock::now();
  const auto o = size_t(setup_.observationSize), a = size_t(setup_.actions);
  const std::int64_t capacity = setup_.capacity;
  // Only the newest `capacity` fresh positions survive the commit, in the slots that adding them
  // one by one would have given them.
  const std::int64_t from = std::max<std::int64_t>(0, fresh_ - capacity);
  if (capacity > 0) ring_.next = (ring_.next + from) % capacity;
  for (std::int64_t f = from; f < fresh_ && capacity > 0; ++f) {
    const auto from = size_t(f), to = size_t(ring_.next);
    std::copy_n(freshRing_.obs.begin() + std::ptrdiff_t(from * o), o, ring_.obs.begin() + std::ptrdiff_t(to * o));
    std::copy_n(freshRing_.policy.begin() + std::ptrdiff_t(from * a), a, ring_.policy.begin() + std::ptrdiff_t(to * a));
    ring_.value[to] = freshRing_.value[from];
    ring_.next = (ring_.next + 1) % capacity;
  }
  ring_.size = std::min(capacity, ring_.size + fresh_);
  fresh_ = 0;
  dataSeconds_ += since(start);
}

void ReplayBuffer::draw(std::int64_t batch, std::uint64_t seed, float* obs, float* policy, float* value) const {
  if (ring_.size <= 0) throw std::logic_error("sampling an empty replay buffer");
  const auto o = size_t(setup_.observationSize), a = size_t(setup_.actions);
  const auto symmetries = std::uint64_t(game_->symmetryCount());
  for (std::int64_t i = 0; i < batch; ++i) {
    const auto j = size_t(search::replayDraw(seed, 2 * std::uint64_t(i)) % std::uint64_t(ring_.size));
    const int s = int(search::replayDraw(seed, 2 * std::uint64_t(i) + 1) % symmetries);
    float* po = obs + size_t(i) * o;
    float* pp = policy + size_t(i) * a;
    std::copy_n(ring_.obs.begin() + std::ptrdiff_t(j * o), o, po);
    std::copy_n(ring_.policy.begin() + std::ptrdiff_t(j * a), a, pp);
    game_->applySymmetry(s, po, pp);
    value[i] = ring_.value[j];
  }
}

void ReplayBuffer::sample(std::int64_t batch, std::uint64_t seed, exec::Executable& training) {
  const auto start = Clock::now();
  const auto o = size_t(setup_.observationSize), a = size_t(setup_.actions), n = size_t(batch);
  std::vector<float> obs(n * o), policy(n * a), value(n);
  draw(batch, seed, obs.data(), policy.data(), value.data());
  training.setInput("obs", obs.data(), obs.size());
  training.setInput("policy_targets", policy.data(), policy.size());
  training.setInput("value_targets", value.data(), value.size());
  dataSeconds_ += since(start);
}

}  // namespace cas::train
