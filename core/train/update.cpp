#include "core/train/update.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/exec/initialise.hpp"
#include "core/ir/autodiff.hpp"
#include "core/ir/passes.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/train/gradient_exchange.hpp"

namespace cas::train {
namespace {

using ir::NodeId;

std::vector<std::int64_t> allAxes(const ir::Shape& s) {
  std::vector<std::int64_t> axes;
  for (size_t d = 0; d < s.size(); ++d) axes.push_back(std::int64_t(d));
  return axes;
}


struct Heads {
  NodeId logits, value;  // [B, A], [B]
};

Heads splitHeads(ir::Builder& b, const pdl::CompiledPolicy& p, std::int64_t batch, std::int64_t actions) {
  const ir::Graph& g = b.graph();
  if (p.outputNames.size() == 2) {
    return {g.output(p.outputNames[0]), b.reshape(g.output(p.outputNames[1]), {batch})};
  }
  if (p.outputNames.size() != 1 || p.outputShapes[0] != std::vector<std::int64_t>{actions + 1})
    throw std::invalid_argument("the policy must return (logits, value) or one tensor of shape [action_dim + 1]");
  NodeId out = g.output(p.outputNames[0]);
  return {b.slice(out, 1, 0, actions), b.reshape(b.slice(out, 1, actions, 1), {batch})};
}

struct LossTerms {
  NodeId total;
  std::vector<std::pair<std::string, NodeId>> terms;
};

LossTerms policyGradientLoss(ir::Builder& b, const Heads& h, std::int64_t batch, std::int64_t actions) {
  NodeId actionIds = b.input("actions", {batch});
  NodeId advantages = b.input("advantages", {batch});
  NodeId returns = b.input("returns", {batch});
  NodeId logp = b.logSoftmax(h.logits, 1);
  std::vector<float> columns(static_cast<size_t>(actions));
  for (std::int64_t a = 0; a < actions; ++a) columns[size_t(a)] = float(a);
  NodeId oneHot = b.binary(ir::Op::Equal, b.reshape(actionIds, {batch, 1}), b.constant({actions}, std::move(columns)));
  NodeId chosen = b.reduceSum(b.mul(oneHot, logp), {1}, false);
  NodeId pg = b.unary(ir::Op::Neg, b.reduceMean(b.mul(chosen, advantages), {0}, false));
  NodeId err = b.sub(h.value, returns);
  NodeId valueLoss = b.scale(b.reduceMean(b.mul(err, err), {0}, false), 0.5f);
  NodeId p = b.unary(ir::Op::Exp, logp);
  NodeId entropy = b.reduceMean(b.unary(ir::Op::Neg, b.reduceSum(b.mul(p, logp), {1}, false)), {0}, false);
  NodeId total = b.sub(b.add(pg, valueLoss), b.scale(entropy, 0.01f));
  return {total, {{"policy", pg}, {"value", valueLoss}, {"entropy", entropy}}};
}

// PPO's clipped objective as CleanRL's ppo.py computes it, on one minibatch: advantages
// normalised over the minibatch (unbiased std, as torch.std), the probability ratio clipped, the
// value's move from its rollout estimate clipped, and the entropy bonus.
LossTerms ppoLoss(ir::Builder& b, const Heads& h, std::int64_t batch, std::int64_t actions) {
  NodeId actionIds = b.input("actions", {batch});
  NodeId advantages = b.input("advantages", {batch});
  NodeId returns = b.input("returns", {batch});
  NodeId oldLogProbs = b.input("old_log_probs", {batch});
  NodeId oldValues = b.input("old_values", {batch});
  NodeId clip = b.input(kPpoClip, {});
  NodeId valueCoef = b.input(kPpoValueCoef, {});
  NodeId entropyCoef = b.input(kPpoEntropyCoef, {});

  NodeId logp = b.logSoftmax(h.logits, 1);
  std::vector<float> columns(static_cast<size_t>(actions));
  for (std::int64_t a = 0; a < actions; ++a) columns[size_t(a)] = float(a);
  NodeId oneHot = b.binary(ir::Op::Equal, b.reshape(actionIds, {batch, 1}), b.constant({actions}, std::move(columns)));
  NodeId logRatio = b.sub(b.reduceSum(b.mul(oneHot, logp), {1}, false), oldLogProbs);
  NodeId ratio = b.unary(ir::Op::Exp, logRatio);

  NodeId centred = b.sub(advantages, b.reduceMean(advantages, {0}, false));
  NodeId variance = b.scale(b.reduceSum(b.mul(centred, centred), {0}, false), 1.0f / float(std::max<std::int64_t>(1, batch - 1)));
  NodeId normalised = b.div(centred, b.add(b.unary(ir::Op::Sqrt, variance), b.scalar(1e-8f)));

  NodeId one = b.scalar(1.0f);
  auto clamp = [&](NodeId x, NodeId lo, NodeId hi) { return b.binary(ir::Op::Minimum, b.binary(ir::Op::Maximum, x, lo), hi); };
  NodeId unclipped = b.mul(b.unary(ir::Op::Neg, normalised), ratio);
  NodeId clipped = b.mul(b.unary(ir::Op::Neg, normalised), clamp(ratio, b.sub(one, clip), b.add(one, clip)));
  NodeId policyLoss = b.reduceMean(b.binary(ir::Op::Maximum, unclipped, clipped), {0}, false);

  NodeId error = b.sub(h.value, returns);
  NodeId clippedValue = b.add(oldValues, clamp(b.sub(h.value, oldValues), b.unary(ir::Op::Neg, clip), clip));
  NodeId clippedError = b.sub(clippedValue, returns);
  NodeId worse = b.binary(ir::Op::Maximum, b.mul(error, error), b.mul(clippedError, clippedError));
  NodeId valueLoss = b.scale(b.reduceMean(worse, {0}, false), 0.5f);

  NodeId entropy = b.reduceMean(b.unary(ir::Op::Neg, b.reduceSum(b.mul(b.unary(ir::Op::Exp, logp), logp), {1}, false)), {0}, false);
  NodeId total = b.sub(b.add(policyLoss, b.mul(valueCoef, valueLoss)), b.mul(entropyCoef, entropy));

  // Diagnostics, not differentiated: how far the policy moved from the rollout's (k3 estimator of
  // the KL divergence) and the share of samples whose ratio the clip held.
  NodeId approxKl = b.reduceMean(b.sub(b.sub(ratio, one), logRatio), {0}, false);
  NodeId outside = b.add(b.binary(ir::Op::Greater, ratio, b.add(one, clip)), b.binary(ir::Op::Less, ratio, b.sub(one, clip)));
  NodeId clipFraction = b.reduceMean(outside, {0}, false);
  return {total, {{"policy", policyLoss}, {"value", valueLoss}, {"entropy", entropy}, {"approx_kl", approxKl}, {"clip_fraction", clipFraction}}};
}

// The L2 term weight_decay * sum(w^2) over the weights, added to `total` and listed as "l2".
void addWeightDecay(ir::Builder& b, float weightDecay, const std::vector<NodeId>& weights, NodeId& total,
                    std::vector<std::pair<std::string, NodeId>>& terms) {
  if (weightDecay <= 0 || weights.empty()) return;
  NodeId l2 = b.scalar(0);
  for (NodeId w : weights) l2 = b.add(l2, b.reduceSum(b.mul(w, w), allAxes(b.shape(w)), false));
  NodeId penalty = b.scale(l2, weightDecay);
  total = b.add(total, penalty);
  terms.emplace_back("l2", penalty);
}

LossTerms alphaZeroLoss(ir::Builder& b, const Heads& h, std::int64_t batch, std::int64_t actions, float weightDecay,
                        const std::vector<NodeId>& weights) {
  NodeId pi = b.input("policy_targets", {batch, actions});
  NodeId z = b.input("value_targets", {batch});
  NodeId logp = b.logSoftmax(h.logits, 1);
  NodeId policyLoss = b.reduceMean(b.unary(ir::Op::Neg, b.reduceSum(b.mul(pi, logp), {1}, false)), {0}, false);
  NodeId err = b.sub(h.value, z);
  NodeId valueLoss = b.reduceMean(b.mul(err, err), {0}, false);
  NodeId total = b.add(policyLoss, valueLoss);
  std::vector<std::pair<std::string, NodeId>> terms = {{"policy", policyLoss}, {"value", valueLoss}};
  addWeightDecay(b, weightDecay, weights, total, terms);
  NodeId entropy = b.reduceMean(b.unary(ir::Op::Neg, b.reduceSum(b.mul(b.unary(ir::Op::Exp, logp), logp), {1}, false)), {0}, false);
  terms.emplace_back("entropy", entropy);
  return {total, terms};
}

// MuZero's h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x, on targets only (no gradient needed).
NodeId muZeroScale(ir::Builder& b, NodeId x) {
  NodeId root = b.sub(b.unary(ir::Op::Sqrt, b.add(b.abs(x), b.scalar(1))), b.scalar(1));
  return b.add(b.mul(b.sign(x), root), b.scale(x, pdl::kValueScaleEpsilon));
}

// The mean over the batch of sum_k w_k * perStep[b, k]; w_0 = 1 when the steps include the root.
NodeId weightedStepMean(ir::Builder& b, NodeId perStep, std::int64_t steps, std::int64_t unroll, bool withRoot) {
  std::vector<float> w(size_t(steps), 1.0f / float(unroll));
  if (withRoot) w[0] = 1.0f;
  return b.reduceMean(b.reduceSum(b.mul(perStep, b.constant({steps}, std::move(w))), {1}, false), {0}, false);
}

LossTerms muZeroLoss(ir::Builder& b, const pdl::CompiledPolicy& p, std::int64_t batch, std::int64_t actions, float weightDecay,
                     const std::vector<NodeId>& weights) {
  const std::vector<std::string> expected = {"logits", "values", "rewards"};
  if (p.outputNames != expected || p.outputShapes[0].size() != 2 || p.outputShapes[0][1] != actions || p.outputShapes[0][0] < 2)
    throw std::invalid_argument("MuZero's loss needs a learned model's unrolled program, with outputs (logits, values, rewards)");
  const ir::Graph& g = b.graph();
  const std::int64_t steps = p.outputShapes[0][0], unroll = steps - 1;
  NodeId pi = b.input("policy_targets", {batch, steps, actions});
  NodeId z = b.input("value_targets", {batch, steps});
  NodeId u = b.input("reward_targets", {batch, unroll});
  NodeId logp = b.logSoftmax(g.output("logits"), 2);
  NodeId crossEntropy = b.unary(ir::Op::Neg, b.reduceSum(b.mul(pi, logp), {2}, false));
  NodeId policyLoss = weightedStepMean(b, crossEntropy, steps, unroll, true);
  NodeId valueError = b.sub(b.reshape(g.output("values"), {batch, steps}), muZeroScale(b, z));
  NodeId valueLoss = weightedStepMean(b, b.mul(valueError, valueError), steps, unroll, true);
  NodeId rewardError = b.sub(b.reshape(g.output("rewards"), {batch, unroll}), muZeroScale(b, u));
  NodeId rewardLoss = weightedStepMean(b, b.mul(rewardError, rewardError), unroll, unroll, false);
  NodeId total = b.add(b.add(policyLoss, b.scale(valueLoss, kMuZeroValueWeight)), rewardLoss);
  std::vector<std::pair<std::string, NodeId>> terms = {{"policy", policyLoss}, {"value", valueLoss}, {"reward", rewardLoss}};
  addWeightDecay(b, weightDecay, weights, total, terms);
  return {total, terms};
}

// The loss of `lossKind` over the policy's outputs and its gradients by parameter, appended to
// the policy's graph.
struct LossAndGradients {
  LossTerms loss;
  std::vector<NodeId> params, grads;
};

LossAndGradients appendLossAndGradients(ir::Builder& b, const pdl::CompiledPolicy& policy, LossKind lossKind, const OptimizerConfig& config,
                                        std::int64_t actions) {
  ir::Graph& g = b.graph();
  b.setOrigin("loss", 0, 0);
  const std::int64_t batch = g.node(g.findInput("obs")).shape[0];
  LossAndGradients out;
  out.params = g.inputsWithRole(ir::InputRole::Parameter);
  std::vector<NodeId> weights;
  for (NodeId p : out.params)
    if (g.node(p).attrs.name.ends_with("/weight")) weights.push_back(p);

  if (lossKind == LossKind::MuZero) {
    out.loss = muZeroLoss(b, policy, batch, actions, config.weightDecay, weights);
    out.grads = ir::appendGradients(b, out.loss.total, out.params);
    return out;
  }
  Heads heads = splitHeads(b, policy, batch, actions);
  switch (lossKind) {
    case LossKind::PolicyGradient: out.loss = policyGradientLoss(b, heads, batch, actions); break;
    case LossKind::AlphaZero: out.loss = alphaZeroLoss(b, heads, batch, actions, config.weightDecay, weights); break;
    case LossKind::Ppo: out.loss = ppoLoss(b, heads, batch, actions); break;
    case LossKind::MuZero: break;  // above: its outputs are not one step's heads
  }
  out.grads = ir::appendGradients(b, out.loss.total, out.params);
  return out;
}

// Global-norm clipping and the optimizer's step of every parameter from its gradient, with the
// optimizer state as inputs and the new values as updates; returns the gradients' norm.
NodeId appendOptimizerStep(ir::Builder& b, const std::vector<NodeId>& params, const std::vector<NodeId>& grads, const OptimizerConfig& config) {
  ir::Graph& g = b.graph();
  b.setOrigin("optimizer", 0, 0);
  NodeId sumSquares = b.scalar(0);
  for (NodeId gr : grads) sumSquares = b.add(sumSquares, b.reduceSum(b.mul(gr, gr), allAxes(b.shape(gr)), false));
  NodeId norm = b.unary(ir::Op::Sqrt, sumSquares);
  NodeId clip = b.input("optimizer/clip", {}, ir::InputRole::State);
  // As torch.nn.utils.clip_grad_norm_: scale by min(1, clip / (norm + 1e-6)).
  NodeId coefficient = b.binary(ir::Op::Minimum, b.scalar(1.0f), b.div(clip, b.add(norm, b.scalar(1e-6f))));
  NodeId stepSize = b.input("optimizer/step_size", {}, ir::InputRole::State);
  NodeId bc2 = b.input("optimizer/bias_correction2_rsqrt", {}, ir::InputRole::State);

  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Node param = g.node(params[i]);
    const std::string& name = param.attrs.name;
    NodeId gr = b.mul(grads[i], coefficient);
    NodeId updated;
    if (config.kind == "adam") {
      NodeId m = b.input("adam.m/" + name, param.shape, ir::InputRole::State);
      NodeId v = b.input("adam.v/" + name, param.shape, ir::InputRole::State);
      NodeId m2 = b.add(b.scale(m, config.beta1), b.scale(gr, 1.0f - config.beta1));
      NodeId v2 = b.add(b.scale(v, config.beta2), b.scale(b.mul(gr, gr), 1.0f - config.beta2));
      NodeId denom = b.add(b.mul(b.unary(ir::Op::Sqrt, v2), bc2), b.scalar(config.epsilon));
      updated = b.sub(params[i], b.mul(stepSize, b.div(m2, denom)));
      g.outputs.push_back({"new:adam.m/" + name, m2});
      g.outputs.push_back({"new:adam.v/" + name, v2});
      g.updates.push_back({"new:adam.m/" + name, "adam.m/" + name});
      g.updates.push_back({"new:adam.v/" + name, "adam.v/" + name});
    } else if (config.kind == "sgd") {
      NodeId buf = b.input("sgd.momentum/" + name, param.shape, ir::InputRole::State);
      NodeId buf2 = b.add(b.scale(buf, config.momentum), gr);
      updated = b.sub(params[i], b.mul(stepSize, buf2));
      g.outputs.push_back({"new:sgd.momentum/" + name, buf2});
      g.updates.push_back({"new:sgd.momentum/" + name, "sgd.momentum/" + name});
    } else {
      throw std::invalid_argument("unknown optimizer '" + config.kind + "'; expected adam or sgd");
    }
    g.outputs.push_back({"new:" + name, updated});
    g.updates.push_back({"new:" + name, name});
  }
  return norm;
}

// The loss and its terms as outputs, each also summed in place over the steps, so that a phase of
// steps is read once.
void appendLossOutputs(ir::Builder& b, const LossTerms& loss) {
  ir::Graph& g = b.graph();
  std::vector<std::pair<std::string, NodeId>> summed = {{"loss", loss.total}};
  for (const auto& [term, node] : loss.terms) summed.emplace_back("loss/" + term, node);
  for (const auto& [name, node] : summed) {
    NodeId sum = b.input(std::string(kLossSumPrefix) + name, b.shape(node), ir::InputRole::Data);
    g.outputs.push_back({std::string("new:") + kLossSumPrefix + name, b.add(sum, node)});
    g.updates.push_back({std::string("new:") + kLossSumPrefix + name, kLossSumPrefix + name});
  }
}

}  // namespace

