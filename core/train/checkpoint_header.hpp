#pragma once
// The front of a checkpoint (the format of checkpoint.hpp): the magic, the format version and the
// counters (the iteration, the games played, the optimizer steps), read and checked without the
// rest. A run folder checks them before it cuts its logs back to a checkpoint or prunes by it,
// and readCheckpoint before it reads the tensors; this file needs nothing of the network.
// Thread-safety: plain functions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/support/binary_io.hpp"

namespace cas::train {

inline constexpr std::uint32_t kCheckpointMagic = 0x4B435A41;  // "AZCK"
inline constexpr std::uint32_t kCheckpointVersion = 3;         // what writeCheckpoint writes
inline constexpr std::uint32_t kOldestReadableVersion = 1;     // version 1: no shapes
// The most iterations a run can reach (and a checkpoint's name can give).
inline constexpr std::int64_t kMaxCheckpointIteration = std::int64_t(1) << 40;
// The most games (episodes) or optimizer steps a checkpoint may count: far beyond any run, and
// far enough below 2^63 that a run resumed from it cannot overflow its counters.
inline constexpr std::int64_t kMaxCheckpointCount = std::int64_t(1) << 56;
// More than one iteration can add to either count (games per iteration and steps per iteration
// are bounded far below it): a run whose counts are within this of kMaxCheckpointCount is not
// trained further, as its next checkpoint could count past it, and be skipped.
inline constexpr std::int64_t kMaxCountPerIteration = std::int64_t(1) << 40;

struct CheckpointHeader {
  std::uint32_t version = 0;
  std::int64_t iteration = 0, gamesPlayed = 0, optimizerSteps = 0;
};

// Reads the header from `r` and checks it: the magic, a version this code reads, an iteration in
// [0, kMaxCheckpointIteration] (0: a trainer's state before its first iteration) and counts that
// are not negative. nullopt with `error` (one clause: "its iteration is -5; an iteration cannot
// be negative") otherwise.
std::optional<CheckpointHeader> readCheckpointHeader(Reader& r, std::string* error);
std::optional<CheckpointHeader> readCheckpointHeader(std::string_view bytes, std::string* error = nullptr);

}  // namespace cas::train
