#pragma once
// The PDL compiler's internals, shared by its three files (nothing outside core/pdl includes this):
//   compiler.cpp        the driver: globals, decorators, diagnostics, the entry's outputs, compile()
//   compiler_eval.cpp   the evaluator: statements, expressions, constant arithmetic, calls, arguments
//   compiler_lower.cpp  the built-ins lowered into IR nodes (layers, their parameters and FLOPs)
//   compiler_learned.cpp  the programs of a learned model (represent, dynamics, predict)
//
// Thread-safety: a Compiler compiles one module on one thread and is used once; the tables are
// immutable after their first use.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ir/builder.hpp"
#include "core/pdl/ast.hpp"
#include "core/pdl/compiler.hpp"

namespace cas::pdl::detail {

using ir::NodeId;
using ir::Shape;

// --- values ----------------------------------------------------------------------------------


struct Value {
  enum class Kind { Poison, None, Int, Float, Bool, String, Tuple, Tensor };
  Kind kind = Kind::Poison;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Value> items;
  NodeId node = ir::kNoNode;
  Shape shape;  // per sample, for tensors
  std::int64_t count = 1;  // this value and, for a tuple, all the values nested in it
  Pos origin;   // where the value was made
  std::string originText;  // e.g. "the tuple returned by residual"

  static Value poison() { return {}; }
  static Value none() { Value v; v.kind = Kind::None; return v; }
  static Value integer(std::int64_t x) { Value v; v.kind = Kind::Int; v.i = x; return v; }
  static Value number(double x) { Value v; v.kind = Kind::Float; v.f = x; return v; }
  static Value boolean(bool x) { Value v; v.kind = Kind::Bool; v.i = x; return v; }
  static Value string(std::string x) { Value v; v.kind = Kind::String; v.s = std::move(x); return v; }
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  double asDouble() const { return kind == Kind::Float ? f : double(i); }
};

// Diagnostics are prose: spaced shapes, "[2, 3, 3]".
std::string shapeText(const Shape& s);
// The elements of a shape, in checked 64-bit arithmetic: INT64_MAX when the product overflows.
std::int64_t elementsPerSample(const Shape& s);
std::string posText(Pos p);
std::string numberText(double x);
std::string describe(const Value& v);

// "; did you mean 'relu'?" or "". `budget` bounds the work (edit-distance cells) spent on
// suggestions in one compilation, so that long names or many unknown names cannot make the
// compiler slow.
std::string suggestion(const std::string& name, const std::vector<std::string>& known, std::int64_t& budget);

// --- built-in signatures -----------------------------------------------------------------------

struct Param {
  const char* name;
  bool required;
};

class Compiler;
struct Args;
struct Frame;

// A built-in's row (the table is builtins(), in compiler_lower.cpp): its parameters and the
// Compiler member that lowers a call of it into IR nodes.
struct BuiltinSpec {
  using Lowering = Value (Compiler::*)(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  std::vector<Param> params;
  bool variadic = false;  // concat: any number of positional tensors, then keywords
  Lowering lower = nullptr;
};

const std::map<std::string, BuiltinSpec>& builtins();
std::vector<std::string> builtinNames();

// @precision's names: "'fp32', 'tf32', 'bf16' or 'fp16'", and the precision a name stands for.
std::string precisionChoices();
std::optional<ir::Precision> precisionNamed(std::string_view name);

// --- evaluation --------------------------------------------------------------------------------

// Arguments of one built-in call, bound to its parameter names.
struct Args {
  std::string fn;
  Pos call;
  std::vector<Value> positional;  // variadic built-ins only
  std::vector<Pos> positionalPos;
  std::map<std::string, std::pair<Value, Pos>> named;
  bool has(const std::string& n) const { return named.count(n) && named.at(n).first.kind != Value::Kind::None; }
  const Value& get(const std::string& n) const { return named.at(n).first; }
  Pos pos(const std::string& n) const { return named.count(n) ? named.at(n).second : call; }
};

struct Frame {
  std::string path;  // "policy/residual_1"
  std::string function;
  std::map<std::string, int> counters;  // calls per layer kind or function in this scope
  std::map<std::string, std::pair<Value, Pos>> locals;
  ir::Precision precision = ir::Precision::F32;
};

struct Abort {};  // a limit was hit: stop evaluating (one diagnostic already says why)

// Limits of the evaluator besides those in compiler.hpp. They bound compile time, memory and the
// C++ stack on any input: without them a loop can copy ever larger tuples (`t = t, t`), run a
// very long argument list many times, or nest inlined calls deeper than the stack allows.
inline constexpr std::int64_t kMaxEvaluations = 2000000;  // expressions evaluated after unrolling and inlining; a tuple counts its values
inline constexpr std::int64_t kMaxTupleValues = 1024;     // values in one tuple, nested tuples counted with their values
inline constexpr int kMaxSemanticErrors = 20;            // errors reported before the compiler stops, as in the parser
inline constexpr std::int64_t kSuggestionBudget = 50000000;  // edit-distance cells spent on "did you mean" suggestions
inline constexpr int kMaxEvalNesting = 500;               // statements and expressions being evaluated at once, across inlined calls (bounds the stack)

// Compiles one module: evaluates the entry with the observation as a symbolic tensor, unrolling
// loops and inlining calls, and lowers each built-in call into IR nodes.
class Compiler {
 public:
  Compiler(const CompileOptions& o, DiagnosticList& d, const Module& m) : opt_(o), diags_(d), mod_(m), b_(graph_) {}

