#pragma once
// MuZero's training data: played episodes kept whole, and the targets of a K-step unroll from any
// position in them, as the MuZero paper's pseudocode makes them (Schrittwieser et al. 2020,
// appendix: ReplayBuffer.sample_batch and Game.make_target).
//
// An episode of T steps, per index i < T: the observation before the move, the action a_i played,
// the reward r_i it earned, the search's visit distribution pi_i and root value v_i.
//
//   the unroll from position t, step k = 0..K at index i = t + k:
//     value   z_k = sum_{j < n} gamma^j r_{i+j} + gamma^n v_{i+n}   (rewards past the end count 0;
//             the bootstrap v_{i+n} only when i + n < T); 0 when i >= T
//     reward  u_k = r_{i-1} when 0 < i <= T, else 0 (k >= 1: the reward of the action into step k)
//     policy  pi_k = pi_i when i < T; zeros past the end (no policy loss there)
//     action  a_k (k >= 1) = a_{i-1} when i - 1 < T; past the end a uniformly random action
//
// A batch is laid out as LossKind::MuZero (core/train/update.hpp) reads it:
//
//   obs             [B, observationSize]   the observation at t
//   actions         [B, K, A]              one-hot, the unrolled program's input
//   policy_targets  [B, K+1, A]
//   value_targets   [B, K+1]
//   reward_targets  [B, K]
//
// Thread-safety: EpisodeReplay is driven by one thread; sample() is const and may run beside
// other readers.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/support/binary_io.hpp"

namespace cas::train {

struct MuZeroTargetSetup {
  int observationSize = 0, actions = 0;
  int unrollSteps = 5;              // K
  int tdSteps = 10;                 // n
  float discount = 0.997f;          // gamma
  std::int64_t capacity = 1 << 20;  // positions kept; the oldest episodes leave first
};

struct Episode {
  std::vector<float> observations;  // [T, observationSize]
  std::vector<std::int32_t> actions;
  std::vector<float> rewards;
  std::vector<float> policies;  // [T, actions]
  std::vector<float> values;
  std::int64_t length() const { return std::int64_t(actions.size()); }
};

struct MuZeroBatch {
  std::int64_t batch = 0;
  std::vector<float> obs, actions, policyTargets, valueTargets, rewardTargets;
  // Sets the five inputs of an update program built with LossKind::MuZero.
  void setInputs(exec::Executable& training) const;
};

class EpisodeReplay {
 public:
  explicit EpisodeReplay(MuZeroTargetSetup setup);

  const MuZeroTargetSetup& setup() const { return setup_; }
  // Keeps a played episode; throws std::invalid_argument, naming the field, when its arrays
  // disagree with its length or the setup, or an action or value is out of range.
  void add(Episode episode);
  std::int64_t positions() const { return positions_; }
  std::int64_t episodes() const { return std::int64_t(episodes_.size()); }
  const Episode& episode(std::int64_t i) const { return episodes_.at(size_t(i)); }  // 0: the oldest kept

  // The kept episodes as a checkpoint's section (checkpoint.hpp), oldest first:
  //   u64 episodes, then per episode: i64 length T, u8 observation encoding (0: T x observationSize
  //   floats; 1: as many bytes, every value an integer in 0-255, as MinAtar's planes are),
  //   the observations, T i32 actions, then rewards [T], policies [T x actions], values [T] as floats.
  void write(Writer& w) const;
  // Replaces the kept episodes with a section's; false with `error` naming what does not fit
  // this setup (an episode's arrays, an action, a value, more positions than the section limit).
  bool read(Reader& r, std::string* error);
  // The most bytes a section can take: capacity positions, and the newest episode's beyond them,
  // which is at most capacity long (self-play cuts longer ones).
  static std::uint64_t sectionSizeLimit(const MuZeroTargetSetup& setup);

  // `batch` positions drawn uniformly over every kept position (seeded), with their targets.
  MuZeroBatch sample(std::int64_t batch, std::uint64_t seed) const;
  // Row `row` of `out` from position t of `episode` (random actions past its end from `draw`).
  void writeTargets(const Episode& episode, std::int64_t t, std::uint64_t draw, MuZeroBatch& out, std::int64_t row) const;

 private:
  float valueTarget(const Episode& e, std::int64_t i) const;
  MuZeroTargetSetup setup_;
  std::deque<Episode> episodes_;
  std::int64_t positions_ = 0;
};

}  // namespace cas::train