ir::Graph buildUpdateGraph(pdl::CompiledPolicy policy, LossKind lossKind, const OptimizerConfig& config, std::int64_t actions) {
  ir::Graph& g = policy.graph;
  ir::Builder b(g);
  const LossAndGradients lg = appendLossAndGradients(b, policy, lossKind, config, actions);
  const NodeId norm = appendOptimizerStep(b, lg.params, lg.grads, config);
  g.outputs.push_back({"loss", lg.loss.total});
  for (const auto& [term, node] : lg.loss.terms) g.outputs.push_back({"loss/" + term, node});
  g.outputs.push_back({"grad_norm", norm});
  appendLossOutputs(b, lg.loss);
  g.name = policy.graph.name + "_update";
  ir::runPasses(g, ir::defaultPipeline());
  return std::move(g);
}

ir::Graph buildGradientGraph(pdl::CompiledPolicy policy, LossKind lossKind, const OptimizerConfig& config, std::int64_t actions) {
  ir::Graph& g = policy.graph;
  ir::Builder b(g);
  const LossAndGradients lg = appendLossAndGradients(b, policy, lossKind, config, actions);
  for (size_t i = 0; i < lg.params.size(); ++i) g.outputs.push_back({std::string(kGradientPrefix) + g.node(lg.params[i]).attrs.name, lg.grads[i]});
  g.outputs.push_back({"loss", lg.loss.total});
  for (const auto& [term, node] : lg.loss.terms) g.outputs.push_back({"loss/" + term, node});
  appendLossOutputs(b, lg.loss);
  g.name = policy.graph.name + "_gradients";
  ir::runPasses(g, ir::defaultPipeline());
  return std::move(g);
}

