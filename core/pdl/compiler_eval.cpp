// The PDL evaluator: statements (loops unrolled), expressions, arithmetic on constants and on
// tensors, calls of user functions (inlined) and of built-ins with their arguments checked.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/pdl/compiler_internal.hpp"

namespace cas::pdl::detail {

// Counts statements and expressions being evaluated at once (they recurse on the C++ stack).
struct Compiler::Nesting {
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

void Compiler::countStatement(Pos p) {
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

std::optional<Value> Compiler::block(const Block& stmts, Frame& frame) {
  for (const auto& s : stmts)
    if (auto ret = statement(*s, frame)) return ret;
  return std::nullopt;
}

std::optional<Value> Compiler::statement(const Stmt& s, Frame& frame) {
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

bool Compiler::loopItems(const Expr& e, Frame& frame, std::vector<Value>& items) {
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

void Compiler::countEvaluations(std::int64_t n, Pos p) {
  evaluations_ += n;
  if (evaluations_ > kMaxEvaluations) {
    error(p, "the program evaluates more than " + std::to_string(kMaxEvaluations) +
                 " expressions once loops are unrolled and calls inlined; reduce the loop counts, the number of arguments or the depth of calls");
    throw Abort{};
  }
}

Value Compiler::eval(const Expr& e, Frame& frame) {
  Nesting nesting(*this, e.pos);
  countEvaluations(1, e.pos);
  Value v = evalInner(e, frame);
  if (v.origin.line == 0) v.origin = e.pos;
  if (v.kind == Value::Kind::Tuple) countEvaluations(v.count, e.pos);  // what copying it costs
  return v;
}

Value Compiler::evalInner(const Expr& e, Frame& frame) {
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

Value Compiler::lookup(const Expr& e, Frame& frame) {
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

Value Compiler::arithmetic(const std::string& op, const Value& a, const Value& b, Pos pos) {
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
  // Broadcasting multiplies: two operands within the limit can make a result far past it.
  if (!checkSize(shape, pos)) return Value::poison();
  static const std::map<std::string, ir::Op> ops = {
      {"+", ir::Op::Add},       {"-", ir::Op::Sub},        {"*", ir::Op::Mul},  {"/", ir::Op::Div},
      {"==", ir::Op::Equal},    {"!=", ir::Op::NotEqual},  {"<", ir::Op::Less}, {"<=", ir::Op::LessEqual},
      {">", ir::Op::Greater},   {">=", ir::Op::GreaterEqual}};
  NodeId x = operand(a, shape.size()), y = operand(b, shape.size());
  return tensor(b_.binary(ops.at(op), x, y), shape, pos);
}

NodeId Compiler::operand(const Value& v, size_t rank) {
  if (v.kind != Value::Kind::Tensor) return b_.scalar(float(v.asDouble()));
  if (v.shape.size() == rank) return v.node;
  Shape full = {opt_.batch};
  full.insert(full.end(), rank - v.shape.size(), 1);
  full.insert(full.end(), v.shape.begin(), v.shape.end());
  return b_.reshape(v.node, full);
}

Value Compiler::constantArithmetic(const std::string& op, const Value& a, const Value& b, Pos pos) {
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

Value Compiler::tensor(NodeId node, Shape perSample, Pos pos) {
  Value v;
  v.kind = Value::Kind::Tensor;
  v.node = node;
  v.shape = std::move(perSample);
  v.origin = pos;
  return v;
}

Shape Compiler::withBatch(const Shape& perSample) const {
  Shape full = {opt_.batch};
  full.insert(full.end(), perSample.begin(), perSample.end());
  return full;
}

std::int64_t elementsPerSample(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::numeric_limits<std::int64_t>::max();
  return n;
}

bool Compiler::checkSize(const Shape& s, Pos pos, bool parameter) {
  if (elementsPerSample(s) > kMaxElementsPerSample) {
    error(pos, std::string(parameter ? "a parameter" : "a tensor") + " of shape " + shapeText(s) + " would have more than " +
                   std::to_string(kMaxElementsPerSample) + (parameter ? " elements" : " elements per sample"));
    return false;
  }
  return true;
}

Value Compiler::call(const Expr& e, Frame& frame) {
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

Value Compiler::callUser(const Function& f, const Expr& e, Frame& caller) {
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

bool Compiler::bindArgs(const std::string& fn, const Expr& e, Frame& frame, Args& args) {
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

std::optional<Value> Compiler::tensorArg(const Args& a, const std::string& n) {
  const Value& v = a.get(n);
  if (v.kind == Value::Kind::Tensor) return v;
  const std::string what = a.fn + " expects a tensor" + (n == "x" ? std::string() : " for '" + n + "'") + ", got " + describe(v);
  if (v.kind == Value::Kind::Tuple && v.origin.line > 0) errorWithNote(a.pos(n), what, v.origin, "value defined here");
  else error(a.pos(n), what);
  return std::nullopt;
}

std::optional<std::int64_t> Compiler::intArg(const Args& a, const std::string& n, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  if (!a.has(n)) return fallback;
  const Value& v = a.get(n);
  if (v.kind != Value::Kind::Int || v.i < lo || v.i > hi) {
    error(a.pos(n), a.fn + "'s " + n + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describe(v));
    return std::nullopt;
  }
  return v.i;
}

std::optional<double> Compiler::numberArg(const Args& a, const std::string& n, double fallback, double lo, double hi, bool openHigh) {
  if (!a.has(n)) return fallback;
  const Value& v = a.get(n);
  if (!v.isNumber() || v.asDouble() < lo || v.asDouble() > hi || (openHigh && v.asDouble() >= hi)) {
    error(a.pos(n), a.fn + "'s " + n + " must be a number in [" + numberText(lo) + ", " + numberText(hi) + (openHigh ? ")" : "]") +
                        ", got " + describe(v));
    return std::nullopt;
  }
  return v.asDouble();
}

std::optional<bool> Compiler::boolArg(const Args& a, const std::string& n, bool fallback) {
  if (!a.has(n)) return fallback;
  const Value& v = a.get(n);
  if (v.kind != Value::Kind::Bool) {
    error(a.pos(n), a.fn + "'s " + n + " must be True or False, got " + describe(v));
    return std::nullopt;
  }
  return v.i != 0;
}

std::optional<std::string> Compiler::choiceArg(const Args& a, const std::string& n, const std::string& fallback, const std::vector<std::string>& choices) {
  if (!a.has(n)) return fallback;
  const Value& v = a.get(n);
  if (v.kind == Value::Kind::String && std::find(choices.begin(), choices.end(), v.s) != choices.end()) return v.s;
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) list += (i == 0 ? "'" : i + 1 == choices.size() ? " or '" : ", '") + choices[i] + "'";
  error(a.pos(n), a.fn + "'s " + n + " must be " + list + ", got " + describe(v));
  return std::nullopt;
}

std::optional<std::vector<std::int64_t>> Compiler::axesArg(const Args& a, const std::string& n, size_t rank, bool allowMany) {
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

Value Compiler::callBuiltin(const std::string& fn, const Expr& e, Frame& frame) {
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

}  // namespace cas::pdl::detail
