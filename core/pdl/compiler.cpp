#include "core/pdl/compiler.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/ir/builder.hpp"
#include "core/pdl/lexer.hpp"
#include "core/pdl/parser.hpp"

namespace cas::pdl {
namespace {

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
std::string shapeText(const Shape& s) { return ir::shapeText(s, ", "); }

std::string posText(Pos p) { return std::to_string(p.line) + ":" + std::to_string(p.column); }

std::string numberText(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Poison: return "an invalid value";
    case Value::Kind::None: return "None";
    case Value::Kind::Int: return "the integer " + std::to_string(v.i);
    case Value::Kind::Float: return "the number " + numberText(v.f);
    case Value::Kind::Bool: return v.i ? "True" : "False";
    case Value::Kind::String: return "the string '" + v.s + "'";
    case Value::Kind::Tuple:
      if (!v.originText.empty()) return v.originText + " at " + posText(v.origin);
      return "a tuple of " + std::to_string(v.items.size()) + " values";
    case Value::Kind::Tensor: return "a tensor of shape " + shapeText(v.shape);
  }
  return "a value";
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// `budget` bounds the work (edit-distance cells) spent on suggestions in one compilation, so that
// long names or many unknown names cannot make the compiler slow.
std::string suggestion(const std::string& name, const std::vector<std::string>& known, std::int64_t& budget) {
  std::string best;
  size_t bestDistance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& k : known) {
    const size_t gap = name.size() > k.size() ? name.size() - k.size() : k.size() - name.size();
    if (gap >= bestDistance) continue;  // the distance is at least the difference in length
    budget -= std::int64_t(name.size() + 1) * std::int64_t(k.size() + 1);
    if (budget < 0) return {};
    const size_t d = editDistance(name, k);
    if (d < bestDistance) {
      bestDistance = d;
      best = k;
    }
  }
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

// --- built-in signatures -----------------------------------------------------------------------

struct Param {
  const char* name;
  bool required;
};

struct BuiltinSpec {
  std::vector<Param> params;
  bool variadic = false;  // concat: any number of positional tensors, then keywords
};

const std::map<std::string, BuiltinSpec>& builtins() {
  static const std::map<std::string, BuiltinSpec> table = {
      {"dense", {{{"x", true}, {"units", true}, {"bias", false}, {"name", false}}}},
      {"conv2d", {{{"x", true}, {"filters", true}, {"kernel", false}, {"stride", false}, {"padding", false}, {"bias", false}, {"name", false}}}},
      {"max_pool2d", {{{"x", true}, {"kernel", false}, {"stride", false}, {"padding", false}}}},
      {"avg_pool2d", {{{"x", true}, {"kernel", false}, {"stride", false}, {"padding", false}}}},
      {"flatten", {{{"x", true}}}},
      {"reshape", {{{"x", true}, {"shape", true}}}},
      {"concat", {{{"axis", false}}, true}},
      {"matmul", {{{"a", true}, {"b", true}}}},
      {"embedding", {{{"ids", true}, {"vocab", true}, {"dim", true}, {"name", false}}}},
      {"layer_norm", {{{"x", true}, {"eps", false}, {"name", false}}}},
      {"attention", {{{"q", true}, {"k", true}, {"v", true}, {"heads", false}, {"causal", false}}}},
      {"dropout", {{{"x", true}, {"rate", true}}}},
      {"relu", {{{"x", true}}}},
      {"tanh", {{{"x", true}}}},
      {"sigmoid", {{{"x", true}}}},
      {"gelu", {{{"x", true}}}},
      {"exp", {{{"x", true}}}},
      {"log", {{{"x", true}}}},
      {"softmax", {{{"x", true}, {"axis", false}}}},
      {"log_softmax", {{{"x", true}, {"axis", false}}}},
      {"sum", {{{"x", true}, {"axis", false}, {"keepdims", false}}}},
      {"mean", {{{"x", true}, {"axis", false}, {"keepdims", false}}}},
      {"max", {{{"x", true}, {"axis", false}, {"keepdims", false}}}},
      {"clip", {{{"x", true}, {"lo", true}, {"hi", true}}}},
      {"where", {{{"mask", true}, {"a", true}, {"b", true}}}},
  };
  return table;
}

std::vector<std::string> builtinNames() {
  std::vector<std::string> names;
  for (const auto& [n, spec] : builtins()) names.push_back(n);
  return names;
}

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
// @precision's names, in the order the diagnostics list them.
constexpr std::pair<std::string_view, ir::Precision> kPrecisionNames[] = {
    {"fp32", ir::Precision::F32}, {"tf32", ir::Precision::TF32}, {"bf16", ir::Precision::BF16}, {"fp16", ir::Precision::F16}};

// "'fp32', 'tf32', 'bf16' or 'fp16'"
std::string precisionChoices() {
  std::string text;
  const size_t count = std::size(kPrecisionNames);
  for (size_t i = 0; i < count; ++i)
    text += (i == 0 ? "'" : i + 1 == count ? " or '" : ", '") + std::string(kPrecisionNames[i].first) + "'";
  return text;
}

std::optional<ir::Precision> precisionNamed(std::string_view name) {
  for (const auto& [n, p] : kPrecisionNames)
    if (n == name) return p;
  return std::nullopt;
}

constexpr std::int64_t kMaxEvaluations = 2000000;  // expressions evaluated after unrolling and inlining; a tuple counts its values
constexpr std::int64_t kMaxTupleValues = 1024;     // values in one tuple, nested tuples counted with their values
constexpr int kMaxSemanticErrors = 20;            // errors reported before the compiler stops, as in the parser
constexpr std::int64_t kSuggestionBudget = 50000000;  // edit-distance cells spent on "did you mean" suggestions
constexpr int kMaxEvalNesting = 500;               // statements and expressions being evaluated at once, across inlined calls (bounds the stack)

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
  std::optional<CompiledPolicy> runChecked() {
    declareGlobals();
    const Function* entry = findFunction(opt_.entry);
    if (!entry) {
      error({1, 1}, "no function named '" + opt_.entry + "' (the entry point) is defined" + suggestion(opt_.entry, functionNames()));
      return std::nullopt;
    }
    if (entry->params.size() != 1) {
      error(entry->pos, "the entry '" + entry->name + "' must take one parameter, the observation; it takes " +
                            std::to_string(entry->params.size()));
      return std::nullopt;
    }
    for (const Function& f : mod_.functions) checkDecorators(f);
    Value result;
    {
      Value obs;
      obs.kind = Value::Kind::Tensor;
      obs.shape = opt_.observationShape;
      obs.origin = entry->params[0].second;
      Shape full = {opt_.batch};
      full.insert(full.end(), obs.shape.begin(), obs.shape.end());
      b_.setOrigin("obs", obs.origin.line, obs.origin.column);
      obs.node = b_.input("obs", full);
      Frame frame;
      frame.path = entry->name;
      frame.function = entry->name;
      frame.precision = precisionOf(*entry, ir::Precision::F32);
      frame.locals[entry->params[0].first] = {obs, entry->params[0].second};
      result = callBody(*entry, frame, entry->pos);
    }
    if (diags_.hasErrors()) return std::nullopt;
    if (!checkOutputs(*entry, result)) return std::nullopt;
    return std::move(out_);
  }

  // --- diagnostics ---------------------------------------------------------------------------

  // A function inlined at several call sites, or a loop body, would report the same mistake once
  // per copy; only the first diagnostic at each position is kept.
  bool firstAt(Pos p, Severity s) { return reported_.insert({p.line, p.column, int(s)}).second; }
  bool reportedAt(Pos p) const { return reported_.count({p.line, p.column, int(Severity::Error)}) > 0; }

  void stopIfTooMany(Pos p) {
    if (diags_.errorCount() < kMaxSemanticErrors) return;
    diags_.error({opt_.fileName, p.line, p.column}, "too many errors; stopping here");
    throw Abort{};
  }

  void error(Pos p, std::string message) {
    if (!firstAt(p, Severity::Error)) return;
    stopIfTooMany(p);
    diags_.error({opt_.fileName, p.line, p.column}, std::move(message));
  }

  std::string suggestion(const std::string& name, const std::vector<std::string>& known) {
    return pdl::suggestion(name, known, suggestionBudget_);
  }