ir::Graph buildOptimizerGraph(const pdl::CompiledPolicy& policy, const OptimizerConfig& config) {
  ir::Graph g;
  ir::Builder b(g);
  std::vector<NodeId> params, grads;
  // The parameters first, in the policy's order, so that a checkpoint of this program lists its
  // tensors in the update graph's order.
  for (NodeId p : policy.graph.inputsWithRole(ir::InputRole::Parameter)) {
    const ir::Node& n = policy.graph.node(p);
    params.push_back(b.input(n.attrs.name, n.shape, ir::InputRole::Parameter, n.attrs.init, n.attrs.fanIn));
  }
  for (NodeId p : params) grads.push_back(b.input(std::string(kGradientPrefix) + g.node(p).attrs.name, g.node(p).shape, ir::InputRole::Data));
  g.outputs.push_back({"grad_norm", appendOptimizerStep(b, params, grads, config)});
  g.name = policy.graph.name + "_optimizer";
  ir::runPasses(g, ir::defaultPipeline());
  return g;
}

Updater::Updater(exec::Backend& backend, const pdl::CompiledPolicy& policy, LossKind loss, OptimizerConfig config,
                 std::int64_t actionCount, std::uint64_t seed, GradientExchange* exchange)
    : config_(std::move(config)), exchange_(exchange), parameters_(policy.parameters) {
  if (exchange_) {
    exe_ = backend.compile(buildGradientGraph(policy, loss, config_, actionCount));
    optimizer_ = backend.compile(buildOptimizerGraph(policy, config_));
    exchange_->setLayout(parameters_);
  } else {
    exe_ = backend.compile(buildUpdateGraph(policy, loss, config_, actionCount));
  }
  for (const ir::Node& n : exe_->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
      std::vector<float> v = exec::initialValues(n, seed);
      exe_->setInput(n.attrs.name, v.data(), v.size());
      if (optimizer_) optimizer_->setInput(n.attrs.name, v.data(), v.size());
    }
}

