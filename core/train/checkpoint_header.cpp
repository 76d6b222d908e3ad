#include "core/train/checkpoint_header.hpp"

#include <algorithm>

namespace cas::train {

std::optional<CheckpointHeader> readCheckpointHeader(Reader& r, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<CheckpointHeader> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (r.pod<std::uint32_t>() != kCheckpointMagic || !r.ok()) return fail("not a checkpoint of this program");
  CheckpointHeader h;
  h.version = r.pod<std::uint32_t>();
  if (!r.ok()) return fail("the checkpoint is truncated");
  if (h.version > kCheckpointVersion)
    return fail("a checkpoint of format version " + std::to_string(h.version) + ", written by a newer cuda-agent; this one reads versions " +
                std::to_string(kOldestReadableVersion) + " to " + std::to_string(kCheckpointVersion));
  if (h.version < kOldestReadableVersion) return fail("a checkpoint of format version " + std::to_string(h.version) + ", which no cuda-agent wrote");
  h.iteration = r.pod<std::int64_t>();
  h.gamesPlayed = r.pod<std::int64_t>();
  h.optimizerSteps = r.pod<std::int64_t>();
  if (!r.ok()) return fail("the checkpoint is truncated");
  // A forged or damaged counter would otherwise cut the logs back to it (iteration -5 drops them
  // all) and name the checkpoints written after it.
  if (h.iteration < 0) return fail("its iteration is " + std::to_string(h.iteration) + "; an iteration cannot be negative");
  if (h.iteration > kMaxCheckpointIteration)
    return fail("its iteration is " + std::to_string(h.iteration) + ", more than the " + std::to_string(kMaxCheckpointIteration) + " a run can reach");
  if (h.gamesPlayed < 0) return fail("it counts " + std::to_string(h.gamesPlayed) + " games played; a count cannot be negative");
  if (h.optimizerSteps < 0) return fail("it counts " + std::to_string(h.optimizerSteps) + " optimizer steps; a count cannot be negative");
  if (h.gamesPlayed > kMaxCheckpointCount || h.optimizerSteps > kMaxCheckpointCount)
    return fail("it counts " + std::to_string(std::max(h.gamesPlayed, h.optimizerSteps)) + " games or optimizer steps, more than the " +
                std::to_string(kMaxCheckpointCount) + " a run can reach");
  return h;
}

std::optional<CheckpointHeader> readCheckpointHeader(std::string_view bytes, std::string* error) {
  Reader r(bytes);
  return readCheckpointHeader(r, error);
}

}  // namespace cas::train
