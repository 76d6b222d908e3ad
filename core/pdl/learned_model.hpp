#pragma once
// A learned model for planning (MuZero's three functions), written in one PDL file:
//
//   def represent(obs):            -> state                 the latent state of an observation
//   def dynamics(state, action):   -> (next_state, reward)  action: one-hot, [action_dim]
//   def predict(state):            -> (logits, value)       logits [action_dim], value [1]
//
// compileLearnedModel builds three programs from it, each vectorised over the batch like a
// policy: `represent` (input "obs"), `recurrent` (inputs "state", "action"; dynamics then predict
// on the next state: outputs "state", "reward", "logits", "value") and `predict` (input "state").
// A search evaluates its root with represent and predict, and each leaf with recurrent on its
// parent's state. The state's shape is what represent returns; dynamics must return states of that
// shape and a reward of shape [1], each disagreement a diagnostic at file:line. With unrollSteps,
// a fourth program, `unrolled`, chains them over K actions for training (MuZero's unrolled loss).
// Parameters are named after the function that makes them ("dynamics/dense_0/weight"): a name
// means the same tensor in every program.
// Thread-safety: pure function.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pdl/compiler.hpp"

namespace cas::pdl {

struct LearnedModelOptions {
  std::string fileName = "model.pdl";
  std::vector<std::int64_t> observationShape;  // per sample
  std::int64_t actionCount = 0;
  std::int64_t batch = 1;
  bool training = false;
  std::uint64_t seed = 0;
  // Also the training program: represent, then this many steps of dynamics and predict (0: none).
  std::int64_t unrollSteps = 0;
  // The reward and value heads learn MuZero's scaled targets h(x) = sign(x)(sqrt(|x| + 1) - 1) +
  // kValueScaleEpsilon x (LossKind::MuZero): the search's programs (recurrent, predict) then end
  // with h^-1 on those outputs, so the search backs up returns in the environment's units; the
  // unrolled training program keeps the heads' own values.
  bool scaledHeads = false;
};

inline constexpr float kValueScaleEpsilon = 0.001f;

inline constexpr std::int64_t kMaxUnrollSteps = 64;

struct CompiledLearnedModel {
  CompiledPolicy represent, recurrent, predict;
  // With unrollSteps K > 0: inputs "obs" and "actions" [K, action_dim] (one-hot rows); outputs
  // "logits" [K+1, action_dim], "values" [K+1, 1] (step 0 from represent's state) and "rewards"
  // [K, 1]; the same parameters as the three programs, each tensor once however often it is used.
  std::optional<CompiledPolicy> unrolled;
  std::vector<std::int64_t> stateShape;  // per sample
  // Every parameter once (the recurrent and predict programs share predict's), by name.
  std::vector<ParameterSummary> parameters;
  std::int64_t parameterCount = 0;
};

struct LearnedModelResult {
  std::optional<CompiledLearnedModel> model;  // set when there is no error
  DiagnosticList diagnostics;
};

LearnedModelResult compileLearnedModel(std::string_view source, const LearnedModelOptions& options);

}  // namespace cas::pdl