float Updater::step() {
  enqueueStep();
  float loss = 0;
  exe_->readOutput("loss", &loss, 1);
  return loss;
}

void Updater::enqueueStep() {
  ++steps_;
  const double t = double(steps_);
  float stepSize = config_.learningRate, bc2 = 1.0f;
  if (config_.kind == "adam") {
    stepSize = float(config_.learningRate / (1.0 - std::pow(double(config_.beta1), t)));
    bc2 = float(1.0 / std::sqrt(1.0 - std::pow(double(config_.beta2), t)));
  }
  const float clip = config_.gradClip > 0 ? config_.gradClip : 3.0e38f;
  exec::Executable& state = stateProgram();
  state.setInput("optimizer/step_size", &stepSize, 1);
  state.setInput("optimizer/bias_correction2_rsqrt", &bc2, 1);
  if (clip != lastClip_) state.setInput("optimizer/clip", &clip, 1);
  lastClip_ = clip;
  if (!exchange_) {
    exe_->run();
    return;
  }
  exchange_->failIfInjected(steps_);
  exchange_->runAndAverageGradients(*exe_, *optimizer_);
  optimizer_->run();
  // The new weights back into the gradient program for the next step's forward pass.
  for (const pdl::ParameterSummary& p : parameters_) exe_->copyInputFrom(p.name, *optimizer_, p.name);
  exchange_->checkEqualState(*optimizer_, steps_);
}

