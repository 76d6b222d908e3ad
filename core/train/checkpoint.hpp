#pragma once
// The trainer's checkpoint: everything a run needs to resume, as bytes. Format version 1:
//   u32 magic "AZCK", u32 version, i64 iteration, i64 games played, i64 optimizer steps,
//   the sampling generator's state (a string), the training graph's stored tensors (u32 count,
//   then each name and floats: parameters and optimizer state), and last the replay buffer's
//   section (search::ReplayRing, core/search/replay_store.hpp). Integers little-endian, strings and floats as binary_io.hpp
//   writes them.
// Thread-safety: plain functions.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
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
std::string writeCheckpoint(const CheckpointCounters& counters, const exec::Executable& training, const search::ReplayRing& ring);
// The most bytes writeCheckpoint can return for this program and a ring of `replay`'s shape: a
// larger file is not one of its checkpoints and is refused before it is read.
std::uint64_t checkpointSizeLimit(const exec::Executable& training, const search::ReplaySetup& replay);

struct Checkpoint {
  CheckpointCounters counters;
  std::vector<std::pair<std::string, std::vector<float>>> tensors;  // by input name
  search::ReplayRing ring;
};
// Reads and checks a checkpoint against the program and the replay shape it will be loaded into
// without changing either: it must hold every stored tensor of the program, each with the
// program's size, and nothing else, and a ring of the replay's capacity. nullopt with `error`
// filled when it does not fit: the error names the tensor missing, unknown or of another size
// (and both sizes; the format records sizes, not shapes).
std::optional<Checkpoint> readCheckpoint(const std::string& bytes, const exec::Executable& training, const search::ReplaySetup& replay,
                                         std::string* error);

}  // namespace cas::train
