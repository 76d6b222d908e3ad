#include "core/train/replay_buffer.hpp"

#include <algorithm>

namespace cas::train {

ReplayBuffer::ReplayBuffer(std::int64_t capacity, int observationSize, int actions)
    : observationSize_(observationSize), actions_(actions), obs_(size_t(capacity) * size_t(observationSize), 0),
      policy_(size_t(capacity) * size_t(actions), 0), value_(size_t(capacity), 0) {}

void ReplayBuffer::add(const float* observation, const float* policy, float value) {
  std::copy(observation, observation + observationSize_, obs_.begin() + next_ * observationSize_);
  std::copy(policy, policy + actions_, policy_.begin() + next_ * actions_);
  value_[size_t(next_)] = value;
  next_ = (next_ + 1) % capacity();
  size_ = std::min(capacity(), size_ + 1);
}

void ReplayBuffer::sample(std::int64_t batch, const env::BoardGames& game, std::mt19937_64& rng, float* obs, float* policy, float* value) const {
  std::uniform_int_distribution<std::int64_t> pick(0, size_ - 1);
  std::uniform_int_distribution<int> symmetry(0, game.symmetryCount() - 1);
  for (std::int64_t i = 0; i < batch; ++i) {
    const std::int64_t j = pick(rng);
    float* o = obs + i * observationSize_;
    float* p = policy + i * actions_;
    std::copy(obs_.begin() + j * observationSize_, obs_.begin() + (j + 1) * observationSize_, o);
    std::copy(policy_.begin() + j * actions_, policy_.begin() + (j + 1) * actions_, p);
    game.applySymmetry(symmetry(rng), o, p);
    value[i] = value_[size_t(j)];
  }
}

void ReplayBuffer::write(Writer& w) const {
  w.pod(size_);
  w.pod(next_);
  w.floats(obs_);
  w.floats(policy_);
  w.floats(value_);
}

std::uint64_t ReplayBuffer::serialisedBytes() const {
  return 2 * sizeof(std::int64_t) + 3 * sizeof(std::uint64_t) + (obs_.size() + policy_.size() + value_.size()) * sizeof(float);
}

std::optional<ReplayBuffer> ReplayBuffer::read(Reader& r, std::string* error) const {
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return std::nullopt;
  };
  ReplayBuffer b(0, observationSize_, actions_);
  b.size_ = r.pod<std::int64_t>();
  b.next_ = r.pod<std::int64_t>();
  b.obs_ = r.floats(obs_.size());
  b.policy_ = r.floats(policy_.size());
  b.value_ = r.floats(value_.size());
  if (!r.ok()) return fail("the checkpoint is truncated or does not match this project's replay capacity");
  if (b.size_ < 0 || b.size_ > capacity() || b.next_ < 0 || b.next_ >= std::max<std::int64_t>(1, capacity()))
    return fail("the checkpoint's replay buffer is inconsistent");
  return b;
}

}  // namespace cas::train