std::vector<std::string> Updater::lossNames() const {
  std::vector<std::string> names;
  for (const ir::Node& n : exe_->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.name.starts_with(kLossSumPrefix)) names.push_back(n.attrs.name);
  return names;
}

void Updater::resetLossSums() {
  const float zero = 0;
  for (const std::string& name : lossNames()) exe_->setInput(name, &zero, 1);
}

LossSums Updater::lossSums() const {
  LossSums sums;
  for (const std::string& name : lossNames()) {
    float v = 0;
    exe_->readInput(name, &v, 1);
    const std::string term = name.substr(std::string_view(kLossSumPrefix).size());
    if (term == "loss") sums.total = v;
    else sums.terms.emplace_back(term.substr(5), v);  // after "loss/"
  }
  return sums;
}

std::vector<float> Updater::parameter(const std::string& name) const {
  for (const pdl::ParameterSummary& p : parameters_)
    if (p.name == name) {
      std::vector<float> v(size_t(ir::numel(p.shape)));
      stateProgram().readInput(name, v.data(), v.size());
      return v;
    }
  throw std::invalid_argument("no parameter named '" + name + "'");
}

void Updater::setParameter(const std::string& name, const std::vector<float>& values) {
  stateProgram().setInput(name, values.data(), values.size());
  if (!optimizer_) return;
  for (const pdl::ParameterSummary& p : parameters_)
    if (p.name == name) exe_->setInput(name, values.data(), values.size());
}

}  // namespace cas::train