  void errorWithNote(Pos p, std::string message, Pos notePos, std::string note) {
    if (!firstAt(p, Severity::Error)) return;
    stopIfTooMany(p);
    Diagnostic d{Severity::Error, {opt_.fileName, p.line, p.column}, std::move(message), {}};
    if (notePos.line > 0) d.notes.push_back({Severity::Note, {opt_.fileName, notePos.line, notePos.column}, std::move(note), {}});
    diags_.add(std::move(d));
  }

  // --- globals -------------------------------------------------------------------------------

  void declareGlobals() {
    globals_["action_dim"] = {Value::integer(opt_.actionCount), {}};
    Value obsShape;
    obsShape.kind = Value::Kind::Tuple;
    for (std::int64_t d : opt_.observationShape) obsShape.items.push_back(Value::integer(d));
    obsShape.count += std::int64_t(obsShape.items.size());
    globals_["obs_shape"] = {obsShape, {}};
    std::set<std::string> seen;
    for (const Function& f : mod_.functions) {
      if (builtins().count(f.name) || f.name == "range" || f.name == "cuda")
        error(f.pos, "'" + f.name + "' is a built-in; choose another name for this function");
      else if (!seen.insert(f.name).second)
        error(f.pos, "the function '" + f.name + "' is defined twice");
    }
    Frame top;
    top.path = "const";
    for (const ConstDecl& c : mod_.consts) {
      if (c.name == "action_dim" || c.name == "obs_shape") {
        error(c.pos, "'" + c.name + "' is set by the environment; choose another name for this constant");
        continue;
      }
      if (globals_.count(c.name) || seen.count(c.name) || builtins().count(c.name)) {
        error(c.pos, "'" + c.name + "' is already defined; constants cannot be redefined");
        continue;
      }
      Value v = eval(*c.value, top);
      if (v.kind == Value::Kind::Tensor) {
        error(c.value->pos, "a constant must be a number, string or tuple known at compile time, not a tensor");
        v = Value::poison();
      }
      globals_[c.name] = {v, c.pos};
    }
  }

  const Function* findFunction(const std::string& name) const {
    for (const Function& f : mod_.functions)
      if (f.name == name) return &f;
    return nullptr;
  }

  std::vector<std::string> functionNames() const {
    std::vector<std::string> names;
    for (const Function& f : mod_.functions) names.push_back(f.name);
    return names;
  }

  void checkDecorators(const Function& f) {
    for (const Decorator& d : f.decorators) {
      if (d.name == "parallel") {
        for (const Keyword& k : d.keywords) {
          if (k.name != "axis") {
            error(k.pos, "@parallel takes only axis='batch'");
          } else if (k.value->kind != Expr::Kind::String || k.value->text != "batch") {
            error(k.value->pos, "@parallel supports only axis='batch'");
          }
        }
        if (!d.args.empty()) error(d.args[0]->pos, "@parallel takes only axis='batch'");
      } else if (d.name == "precision") {
        if (d.args.size() != 1 || !d.keywords.empty() || d.args[0]->kind != Expr::Kind::String) {
          error(d.pos, "@precision takes one string: " + precisionChoices());
        } else if (!precisionNamed(d.args[0]->text)) {
          error(d.args[0]->pos, "unknown precision '" + d.args[0]->text + "'; expected " + precisionChoices());
        }
      } else {
        error(d.pos, "unknown decorator '@" + d.name + "'; PDL knows @parallel and @precision");
      }
    }
  }

  static ir::Precision precisionOf(const Function& f, ir::Precision inherited) {
    for (const Decorator& d : f.decorators)
      if (d.name == "precision" && d.args.size() == 1 && d.args[0]->kind == Expr::Kind::String)
        if (const std::optional<ir::Precision> p = precisionNamed(d.args[0]->text)) return *p;
    return inherited;
  }

  // --- statements ----------------------------------------------------------------------------

  void countStatement(Pos p) {
    if (graph_.nodes.size() > size_t(kMaxOperations)) {
      error(p, "the program generates more than " + std::to_string(kMaxOperations) +
                   " operations; reduce the loop counts or the depth of calls");
      throw Abort{};
    }
    if (++statements_ > kMaxStatementsExecuted) {
      error(p, "the program unrolls to more than " + std::to_string(kMaxStatementsExecuted) +
                   " statements; reduce the loop counts or the depth of calls");
      throw Abort{};
    }
  }

  // Runs a function body; returns its return value (None when it falls off the end).
  Value callBody(const Function& f, Frame& frame, Pos) {
    std::optional<Value> ret = block(f.body, frame);
    return ret ? *ret : Value::none();
  }

  std::optional<Value> block(const Block& stmts, Frame& frame) {
    for (const auto& s : stmts)
      if (auto ret = statement(*s, frame)) return ret;
    return std::nullopt;
  }

