// compileLearnedModel: represent first (it fixes the state's shape), then the recurrent and
// predict programs with that shape. Their diagnostics are merged; one found by two programs (a
// warning inside predict, compiled into both) is kept once.
#include "core/pdl/learned_model.hpp"

#include <set>
#include <tuple>

namespace cas::pdl {
namespace {

CompileOptions partOptions(const LearnedModelOptions& o, LearnedModelPart part) {
  CompileOptions c;
  c.fileName = o.fileName;
  c.observationShape = o.observationShape;
  c.actionCount = o.actionCount;
  c.batch = o.batch;
  c.training = o.training;
  c.seed = o.seed;
  c.learned = std::move(part);
  return c;
}

void mergeOnce(const DiagnosticList& from, DiagnosticList& into, std::set<std::tuple<int, int, std::string>>& seen) {
  for (const Diagnostic& d : from.items())
    if (seen.insert({d.location.line, d.location.column, d.message}).second) into.add(d);
}

void collectParameters(const CompiledPolicy& program, CompiledLearnedModel& model, std::set<std::string>& names) {
  for (const ParameterSummary& p : program.parameters)
    if (names.insert(p.name).second) {
      model.parameters.push_back(p);
      model.parameterCount += ir::numel(p.shape);
    }
}

}  // namespace

LearnedModelResult compileLearnedModel(std::string_view source, const LearnedModelOptions& options) {
  LearnedModelResult result;
  std::set<std::tuple<int, int, std::string>> seen;
  CompileResult represent = compile(source, partOptions(options, {}));
  mergeOnce(represent.diagnostics, result.diagnostics, seen);
  if (!represent.policy) return result;

  LearnedModelPart part;
  part.unscaleHeads = options.scaledHeads;
  part.stateShape = represent.policy->outputShapes.at(0);
  std::tie(part.stateLine, part.stateColumn) = represent.policy->outputPositions.at(0);
  part.program = LearnedModelPart::Program::Recurrent;
  CompileResult recurrent = compile(source, partOptions(options, part));
  mergeOnce(recurrent.diagnostics, result.diagnostics, seen);
  part.program = LearnedModelPart::Program::Predict;
  CompileResult predict = compile(source, partOptions(options, part));
  mergeOnce(predict.diagnostics, result.diagnostics, seen);
  if (!recurrent.policy || !predict.policy) return result;
  std::optional<CompiledPolicy> unrolled;
  if (options.unrollSteps != 0) {
    if (options.unrollSteps < 0 || options.unrollSteps > kMaxUnrollSteps) {
      result.diagnostics.error({options.fileName, 0, 0}, "the unrolled steps must be in [1, " + std::to_string(kMaxUnrollSteps) + "]");
      return result;
    }
    part.program = LearnedModelPart::Program::Unrolled;
    part.unrollSteps = options.unrollSteps;
    part.unscaleHeads = false;
    CompileResult u = compile(source, partOptions(options, part));
    mergeOnce(u.diagnostics, result.diagnostics, seen);
    if (!u.policy) return result;
    unrolled = std::move(u.policy);
  }

  CompiledLearnedModel model;
  model.stateShape = part.stateShape;
  model.represent = std::move(*represent.policy);
  model.recurrent = std::move(*recurrent.policy);
  model.predict = std::move(*predict.policy);
  model.unrolled = std::move(unrolled);
  std::set<std::string> names;
  for (const CompiledPolicy* program : {&model.represent, &model.recurrent, &model.predict}) collectParameters(*program, model, names);
  result.model = std::move(model);
  return result;
}

}  // namespace cas::pdl
