#pragma once
// The MinAtar twins as PPO steps them (single_agent.hpp): a batch of copies of one game, each
// with its own generator and sticky action (the game classes' own), reset on demand. MinAtar's
// episodes end by the game's rules (Freeway's by its clock), so no step is a truncation.
// MinAtarSingleAgentRules is the same view of one copy for code compiled for the device: the
// CUDA backend's environment kernels (gpu/env) run it.
// Thread-safety: as the game classes: distinct copies from distinct threads.
#include <cstdint>

#include "core/env/minatar_games.hpp"
#include "core/env/single_agent.hpp"

namespace cas::env {

template <class Game>
class MinAtarEnvironments final : public SingleAgentEnvironments {
 public:
  MinAtarEnvironments(int count, std::uint64_t seed) : games_(count, seed) {}
  int size() const override { return games_.size(); }
  void reset(int env) override { games_.reset(env); }
  StepResult step(int env, int action) override {
    const auto r = games_.step(env, action);
    return {r.reward, r.terminal, false};
  }
  void observe(int env, float* out) const override { games_.observe(env, out); }

 private:
  Game games_;
};

template <class Rules>
struct MinAtarSingleAgentRules {
  using State = typename Rules::State;
  static constexpr int kObservationSize = Rules::kObservationSize, kActions = Rules::kActions;
  static constexpr bool kSparseObservation = true;  // mostly zeros: mark() sets the ones
  CAS_HD static void reset(State& s) { Rules::reset(s); }
  CAS_HD static StepResult step(State& s, int action) {
    const MinatarStep r = Rules::step(s, action);
    return {r.reward, r.terminal, false};
  }
  CAS_HD static void observe(const State& s, float* out) { observeMinatar<Rules>(s, out); }
  CAS_HD static void mark(const State& s, float* out) { Rules::mark(s, out); }
};

}  // namespace cas::env
