// The programs of a learned model (learned_model.hpp): the compiler evaluates `represent`,
// `dynamics` and `predict` with symbolic inputs, as it evaluates a policy's entry, and checks that
// their shapes agree, so that a search can feed each function's results into the others:
//
//   Represent   obs[obs_shape]                      -> represent -> state[S]
//   Recurrent   state[S], action[action_dim] (1-hot) -> dynamics  -> state[S], reward[1]
//                                                                 -> predict -> logits[action_dim], value[1]
//   Predict     state[S]                            -> predict   -> logits[action_dim], value[1]
//
// S is what represent returns; every program's parameters are named after the function that makes
// them ("dynamics/dense_0/weight"), so one set of parameters serves the three programs.
#include "core/pdl/compiler_internal.hpp"

namespace cas::pdl::detail {

namespace {
const std::vector<std::string> kStateParameter = {"the latent state"};
const std::vector<std::string> kDynamicsParameters = {"the latent state", "the action (one-hot, [action_dim])"};
constexpr const char* kPredictSubject = "the prediction function";
}  // namespace

std::optional<CompiledPolicy> Compiler::runLearnedPart(const LearnedModelPart& part) {
  switch (part.program) {
    case LearnedModelPart::Program::Represent: return learnedRepresent();
    case LearnedModelPart::Program::Recurrent: return learnedRecurrent(part);
    case LearnedModelPart::Program::Predict: return learnedPredict(part);
  }
  return std::nullopt;
}

std::optional<CompiledPolicy> Compiler::learnedRepresent() {
  const Function* represent = entryFunction("represent", {"the observation"});
  if (!represent) return std::nullopt;
  const Pos param = represent->params[0].second;
  if (!inputFits(opt_.observationShape, "the observation", param)) return std::nullopt;
  const Value result = callEntry(*represent, {entryInput("obs", opt_.observationShape, param)});
  if (diags_.hasErrors()) return std::nullopt;
  const std::vector<Value> outs = returnedTensors(*represent, result);
  if (outs.empty()) return std::nullopt;
  if (outs.size() != 1) {
    error(result.origin.line > 0 ? result.origin : represent->pos,
          "'represent' must return one tensor, the latent state, but it returns " + std::to_string(outs.size()) + " tensors");
    return std::nullopt;
  }
  emitOutputs({"state"}, outs, "represent");
  return std::move(out_);
}

bool Compiler::checkDynamicsResults(const Function& dynamics, const Value& result, const std::vector<Value>& outs, const LearnedModelPart& part) {
  if (outs.size() != 2) {
    error(result.origin.line > 0 ? result.origin : dynamics.pos,
          "'dynamics' must return (next_state, reward), but it returns " +
              (outs.size() == 1 ? "one tensor of shape " + shapeText(outs[0].shape) : std::to_string(outs.size()) + " tensors"));
    return false;
  }
  if (outs[0].shape != part.stateShape) {
    errorWithNote(outs[0].origin,
                  "the next state has shape " + shapeText(outs[0].shape) + ", but 'represent' makes states of shape " + shapeText(part.stateShape) +
                      ": the search feeds both to 'dynamics' and 'predict', so they must have one shape",
                  {part.stateLine, part.stateColumn}, "'represent' returns its state here");
    return false;
  }
  if (outs[1].shape != Shape{1}) {
    error(outs[1].origin, "the reward must have shape [1], one number per sample, got " + shapeText(outs[1].shape) +
                              "; end the reward head with dense(..., units=1)");
    return false;
  }
  return true;
}

std::optional<CompiledPolicy> Compiler::learnedRecurrent(const LearnedModelPart& part) {
  const Function* dynamics = entryFunction("dynamics", kDynamicsParameters);
  const Function* predict = entryFunction("predict", kStateParameter);
  if (!dynamics || !predict) return std::nullopt;
  const Value state = entryInput("state", part.stateShape, dynamics->params[0].second);
  const Value action = entryInput("action", {opt_.actionCount}, dynamics->params[1].second);
  const Value stepped = callEntry(*dynamics, {state, action});
  if (diags_.hasErrors()) return std::nullopt;
  const std::vector<Value> next = returnedTensors(*dynamics, stepped);
  if (next.empty() || !checkDynamicsResults(*dynamics, stepped, next, part)) return std::nullopt;
  const Value predicted = callEntry(*predict, {next[0]});
  if (diags_.hasErrors()) return std::nullopt;
  const std::vector<Value> heads = returnedTensors(*predict, predicted);
  if (heads.empty() || !checkActorCritic(kPredictSubject, *predict, predicted, heads)) return std::nullopt;
  keepOutputLayersFp32({next[1], heads[0], heads[1]});
  emitOutputs({"state", "reward", "logits", "value"}, {next[0], next[1], heads[0], heads[1]}, "recurrent");
  return std::move(out_);
}

std::optional<CompiledPolicy> Compiler::learnedPredict(const LearnedModelPart& part) {
  const Function* predict = entryFunction("predict", kStateParameter);
  if (!predict) return std::nullopt;
  const Value predicted = callEntry(*predict, {entryInput("state", part.stateShape, predict->params[0].second)});
  if (diags_.hasErrors()) return std::nullopt;
  const std::vector<Value> heads = returnedTensors(*predict, predicted);
  if (heads.empty() || !checkActorCritic(kPredictSubject, *predict, predicted, heads)) return std::nullopt;
  keepOutputLayersFp32(heads);
  emitOutputs({"logits", "value"}, heads, "predict");
  return std::move(out_);
}

}  // namespace cas::pdl::detail