  std::optional<CompiledPolicy> run() {
    try {
      return runChecked();
    } catch (const Abort&) {  // a limit was hit, here or while evaluating the constants
      return std::nullopt;
    }
  }

 private:
  std::optional<CompiledPolicy> runChecked();

  // --- entries (compiler.cpp) -------------------------------------------------------------------

  // "the entry 'policy'", or "'dynamics'" for a function of a learned model.
  std::string entrySubject(const std::string& name) const;
  // The function `name`, which must take one parameter per entry of `parameters` (their meanings,
  // "the observation"); null after a diagnostic.
  const Function* entryFunction(const std::string& name, const std::vector<std::string>& parameters);
  bool inputFits(const Shape& perSample, const std::string& what, Pos p);  // `what`: "the observation"
  Value entryInput(const std::string& name, const Shape& perSample, Pos origin);  // an IR input [batch, perSample...]
  Value callEntry(const Function& f, const std::vector<Value>& args);

  // --- the learned model's programs (compiler_learned.cpp) ----------------------------------------

  std::optional<CompiledPolicy> runLearnedPart(const LearnedModelPart& part);
  std::optional<CompiledPolicy> learnedRepresent();
  std::optional<CompiledPolicy> learnedRecurrent(const LearnedModelPart& part);
  std::optional<CompiledPolicy> learnedPredict(const LearnedModelPart& part);
  std::optional<CompiledPolicy> learnedUnrolled(const LearnedModelPart& part);
  // MuZero's h^-1 on a reward or value head trained on scaled targets.
  Value unscaled(const Value& head);
  // The state passed on to the next unrolled step: its value, half its gradient.
  Value halveGradient(const Value& state);
  // One unrolled step: dynamics on `state` and the step's action, then predict; false after a
  // diagnostic. `state` becomes the next state (gradient halved); the heads are appended.
  bool unrollStep(const Function& dynamics, const Function& predict, const Value& actions, const LearnedModelPart& part, Value& state,
                  std::vector<Value>& rewards, std::vector<Value>& logits, std::vector<Value>& values);
  Value stackSteps(const std::vector<Value>& steps, Pos pos);  // [B, S...] each -> [B, steps, S...]
  bool checkDynamicsResults(const Function& dynamics, const Value& result, const std::vector<Value>& outs, const LearnedModelPart& part);

  // --- diagnostics (compiler.cpp) ---------------------------------------------------------------

  // A function inlined at several call sites, or a loop body, would report the same mistake once
  // per copy; only the first diagnostic at each position is kept.
  bool firstAt(Pos p, Severity s) { return reported_.insert({p.line, p.column, int(s)}).second; }
  bool reportedAt(Pos p) const { return reported_.count({p.line, p.column, int(Severity::Error)}) > 0; }

  void stopIfTooMany(Pos p);
  void error(Pos p, std::string message);
  std::string suggestion(const std::string& name, const std::vector<std::string>& known);
  void errorWithNote(Pos p, std::string message, Pos notePos, std::string note);

  // --- globals and decorators (compiler.cpp) -----------------------------------------------------

  void declareGlobals();
  const Function* findFunction(const std::string& name) const;
  std::vector<std::string> functionNames() const;
  void checkDecorators(const Function& f);
  static ir::Precision precisionOf(const Function& f, ir::Precision inherited);

  // --- statements (compiler_eval.cpp) ---------------------------------------------------------

  void countStatement(Pos p);

  // Runs a function body; returns its return value (None when it falls off the end).
  Value callBody(const Function& f, Frame& frame, Pos) {
    std::optional<Value> ret = block(f.body, frame);
    return ret ? *ret : Value::none();
  }

  std::optional<Value> block(const Block& stmts, Frame& frame);
  std::optional<Value> statement(const Stmt& s, Frame& frame);
  bool loopItems(const Expr& e, Frame& frame, std::vector<Value>& items);

  // --- expressions (compiler_eval.cpp) --------------------------------------------------------

  // Counts statements and expressions being evaluated at once (they recurse on the C++ stack).
  struct Nesting;
  void countEvaluations(std::int64_t n, Pos p);
  Value eval(const Expr& e, Frame& frame);
  Value evalInner(const Expr& e, Frame& frame);
  Value lookup(const Expr& e, Frame& frame);

  // --- arithmetic (compiler_eval.cpp) ---------------------------------------------------------

  Value arithmetic(const std::string& op, const Value& a, const Value& b, Pos pos);

