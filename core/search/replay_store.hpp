#pragma once
// Where self-play's positions go and where training draws its batches. A store holds a ring of
// the newest `capacity` positions of finished games and, beside it, the fresh positions of games
// that ended since the last commit:
//
//   ring    slot 0 .. capacity-1    obs [observationSize] | policy [actions] | value
//           size = positions held; next = the slot the next commit writes (the oldest once full)
//   fresh   0 .. freshCapacity-1    the same, in the order the games ended (game index order
//           within one move)
//
// Training draws from the ring only; self-play adds to the fresh positions; commit() appends them
// to the ring. So self-play can fill fresh positions while training steps read the ring, and the
// two never touch the same memory (the device store, gpu/search/device_replay.hpp, holds two
// fresh regions and commits one while self-play fills the other).
//
// Sampling is counter-based, the same arithmetic on host and device: sample i of the draw `seed`
// takes ring slot replayDraw(seed, 2i) % size, then symmetry replayDraw(seed, 2i + 1) % the
// game's symmetry count. The CPU store (train::ReplayBuffer) is the spec of the device's.
// Thread-safety: a store is driven by one thread (the engine thread).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/support/binary_io.hpp"
#include "core/search/replay_draw.hpp"

namespace cas::exec {
class Executable;
}

namespace cas::search {

// What a store is made for.
struct ReplaySetup {
  std::string environment;  // a board game of env/games.hpp (its symmetries)
  std::int64_t capacity = 0, freshCapacity = 0;
  int observationSize = 0, actions = 0;
};

// The ring as plain host arrays, at full capacity: what a checkpoint holds. Its section is, byte
// for byte, the one of checkpoint format version 1: the position count (i64), the next slot
// (i64), then the observations, policy targets and value targets (each a u64 count and the
// floats; binary_io.hpp).
struct ReplayRing {
  std::int64_t size = 0, next = 0;
  std::vector<float> obs, policy, value;

  ReplayRing() = default;
  ReplayRing(std::int64_t capacity, int observationSize, int actions);
  void write(Writer& w) const;
  // What write() appends for a ring of `shape`'s capacity and sample sizes.
  static std::uint64_t serialisedBytes(const ReplaySetup& shape);
  // The section write() appended, for a ring of `shape`; nullopt with `error` when it is short,
  // of another shape or inconsistent.
  static std::optional<ReplayRing> read(Reader& r, const ReplaySetup& shape, std::string* error);
};

class ReplayStore {
 public:
  virtual ~ReplayStore() = default;
  virtual std::string device() const = 0;  // "cpu" or "cuda"
  virtual const ReplaySetup& setup() const = 0;
  std::int64_t capacity() const { return setup().capacity; }
  std::int64_t freshCapacity() const { return setup().freshCapacity; }
  virtual std::int64_t size() const = 0;   // positions in the ring
  virtual std::int64_t fresh() const = 0;  // positions added since the last commit

  // One position of a finished game from the host (self-play with the CPU search); throws
  // std::length_error when the fresh positions are full (self-play stops before that).
  virtual void add(const float* observation, const float* policy, float value) = 0;
  // The fresh positions join the ring in the order they were added, over the oldest when full.
  virtual void commit() = 0;
  // `batch` samples of the draw `seed` (see above) into `training`'s inputs "obs"
  // [batch, observationSize], "policy_targets" [batch, actions] and "value_targets" [batch].
  // Needs size() > 0. On a device the copy is queued where `training` runs.
  virtual void sample(std::int64_t batch, std::uint64_t seed, exec::Executable& training) = 0;

  // The ring (committed positions only) for a checkpoint, and back from one of this shape.
  virtual ReplayRing ring() const = 0;
  virtual void load(ReplayRing ring) = 0;
  // Seconds spent moving samples (adding, committing, sampling), measured where it ran.
  virtual double dataSeconds() const = 0;
};

}  // namespace cas::search
