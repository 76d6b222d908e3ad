#pragma once
// The replay buffer: a ring of the newest `capacity` positions of finished self-play games, each
// an observation, the search's policy target and the game's result for the player to move then.
// Training draws batches from it uniformly, each sample under a random symmetry of the game.
// Its checkpoint section (write/read) is, byte for byte, the one of checkpoint format version 1:
// the position count (i64), the next slot (i64), then the observations, policy targets and value
// targets at full capacity (each a u64 count and the floats; binary_io.hpp).
// Thread-safety: a plain value, driven by one thread (the engine thread).
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/env/games.hpp"
#include "core/support/binary_io.hpp"

namespace cas::train {

class ReplayBuffer {
 public:
  ReplayBuffer(std::int64_t capacity, int observationSize, int actions);

  std::int64_t capacity() const { return std::int64_t(value_.size()); }
  std::int64_t size() const { return size_; }
  int observationSize() const { return observationSize_; }
  int actions() const { return actions_; }

  // Stores one position (observationSize and `actions` floats), over the oldest when full.
  void add(const float* observation, const float* policy, float value);

  // Fills `batch` samples (obs [batch, observationSize], policy [batch, actions], value [batch]):
  // for each, a position drawn uniformly, then one of `game`'s symmetries drawn uniformly and
  // applied; both drawn from `rng` in that order, so a seed gives the same batches. Needs size() > 0.
  void sample(std::int64_t batch, const env::BoardGames& game, std::mt19937_64& rng, float* obs, float* policy, float* value) const;

  void write(Writer& w) const;
  std::uint64_t serialisedBytes() const;  // what write() appends
  // The section write() appended, read as a buffer of this one's capacity and sample sizes;
  // nullopt with `error` filled when it is short, of another shape or inconsistent.
  std::optional<ReplayBuffer> read(Reader& r, std::string* error) const;

 private:
  int observationSize_, actions_;
  std::vector<float> obs_, policy_, value_;
  std::int64_t size_ = 0, next_ = 0;
};

}  // namespace cas::train
