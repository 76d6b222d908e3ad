#pragma once
// The PDL compiler: lexes, parses, checks and lowers a program into the graph IR for one batch
// size. The user writes the network for one sample; the entry function is vectorised over the
// batch (the IR's leading axis). Every problem is a diagnostic with file:line:col; the compiler
// never crashes, never loops, and bounds its memory on any input (see the limits below).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/graph.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::pdl {

// The largest batch a policy is compiled for (PPO's minibatch, AlphaZero's inference batch).
inline constexpr std::int64_t kMaxCompiledBatch = std::int64_t(1) << 20;

// One program of a learned model (learned_model.hpp): which functions the compiler evaluates and
// the latent state's shape, known once `represent` has been compiled.
struct LearnedModelPart {
  enum class Program {
    Represent,  // represent(obs) -> state
    Recurrent,  // dynamics(state, action) -> (state, reward), then predict(state) -> (logits, value)
    Predict,    // predict(state) -> (logits, value)
    // represent, then `unrollSteps` x (dynamics, predict) on "actions" [unrollSteps, action_dim]
    // (one-hot rows): outputs "logits" [steps + 1, action_dim], "values" [steps + 1, 1],
    // "rewards" [steps, 1] (learned_model.hpp)
    Unrolled,
  };
  Program program = Program::Represent;
  std::int64_t unrollSteps = 0;  // Unrolled only
  bool unscaleHeads = false;     // Recurrent and Predict: h^-1 on the reward and value (learned_model.hpp)
  std::vector<std::int64_t> stateShape;  // per sample; Recurrent and Predict only
  int stateLine = 0, stateColumn = 0;    // where represent returns its state (for notes)
};

struct CompileOptions {
  std::string fileName = "policy.pdl";
  std::vector<std::int64_t> observationShape;  // per sample
  std::int64_t actionCount = 0;                // `action_dim` in PDL
  std::string entry = "policy";
  std::string algorithm;  // "" (any outputs), "alphazero" or "ppo" (both check (logits[action_dim], value[1]))
  std::int64_t batch = 1;
  bool training = false;      // dropout is active only when training
  std::uint64_t seed = 0;     // seeds dropout masks
  // Set: compile a part of a learned model instead of the entry (`entry` and `algorithm` unused).
  std::optional<LearnedModelPart> learned;
};

// Limits that keep compilation bounded.
inline constexpr std::int64_t kMaxStatementsExecuted = 200000;  // after unrolling and inlining
inline constexpr int kMaxCallDepth = 64;
inline constexpr std::int64_t kMaxElementsPerSample = std::int64_t(1) << 28;
// The most dimensions an observation (an input, per sample) may have: what a checkpoint's tensor
// may have (core/train/checkpoint.cpp), well within what ONNX runtimes and numpy feed.
inline constexpr int kMaxInputDimensions = 16;
inline constexpr std::int64_t kMaxParameters = std::int64_t(1) << 31;
inline constexpr std::int64_t kMaxLoopIterations = 100000;
inline constexpr std::int64_t kMaxOperations = 100000;  // IR nodes made by one program

struct LayerSummary {
  std::string name;  // "policy/conv2d_0"
  std::string kind;  // "conv2d"
  std::vector<std::int64_t> outputShape;  // per sample
  std::int64_t parameters = 0;
  std::int64_t flops = 0;  // per sample; a multiply-add counts 2
  int line = 0, column = 0;
};

struct ParameterSummary {
  std::string name;  // IR input name, e.g. "policy/dense_0/weight"
  std::vector<std::int64_t> shape;
};

struct CompiledPolicy {
  ir::Graph graph;  // input "obs" [batch, obs...]; parameters by name; outputs (see outputNames)
  std::vector<std::string> outputNames;  // alphazero, ppo: logits, value; otherwise output0, output1, ...
  std::vector<std::vector<std::int64_t>> outputShapes;  // per sample
  std::vector<std::pair<int, int>> outputPositions;     // line and column of the expression of each output
  std::vector<LayerSummary> layers;
  std::vector<ParameterSummary> parameters;
  std::int64_t parameterCount = 0;
  std::int64_t flopsPerSample = 0;
};

struct CompileResult {
  std::optional<CompiledPolicy> policy;  // set when there is no error
  DiagnosticList diagnostics;
};

CompileResult compile(std::string_view source, const CompileOptions& options);

// A built-in's parameters in positional order; the required ones come first. For editors'
// completion and call tips.
struct BuiltinSignature {
  std::string name;
  std::vector<std::string> parameters;
  int requiredCount = 0;
  bool variadic = false;  // concat: any number of tensors before the keyword parameters
};
std::vector<BuiltinSignature> builtinSignatures();  // sorted by name

}  // namespace cas::pdl
