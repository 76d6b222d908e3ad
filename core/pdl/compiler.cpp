// The PDL compiler's driver: declares the globals, checks decorators, evaluates the entry with
// the observation as its argument and checks what it returns (compiler_internal.hpp maps the
// other files).
#include "core/pdl/compiler.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/pdl/compiler_internal.hpp"
#include "core/pdl/lexer.hpp"
#include "core/support/printable.hpp"
#include "core/pdl/parser.hpp"

namespace cas::pdl {
namespace detail {

// --- values and suggestions ------------------------------------------------------------------

// Diagnostics are prose: spaced shapes, "[2, 3, 3]", cut after 8 dimensions with the rank.
std::string shapeText(const Shape& s) { return quoteShape(s); }

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

static size_t editDistance(const std::string& a, const std::string& b) {
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

std::vector<std::string> builtinNames() {
  std::vector<std::string> names;
  for (const auto& [n, spec] : builtins()) names.push_back(n);
  return names;
}

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
// --- the driver ------------------------------------------------------------------------------

std::optional<CompiledPolicy> Compiler::runChecked() {
  declareGlobals();
  if (opt_.learned) {
    for (const Function& f : mod_.functions) checkDecorators(f);
    return runLearnedPart(*opt_.learned);
  }
  const Function* entry = entryFunction(opt_.entry, {"the observation"});
  if (!entry) return std::nullopt;
  for (const Function& f : mod_.functions) checkDecorators(f);
  // Checked first: every shape computed from it is then bounded too.
  if (!inputFits(opt_.observationShape, "the observation", entry->params[0].second)) return std::nullopt;
  const Value result = callEntry(*entry, {entryInput("obs", opt_.observationShape, entry->params[0].second)});
  if (diags_.hasErrors()) return std::nullopt;
  if (!checkOutputs(*entry, result)) return std::nullopt;
  return std::move(out_);
}

std::string Compiler::entrySubject(const std::string& name) const {
  return opt_.learned ? "'" + name + "'" : "the entry '" + name + "'";
}

const Function* Compiler::entryFunction(const std::string& name, const std::vector<std::string>& parameters) {
  const Function* entry = findFunction(name);
  if (!entry) {
    const std::string role = opt_.learned ? "a function of the learned model" : "the entry point";
    error({1, 1}, "no function named " + quoteValue(name) + " (" + role + ") is defined" + suggestion(name, functionNames()));
    return nullptr;
  }
  if (entry->params.size() != parameters.size()) {
    std::string meaning;
    for (size_t i = 0; i < parameters.size(); ++i) meaning += (i == 0 ? "" : " and ") + parameters[i];
    const std::string count = parameters.size() == 1 ? "one parameter" : std::to_string(parameters.size()) + " parameters";
    error(entry->pos, entrySubject(entry->name) + " must take " + count + ", " + meaning + "; it takes " + std::to_string(entry->params.size()));
    return nullptr;
  }
  return entry;
}

bool Compiler::inputFits(const Shape& perSample, const std::string& what, Pos p) {
  if (perSample.size() > size_t(kMaxInputDimensions)) {
    error(p, what + ", of shape " + shapeText(perSample) + ", has " + std::to_string(perSample.size()) +
                 " dimensions; an input has at most " + std::to_string(kMaxInputDimensions) + " (the most a checkpoint's tensor has)");
    return false;
  }
  if (elementsPerSample(perSample) <= kMaxElementsPerSample) return true;
  error(p, what + ", of shape " + shapeText(perSample) + ", would have more than " + std::to_string(kMaxElementsPerSample) + " elements per sample");
  return false;
}

Value Compiler::entryInput(const std::string& name, const Shape& perSample, Pos origin) {
  Value v;
  v.kind = Value::Kind::Tensor;
  v.shape = perSample;
  v.origin = origin;
  b_.setOrigin(name, origin.line, origin.column);
  v.node = b_.input(name, withBatch(perSample));
  return v;
}

Value Compiler::callEntry(const Function& f, const std::vector<Value>& args) {
  Frame frame;
  frame.path = f.name;
  frame.function = f.name;
  frame.precision = precisionOf(f, ir::Precision::F32);
  for (size_t i = 0; i < args.size(); ++i) frame.locals[f.params[i].first] = {args[i], f.params[i].second};
  return callBody(f, frame, f.pos);
}

void Compiler::stopIfTooMany(Pos p) {
  if (diags_.errorCount() < kMaxSemanticErrors) return;
  diags_.error({opt_.fileName, p.line, p.column}, "too many errors; stopping here");
  throw Abort{};
}

void Compiler::error(Pos p, std::string message) {
  if (!firstAt(p, Severity::Error)) return;
  stopIfTooMany(p);
  diags_.error({opt_.fileName, p.line, p.column}, std::move(message));
}

std::string Compiler::suggestion(const std::string& name, const std::vector<std::string>& known) {
  return detail::suggestion(name, known, suggestionBudget_);
}

void Compiler::errorWithNote(Pos p, std::string message, Pos notePos, std::string note) {
  if (!firstAt(p, Severity::Error)) return;
  stopIfTooMany(p);
  Diagnostic d{Severity::Error, {opt_.fileName, p.line, p.column}, std::move(message), {}};
  if (notePos.line > 0) d.notes.push_back({Severity::Note, {opt_.fileName, notePos.line, notePos.column}, std::move(note), {}});
  diags_.add(std::move(d));
}

void Compiler::declareGlobals() {
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

const Function* Compiler::findFunction(const std::string& name) const {
  for (const Function& f : mod_.functions)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> Compiler::functionNames() const {
  std::vector<std::string> names;
  for (const Function& f : mod_.functions) names.push_back(f.name);
  return names;
}

void Compiler::checkDecorators(const Function& f) {
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

ir::Precision Compiler::precisionOf(const Function& f, ir::Precision inherited) {
  for (const Decorator& d : f.decorators)
    if (d.name == "precision" && d.args.size() == 1 && d.args[0]->kind == Expr::Kind::String)
      if (const std::optional<ir::Precision> p = precisionNamed(d.args[0]->text)) return *p;
  return inherited;
}

const char* Compiler::actorCriticTitle(const std::string& algorithm) {
  if (algorithm == "alphazero") return "an AlphaZero";
  if (algorithm == "ppo") return "a PPO";
  return nullptr;
}

std::vector<Value> Compiler::returnedTensors(const Function& entry, const Value& result) {
  std::vector<Value> outs = result.kind == Value::Kind::Tuple ? result.items : std::vector<Value>{result};
  const Pos where = result.origin.line > 0 ? result.origin : entry.pos;
  if (result.kind == Value::Kind::None || (result.kind == Value::Kind::Tuple && result.items.empty())) {
    error(entry.pos, entrySubject(entry.name) + " must return its outputs, but it returns nothing");
    return {};
  }
  for (const Value& v : outs)
    if (v.kind != Value::Kind::Tensor) {
      error(v.origin.line > 0 ? v.origin : where, entrySubject(entry.name) + " must return tensors, but one of its results is " + describe(v));
      return {};
    }
  return outs;
}

bool Compiler::checkActorCritic(const std::string& subject, const Function& entry, const Value& result, const std::vector<Value>& outs) {
  const Pos where = result.origin.line > 0 ? result.origin : entry.pos;
  if (outs.size() != 2) {
    error(where, subject + " must return (logits, value), but '" + entry.name + "' returns " +
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
  return true;
}

bool Compiler::checkOutputs(const Function& entry, const Value& result) {
  const std::vector<Value> outs = returnedTensors(entry, result);
  if (outs.empty()) return false;
  std::vector<std::string> names;
  if (const char* title = actorCriticTitle(opt_.algorithm)) {
    if (!checkActorCritic(std::string(title) + " policy", entry, result, outs)) return false;
    names = {"logits", "value"};
  } else if (!opt_.algorithm.empty()) {
    error({1, 1}, "unknown algorithm '" + opt_.algorithm + "'");
    return false;
  } else {
    for (size_t i = 0; i < outs.size(); ++i) names.push_back("output" + std::to_string(i));
  }
  keepOutputLayersFp32(outs);
  emitOutputs(names, outs, entry.name);
  return true;
}

void Compiler::emitOutputs(const std::vector<std::string>& names, const std::vector<Value>& outs, const std::string& graphName) {
  out_.outputNames = names;
  for (size_t i = 0; i < outs.size(); ++i) {
    graph_.outputs.push_back({names[i], outs[i].node});
    out_.outputShapes.push_back(outs[i].shape);
    out_.outputPositions.emplace_back(outs[i].origin.line, outs[i].origin.column);
  }
  graph_.name = graphName;
  out_.graph = std::move(graph_);
}

// The output layers (the logits, the value head) stay fp32 under @precision('bf16'|'fp16'), as
// the loss does (docs/pdl.md): from each output back through element-wise work to the layer
// that computes it (a product, a convolution, a reduction) inclusive. A warning says so at the
// first such layer.
void Compiler::keepOutputLayersFp32(const std::vector<Value>& outs) {
  std::vector<NodeId> stack;
  for (const Value& v : outs) stack.push_back(v.node);
  std::set<NodeId> seen;
  const ir::Node *first = nullptr, *layer = nullptr;  // the first node changed, the first layer
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    ir::Node& n = graph_.nodes[size_t(id)];
    if (!seen.insert(id).second || n.op == ir::Op::Input || n.op == ir::Op::Constant) continue;
    const bool elementwise = ir::isElementwise(n.op) || n.op == ir::Op::Reshape;
    if (ir::isHalfWidth(n.precision)) {
      if (!first) first = &n;
      if (!layer && !elementwise) layer = &n;
      n.precision = ir::Precision::F32;
    }
    if (!elementwise) continue;  // the layer itself: the head begins here
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  if (layer) first = layer;
  if (first && firstAt({first->line, first->column}, Severity::Warning))
    diags_.warning({opt_.fileName, first->line, first->column},
                   "'" + first->label + "' computes an output of the policy and stays fp32: the output layers (logits, value head) and the loss are "
                   "kept in fp32 whatever @precision says; put the @precision decorator on a function for the layers before them");
}

}  // namespace detail

using detail::builtins;
using detail::Param;

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
// come before the parser's) lies at or before its first token, or that token is not 'def',
// 'const' or a decorator (an error later on the first line, as in `const a = 1e999`, is the
// program's): a project's policy may name any file, and then only that error
// is kept, so diagnostics never echo more than one line of a file that is not PDL.
static void keepOnlyFirstErrorUnlessPdl(const std::vector<Token>& tokens, DiagnosticList& diags) {
  const Diagnostic* first = nullptr;
  for (const Diagnostic& d : diags.items())
    if (d.severity == Severity::Error && !first) first = &d;
  if (!first) return;
  for (const Token& t : tokens) {
    if (t.kind == Tok::Newline || t.kind == Tok::Indent || t.kind == Tok::Dedent) continue;
    const bool opensPdl = (t.kind == Tok::Name && (t.text == "def" || t.text == "const")) || (t.kind == Tok::Op && t.text == "@");
    const bool errorAfter = t.pos.line < first->location.line || (t.pos.line == first->location.line && t.pos.column < first->location.column);
    if (opensPdl && errorAfter) return;
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
  if (options.batch < 1 || options.batch > kMaxCompiledBatch) {
    result.diagnostics.error({options.fileName, 0, 0}, "the batch size must be in [1, " + std::to_string(kMaxCompiledBatch) + "]");
    return result;
  }
  if (result.diagnostics.hasErrors()) {  // semantic errors after syntax errors mostly mislead
    keepOnlyFirstErrorUnlessPdl(tokens, result.diagnostics);
    return result;
  }
  detail::Compiler compiler(options, result.diagnostics, module);
  result.policy = compiler.run();
  if (result.diagnostics.hasErrors()) result.policy.reset();
  return result;
}

}  // namespace cas::pdl