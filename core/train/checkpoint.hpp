#pragma once
// The trainer's checkpoint: everything a run needs to resume, as bytes (docs/checkpoints.md).
// Format version 3:
//   u32 magic "AZCK", u32 version, i64 iteration, i64 games played, i64 optimizer steps,
//   the sampling generator's state (a string), the training graph's stored tensors (u32 count,
//   then each name, its shape as u32 rank and i64 sizes, and its floats: parameters, named by
//   their PDL call path, and optimizer state), the replay buffer's section (search::ReplayRing,
//   core/search/replay_store.hpp), and last the algorithm's own section (u64 length, then its
//   bytes: MuZero's episode replay, muzero_targets.hpp; empty for AlphaZero and PPO). Integers
//   little-endian, strings and floats as binary_io.hpp writes them.
// Version 2 is the same without the algorithm's section, version 1 also without the shapes; both
// are still read (tests/fixtures/checkpoint-v1).
// Thread-safety: plain functions.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/search/replay_store.hpp"

namespace cas::train {

struct CheckpointCounters {
  std::int64_t iteration = 0, gamesPlayed = 0, optimizerSteps = 0;
  std::mt19937_64 rng;  // replay sampling and symmetries
};

// `training`: the update graph's program, whose stored (non-data) inputs the checkpoint holds.
// `section`: the algorithm's own section, written as it is.
std::string writeCheckpoint(const CheckpointCounters& counters, const exec::Executable& training, const search::ReplayRing& ring,
                            std::string_view section = {});
// The most bytes writeCheckpoint can return for this program, a ring of `replay`'s shape and an
// algorithm's section of at most `sectionLimit` bytes: a larger file is not one of its
// checkpoints and is refused before it is read.
std::uint64_t checkpointSizeLimit(const exec::Executable& training, const search::ReplaySetup& replay, std::uint64_t sectionLimit = 0);

struct Checkpoint {
  CheckpointCounters counters;
  std::vector<std::pair<std::string, std::vector<float>>> tensors;  // by input name
  search::ReplayRing ring;
  std::string section;  // the algorithm's own section (empty before version 3)
};
// Reads and checks a checkpoint against the program and the replay shape it will be loaded into
// without changing either: it must hold every stored tensor of the program, each with the
// program's size, and nothing else, and a ring of the replay's capacity. nullopt with `error`
// filled when it does not fit: the error names the tensor missing, unknown or of another shape
// (and both shapes; a version-1 checkpoint records only each tensor's size), or the format
// version it cannot read. An algorithm's section longer than `sectionLimit` is refused; its
// contents are the algorithm's to check.
std::optional<Checkpoint> readCheckpoint(const std::string& bytes, const exec::Executable& training, const search::ReplaySetup& replay,
                                         std::string* error, std::uint64_t sectionLimit = 0);

}  // namespace cas::train
