// The programs of a learned model (learned_model.hpp): the compiler evaluates `represent`,
// `dynamics` and `predict` with symbolic inputs, as it evaluates a policy's entry, and checks that
// their shapes agree, so that a search can feed each function's results into the others:
//
//   Represent   obs[obs_shape]                      -> represent -> state[S]
//   Recurrent   state[S], action[action_dim] (1-hot) -> dynamics  -> state[S], reward[1]
//                                                                 -> predict -> logits[action_dim], value[1]
//   Predict     state[S]                            -> predict   -> logits[action_dim], value[1]
//   Unrolled    obs, actions[K, action_dim] (1-hot rows): represent, predict, then K x (dynamics,
//               predict) -> logits[K+1, action_dim], values[K+1, 1], rewards[K, 1]   (training)
//
// S is what represent returns; every program's parameters are named after the function that makes
// them ("dynamics/dense_0/weight"), so one set of parameters serves the three programs.
#include "core/pdl/compiler_internal.hpp"
#include "core/pdl/learned_model.hpp"

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
    case LearnedModelPart::Program::Unrolled: return learnedUnrolled(part);
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
  const Value reward = part.unscaleHeads ? unscaled(next[1]) : next[1], value = part.unscaleHeads ? unscaled(heads[1]) : heads[1];
  emitOutputs({"state", "reward", "logits", "value"}, {next[0], reward, heads[0], value}, "recurrent");
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
  emitOutputs({"logits", "value"}, {heads[0], part.unscaleHeads ? unscaled(heads[1]) : heads[1]}, "predict");
  return std::move(out_);
}

Value Compiler::stackSteps(const std::vector<Value>& steps, Pos pos) {
  std::vector<NodeId> rows;
  Shape perStep = steps.front().shape;
  Shape withStepAxis = {opt_.batch, 1};
  withStepAxis.insert(withStepAxis.end(), perStep.begin(), perStep.end());
  for (const Value& v : steps) rows.push_back(b_.reshape(v.node, withStepAxis));
  Shape stacked = {std::int64_t(steps.size())};
  stacked.insert(stacked.end(), perStep.begin(), perStep.end());
  return tensor(rows.size() == 1 ? rows.front() : b_.concat(rows, 1), stacked, pos);
}

// h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1), the inner quotient
// written as 2 (|x| + 1 + eps) / (sqrt(1 + 4 eps (|x| + 1 + eps)) + 1): the same value without
// subtracting two numbers near 1, which would cost about 1e-4 of precision in fp32.
Value Compiler::unscaled(const Value& head) {
  const ir::NodeId x = head.node;
  const ir::NodeId shifted = b_.add(b_.abs(x), b_.scalar(1.0f + kValueScaleEpsilon));
  const ir::NodeId root = b_.unary(ir::Op::Sqrt, b_.add(b_.scalar(1), b_.scale(shifted, 4 * kValueScaleEpsilon)));
  const ir::NodeId quotient = b_.div(b_.scale(shifted, 2), b_.add(root, b_.scalar(1)));
  return tensor(b_.mul(b_.sign(x), b_.sub(b_.mul(quotient, quotient), b_.scalar(1))), head.shape, head.origin);
}

// 0.5 * state + 0.5 * stop_gradient(state): the same value, half the gradient into the dynamics
// that made it, as MuZero scales the gradient between unrolled steps.
Value Compiler::halveGradient(const Value& state) {
  const ir::NodeId half = b_.scale(state.node, 0.5f);
  const ir::NodeId stopped = b_.scale(b_.unary(ir::Op::StopGradient, state.node), 0.5f);
  return tensor(b_.add(half, stopped), state.shape, state.origin);
}

bool Compiler::unrollStep(const Function& dynamics, const Function& predict, const Value& actions, const LearnedModelPart& part, Value& state,
                          std::vector<Value>& rewards, std::vector<Value>& logits, std::vector<Value>& values) {
  const std::int64_t k = unrollStep_ - 1;
  b_.setOrigin("actions", actions.origin.line, actions.origin.column);
  const Value action = tensor(b_.reshape(b_.slice(actions.node, 1, k, 1), withBatch({opt_.actionCount})), {opt_.actionCount}, actions.origin);
  const Value stepped = callEntry(dynamics, {state, action});
  if (diags_.hasErrors()) return false;
  const std::vector<Value> next = returnedTensors(dynamics, stepped);
  if (next.empty() || !checkDynamicsResults(dynamics, stepped, next, part)) return false;
  recordLayers_ = false;  // predict's layers are listed at step 0
  const Value predicted = callEntry(predict, {next[0]});
  if (diags_.hasErrors()) return false;
  const std::vector<Value> heads = returnedTensors(predict, predicted);
  if (heads.empty() || !checkActorCritic(kPredictSubject, predict, predicted, heads)) return false;
  state = unrollStep_ < part.unrollSteps ? halveGradient(next[0]) : next[0];
  rewards.push_back(next[1]);
  logits.push_back(heads[0]);
  values.push_back(heads[1]);
  return true;
}

std::optional<CompiledPolicy> Compiler::learnedUnrolled(const LearnedModelPart& part) {
  const Function* represent = entryFunction("represent", {"the observation"});
  const Function* dynamics = entryFunction("dynamics", kDynamicsParameters);
  const Function* predict = entryFunction("predict", kStateParameter);
  if (!represent || !dynamics || !predict) return std::nullopt;
  const Pos param = represent->params[0].second;
  if (!inputFits(opt_.observationShape, "the observation", param)) return std::nullopt;
  const Value actions = entryInput("actions", {part.unrollSteps, opt_.actionCount}, dynamics->params[1].second);
  Value state = callEntry(*represent, {entryInput("obs", opt_.observationShape, param)});
  if (diags_.hasErrors()) return std::nullopt;
  const Value root = callEntry(*predict, {state});
  if (diags_.hasErrors()) return std::nullopt;
  const std::vector<Value> heads = returnedTensors(*predict, root);
  if (heads.empty() || !checkActorCritic(kPredictSubject, *predict, root, heads)) return std::nullopt;
  std::vector<Value> rewards, logits = {heads[0]}, values = {heads[1]};
  for (unrollStep_ = 1; unrollStep_ <= part.unrollSteps; ++unrollStep_) {
    if (!unrollStep(*dynamics, *predict, actions, part, state, rewards, logits, values)) return std::nullopt;
    recordLayers_ = false;  // dynamics' layers are listed at step 1
  }
  std::vector<Value> perStep = logits;
  perStep.insert(perStep.end(), values.begin(), values.end());
  perStep.insert(perStep.end(), rewards.begin(), rewards.end());
  keepOutputLayersFp32(perStep);
  const std::vector<Value> outs = {stackSteps(logits, heads[0].origin), stackSteps(values, heads[1].origin),
                                   stackSteps(rewards, rewards.front().origin)};
  emitOutputs({"logits", "values", "rewards"}, outs, "unrolled");
  return std::move(out_);
}

}  // namespace cas::pdl::detail