  // The IR node for one operand: numbers become scalar constants; a tensor of lower per-sample
  // rank gets unit axes after the batch axis, so broadcasting aligns per-sample dimensions.
  NodeId operand(const Value& v, size_t rank);
  Value constantArithmetic(const std::string& op, const Value& a, const Value& b, Pos pos);
  Value tensor(NodeId node, Shape perSample, Pos pos);
  Shape withBatch(const Shape& perSample) const;

  // Refuses shapes past the per-sample element limit (the guard on memory for any input).
  // Parameters (`parameter` true) are held to the same limit.
  bool checkSize(const Shape& s, Pos pos, bool parameter = false);

  // --- calls and their arguments (compiler_eval.cpp) ------------------------------------------

  Value call(const Expr& e, Frame& frame);
  Value callUser(const Function& f, const Expr& e, Frame& caller);
  bool bindArgs(const std::string& fn, const Expr& e, Frame& frame, Args& args);

  // Typed argument access; each returns nullopt after reporting what was wrong.
  std::optional<Value> tensorArg(const Args& a, const std::string& n);
  std::optional<std::int64_t> intArg(const Args& a, const std::string& n, std::int64_t fallback, std::int64_t lo, std::int64_t hi);
  std::optional<double> numberArg(const Args& a, const std::string& n, double fallback, double lo, double hi, bool openHigh = false);
  std::optional<bool> boolArg(const Args& a, const std::string& n, bool fallback);
  std::optional<std::string> choiceArg(const Args& a, const std::string& n, const std::string& fallback, const std::vector<std::string>& choices);

  // Per-sample axes (an int, a tuple of ints, or None for all) as normalised IR axes (+1).
  std::optional<std::vector<std::int64_t>> axesArg(const Args& a, const std::string& n, size_t rank, bool allowMany);
  Value callBuiltin(const std::string& fn, const Expr& e, Frame& frame);

  // --- built-ins (compiler_lower.cpp) ---------------------------------------------------------

  std::string layerName(Frame& frame, const std::string& kind, const Args& a);
  std::optional<NodeId> parameter(const std::string& name, Shape shape, ir::Init init, std::int64_t fanIn, Pos pos);
  void recordLayer(const std::string& name, const std::string& kind, const Shape& shape, std::int64_t params, std::int64_t flops, Pos pos) {
    if (!recordLayers_) return;  // a function unrolled again: its layers are listed once
    out_.layers.push_back({name, kind, shape, params, flops, pos.line, pos.column});
    out_.flopsPerSample += flops;
  }

  static std::pair<std::int64_t, std::int64_t> samePadding(std::int64_t in, std::int64_t kernel, std::int64_t stride);
  // A call of the built-in `fn` through its row's lowering; one member per row below.
  Value lower(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  template <ir::Op op>
  Value lowerUnary(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerDense(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerLinear(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  std::optional<NodeId> affine(const std::string& name, NodeId rows, std::int64_t units, bool bias, Pos pos, std::int64_t* params);
  Value lowerTranspose(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerParam(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerConv2d(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerWindow(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerFlatten(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerReshape(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerConcat(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerMatmul(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerEmbedding(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerLayerNorm(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerAttention(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerDropout(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerSoftmax(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerReduce(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerClip(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerWhere(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  // builtins() names the members above.
  friend const std::map<std::string, BuiltinSpec>& builtins();

  // --- the entry's outputs (compiler.cpp) -----------------------------------------------------

  // The algorithms whose entry returns (logits[action_dim], value[1]), as the article and name
  // their errors use ("an AlphaZero policy must ..."); null for any other algorithm.
  static const char* actorCriticTitle(const std::string& algorithm);
  bool checkOutputs(const Function& entry, const Value& result);
  // The entry's results as tensors; empty after a diagnostic.
  std::vector<Value> returnedTensors(const Function& entry, const Value& result);
  // (logits[action_dim], value[1]); `subject` names what returns them ("an AlphaZero policy").
  bool checkActorCritic(const std::string& subject, const Function& entry, const Value& result, const std::vector<Value>& outs);
  void emitOutputs(const std::vector<std::string>& names, const std::vector<Value>& outs, const std::string& graphName);
  void keepOutputLayersFp32(const std::vector<Value>& outs);

  const CompileOptions& opt_;
  DiagnosticList& diags_;
  const Module& mod_;
  ir::Graph graph_;
  ir::Builder b_;
  std::map<std::string, std::pair<Value, Pos>> globals_;
  std::map<std::string, Pos> parameterPos_;
  // An unrolled learned model calls its functions again at every step: a parameter made at an
  // earlier step is that step's tensor again (same name, same shape), never a second one.
  struct MadeParameter {
    NodeId node;
    Shape shape;
    int step;
  };
  std::map<std::string, MadeParameter> madeParameters_;
  int unrollStep_ = 0;
  bool recordLayers_ = true;
  std::int64_t statements_ = 0;
  std::int64_t evaluations_ = 0;
  int callDepth_ = 0;
  int nesting_ = 0;
  std::set<std::tuple<int, int, int>> reported_;  // line, column, severity
  std::int64_t suggestionBudget_ = kSuggestionBudget;
  CompiledPolicy out_;
};

}  // namespace cas::pdl::detail
