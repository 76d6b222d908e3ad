#include "core/params/parameters.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/params/run_params.hpp"
#include "core/support/printable.hpp"

// Marks help texts for the studio's translation catalogue without depending on Qt: lupdate reads
// this token in the source text; here it is the identity.
#define QT_TRANSLATE_NOOP(context, text) text

namespace cas::params {
namespace {

ParameterSpec intParam(std::string name, std::int64_t lo, std::int64_t hi, std::int64_t def, bool live, std::string help) {
  return {std::move(name), ParamType::Int, double(lo), double(hi), {}, def, std::move(help), live};
}
ParameterSpec floatParam(std::string name, double lo, double hi, double def, bool live, std::string help) {
  return {std::move(name), ParamType::Float, lo, hi, {}, def, std::move(help), live};
}
ParameterSpec boolParam(std::string name, bool def, bool live, std::string help) {
  return {std::move(name), ParamType::Bool, 0, 1, {}, def, std::move(help), live};
}
ParameterSpec choiceParam(std::string name, std::vector<std::string> choices, std::string def, bool live, std::string help) {
  return {std::move(name), ParamType::Choice, 0, 0, std::move(choices), std::move(def), std::move(help), live};
}

// The one declaration of every tunable parameter. docs/project-format.md documents the same list;
// tests/core/test_parameters.cpp checks that the document and this table agree.
std::vector<ParameterSpec> standardSpecs() {
  constexpr bool kLive = true, kRestart = false;
  return {
      intParam("search.simulations", 1, 100000, kSearchDefaults.simulations, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Simulations per move in self-play.")),
      floatParam("search.c_puct", 0.0, 100.0, kSearchDefaults.cPuct, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Exploration constant of the PUCT selection rule.")),
      floatParam("search.dirichlet_alpha", 0.001, 10.0, kSearchDefaults.dirichletAlpha, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Concentration of the Dirichlet noise added to root priors.")),
      floatParam("search.dirichlet_fraction", 0.0, 1.0, kSearchDefaults.dirichletFraction, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Weight of the Dirichlet noise in root priors (0 disables it).")),
      intParam("search.leaves_per_step", 1, 64, kSearchDefaults.leavesPerStep, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Leaves selected per game per step, spread by virtual loss.")),
      floatParam("search.virtual_loss", 0.0, 10.0, kSearchDefaults.virtualLoss, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Virtual loss added on a path while its leaf awaits evaluation.")),
      floatParam("search.temperature", 0.0, 10.0, kSearchDefaults.temperature, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Move-choice temperature over root visits in the opening (0 picks the most visited).")),
      intParam("search.temperature_moves", 0, 1000, kSearchDefaults.temperatureMoves, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Moves per game played with the temperature; later moves pick the most visited.")),
      intParam("search.node_budget", 64, 1 << 24, kSearchDefaults.nodeBudget, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Tree nodes per game; when full, least recently used subtrees are recycled.")),
      choiceParam("search.root_policy", {"puct", "gumbel"}, "puct", kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Root action selection: PUCT with Dirichlet noise, or Gumbel sequential halving.")),
      intParam("search.gumbel_arms", 2, 512, kSearchDefaults.gumbelArms, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Actions sampled at the root by the Gumbel policy.")),
      boolParam("search.subtree_reuse", kSearchDefaults.subtreeReuse, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Keep the chosen child's subtree as the next root.")),
      choiceParam("search.device", {"auto", "cpu", "gpu"}, "auto", kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Where the search runs: auto keeps the trees on the GPU when the CUDA backend runs the network, cpu keeps them on the CPU (for comparison).")),
      choiceParam("search.selection", {"masked", "branchy"}, "masked", kLive, QT_TRANSLATE_NOOP("cas::Parameters", "GPU selection kernel: masked (predicated, lanes stay together) or branchy (loops and branches as written).")),
      boolParam("search.instrument", kSearchDefaults.instrument, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Count SIMT efficiency and record an SM timeline in the GPU search's kernels (slightly slower).")),

      intParam("train.parallel_games", 1, 65536, 64, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Self-play games played side by side, evaluated in one batch.")),
      intParam("train.games_per_iteration", 1, 1000000, 64, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Finished self-play games between training phases.")),
      intParam("train.batch_size", 1, 65536, 256, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Samples per training step.")),
      intParam("train.steps_per_iteration", 1, 100000, 32, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Training steps per iteration.")),
      boolParam("train.overlap", true, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Self-play and training side by side: each iteration's training steps read the positions of earlier iterations while self-play plays the next games, and the new weights reach self-play when the iteration ends. Off: one after the other (lock-step), for debugging.")),
      choiceParam("train.optimizer", {"adam", "sgd"}, "adam", kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Optimizer.")),
      floatParam("train.learning_rate", 1e-7, 10.0, 1e-3, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Optimizer step size.")),
      floatParam("train.momentum", 0.0, 0.999, 0.9, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Momentum of the SGD optimizer.")),
      floatParam("train.weight_decay", 0.0, 1.0, 1e-4, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "L2 penalty on the weights in the loss.")),
      floatParam("train.grad_clip", 0.0, 1e6, 5.0, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Global-norm gradient clipping threshold (0 disables clipping).")),
      intParam("train.replay_capacity", 64, 100000000, 100000, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Positions kept in the replay buffer.")),
      intParam("train.eval_every", 1, 100000, 5, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Iterations between evaluations against the baselines.")),
      intParam("train.eval_games", 0, 100000, 20, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Games per baseline at each evaluation.")),
      intParam("train.checkpoint_every", 1, 100000, 1, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Iterations between checkpoints.")),

      intParam("ppo.envs", 1, 65536, 4, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: environments stepped side by side, their policy evaluated in one batch.")),
      intParam("ppo.rollout_steps", 1, 100000, 128, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: steps of every environment per rollout; a rollout of ppo.envs x ppo.rollout_steps samples feeds each update.")),
      intParam("ppo.minibatches", 1, 65536, 4, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: minibatches each rollout is shuffled into per epoch; it must divide ppo.envs x ppo.rollout_steps.")),
      intParam("ppo.epochs", 1, 1000, 4, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: passes over each rollout's samples per update.")),
      intParam("ppo.total_steps", 1, 1000000000000, 500000, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: environment steps of the whole run; the learning rate anneals to zero over them and the run ends there.")),
      floatParam("ppo.learning_rate", 1e-7, 1.0, 2.5e-4, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: Adam's step size at the start of the run.")),
      boolParam("ppo.anneal_lr", true, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: lower the learning rate linearly to zero over ppo.total_steps.")),
      floatParam("ppo.gamma", 0.0, 1.0, 0.99, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: discount factor of future rewards.")),
      floatParam("ppo.gae_lambda", 0.0, 1.0, 0.95, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: lambda of generalised advantage estimation (0: one-step TD, 1: Monte Carlo).")),
      floatParam("ppo.clip", 0.0, 10.0, 0.2, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: the probability ratio is clipped to [1 - clip, 1 + clip], and the value's change per update to +-clip.")),
      floatParam("ppo.value_coef", 0.0, 100.0, 0.5, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: weight of the value loss in the total loss.")),
      floatParam("ppo.entropy_coef", 0.0, 10.0, 0.01, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: weight of the entropy bonus (subtracted from the loss).")),
      floatParam("ppo.max_grad_norm", 0.0, 1e6, 0.5, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "PPO: global-norm gradient clipping threshold (0 disables clipping).")),
      boolParam("ppo.device_rollout", true, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "PPO on the CUDA backend: step the environments' device twins and keep the rollout and its minibatches on the device (off: the CPU twins step on the host). A backend without device twins, such as the CPU backend, steps the CPU twins either way.")),

      intParam("muzero.copies", 1, 65536, 64, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: environment copies played side by side, every move of all of them chosen by one batched search over the learned model ([search] sets the search).")),
      intParam("muzero.unroll_steps", 1, 64, 5, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: steps of dynamics the training graph unrolls from each sampled position (K).")),
      intParam("muzero.td_steps", 1, 10000, 10, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: rewards summed before a value target bootstraps from the search's root value (n).")),
      floatParam("muzero.discount", 0.0, 1.0, 0.997, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: discount of future rewards, in the search's backups and in the value targets.")),
      intParam("muzero.moves_per_iteration", 1, 100000, 16, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: moves of every copy per iteration, before its training steps.")),
      intParam("muzero.updates_per_iteration", 0, 100000, 8, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: training steps per iteration, each on train.batch_size positions drawn from the replay.")),
      floatParam("muzero.temperature", 0.0, 10.0, 1.0, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: self-play draws its move with probability proportional to visits^(1/temperature); 0 plays the most visited.")),
      floatParam("muzero.min_max_floor", 0.0, 1e6, 0.0, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: the smallest span of Q values the search's min-max normalisation divides by (0: the span seen, as MuZero does); above 0, values that differ only by the model's noise, in a tree whose rewards are all zero, are not stretched to [0, 1].")),
      intParam("muzero.total_steps", 1, 1000000000000, 1000000, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "MuZero: environment steps of the whole run; the run ends there.")),

      choiceParam("trading.reward", {"price", "equity"}, "price", kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Trading: what a step rewards: price, gym-anytrading's price change of each closed long (fees not counted); equity, the change of the equity in percent of the starting money (fees counted).")),
      floatParam("trading.train_fraction", 0.05, 0.95, 0.8, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Trading: the share of the price series, from its start, that training draws its episodes from; eval trades the rest, held out.")),

      choiceParam("runtime.device", {"auto", "cpu", "cuda"}, "auto", kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Backend: auto uses CUDA when it is available, else the CPU.")),
      intParam("runtime.threads", 0, 1024, 0, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "CPU worker threads (0 uses every core).")),
      intParam("runtime.seed", 0, 2147483647, 1, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Seed of every random choice in the run.")),
      intParam("runtime.threads_per_block", 0, 1024, 0, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "CUDA threads per block (0 asks the occupancy calculator).")),

      intParam("dist.bucket_kib", 1, 1 << 20, 4096, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Data-parallel training: gradients are summed across ranks in buckets of about this many KiB, each started as soon as its gradients exist.")),
      intParam("dist.checksum_every", 1, 1000000, 10, kLive, QT_TRANSLATE_NOOP("cas::Parameters", "Data-parallel training: optimizer steps between checks that every rank holds the same weights and optimizer state (a difference stops the run).")),
      floatParam("dist.timeout_seconds", 1.0, 86400.0, 300.0, kRestart, QT_TRANSLATE_NOOP("cas::Parameters", "Data-parallel training: how long a rank waits for the others in a collective before it stops the run with an error naming the rank that did not answer.")),
  };
}

// Six significant digits, or as many more as it takes to read back as the same number:
// "100.0001" stays "100.0001" in a message, where "100" would contradict the range it breaks.
std::string formatNumber(double v) {
  char b[32];
  for (int digits = 6;; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (digits >= 17 || !std::isfinite(v) || std::strtod(b, nullptr) == v) return b;
  }
}

}  // namespace

const ParameterRegistry& ParameterRegistry::standard() {
  static const ParameterRegistry registry(standardSpecs());
  return registry;
}

const ParameterSpec* ParameterRegistry::find(std::string_view name) const {
  for (const ParameterSpec& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> ParameterRegistry::sections() const {
  std::vector<std::string> out;
  for (const ParameterSpec& s : specs_)
    if (out.empty() || out.back() != s.section()) out.push_back(s.section());
  return out;
}

std::vector<const ParameterSpec*> ParameterRegistry::inSection(std::string_view section) const {
  std::vector<const ParameterSpec*> out;
  for (const ParameterSpec& s : specs_)
    if (s.section() == section) out.push_back(&s);
  return out;
}

const char* typeName(ParamType t) {
  switch (t) {
    case ParamType::Int: return "integer";
    case ParamType::Float: return "number";
    case ParamType::Bool: return "boolean";
    case ParamType::Choice: return "string";
  }
  return "value";
}

std::string describeRange(const ParameterSpec& spec) {
  switch (spec.type) {
    case ParamType::Int:
      return "an integer in [" + std::to_string(std::int64_t(spec.min)) + ", " + std::to_string(std::int64_t(spec.max)) + "]";
    case ParamType::Float: return "a number in [" + formatNumber(spec.min) + ", " + formatNumber(spec.max) + "]";
    case ParamType::Bool: return "true or false";
    case ParamType::Choice: {
      std::string s = "one of:";
      for (size_t i = 0; i < spec.choices.size(); ++i) s += (i ? ", " : " ") + spec.choices[i];
      return s;
    }
  }
  return {};
}

std::string formatValue(const ParamValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return formatNumber(*d);
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

std::optional<std::string> checkValue(const ParameterSpec& spec, const ParamValue& value, std::string_view written) {
  auto outOfRange = [&] {
    return spec.name + " = " + (written.empty() ? formatValue(value) : std::string(written)) + " is out of range: expected " + describeRange(spec);
  };
  auto wrongType = [&] { return spec.name + " expects " + describeRange(spec); };
  switch (spec.type) {
    case ParamType::Int: {
      auto* i = std::get_if<std::int64_t>(&value);
      if (!i) return wrongType();
      if (double(*i) < spec.min || double(*i) > spec.max) return outOfRange();
      return std::nullopt;
    }
    case ParamType::Float: {
      auto* d = std::get_if<double>(&value);
      if (!d) return wrongType();
      if (!std::isfinite(*d) || *d < spec.min || *d > spec.max) return outOfRange();
      return std::nullopt;
    }
    case ParamType::Bool:
      if (!std::holds_alternative<bool>(value)) return wrongType();
      return std::nullopt;
    case ParamType::Choice: {
      auto* s = std::get_if<std::string>(&value);
      if (!s) return wrongType();
      for (const std::string& c : spec.choices)
        if (c == *s) return std::nullopt;
      return spec.name + " = " + quoteValue(*s) + " is not allowed: expected " + describeRange(spec);  // quoted cut: it may be 100 KB
    }
  }
  return wrongType();
}

ParameterSet::ParameterSet() {
  for (const ParameterSpec& s : ParameterRegistry::standard().all()) values_.emplace(s.name, s.defaultValue);
}

std::optional<std::string> ParameterSet::set(std::string_view name, const ParamValue& value) {
  const ParameterSpec* spec = ParameterRegistry::standard().find(name);
  if (!spec) return "unknown parameter " + quoteValue(name);
  if (auto problem = checkValue(*spec, value)) return problem;
  values_.find(name)->second = value;
  return std::nullopt;
}

std::optional<std::string> ParameterSet::assign(std::string_view keyEqualsValue) {
  size_t eq = keyEqualsValue.find('=');
  if (eq == std::string_view::npos)
    return "expected key=value, got " + quoteValue(keyEqualsValue);
  std::string_view key = keyEqualsValue.substr(0, eq);
  const ParameterSpec* spec = ParameterRegistry::standard().find(key);
  if (!spec) return "unknown parameter " + quoteValue(key) + " (`cuda-agent params` lists them)";
  std::string error;
  auto value = parseValue(*spec, keyEqualsValue.substr(eq + 1), &error);
  if (!value) return error;
  values_.find(key)->second = *value;
  return std::nullopt;
}

const ParamValue& ParameterSet::get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range("unknown parameter " + std::string(name));
  return it->second;
}

bool ParameterSet::isDefault(std::string_view name) const {
  const ParameterSpec* spec = ParameterRegistry::standard().find(name);
  return spec && get(name) == spec->defaultValue;
}

}  // namespace cas::params
