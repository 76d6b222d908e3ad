#include "core/search/replay_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

namespace {

std::string shortNumber(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", double(v));
  return text;
}

// What self-play never writes among the first `held` positions' targets, as the sentence that
// names the field; empty when they hold. A value target is a game's outcome for the player to
// move, -1 to 1; a policy target is the search's improved policy, each entry 0 to 1 and summing
// to 1 (to rounding), or all 0 (a root that one simulation expanded and none visited).
std::string targetsProblem(const ReplayRing& b, std::uint64_t held, int actions) {
  for (std::uint64_t i = 0; i < held; ++i)
    if (b.value[i] < -1.0f || b.value[i] > 1.0f)
      return "the checkpoint's replay buffer holds value target " + shortNumber(b.value[i]) + " at position " + std::to_string(i) +
             ", outside -1 to 1 (a game's outcome); training never writes it, so the file was altered after it was written";
  for (std::uint64_t i = 0; i < held; ++i) {
    const float* row = b.policy.data() + i * std::uint64_t(actions);
    double sum = 0;
    bool inRange = true;
    for (int a = 0; a < actions; ++a) {
      inRange = inRange && row[a] >= 0.0f && row[a] <= 1.0f;
      sum += row[a];
    }
    if (!inRange || (sum != 0 && std::abs(sum - 1) > 1e-3))
      return "the checkpoint's replay buffer holds policy targets at position " + std::to_string(i) +
             " that are not probabilities (each 0 to 1, summing to 1); training never writes them, so the file was altered after it "
             "was written";
  }
  return {};
}

}  // namespace

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
  if (const std::string problem = targetsProblem(b, held, shape.actions); !problem.empty()) {
    if (error) *error = problem;
    return std::nullopt;
  }
  return b;
}

}  // namespace cas::search
