// EpisodeReplay's checkpoint section (muzero_targets.hpp gives the layout): the episodes a resumed
// run keeps learning from. Observations whose every value is an integer in 0-255 (MinAtar's 0/1
// planes) are stored a byte each, a quarter of their floats, and read back exactly.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/train/muzero_targets.hpp"

namespace cas::train {
namespace {

constexpr std::uint8_t kFloatObservations = 0, kByteObservations = 1;

bool fitsInBytes(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return x >= 0 && x <= 255 && x == std::floor(x); });
}

void writeEpisode(Writer& w, const Episode& e) {
  w.pod(e.length());
  if (fitsInBytes(e.observations)) {
    w.pod(kByteObservations);
    std::vector<std::uint8_t> bytes(e.observations.begin(), e.observations.end());
    w.raw(bytes.data(), bytes.size());
  } else {
    w.pod(kFloatObservations);
    w.floats(e.observations);
  }
  w.raw(e.actions.data(), e.actions.size() * sizeof(std::int32_t));
  w.floats(e.rewards);
  w.floats(e.policies);
  w.floats(e.values);
}

// One episode, its arrays sized from its length before anything is allocated for them (the
// Reader refuses a count beyond what the section still holds). nullopt when the section ends or
// an encoding is unknown; EpisodeReplay::add checks the values.
std::optional<Episode> readEpisode(Reader& r, const MuZeroTargetSetup& s, std::int64_t maxLength) {
  const auto length = r.pod<std::int64_t>();
  const auto encoding = r.pod<std::uint8_t>();
  if (!r.ok() || length < 1 || length > maxLength || encoding > kByteObservations) return std::nullopt;
  const auto t = std::uint64_t(length), o = std::uint64_t(s.observationSize), a = std::uint64_t(s.actions);
  Episode e;
  if (encoding == kByteObservations) {
    const std::string_view bytes = r.raw(t * o);
    e.observations.assign(reinterpret_cast<const std::uint8_t*>(bytes.data()), reinterpret_cast<const std::uint8_t*>(bytes.data()) + bytes.size());
  } else {
    e.observations = r.floats(t * o);
  }
  const std::string_view actions = r.raw(t * sizeof(std::int32_t));
  if (!r.ok()) return std::nullopt;
  e.actions.resize(t);
  std::copy_n(actions.data(), actions.size(), reinterpret_cast<char*>(e.actions.data()));
  e.rewards = r.floats(t);
  e.policies = r.floats(t * a);
  e.values = r.floats(t);
  if (!r.ok()) return std::nullopt;
  return e;
}

}  // namespace

void EpisodeReplay::write(Writer& w) const {
  w.pod(std::uint64_t(episodes_.size()));
  for (const Episode& e : episodes_) writeEpisode(w, e);
}

bool EpisodeReplay::read(Reader& r, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "the checkpoint's replay " + why;
    return false;
  };
  const auto count = r.pod<std::uint64_t>();
  if (!r.ok()) return fail("section is truncated");
  // Every episode is at least one position: more episodes than the section can hold is a count
  // no run wrote (and a loop this long would not end).
  if (count > std::uint64_t(2 * setup_.capacity)) return fail("counts " + std::to_string(count) + " episodes, more than its capacity holds");
  EpisodeReplay restored(setup_);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::optional<Episode> e = readEpisode(r, setup_, setup_.capacity);
    if (!e) return fail("section is truncated or altered at episode " + std::to_string(i + 1) + " of " + std::to_string(count));
    try {
      restored.add(std::move(*e));
    } catch (const std::invalid_argument& bad) {
      return fail("episode " + std::to_string(i + 1) + ": " + bad.what());
    }
  }
  episodes_ = std::move(restored.episodes_);
  positions_ = restored.positions_;
  return true;
}

std::uint64_t EpisodeReplay::sectionSizeLimit(const MuZeroTargetSetup& s) {
  const auto positions = 2 * std::uint64_t(s.capacity), o = std::uint64_t(s.observationSize), a = std::uint64_t(s.actions);
  const std::uint64_t perPosition = 4 * o + 4 + 4 + 4 * a + 4;
  const std::uint64_t perEpisode = 8 + 1 + 8 * 4;  // length, encoding and four float counts
  return 8 + positions * (perPosition + perEpisode);
}

}  // namespace cas::train
