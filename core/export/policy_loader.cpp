#include "core/export/policy_loader.hpp"

#include "core/engine/trained_run.hpp"
#include "core/env/environments.hpp"
#include "core/exec/initialise.hpp"
#include "core/support/atomic_file.hpp"
#include "core/train/memory_estimate.hpp"

namespace cas::exports {
namespace {

Diagnostic failure(std::string message) { return {Severity::Error, {}, std::move(message), {}}; }

// The project's policy and what is recorded about it, without weights yet.
std::optional<ExportablePolicy> describe(const project::Project& project, std::int64_t iteration, std::string* error) {
  if (project.algorithm == "muzero") {  // three functions and a search, where an export holds one policy function
    *error = "a MuZero run's learned model (represent, dynamics, predict) cannot be exported yet: an export holds one policy function, "
             "and this model plans with a search; `cuda-agent eval RUN --episodes N` plays it";
    return std::nullopt;
  }
  auto source = readFile(project.policyFile, kPolicyFileLimit, error);
  if (!source) return std::nullopt;
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  ExportablePolicy p;
  p.source = std::move(*source);
  p.options = project::policyCompileOptions(project, 1);
  p.metadata.project = project.name;
  p.metadata.environment = project.environment;
  p.metadata.observationShape.assign(e->observationShape.begin(), e->observationShape.end());
  for (int a = 0; a < e->actionCount; ++a)
    p.metadata.actionNames.push_back(e->board ? std::string(e->board->moveNoun()) + " " + std::to_string(a + 1) : "action " + std::to_string(a));
  p.metadata.iteration = iteration;
  return p;
}

// An export holds the weights, the model made from them (ONNX's raw floats; C's and CUDA's as
// text, about 13 characters a float) and, while writing, the file's bytes once more.
constexpr std::uint64_t kExportBytesPerParameter = 4 + 13 + 13;

// Why a network of `parameters` weights cannot be exported in the memory this process may use
// (a legal PDL program can declare 2e9 of them); nullopt when it can.
std::optional<std::string> tooLargeToExport(std::int64_t parameters) {
  const std::uint64_t need = std::uint64_t(parameters) * kExportBytesPerParameter, available = train::availableMemory();
  if (need <= available) return std::nullopt;
  return "the network has " + std::to_string(parameters) + " parameters (" + formatBytes(std::uint64_t(parameters) * 4) +
         " as floats); exporting it needs about " + formatBytes(need) + " of memory, more than the " + formatBytes(available) +
         " available: export a smaller network";
}

// The parameters of the policy's graph (at batch 1), each filled by `values`.
template <typename Values>
bool fillWeights(ExportablePolicy& p, Values values, std::string* error) {
  pdl::CompileResult compiled = pdl::compile(p.source, p.options);
  if (!compiled.policy) {
    *error = "the policy does not compile";
    if (!compiled.diagnostics.empty()) *error += ": " + formatHeadline(compiled.diagnostics.items()[0]);
    return false;
  }
  if (auto tooLarge = tooLargeToExport(compiled.policy->parameterCount)) {
    *error = *tooLarge;
    return false;
  }
  for (const ir::Node& n : compiled.policy->graph.nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) p.weights[n.attrs.name] = values(n);
  return true;
}

LoadedPolicy fromRun(const std::filesystem::path& dir, std::int64_t checkpointIteration) {
  LoadedPolicy out;
  engine::OpenRunOptions options;
  options.checkpointIteration = checkpointIteration;
  engine::OpenedRun<train::Trainer> run = engine::openAnyRun(dir, exec::makeCpuBackend(), options);
  out.skipped = std::move(run.skipped);
  out.notices = std::move(run.notices);
  if (!run.trainer) {
    out.error = std::move(run.error);
    return out;
  }
  std::string problem;
  out.policy = describe(run.trainer->project(), run.trainer->iteration(), &problem);
  if (!out.policy) {
    out.error = failure(problem);
    return out;
  }
  // The restored weights, from the program the trainer evaluates the network with (self-play's, the rollout's).
  exec::Executable& network = run.trainer->inferenceProgram();
  const bool filled = fillWeights(*out.policy, [&](const ir::Node& n) {
    std::vector<float> v(size_t(ir::numel(n.shape)));
    network.readInput(n.attrs.name, v.data(), v.size());
    return v;
  }, &problem);
  if (!filled) {
    out.error = failure(problem);
    out.policy.reset();
  }
  out.origin = "checkpoint " + run.checkpoint.string();
  out.checkpoint = run.checkpoint;
  return out;
}

LoadedPolicy fromProject(const std::filesystem::path& dir) {
  LoadedPolicy out;
  project::LoadResult loaded = project::loadProject(dir);
  if (!loaded.project) {
    for (const Diagnostic& d : loaded.diagnostics.items())
      if (d.severity == Severity::Error) {
        out.error = d;
        break;
      }
    return out;
  }
  std::string problem;
  out.policy = describe(*loaded.project, 0, &problem);
  if (!out.policy) {
    out.error = failure(problem);
    return out;
  }
  // The initial weights a run of this project starts from (its runtime.seed), as the trainer draws them.
  const auto seed = std::uint64_t(params::readRuntimeParams(loaded.project->parameters).seed);
  if (!fillWeights(*out.policy, [&](const ir::Node& n) { return exec::initialValues(n, seed); }, &problem)) {
    out.error = failure(problem);
    out.policy.reset();
  }
  out.origin = "the initial weights of " + dir.string() + " (runtime.seed " + std::to_string(seed) + ")";
  return out;
}

}  // namespace

LoadedPolicy loadPolicyFile(const std::filesystem::path& pdl, const StandaloneShape& shape) {
  LoadedPolicy out;
  if (shape.observationShape.empty() || shape.actionCount <= 0) {
    out.error = failure(pdl.string() + " is a standalone PDL file: give its observation shape and action count (--obs-shape 32 --action-dim 3)");
    return out;
  }
  std::string problem;
  auto source = readFile(pdl, kPolicyFileLimit, &problem);
  if (!source) {
    out.error = failure(problem);
    return out;
  }
  ExportablePolicy p;
  p.source = std::move(*source);
  p.options.fileName = pdl.string();
  p.options.observationShape = shape.observationShape;
  p.options.actionCount = shape.actionCount;
  p.options.algorithm = "alphazero";
  p.options.batch = 1;
  p.metadata.project = pdl.stem().string();
  p.metadata.observationShape = shape.observationShape;
  for (int a = 0; a < shape.actionCount; ++a) p.metadata.actionNames.push_back("action " + std::to_string(a));
  out.policy = std::move(p);
  if (!fillWeights(*out.policy, [&](const ir::Node& n) { return exec::initialValues(n, shape.seed); }, &problem)) {
    // `check FILE` (no --algorithm) accepts one output: say why export wants two, and how to see it in check.
    if (problem.find("must return (logits, value)") != std::string::npos)
      problem += "; export takes a standalone .pdl file as an actor-critic policy, as AlphaZero and PPO train them (`check " + pdl.string() +
                 " --algorithm alphazero` checks it so): return a value head too, such as tanh(dense(h, units=1))";
    out.error = failure(pdl.string() + ": " + problem);
    out.policy.reset();
    return out;
  }
  out.origin = "the initial weights of " + pdl.string() + " (seed " + std::to_string(shape.seed) + ")";
  return out;
}

PolicySource policySourceOf(const std::filesystem::path& folder) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(folder / "config.toml", ec)) return PolicySource::Run;
  // A run that lost its config.toml still holds the copy of its project.toml: opened as a run,
  // it is refused as one, never exported from the project's initial weights.
  if (std::filesystem::is_directory(folder, ec) && engine::runWithoutConfig(folder)) return PolicySource::Run;
  if (std::filesystem::is_regular_file(folder / "project.toml", ec)) return PolicySource::Project;
  if (folder.extension() == ".pdl" && std::filesystem::is_regular_file(folder, ec)) return PolicySource::PdlFile;
  return PolicySource::Neither;
}

LoadedPolicy loadPolicy(const std::filesystem::path& runOrProject, std::int64_t checkpointIteration) {
  const PolicySource source = policySourceOf(runOrProject);
  if (source == PolicySource::Run) return fromRun(runOrProject, checkpointIteration);
  if (source == PolicySource::Project) {
    if (checkpointIteration > 0) {
      LoadedPolicy out;
      out.error = failure(runOrProject.string() + " is a project folder, which has no checkpoints; --checkpoint goes with a run folder");
      return out;
    }
    return fromProject(runOrProject);
  }
  LoadedPolicy out;
  if (source == PolicySource::PdlFile)
    out.error = failure(runOrProject.string() + " is a standalone PDL file: give its observation shape and action count (--obs-shape 32 --action-dim 3)");
  else
    out.error = failure(runOrProject.string() + " is neither a run folder (with config.toml), a project folder (with project.toml) nor a .pdl file");
  return out;
}

}  // namespace cas::exports
