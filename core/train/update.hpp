#pragma once
// Training updates built on the IR: a loss over the policy's outputs, reverse-mode gradients,
// global-norm clipping and an optimizer step (Adam or SGD with momentum), all one graph that any
// backend runs; parameters and optimizer state are updated in place through the graph's updates.
//
// Graph interface (names of inputs and outputs):
//   inputs   obs, the loss's targets (see LossKind), parameters by name, optimizer state
//            "adam.m/<param>", "adam.v/<param>" or "sgd.momentum/<param>", and the scalars
//            "optimizer/step_size", "optimizer/bias_correction2_rsqrt", "optimizer/clip"
//   outputs  "loss", each loss term ("loss/<term>"), "grad_norm"
//   sums     "loss_sum/loss", "loss_sum/loss/<term>": scalar inputs that each run adds its loss
//            output to (through the updates), read once after a phase of steps
//
// Data-parallel training (data_parallel.hpp) needs the ranks' gradients summed between the
// backward pass and the step, so there the same graph is built in two programs: the gradient
// program (obs, targets and parameters in; "grad/<param>", the loss outputs and sums out) and the
// optimizer program (parameters, "grad/<param>" and optimizer state in; clipping and the step,
// "grad_norm" out, parameters and state updated in place). The optimizer program holds the same
// stored tensors as the fused graph, so a checkpoint of either loads into the other.
#include <memory>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/pdl/compiler.hpp"

namespace cas::train {

enum class LossKind {
  // The figures in TARGETS.md: targets "actions" [B] (integer-valued), "advantages" [B],
  // "returns" [B]; loss = -mean(logp[a] * adv) + 0.5 * mean((v - ret)^2) - 0.01 * mean(entropy).
  // A policy returning one tensor uses its last column as the value.
  PolicyGradient,
  // AlphaZero: targets "policy_targets" [B, A] (visit distributions), "value_targets" [B];
  // loss = mean(-sum(pi * logp)) + mean((v - z)^2) + weight_decay * sum(w^2) over weights.
  AlphaZero,
  // PPO's clipped objective (CleanRL's ppo.py): targets "actions" [B], "advantages" [B] (raw; the
  // graph normalises them over the minibatch), "returns" [B], "old_log_probs" [B] and
  // "old_values" [B] from the rollout, and the scalars kPpoClip, kPpoValueCoef, kPpoEntropyCoef;
  // loss = mean(max(-A r, -A clamp(r, 1-c, 1+c))) + vf * 0.5 mean(max((v-R)^2, (v_clipped-R)^2))
  //        - ent * mean(entropy), r = exp(logp[a] - old_log_probs), v_clipped = old_values +
  //        clamp(v - old_values, -c, c). Terms: policy, value, entropy, approx_kl, clip_fraction.
  Ppo,
  // MuZero's unrolled loss over a learned model's `unrolled` program (core/pdl/learned_model.hpp:
  // outputs "logits" [B, K+1, A], "values" [B, K+1, 1], "rewards" [B, K, 1]): targets
  // "policy_targets" [B, K+1, A] (zero rows past an episode's end), "value_targets" [B, K+1] and
  // "reward_targets" [B, K], both scaled by h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x in the
  // graph (eps: pdl::kValueScaleEpsilon; the search's programs undo it, LearnedModelOptions::scaledHeads); each step weighted 1 (k = 0) or 1/K; loss = policy + kMuZeroValueWeight * value +
  // reward (+ weight_decay * sum(w^2)), each term a mean over the batch of the weighted sum over
  // steps. Golden data: tests/golden/make_muzero_golden.py.
  MuZero,
};

inline constexpr float kMuZeroValueWeight = 0.25f;

inline constexpr const char* kPpoClip = "ppo/clip";
inline constexpr const char* kPpoValueCoef = "ppo/value_coef";
inline constexpr const char* kPpoEntropyCoef = "ppo/entropy_coef";

struct OptimizerConfig {
  std::string kind = "adam";  // "adam" or "sgd"
  float learningRate = 1e-3f;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  float momentum = 0.9f;
  float gradClip = 5.0f;     // 0 disables clipping
  float weightDecay = 0.0f;  // AlphaZero's L2 term
};

inline constexpr const char* kLossSumPrefix = "loss_sum/";
inline constexpr const char* kGradientPrefix = "grad/";

// The loss and its terms summed over the steps since Updater::resetLossSums.
struct LossSums {
  double total = 0;
  std::vector<std::pair<std::string, double>> terms;  // "policy", "value", "entropy", "l2"...
  double term(const std::string& name) const {
    for (const auto& [n, v] : terms)
      if (n == name) return v;
    return 0;
  }
};

// Builds the update graph from a compiled policy (its graph is extended in place).
ir::Graph buildUpdateGraph(pdl::CompiledPolicy policy, LossKind loss, const OptimizerConfig& config, std::int64_t actionCount);
// The two halves of the update graph, for data-parallel training (see above).
ir::Graph buildGradientGraph(pdl::CompiledPolicy policy, LossKind loss, const OptimizerConfig& config, std::int64_t actionCount);
ir::Graph buildOptimizerGraph(const pdl::CompiledPolicy& policy, const OptimizerConfig& config);

class GradientExchange;

// Drives an update graph on a backend: owns the step count for Adam's bias correction. Given a
// GradientExchange (one rank of data-parallel training), it runs the gradient and optimizer
// programs instead, the ranks' gradients averaged between them.
class Updater {
 public:
  Updater(exec::Backend& backend, const pdl::CompiledPolicy& policy, LossKind loss, OptimizerConfig config,
          std::int64_t actionCount, std::uint64_t seed, GradientExchange* exchange = nullptr);

