#include "core/search/replay_store.hpp"

#include <algorithm>
#include <cmath>

#include "core/exec/backend.hpp"

namespace cas::search {

ReplayRing::ReplayRing(std::int64_t capacity, int observationSize, int actions)
    : obs(size_t(capacity) * size_t(observationSize), 0), policy(size_t(capacity) * size_t(actions), 0), value(size_t(capacity), 0) {}

void ReplayRing::write(Writer& w) const {
  w.pod(size);
  w.pod(next);
  w.floats(obs);
  w.floats(policy);
  w.floats(value);
}

std::uint64_t ReplayRing::serialisedBytes(const ReplaySetup& shape) {
  const auto capacity = std::uint64_t(shape.capacity);
  return 2 * sizeof(std::int64_t) + 3 * sizeof(std::uint64_t) +
         capacity * (std::uint64_t(shape.observationSize) + std::uint64_t(shape.actions) + 1) * sizeof(float);
}

std::optional<ReplayRing> ReplayRing::read(Reader& r, const ReplaySetup& shape, std::string* error) {
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return std::nullopt;
  };
  const auto capacity = std::uint64_t(shape.capacity);
  ReplayRing b;
  b.size = r.pod<std::int64_t>();
  b.next = r.pod<std::int64_t>();
  b.obs = r.floats(capacity * std::uint64_t(shape.observationSize));
  b.policy = r.floats(capacity * std::uint64_t(shape.actions));
  b.value = r.floats(capacity);
  if (!r.ok()) return fail("the checkpoint is truncated or does not match this project's replay capacity");
  if (b.size < 0 || b.size > shape.capacity || b.next < 0 || b.next >= std::max<std::int64_t>(1, shape.capacity))
    return fail("the checkpoint's replay buffer is inconsistent");
  // Self-play writes only finite numbers; anything else was put there after the checkpoint was written.
  auto finite = [](const std::vector<float>& v, std::uint64_t n) {
    return std::all_of(v.begin(), v.begin() + std::ptrdiff_t(n), [](float x) { return std::isfinite(x); });
  };
  const auto held = std::uint64_t(b.size);
  if (!finite(b.obs, held * std::uint64_t(shape.observationSize)) || !finite(b.policy, held * std::uint64_t(shape.actions)) ||
      !finite(b.value, held))
    return fail("the checkpoint's replay buffer holds values that are not finite numbers (NaN or infinite); training never writes "
                "them, so the file was altered after it was written");
  return b;
}

}  // namespace cas::search