  std::optional<Value> statement(const Stmt& s, Frame& frame) {
    Nesting nesting(*this, s.pos);
    countStatement(s.pos);
    switch (s.kind) {
      case Stmt::Kind::Pass: return std::nullopt;
      case Stmt::Kind::Expression: {
        Value v = eval(*s.value, frame);
        if (v.kind != Value::Kind::Poison)
          if (firstAt(s.pos, Severity::Warning)) diags_.warning({opt_.fileName, s.pos.line, s.pos.column}, "this expression's value is not used");
        return std::nullopt;
      }
      case Stmt::Kind::Return: {
        Value v = s.value ? eval(*s.value, frame) : Value::none();
        if (v.kind == Value::Kind::Tuple && v.originText.empty()) {
          v.originText = "the tuple returned by " + frame.function;
          v.origin = s.pos;
        }
        return v;
      }
      case Stmt::Kind::Assign: {
        Value v = eval(*s.value, frame);
        if (s.targets.size() == 1) {
          frame.locals[s.targets[0].first] = {v, s.targets[0].second};
          return std::nullopt;
        }
        if (v.kind == Value::Kind::Poison) {
          for (const auto& [name, pos] : s.targets) frame.locals[name] = {Value::poison(), pos};
          return std::nullopt;
        }
        if (v.kind != Value::Kind::Tuple) {
          error(s.value->pos, "cannot unpack " + describe(v) + " into " + std::to_string(s.targets.size()) + " names");
        } else if (v.items.size() != s.targets.size()) {
          error(s.value->pos, "cannot unpack " + describe(v) + (v.originText.empty() ? "" : " (" + std::to_string(v.items.size()) + " values)") +
                                  " into " + std::to_string(s.targets.size()) + " names");
        } else {
          for (size_t i = 0; i < s.targets.size(); ++i) frame.locals[s.targets[i].first] = {v.items[i], s.targets[i].second};
          return std::nullopt;
        }
        for (const auto& [name, pos] : s.targets) frame.locals[name] = {Value::poison(), pos};
        return std::nullopt;
      }
      case Stmt::Kind::If: {
        Value c = eval(*s.value, frame);
        if (c.kind == Value::Kind::Poison) return std::nullopt;
        if (c.kind == Value::Kind::Tensor) {
          error(s.value->pos, "'if' needs a condition known at compile time, not a tensor; use where(mask, a, b) to choose per element");
          return std::nullopt;
        }
        if (!c.isNumber()) {
          error(s.value->pos, "'if' needs a number or True/False, got " + describe(c));
          return std::nullopt;
        }
        return block(c.asDouble() != 0 ? s.body : s.orElse, frame);
      }
      case Stmt::Kind::For: {
        std::vector<Value> items;
        if (!loopItems(*s.value, frame, items)) return std::nullopt;
        for (Value& item : items) {
          frame.locals[s.targets[0].first] = {item, s.targets[0].second};
          if (auto ret = block(s.body, frame)) return ret;
        }
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  bool loopItems(const Expr& e, Frame& frame, std::vector<Value>& items) {
    if (e.kind == Expr::Kind::Call && e.target->kind == Expr::Kind::Name && e.target->text == "range") {
      if (!e.keywords.empty()) {
        error(e.keywords[0].pos, "range takes no keyword arguments");
        return false;
      }
      if (e.items.empty() || e.items.size() > 3) {
        error(e.pos, "range takes 1 to 3 integers, got " + std::to_string(e.items.size()));
        return false;
      }
      std::vector<std::int64_t> v;
      for (const auto& a : e.items) {
        Value x = eval(*a, frame);
        if (x.kind == Value::Kind::Poison) return false;
        if (x.kind != Value::Kind::Int) {
          error(a->pos, "range needs integers known at compile time, got " + describe(x));
          return false;
        }
        v.push_back(x.i);
      }
      const std::int64_t start = v.size() > 1 ? v[0] : 0, stop = v.size() > 1 ? v[1] : v[0], step = v.size() > 2 ? v[2] : 1;
      if (step == 0) {
        error(e.items[2]->pos, "range's step must not be zero");
        return false;
      }
      const long double count = std::max<long double>(0, std::ceil((static_cast<long double>(stop) - start) / step));
      if (count > kMaxLoopIterations) {
        error(e.pos, "this loop runs more than " + std::to_string(kMaxLoopIterations) +
                         " times; loops are unrolled at compile time and limited to that many iterations");
        return false;
      }
      // start + i * step stays between start and stop, so it cannot overflow once count fits.
      for (std::int64_t i = 0; i < std::int64_t(count); ++i)
        items.push_back(Value::integer(std::int64_t(static_cast<long double>(start) + static_cast<long double>(i) * step)));
      return true;
    }
    Value it = eval(e, frame);
    if (it.kind == Value::Kind::Poison) return false;
    if (it.kind == Value::Kind::Tuple) {
      items = it.items;
      return true;
    }
    error(e.pos, "a for loop goes over range(...) or a tuple, not " + describe(it));
    return false;
  }

  // --- expressions ---------------------------------------------------------------------------

  // Counts statements and expressions being evaluated at once (they recurse on the C++ stack).
  struct Nesting {
    Compiler& c;
    Nesting(Compiler& compiler, Pos p) : c(compiler) {
      if (++c.nesting_ > kMaxEvalNesting) {
        --c.nesting_;  // the destructor does not run for a constructor that throws
        c.error(p, "expressions, blocks and inlined calls nest more than " + std::to_string(kMaxEvalNesting) +
                       " levels deep here; make the recursion shallower");
        throw Abort{};  // unwinds every Nesting; the counter is not used again
      }
    }
    ~Nesting() { --c.nesting_; }
  };

  void countEvaluations(std::int64_t n, Pos p) {
    evaluations_ += n;
    if (evaluations_ > kMaxEvaluations) {
      error(p, "the program evaluates more than " + std::to_string(kMaxEvaluations) +
                   " expressions once loops are unrolled and calls inlined; reduce the loop counts, the number of arguments or the depth of calls");
      throw Abort{};
    }
  }

  Value eval(const Expr& e, Frame& frame) {
    Nesting nesting(*this, e.pos);
    countEvaluations(1, e.pos);
    Value v = evalInner(e, frame);
    if (v.origin.line == 0) v.origin = e.pos;
    if (v.kind == Value::Kind::Tuple) countEvaluations(v.count, e.pos);  // what copying it costs
    return v;
  }

  Value evalInner(const Expr& e, Frame& frame) {
    switch (e.kind) {
      case Expr::Kind::Int: return Value::integer(e.intValue);
      case Expr::Kind::Float: return Value::number(e.floatValue);
      case Expr::Kind::Bool: return Value::boolean(e.intValue != 0);
      case Expr::Kind::String: return Value::string(e.text);
      case Expr::Kind::None: return Value::none();
      case Expr::Kind::Name: return lookup(e, frame);
      case Expr::Kind::Tuple: {
        Value t;
        t.kind = Value::Kind::Tuple;
        for (const auto& item : e.items) {
          t.items.push_back(eval(*item, frame));
          t.count += t.items.back().count;
          if (t.count > kMaxTupleValues) {
            error(e.pos, "this tuple would hold more than " + std::to_string(kMaxTupleValues) +
                             " values (nested tuples count with their values); tuples are for a few outputs, shapes or loop items");
            throw Abort{};
          }
        }
        return t;
      }
      case Expr::Kind::Call: return call(e, frame);
      case Expr::Kind::Attribute:
        if (e.target->kind == Expr::Kind::Name && e.target->text == "cuda") {
          error(e.pos, "cuda." + e.text + " is a built-in; call it");
        } else {
          error(e.pos, "PDL values have no attributes; '.' is only used in the cuda. prefix of built-ins");
        }
        return Value::poison();
      case Expr::Kind::Index: {
        Value target = eval(*e.target, frame), index = eval(*e.items[0], frame);
        if (target.kind == Value::Kind::Poison || index.kind == Value::Kind::Poison) return Value::poison();
        if (target.kind == Value::Kind::Tensor) {
          error(e.pos, "tensors cannot be indexed in PDL; use reshape, concat or a dense layer instead");
          return Value::poison();
        }
        if (target.kind != Value::Kind::Tuple) {
          error(e.pos, describe(target) + " cannot be indexed");
          return Value::poison();
        }
        if (index.kind != Value::Kind::Int) {
          error(e.items[0]->pos, "a tuple index must be an integer, got " + describe(index));
          return Value::poison();
        }
        const auto n = std::int64_t(target.items.size());
        const std::int64_t k = index.i < 0 ? index.i + n : index.i;
        if (k < 0 || k >= n) {
          error(e.items[0]->pos, "index " + std::to_string(index.i) + " is out of range for a tuple of " + std::to_string(n) + " values");
          return Value::poison();
        }
        return target.items[size_t(k)];
      }
      case Expr::Kind::Unary: {
        Value x = eval(*e.items[0], frame);
        if (e.text == "+") {
          if (x.kind != Value::Kind::Poison && !x.isNumber() && x.kind != Value::Kind::Tensor) {
            error(e.pos, "unary '+' needs a number or tensor, got " + describe(x));
            return Value::poison();
          }
          return x;
        }
        return arithmetic("*", Value::integer(-1), x, e.pos);
      }
      case Expr::Kind::Binary: {
        Value a = eval(*e.items[0], frame), bb = eval(*e.items[1], frame);
        return arithmetic(e.text, a, bb, e.pos);
      }
      case Expr::Kind::Compare: {
        Value a = eval(*e.items[0], frame), bb = eval(*e.items[1], frame);
        return arithmetic(e.text, a, bb, e.pos);
      }
      case Expr::Kind::And:
      case Expr::Kind::Or:
      case Expr::Kind::Not: {
        std::vector<Value> xs;
        for (const auto& item : e.items) {
          xs.push_back(eval(*item, frame));
          if (xs.back().kind == Value::Kind::Poison) return Value::poison();
          if (!xs.back().isNumber()) {
            const char* op = e.kind == Expr::Kind::And ? "and" : e.kind == Expr::Kind::Or ? "or" : "not";
            error(item->pos, std::string("'") + op + "' works on values known at compile time, not " + describe(xs.back()) +
                                 (xs.back().kind == Value::Kind::Tensor ? "; combine masks with * (and) or where" : ""));
            return Value::poison();
          }
        }
        if (e.kind == Expr::Kind::Not) return Value::boolean(xs[0].asDouble() == 0);
        const bool a = xs[0].asDouble() != 0, c = xs[1].asDouble() != 0;
        return Value::boolean(e.kind == Expr::Kind::And ? a && c : a || c);
      }
    }
    return Value::poison();
  }

  Value lookup(const Expr& e, Frame& frame) {
    if (auto it = frame.locals.find(e.text); it != frame.locals.end()) return it->second.first;
    if (auto it = globals_.find(e.text); it != globals_.end()) return it->second.first;
    if (findFunction(e.text)) {
      error(e.pos, "'" + e.text + "' is a function; call it with arguments");
      return Value::poison();
    }
    if (builtins().count(e.text) || e.text == "range") {
      error(e.pos, "'" + e.text + "' is a built-in; call it with arguments");
      return Value::poison();
    }
    if (reportedAt(e.pos)) return Value::poison();  // an inlined copy of a mistake already reported
    std::vector<std::string> known = builtinNames();
    for (const auto& [n, v] : frame.locals) known.push_back(n);
    for (const auto& [n, v] : globals_) known.push_back(n);
    for (const std::string& f : functionNames()) known.push_back(f);
    error(e.pos, "name '" + e.text + "' is not defined" + suggestion(e.text, known));
    return Value::poison();
  }

  // --- arithmetic --------------------------------------------------------------------------

  Value arithmetic(const std::string& op, const Value& a, const Value& b, Pos pos) {
    if (a.kind == Value::Kind::Poison || b.kind == Value::Kind::Poison) return Value::poison();
    if (a.isNumber() && b.isNumber()) return constantArithmetic(op, a, b, pos);
    const bool aOk = a.isNumber() || a.kind == Value::Kind::Tensor, bOk = b.isNumber() || b.kind == Value::Kind::Tensor;
    if (!aOk || !bOk) {
      const Value& bad = aOk ? b : a;
      errorWithNote(pos, "'" + op + "' needs numbers or tensors, got " + describe(bad), bad.origin, "value defined here");
      return Value::poison();
    }
    Shape shape;
    try {
      shape = ir::broadcastShapes(a.kind == Value::Kind::Tensor ? a.shape : Shape{}, b.kind == Value::Kind::Tensor ? b.shape : Shape{});
    } catch (const ir::ShapeError&) {
      error(pos, "'" + op + "' cannot combine tensors of shapes " + shapeText(a.shape) + " and " + shapeText(b.shape) +
                     " (shapes broadcast when trailing dimensions are equal or 1)");
      return Value::poison();
    }
    static const std::map<std::string, ir::Op> ops = {
        {"+", ir::Op::Add},       {"-", ir::Op::Sub},        {"*", ir::Op::Mul},  {"/", ir::Op::Div},
        {"==", ir::Op::Equal},    {"!=", ir::Op::NotEqual},  {"<", ir::Op::Less}, {"<=", ir::Op::LessEqual},
        {">", ir::Op::Greater},   {">=", ir::Op::GreaterEqual}};
    NodeId x = operand(a, shape.size()), y = operand(b, shape.size());
    return tensor(b_.binary(ops.at(op), x, y), shape, pos);
  }

  // The IR node for one operand: numbers become scalar constants; a tensor of lower per-sample
  // rank gets unit axes after the batch axis, so broadcasting aligns per-sample dimensions.
  NodeId operand(const Value& v, size_t rank) {
    if (v.kind != Value::Kind::Tensor) return b_.scalar(float(v.asDouble()));
    if (v.shape.size() == rank) return v.node;
    Shape full = {opt_.batch};
    full.insert(full.end(), rank - v.shape.size(), 1);
    full.insert(full.end(), v.shape.begin(), v.shape.end());
    return b_.reshape(v.node, full);
  }

  Value constantArithmetic(const std::string& op, const Value& a, const Value& b, Pos pos) {
    const bool ints = a.kind != Value::Kind::Float && b.kind != Value::Kind::Float;
    const double x = a.asDouble(), y = b.asDouble();
    if (op == "==") return Value::boolean(x == y);
    if (op == "!=") return Value::boolean(x != y);
    if (op == "<") return Value::boolean(x < y);
    if (op == "<=") return Value::boolean(x <= y);
    if (op == ">") return Value::boolean(x > y);
    if (op == ">=") return Value::boolean(x >= y);
    if (op == "/") {
      if (y == 0) {
        error(pos, "division by zero in a constant expression");
        return Value::poison();
      }
      return Value::number(x / y);
    }
    if (ints) {
      std::int64_t r = 0;
      bool overflow = false;
      if (op == "+") overflow = __builtin_add_overflow(a.i, b.i, &r);
      else if (op == "-") overflow = __builtin_sub_overflow(a.i, b.i, &r);
      else overflow = __builtin_mul_overflow(a.i, b.i, &r);
      if (overflow) {
        error(pos, "integer overflow in a constant expression");
        return Value::poison();
      }
      return Value::integer(r);
    }
    const double r = op == "+" ? x + y : op == "-" ? x - y : x * y;
    if (!std::isfinite(r)) {
      error(pos, "a constant expression overflows to infinity");
      return Value::poison();
    }
    return Value::number(r);
  }

  Value tensor(NodeId node, Shape perSample, Pos pos) {
    Value v;
    v.kind = Value::Kind::Tensor;
    v.node = node;
    v.shape = std::move(perSample);
    v.origin = pos;
    return v;
  }

  Shape withBatch(const Shape& perSample) const {
    Shape full = {opt_.batch};
    full.insert(full.end(), perSample.begin(), perSample.end());
    return full;
  }

  // Refuses shapes past the per-sample element limit (the guard on memory for any input).
  // Parameters (`parameter` true) are held to the same limit.
  bool checkSize(const Shape& s, Pos pos, bool parameter = false) {
    long double n = 1;
    for (std::int64_t d : s) n *= static_cast<long double>(d);
    if (n > static_cast<long double>(kMaxElementsPerSample)) {
      error(pos, std::string(parameter ? "a parameter" : "a tensor") + " of shape " + shapeText(s) + " would have more than " +
                     std::to_string(kMaxElementsPerSample) + (parameter ? " elements" : " elements per sample"));
      return false;
    }
    return true;
  }

  // --- calls ---------------------------------------------------------------------------------

  Value call(const Expr& e, Frame& frame) {
    std::string name;
    if (e.target->kind == Expr::Kind::Name) {
      name = e.target->text;
    } else if (e.target->kind == Expr::Kind::Attribute && e.target->target->kind == Expr::Kind::Name && e.target->target->text == "cuda") {
      name = e.target->text;
      if (!builtins().count(name)) {
        error(e.target->pos, "cuda." + name + " is not a built-in" + suggestion(name, builtinNames()));
        return Value::poison();
      }
    } else {
      error(e.pos, "only functions and built-ins can be called");
      return Value::poison();
    }
    if (name == "range") {
      error(e.pos, "range(...) can only be used in a for loop");
      return Value::poison();
    }
    if (const Function* f = findFunction(name)) return callUser(*f, e, frame);
    if (builtins().count(name)) return callBuiltin(name, e, frame);
    if (frame.locals.count(name) || globals_.count(name)) {
      error(e.target->pos, "'" + name + "' is " + describe(frame.locals.count(name) ? frame.locals[name].first : globals_[name].first) +
                               ", not a function");
      return Value::poison();
    }
    if (reportedAt(e.target->pos)) return Value::poison();  // an inlined copy of a mistake already reported
    std::vector<std::string> known = builtinNames();
    for (const std::string& f : functionNames()) known.push_back(f);
    error(e.target->pos, "no function or built-in named '" + name + "'" + suggestion(name, known));
    return Value::poison();
  }

  Value callUser(const Function& f, const Expr& e, Frame& caller) {
    std::vector<Value> args;
    for (const auto& a : e.items) args.push_back(eval(*a, caller));
    std::vector<std::optional<Value>> bound(f.params.size());
    if (args.size() > f.params.size()) {
      error(e.pos, f.name + "() takes " + std::to_string(f.params.size()) + " argument" + (f.params.size() == 1 ? "" : "s") + " but " +
                       std::to_string(args.size()) + " were given");
      return Value::poison();
    }
    for (size_t i = 0; i < args.size(); ++i) bound[i] = args[i];
    for (const Keyword& k : e.keywords) {
      auto it = std::find_if(f.params.begin(), f.params.end(), [&](const auto& p) { return p.first == k.name; });
      if (it == f.params.end()) {
        std::vector<std::string> names;
        for (const auto& p : f.params) names.push_back(p.first);
        error(k.pos, f.name + "() has no parameter named '" + k.name + "'" + suggestion(k.name, names));
        return Value::poison();
      }
      const size_t idx = size_t(it - f.params.begin());
      if (bound[idx]) {
        error(k.pos, f.name + "() got two values for '" + k.name + "'");
        return Value::poison();
      }
      bound[idx] = eval(*k.value, caller);
    }
    for (size_t i = 0; i < bound.size(); ++i)
      if (!bound[i]) {
        errorWithNote(e.pos, f.name + "() is missing the argument '" + f.params[i].first + "'", f.pos, f.name + " is defined here");
        return Value::poison();
      }
    if (callDepth_ >= kMaxCallDepth) {
      error(e.pos, "calls nest more than " + std::to_string(kMaxCallDepth) + " deep; is '" + f.name + "' recursive?");
      throw Abort{};
    }
    Frame frame;
    frame.path = caller.path + "/" + f.name + "_" + std::to_string(caller.counters[f.name]++);
    frame.function = f.name;
    frame.precision = precisionOf(f, caller.precision);
    for (size_t i = 0; i < bound.size(); ++i) frame.locals[f.params[i].first] = {*bound[i], f.params[i].second};
    ++callDepth_;
    Value result = callBody(f, frame, e.pos);
    --callDepth_;
    if (result.kind == Value::Kind::Tuple) {
      result.originText = "the tuple returned by " + f.name;
      result.origin = e.pos;
    }
    return result;
  }

  bool bindArgs(const std::string& fn, const Expr& e, Frame& frame, Args& args) {
    const BuiltinSpec& spec = builtins().at(fn);
    args.fn = fn;
    args.call = e.pos;
    std::vector<Value> positional;
    for (const auto& a : e.items) positional.push_back(eval(*a, frame));
    bool poisoned = false;
    for (const Value& v : positional) poisoned |= v.kind == Value::Kind::Poison;
    if (spec.variadic) {
      args.positional = positional;
      for (const auto& a : e.items) args.positionalPos.push_back(a->pos);
    } else {
      if (positional.size() > spec.params.size()) {
        error(e.items[spec.params.size()]->pos, fn + "() takes at most " + std::to_string(spec.params.size()) +
                                                    (spec.params.size() == 1 ? " argument" : " arguments") + ", got " +
                                                    std::to_string(positional.size()));
        return false;
      }
      for (size_t i = 0; i < positional.size(); ++i) args.named[spec.params[i].name] = {positional[i], e.items[i]->pos};
    }
    for (const Keyword& k : e.keywords) {
      auto it = std::find_if(spec.params.begin(), spec.params.end(), [&](const Param& p) { return k.name == p.name; });
      if (it == spec.params.end()) {
        std::vector<std::string> names;
        for (const Param& p : spec.params) names.push_back(p.name);
        error(k.pos, fn + "() has no argument named '" + k.name + "'" + suggestion(k.name, names));
        return false;
      }
      if (args.named.count(k.name)) {
        error(k.pos, fn + "() got two values for '" + k.name + "'");
        return false;
      }
      Value v = eval(*k.value, frame);
      poisoned |= v.kind == Value::Kind::Poison;
      args.named[k.name] = {v, k.pos};
    }
    for (const Param& p : spec.params) {
      if (p.required && !args.named.count(p.name)) {
        error(e.pos, fn + "() is missing the argument '" + p.name + "'");
        return false;
      }
      if (p.required && args.named.at(p.name).first.kind == Value::Kind::None) {
        error(args.named.at(p.name).second, fn + "() needs a value for '" + p.name + "', not None");
        return false;
      }
    }
    return !poisoned;
  }

  // Typed argument access; each returns nullopt after reporting what was wrong.
  std::optional<Value> tensorArg(const Args& a, const std::string& n) {
    const Value& v = a.get(n);
    if (v.kind == Value::Kind::Tensor) return v;
    const std::string what = a.fn + " expects a tensor" + (n == "x" ? std::string() : " for '" + n + "'") + ", got " + describe(v);
    if (v.kind == Value::Kind::Tuple && v.origin.line > 0) errorWithNote(a.pos(n), what, v.origin, "value defined here");
    else error(a.pos(n), what);
    return std::nullopt;
  }

  std::optional<std::int64_t> intArg(const Args& a, const std::string& n, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    if (!a.has(n)) return fallback;
    const Value& v = a.get(n);
    if (v.kind != Value::Kind::Int || v.i < lo || v.i > hi) {
      error(a.pos(n), a.fn + "'s " + n + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describe(v));
      return std::nullopt;
    }
    return v.i;
  }

  std::optional<double> numberArg(const Args& a, const std::string& n, double fallback, double lo, double hi, bool openHigh = false) {
    if (!a.has(n)) return fallback;
    const Value& v = a.get(n);
    if (!v.isNumber() || v.asDouble() < lo || v.asDouble() > hi || (openHigh && v.asDouble() >= hi)) {
      error(a.pos(n), a.fn + "'s " + n + " must be a number in [" + numberText(lo) + ", " + numberText(hi) + (openHigh ? ")" : "]") +
                          ", got " + describe(v));
      return std::nullopt;
    }
    return v.asDouble();
  }

  std::optional<bool> boolArg(const Args& a, const std::string& n, bool fallback) {
    if (!a.has(n)) return fallback;
    const Value& v = a.get(n);
    if (v.kind != Value::Kind::Bool) {
      error(a.pos(n), a.fn + "'s " + n + " must be True or False, got " + describe(v));
      return std::nullopt;
    }
    return v.i != 0;
  }

  std::optional<std::string> choiceArg(const Args& a, const std::string& n, const std::string& fallback, const std::vector<std::string>& choices) {
    if (!a.has(n)) return fallback;
    const Value& v = a.get(n);
    if (v.kind == Value::Kind::String && std::find(choices.begin(), choices.end(), v.s) != choices.end()) return v.s;
    std::string list;
    for (size_t i = 0; i < choices.size(); ++i) list += (i == 0 ? "'" : i + 1 == choices.size() ? " or '" : ", '") + choices[i] + "'";
    error(a.pos(n), a.fn + "'s " + n + " must be " + list + ", got " + describe(v));
    return std::nullopt;
  }

  // Per-sample axes (an int, a tuple of ints, or None for all) as normalised IR axes (+1).
  std::optional<std::vector<std::int64_t>> axesArg(const Args& a, const std::string& n, size_t rank, bool allowMany) {
    std::vector<std::int64_t> perSample;
    if (!a.has(n)) {
      if (!allowMany) perSample.push_back(-1);
      else for (size_t d = 0; d < rank; ++d) perSample.push_back(std::int64_t(d));
    } else {
      const Value& v = a.get(n);
      std::vector<Value> items = v.kind == Value::Kind::Tuple && allowMany ? v.items : std::vector<Value>{v};
      for (const Value& item : items) {
        if (item.kind != Value::Kind::Int) {
          error(a.pos(n), a.fn + "'s " + n + " must be " + (allowMany ? "an integer, a tuple of integers or None" : "an integer") + ", got " + describe(v));
          return std::nullopt;
        }
        perSample.push_back(item.i);
      }
    }
    std::vector<std::int64_t> axes;
    for (std::int64_t ax : perSample) {
      const auto r = std::int64_t(rank);
      if (ax < -r || ax >= r) {
        error(a.pos(n), a.fn + "'s axis " + std::to_string(ax) + " is out of range for a tensor with " + std::to_string(rank) +
                            (rank == 1 ? " axis" : " axes") + " (valid: " + std::to_string(-r) + " to " + std::to_string(r - 1) + ")");
        return std::nullopt;
      }
      const std::int64_t k = (ax < 0 ? ax + r : ax) + 1;
      if (std::find(axes.begin(), axes.end(), k) != axes.end()) {
        error(a.pos(n), a.fn + " names axis " + std::to_string(ax) + " twice");
        return std::nullopt;
      }
      axes.push_back(k);
    }
    return axes;
  }

  std::string layerName(Frame& frame, const std::string& kind, const Args& a) {
    const int index = frame.counters[kind]++;
    std::string name = frame.path + "/" + kind + "_" + std::to_string(index);
    if (a.named.count("name") && a.get("name").kind == Value::Kind::String) name = frame.path + "/" + a.get("name").s;
    b_.setOrigin(name, a.call.line, a.call.column);  // the layer's nodes carry its name
    return name;
  }

  std::optional<NodeId> parameter(const std::string& name, Shape shape, ir::Init init, std::int64_t fanIn, Pos pos) {
    if (auto it = parameterPos_.find(name); it != parameterPos_.end()) {
      errorWithNote(pos, "a parameter named '" + name + "' already exists; give this layer another name=", it->second, "the first one is made here");
      return std::nullopt;
    }
    out_.parameterCount += ir::numel(shape);
    if (out_.parameterCount > kMaxParameters) {
      error(pos, "the network has more than " + std::to_string(kMaxParameters) + " parameters");
      throw Abort{};
    }
    parameterPos_[name] = pos;
    out_.parameters.push_back({name, shape});
    return b_.input(name, shape, ir::InputRole::Parameter, init, fanIn);
  }

  void recordLayer(const std::string& name, const std::string& kind, const Shape& shape, std::int64_t params, std::int64_t flops, Pos pos) {
    out_.layers.push_back({name, kind, shape, params, flops, pos.line, pos.column});
    out_.flopsPerSample += flops;
  }

  Value callBuiltin(const std::string& fn, const Expr& e, Frame& frame) {
    Args a;
    if (!bindArgs(fn, e, frame, a)) return Value::poison();
    if (a.named.count("name") && a.get("name").kind != Value::Kind::None) {
      const Value& n = a.get("name");
      const bool valid = n.kind == Value::Kind::String && !n.s.empty() &&
                         std::all_of(n.s.begin(), n.s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      if (!valid) {
        error(a.pos("name"), fn + "'s name must be a non-empty string of letters, digits and '_', got " + describe(n));
        return Value::poison();
      }
    }
    b_.setOrigin(frame.path, e.pos.line, e.pos.column);
    b_.setPrecision(frame.precision);
    try {
      return lower(fn, a, frame, e.pos);
    } catch (const ir::ShapeError& err) {
      error(e.pos, fn + ": " + err.what());
      return Value::poison();
    }
  }

  static std::pair<std::int64_t, std::int64_t> samePadding(std::int64_t in, std::int64_t kernel, std::int64_t stride) {
    const std::int64_t out = (in + stride - 1) / stride;
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + kernel - in);
    return {total / 2, total - total / 2};
  }

  Value lower(const std::string& fn, const Args& a, Frame& frame, Pos pos);
  Value lowerWindow(const std::string& fn, const Args& a, Frame& frame, Pos pos);

  // The algorithms whose entry returns (logits[action_dim], value[1]), as the article and name
  // their errors use ("an AlphaZero policy must ..."); null for any other algorithm.
  static const char* actorCriticTitle(const std::string& algorithm) {
    if (algorithm == "alphazero") return "an AlphaZero";
    if (algorithm == "ppo") return "a PPO";
    return nullptr;
  }

  bool checkOutputs(const Function& entry, const Value& result) {
    std::vector<Value> outs = result.kind == Value::Kind::Tuple ? result.items : std::vector<Value>{result};
    Pos where = result.origin.line > 0 ? result.origin : entry.pos;
    if (result.kind == Value::Kind::None || (result.kind == Value::Kind::Tuple && result.items.empty())) {
      error(entry.pos, "the entry '" + entry.name + "' must return its outputs, but it returns nothing");
      return false;
    }
    for (const Value& v : outs)
      if (v.kind != Value::Kind::Tensor) {
        error(v.origin.line > 0 ? v.origin : where, "the entry '" + entry.name + "' must return tensors, but one of its results is " + describe(v));
        return false;
      }
    if (const char* title = actorCriticTitle(opt_.algorithm)) {
      if (outs.size() != 2) {
        error(where, std::string(title) + " policy must return (logits, value), but '" + entry.name + "' returns " +
                         (outs.size() == 1 ? "one tensor of shape " + shapeText(outs[0].shape) : std::to_string(outs.size()) + " tensors"));
        return false;
      }
      if (outs[0].shape != Shape{opt_.actionCount}) {
        error(outs[0].origin, "the logits must have shape [" + std::to_string(opt_.actionCount) + "] (action_dim), got " + shapeText(outs[0].shape));
        return false;
      }
      if (outs[1].shape != Shape{1}) {
        error(outs[1].origin, "the value must have shape [1], got " + shapeText(outs[1].shape) + "; end the value head with dense(..., units=1)");
        return false;
      }
      out_.outputNames = {"logits", "value"};
    } else if (!opt_.algorithm.empty()) {
      error({1, 1}, "unknown algorithm '" + opt_.algorithm + "'");
      return false;
    } else {
      for (size_t i = 0; i < outs.size(); ++i) out_.outputNames.push_back("output" + std::to_string(i));
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      graph_.outputs.push_back({out_.outputNames[i], outs[i].node});
      out_.outputShapes.push_back(outs[i].shape);
    }
    graph_.name = entry.name;
    out_.graph = std::move(graph_);
    return true;
  }

  const CompileOptions& opt_;
  DiagnosticList& diags_;
  const Module& mod_;
  ir::Graph graph_;
  ir::Builder b_;
  std::map<std::string, std::pair<Value, Pos>> globals_;
  std::map<std::string, Pos> parameterPos_;
  std::int64_t statements_ = 0;
  std::int64_t evaluations_ = 0;
  int callDepth_ = 0;
  int nesting_ = 0;
  std::set<std::tuple<int, int, int>> reported_;  // line, column, severity
  std::int64_t suggestionBudget_ = kSuggestionBudget;
  CompiledPolicy out_;
};

Value Compiler::lowerWindow(const std::string& fn, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  if (x->shape.size() != 3) {
    error(a.pos("x"), fn + " expects a [channels, height, width] tensor, got shape " + shapeText(x->shape));
    return Value::poison();
  }
  auto kernel = intArg(a, "kernel", 2, 1, 4096);
  if (!kernel) return Value::poison();
  auto stride = intArg(a, "stride", *kernel, 1, 4096);
  auto padding = choiceArg(a, "padding", "valid", {"valid", "same"});
  if (!stride || !padding) return Value::poison();
  ir::Window2d w{*kernel, *kernel, *stride, *stride};
  if (*padding == "same") {
    std::tie(w.padTop, w.padBottom) = samePadding(x->shape[1], *kernel, *stride);
    std::tie(w.padLeft, w.padRight) = samePadding(x->shape[2], *kernel, *stride);
  } else if (*kernel > x->shape[1] || *kernel > x->shape[2]) {
    error(a.pos("kernel"), fn + "'s " + std::to_string(*kernel) + "x" + std::to_string(*kernel) + " window does not fit the " +
                               std::to_string(x->shape[1]) + "x" + std::to_string(x->shape[2]) + " input");
    return Value::poison();
  }
  NodeId y = fn == "max_pool2d" ? b_.maxPool2d(x->node, w) : b_.avgPool2d(x->node, w);
  Shape s(b_.shape(y).begin() + 1, b_.shape(y).end());
  return tensor(y, s, pos);
}

Value Compiler::lower(const std::string& fn, const Args& a, Frame& frame, Pos pos) {
  static const std::map<std::string, ir::Op> unaries = {{"relu", ir::Op::Relu}, {"tanh", ir::Op::Tanh}, {"sigmoid", ir::Op::Sigmoid},
                                                         {"gelu", ir::Op::Gelu}, {"exp", ir::Op::Exp},   {"log", ir::Op::Log}};
  if (auto u = unaries.find(fn); u != unaries.end()) {
    const Value& v = a.get("x");
    if (v.isNumber()) {
      const double r = ir::applyElementwise(u->second, float(v.asDouble()));
      if (!std::isfinite(r)) {
        error(pos, fn + "(" + numberText(v.asDouble()) + ") is not a finite number");
        return Value::poison();
      }
      return Value::number(r);
    }
    auto x = tensorArg(a, "x");
    if (!x) return Value::poison();
    return tensor(b_.unary(u->second, x->node), x->shape, pos);
  }

  if (fn == "dense") {
    auto x = tensorArg(a, "x");
    auto units = intArg(a, "units", 0, 1, kMaxElementsPerSample);
    auto bias = boolArg(a, "bias", true);
    if (!x || !units || !bias) return Value::poison();
    const std::string name = layerName(frame, "dense", a);
    const std::int64_t k = ir::numel(x->shape);
    if (!checkSize({k, *units}, a.pos("units"), true)) return Value::poison();
    NodeId flat = b_.reshape(x->node, {opt_.batch, k});
    auto w = parameter(name + "/weight", {k, *units}, ir::Init::FanInUniform, k, pos);
    if (!w) return Value::poison();
    NodeId y = b_.matmul(flat, *w);
    std::int64_t params = k * *units;
    if (*bias) {
      auto bv = parameter(name + "/bias", {*units}, ir::Init::FanInUniform, k, pos);
      if (!bv) return Value::poison();
      y = b_.add(y, *bv);
      params += *units;
    }
    recordLayer(name, "dense", {*units}, params, 2 * k * *units, pos);
    return tensor(y, {*units}, pos);
  }

  if (fn == "conv2d") {
    auto x = tensorArg(a, "x");
    if (!x) return Value::poison();
    if (x->shape.size() != 3) {
      error(a.pos("x"), "conv2d expects a [channels, height, width] tensor, got shape " + shapeText(x->shape));
      return Value::poison();
    }
    auto filters = intArg(a, "filters", 0, 1, 1 << 20);
    auto kernel = intArg(a, "kernel", 3, 1, 4096);
    auto stride = intArg(a, "stride", 1, 1, 4096);
    auto padding = choiceArg(a, "padding", "same", {"same", "valid"});
    auto bias = boolArg(a, "bias", true);
    if (!filters || !kernel || !stride || !padding || !bias) return Value::poison();
    const std::int64_t c = x->shape[0], h = x->shape[1], wd = x->shape[2], k = *kernel;
    ir::Window2d win{k, k, *stride, *stride};
    if (*padding == "same") {
      std::tie(win.padTop, win.padBottom) = samePadding(h, k, *stride);
      std::tie(win.padLeft, win.padRight) = samePadding(wd, k, *stride);
    } else if (k > h || k > wd) {
      error(a.pos("kernel"), "conv2d's " + std::to_string(k) + "x" + std::to_string(k) + " kernel does not fit the " + std::to_string(h) +
                                 "x" + std::to_string(wd) + " input with padding='valid'");
      return Value::poison();
    }
    if (!checkSize({*filters, c, k, k}, a.pos("filters"), true)) return Value::poison();
    const std::string name = layerName(frame, "conv2d", a);
    auto w = parameter(name + "/weight", {*filters, c, k, k}, ir::Init::FanInUniform, c * k * k, pos);
    if (!w) return Value::poison();
    NodeId y = b_.conv2d(x->node, *w, win);
    Shape s(b_.shape(y).begin() + 1, b_.shape(y).end());
    if (!checkSize(s, pos)) return Value::poison();
    std::int64_t params = *filters * c * k * k;
    if (*bias) {
      auto bv = parameter(name + "/bias", {*filters}, ir::Init::FanInUniform, c * k * k, pos);
      if (!bv) return Value::poison();
      y = b_.add(y, b_.reshape(*bv, {*filters, 1, 1}));
      params += *filters;
    }
    recordLayer(name, "conv2d", s, params, 2 * c * k * k * ir::numel(s), pos);
    return tensor(y, s, pos);
  }

  if (fn == "max_pool2d" || fn == "avg_pool2d") return lowerWindow(fn, a, frame, pos);

  if (fn == "flatten") {
    auto x = tensorArg(a, "x");
    if (!x) return Value::poison();
    const std::int64_t k = ir::numel(x->shape);
    return tensor(b_.reshape(x->node, {opt_.batch, k}), {k}, pos);
  }

  if (fn == "reshape") {
    auto x = tensorArg(a, "x");
    if (!x) return Value::poison();
    const Value& sv = a.get("shape");
    std::vector<Value> dims = sv.kind == Value::Kind::Tuple ? sv.items : std::vector<Value>{sv};
    Shape target;
    int unknown = 0;
    for (const Value& d : dims) {
      if (d.kind != Value::Kind::Int || d.i == 0 || d.i < -1) {
        error(a.pos("shape"), "reshape's shape must be positive integers (one may be -1), got " + describe(d));
        return Value::poison();
      }
      unknown += d.i == -1;
      target.push_back(d.i);
    }
    std::int64_t known = 1;
    for (std::int64_t d : target)
      if (d > 0 && __builtin_mul_overflow(known, d, &known)) known = std::numeric_limits<std::int64_t>::max();
    const std::int64_t total = ir::numel(x->shape);
    if (unknown > 1) {
      error(a.pos("shape"), "reshape's shape may have only one -1, got " + shapeText(target));
      return Value::poison();
    }
    if ((unknown == 0 && known != total) || (unknown == 1 && total % known != 0)) {
      error(a.pos("shape"), "cannot reshape a tensor of shape " + shapeText(x->shape) + " (" + std::to_string(total) + " elements) to " +
                                shapeText(target));
      return Value::poison();
    }
    for (std::int64_t& d : target)
      if (d == -1) d = total / known;
    return tensor(b_.reshape(x->node, withBatch(target)), target, pos);
  }

  if (fn == "concat") {
    if (a.positional.empty()) {
      error(pos, "concat needs at least one tensor");
      return Value::poison();
    }
    std::vector<NodeId> nodes;
    for (size_t i = 0; i < a.positional.size(); ++i) {
      const Value& v = a.positional[i];
      if (v.kind != Value::Kind::Tensor) {
        error(a.positionalPos[i], "concat expects tensors, got " + describe(v));
        return Value::poison();
      }
      nodes.push_back(v.node);
    }
    const Shape& first = a.positional[0].shape;
    if (first.empty()) {
      error(a.positionalPos[0], "concat needs tensors with at least one axis");
      return Value::poison();
    }
    auto axes = axesArg(a, "axis", first.size(), false);
    if (!axes) return Value::poison();
    if (!a.has("axis")) (*axes)[0] = 1;  // default: the first per-sample axis
    const std::int64_t ax = (*axes)[0] - 1;
    Shape s = first;
    for (size_t i = 1; i < a.positional.size(); ++i) {
      const Shape& o = a.positional[i].shape;
      if (o.size() != first.size()) {
        error(a.positionalPos[i], "concat needs tensors with the same number of axes, got " + shapeText(first) + " and " + shapeText(o));
        return Value::poison();
      }
      bool fits = true;
      for (size_t d = 0; fits && d < o.size(); ++d) fits = std::int64_t(d) == ax || o[d] == first[d];
      if (!fits) {
        error(a.positionalPos[i], "concat along axis " + std::to_string(ax) + " needs equal shapes on the other axes, got " + shapeText(first) +
                                      " and " + shapeText(o));
        return Value::poison();
      }
      s[size_t(ax)] += o[size_t(ax)];
    }
    return tensor(b_.concat(nodes, ax + 1), s, pos);
  }

  if (fn == "matmul") {
    auto x = tensorArg(a, "a");
    auto y = tensorArg(a, "b");
    if (!x || !y) return Value::poison();
    if (x->shape.size() != 2 || y->shape.size() != 2) {
      error(pos, "matmul expects two matrices (2-D tensors per sample), got shapes " + shapeText(x->shape) + " and " + shapeText(y->shape));
      return Value::poison();
    }
    if (x->shape[1] != y->shape[0]) {
      error(pos, "matmul cannot multiply " + shapeText(x->shape) + " by " + shapeText(y->shape) + ": the first has " +
                     std::to_string(x->shape[1]) + " columns but the second has " + std::to_string(y->shape[0]) + " rows");
      return Value::poison();
    }
    Shape s = {x->shape[0], y->shape[1]};
    recordLayer(frame.path + "/matmul", "matmul", s, 0, 2 * x->shape[0] * x->shape[1] * y->shape[1], pos);
    return tensor(b_.matmul(x->node, y->node), s, pos);
  }

  if (fn == "embedding") {
    auto ids = tensorArg(a, "ids");
    auto vocab = intArg(a, "vocab", 0, 1, kMaxElementsPerSample);
    auto dim = intArg(a, "dim", 0, 1, kMaxElementsPerSample);
    if (!ids || !vocab || !dim) return Value::poison();
    if (!checkSize({*vocab, *dim}, a.pos("vocab"), true)) return Value::poison();
    Shape s = ids->shape;
    s.push_back(*dim);
    if (!checkSize(s, pos)) return Value::poison();
    const std::string name = layerName(frame, "embedding", a);
    auto table = parameter(name + "/table", {*vocab, *dim}, ir::Init::Normal, *dim, pos);
    if (!table) return Value::poison();
    recordLayer(name, "embedding", s, *vocab * *dim, 0, pos);
    return tensor(b_.gather(*table, ids->node), s, pos);
  }

  if (fn == "layer_norm") {
    auto x = tensorArg(a, "x");
    auto eps = numberArg(a, "eps", 1e-5, 1e-12, 1.0);
    if (!x || !eps) return Value::poison();
    if (x->shape.empty()) {
      error(a.pos("x"), "layer_norm needs a tensor with at least one axis");
      return Value::poison();
    }
    const std::int64_t d = x->shape.back();
    const std::string name = layerName(frame, "layer_norm", a);
    auto gamma = parameter(name + "/gamma", {d}, ir::Init::Ones, d, pos);
    auto beta = parameter(name + "/beta", {d}, ir::Init::Zeros, d, pos);
    if (!gamma || !beta) return Value::poison();
    recordLayer(name, "layer_norm", x->shape, 2 * d, 8 * ir::numel(x->shape), pos);
    return tensor(b_.layerNorm(x->node, *gamma, *beta, float(*eps)), x->shape, pos);
  }

  if (fn == "attention") {
    auto q = tensorArg(a, "q");
    auto k = tensorArg(a, "k");
    auto v = tensorArg(a, "v");
    auto heads = intArg(a, "heads", 1, 1, 4096);
    auto causal = boolArg(a, "causal", false);
    if (!q || !k || !v || !heads || !causal) return Value::poison();
    for (const auto* t : {&*q, &*k, &*v})
      if (t->shape.size() != 2) {
        error(pos, "attention expects [sequence, width] tensors for q, k and v, got shape " + shapeText(t->shape));
        return Value::poison();
      }
    const std::int64_t t = q->shape[0], d = q->shape[1], s = k->shape[0];
    if (k->shape[1] != d || v->shape != k->shape) {
      error(pos, "attention needs k and v of shape [S, " + std::to_string(d) + "] with the same S, got " + shapeText(k->shape) + " and " +
                     shapeText(v->shape));
      return Value::poison();
    }
    if (d % *heads != 0) {
      error(a.pos("heads"), "attention's width " + std::to_string(d) + " is not divisible by heads=" + std::to_string(*heads));
      return Value::poison();
    }
    if (!checkSize({*heads, t, s}, pos)) return Value::poison();
    recordLayer(frame.path + "/attention", "attention", q->shape, 0, 4 * t * s * d, pos);
    return tensor(b_.attention(q->node, k->node, v->node, *heads, *causal), q->shape, pos);
  }

  if (fn == "dropout") {
    auto x = tensorArg(a, "x");
    auto rate = numberArg(a, "rate", 0, 0, 1, true);
    if (!x || !rate) return Value::poison();
    const std::string name = layerName(frame, "dropout", a);
    if (!opt_.training || *rate == 0) return *x;
    std::uint64_t seed = opt_.seed ^ 0x9E3779B97F4A7C15ull;
    for (char c : name) seed = (seed ^ std::uint8_t(c)) * 1099511628211ull;
    return tensor(b_.dropout(x->node, float(*rate), seed), x->shape, pos);
  }

  if (fn == "softmax" || fn == "log_softmax") {
    auto x = tensorArg(a, "x");
    if (!x) return Value::poison();
    if (x->shape.empty()) {
      error(a.pos("x"), fn + " needs a tensor with at least one axis");
      return Value::poison();
    }
    auto axes = axesArg(a, "axis", x->shape.size(), false);
    if (!axes) return Value::poison();
    NodeId y = fn == "softmax" ? b_.softmax(x->node, (*axes)[0]) : b_.logSoftmax(x->node, (*axes)[0]);
    return tensor(y, x->shape, pos);
  }

  if (fn == "sum" || fn == "mean" || fn == "max") {
    auto x = tensorArg(a, "x");
    auto keep = boolArg(a, "keepdims", false);
    if (!x || !keep) return Value::poison();
    auto axes = axesArg(a, "axis", x->shape.size(), true);
    if (!axes) return Value::poison();
    if (axes->empty()) return *x;
    NodeId y = fn == "sum" ? b_.reduceSum(x->node, *axes, *keep) : fn == "mean" ? b_.reduceMean(x->node, *axes, *keep) : b_.reduceMax(x->node, *axes, *keep);
    Shape s(b_.shape(y).begin() + 1, b_.shape(y).end());
    return tensor(y, s, pos);
  }

  if (fn == "clip") {
    auto x = tensorArg(a, "x");
    auto lo = numberArg(a, "lo", 0, -1e30, 1e30);
    auto hi = numberArg(a, "hi", 0, -1e30, 1e30);
    if (!x || !lo || !hi) return Value::poison();
    if (*lo > *hi) {
      error(a.pos("lo"), "clip's lo (" + numberText(*lo) + ") is greater than its hi (" + numberText(*hi) + ")");
      return Value::poison();
    }
    return tensor(b_.clip(x->node, float(*lo), float(*hi)), x->shape, pos);
  }

  if (fn == "where") {
    auto mask = tensorArg(a, "mask");
    if (!mask) return Value::poison();
    const Value &x = a.get("a"), &y = a.get("b");
    for (const char* n : {"a", "b"}) {
      const Value& v = a.get(n);
      if (!v.isNumber() && v.kind != Value::Kind::Tensor) {
        error(a.pos(n), std::string("where's ") + n + " must be a tensor or a number, got " + describe(v));
        return Value::poison();
      }
    }
    Shape s;
    try {
      s = ir::broadcastShapes(mask->shape, ir::broadcastShapes(x.kind == Value::Kind::Tensor ? x.shape : Shape{},
                                                               y.kind == Value::Kind::Tensor ? y.shape : Shape{}));
    } catch (const ir::ShapeError&) {
      error(pos, "where's mask, a and b do not broadcast: " + shapeText(mask->shape) + ", " + shapeText(x.shape) + ", " + shapeText(y.shape));
      return Value::poison();
    }
    return tensor(b_.where(operand(*mask, s.size()), operand(x, s.size()), operand(y, s.size())), s, pos);
  }

  error(pos, "the built-in '" + fn + "' has no lowering");
  return Value::poison();
}

}  // namespace

std::vector<BuiltinSignature> builtinSignatures() {
  std::vector<BuiltinSignature> out;
  for (const auto& [name, spec] : builtins()) {
    BuiltinSignature& sig = out.emplace_back();
    sig.name = name;
    sig.variadic = spec.variadic;
    for (const Param& p : spec.params) {
      sig.parameters.emplace_back(p.name);
      sig.requiredCount += p.required;
    }
  }
  return out;
}

// A file does not begin like a PDL program when its first error (the first found: the lexer's
// come before the parser's) lies on or before the line of its first token, or that token is not
// 'def', 'const' or a decorator: a project's policy may name any file, and then only that error
// is kept, so diagnostics never echo more than one line of a file that is not PDL.
static void keepOnlyFirstErrorUnlessPdl(const std::vector<Token>& tokens, DiagnosticList& diags) {
  const Diagnostic* first = nullptr;
  for (const Diagnostic& d : diags.items())
    if (d.severity == Severity::Error && !first) first = &d;
  if (!first) return;
  for (const Token& t : tokens) {
    if (t.kind == Tok::Newline || t.kind == Tok::Indent || t.kind == Tok::Dedent) continue;
    const bool opensPdl = (t.kind == Tok::Name && (t.text == "def" || t.text == "const")) || (t.kind == Tok::Op && t.text == "@");
    if (opensPdl && t.pos.line < first->location.line) return;
    break;
  }
  Diagnostic kept = *first;
  kept.notes.push_back({Severity::Note, {kept.location.file, 0, 0},
                        "no further errors are shown: the file does not begin like a PDL program (with 'def' or 'const')", {}});
  diags = DiagnosticList();
  diags.add(std::move(kept));
}

CompileResult compile(std::string_view source, const CompileOptions& options) {
  CompileResult result;
  bool lexingStopped = false;
  std::vector<Token> tokens = lex(source, options.fileName, result.diagnostics, &lexingStopped);
  // After kMaxErrorsPerFile lexical errors the parser would only add noise.
  Module module = lexingStopped ? Module{} : parse(tokens, options.fileName, result.diagnostics);
  if (options.batch < 1 || options.batch > (1 << 20)) {
    result.diagnostics.error({options.fileName, 0, 0}, "the batch size must be in [1, 1048576]");
    return result;
  }
  if (result.diagnostics.hasErrors()) {  // semantic errors after syntax errors mostly mislead
    keepOnlyFirstErrorUnlessPdl(tokens, result.diagnostics);
    return result;
  }
  Compiler compiler(options, result.diagnostics, module);
  result.policy = compiler.run();
  if (result.diagnostics.hasErrors()) result.policy.reset();
  return result;
}

}  // namespace cas::pdl