  // The program a step's batch is set into and its loss sums read from: the update program, or
  // the gradient program of a data-parallel rank.
  exec::Executable& executable() { return *exe_; }
  // The program holding the parameters and optimizer state (a checkpoint's tensors): the update
  // program, or the optimizer program of a data-parallel rank.
  exec::Executable& stateProgram() { return optimizer_ ? *optimizer_ : *exe_; }
  const exec::Executable& stateProgram() const { return optimizer_ ? *optimizer_ : *exe_; }
  const std::vector<pdl::ParameterSummary>& parameters() const { return parameters_; }
  void setConfig(const OptimizerConfig& config) { config_ = config; }

  // One update on the data set by setInput (obs and targets); returns the loss before the step.
  float step();
  // The same update, queued without waiting for it (a GPU backend runs it asynchronously);
  // executable().finish() or any read waits.
  void enqueueStep();
  std::int64_t steps() const { return steps_; }
  // The rank's collectives when this updater is one rank of data-parallel training, else null.
  GradientExchange* exchange() { return exchange_; }
  void resetLossSums();
  LossSums lossSums() const;  // waits for the queued steps
  void setSteps(std::int64_t steps) { steps_ = steps; }  // when resuming (Adam's bias correction)

  std::vector<float> parameter(const std::string& name) const;
  std::vector<std::string> lossNames() const;  // the sum inputs
  // Sets a stored input of the state program (a parameter or optimizer state, as a checkpoint
  // restores them); a parameter reaches the gradient program too.
  void setParameter(const std::string& name, const std::vector<float>& values);

 private:
  OptimizerConfig config_;
  std::unique_ptr<exec::Executable> exe_;
  std::unique_ptr<exec::Executable> optimizer_;  // data-parallel only
  GradientExchange* exchange_ = nullptr;         // data-parallel only
  std::vector<pdl::ParameterSummary> parameters_;
  std::int64_t steps_ = 0;
  float lastClip_ = -1;  // the clip value last given to the graph (set again only when it changes)
};

}  // namespace cas::train
