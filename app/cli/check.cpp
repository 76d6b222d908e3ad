// `cuda-agent check`: validates projects (project.toml and the policy it names, and the
// configuration as `train` checks it before building anything) or standalone PDL files, runs one
// forward pass on the CPU backend to show the program executes, and only then says ok and prints
// each policy's layers, parameters and FLOPs.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <algorithm>
#include <random>

#include "app/cli/commands.hpp"
#include "core/env/environments.hpp"
#include "core/env/trading.hpp"
#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/ir/schedule.hpp"
#include "core/ir/schedule_cost.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"
#include "core/train/ppo.hpp"
#include "core/train/trainer.hpp"
#include "core/train/training_step.hpp"
#include "core/train/update.hpp"

namespace cas::cli {
namespace {

std::string count(double v) {
  char buf[32];
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e4) std::snprintf(buf, sizeof buf, "%.1fK", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

void printDiagnostics(const DiagnosticList& diags, const std::string& source) {
  for (const Diagnostic& d : diags.items()) std::cerr << formatDiagnostic(d, source) << "\n";
}

// The kernels the CUDA backend launches for `g` and what they cost at least (the schedule is
// target data, so it is printed on any machine); a graph it cannot run says why instead.
void printSchedule(const ir::Graph& g) {
  try {
    const ir::Schedule s = ir::planSchedule(g);
    std::cout << printable(ir::toText(s, g), Keep::TabsAndNewlines) << printable(ir::costText(s, ir::estimateStepCosts(s, g)), Keep::TabsAndNewlines);
  } catch (const std::exception& e) {
    std::cout << "schedule: none (" << printable(e.what()) << ")\n";
  }
}

// `check --ir --update`: the project's training step (its algorithm's loss, the gradients and
// the optimizer, as the trainer builds it) at --batch rows; nullopt, with the reason printed, when
// it does not build.
std::optional<ir::Graph> buildUpdate(const project::Project& p, const CheckOptions& options) {
  std::string source;
  pdl::CompileResult compiled = project::compilePolicy(p, options.batch, &source, true);
  printDiagnostics(compiled.diagnostics, source);
  if (!compiled.policy) return std::nullopt;
  const bool ppo = p.algorithm == "ppo";
  const train::OptimizerConfig optimizer =
      ppo ? train::ppoOptimizerConfig(params::readPpoParams(p.parameters)) : train::optimizerConfig(params::readTrainParams(p.parameters));
  const std::int64_t actions = compiled.policy->outputShapes.front().back();
  try {
    return train::buildUpdateGraph(*compiled.policy, ppo ? train::LossKind::Ppo : train::LossKind::AlphaZero, optimizer, actions);
  } catch (const std::exception& e) {
    std::cerr << "  the training step does not build: " << printable(e.what()) << "\n";
    return std::nullopt;
  }
}

// A shape as check prints it, "[4, 84, 84]", cut after 8 dimensions with its rank (a shape of
// 60,000 dimensions printed whole made lines of 180 KB).
std::string shortShape(const std::vector<std::int64_t>& shape) {
  return shape.size() <= 8 ? ir::shapeText(shape, ", ") : quoteShape(shape);
}

// The rows of the smallest embedding table the observation indexes (through reshapes), or 0
// when no embedding reads it: a policy over tokens needs whole numbers below that.
std::int64_t observationVocabulary(const ir::Graph& g) {
  std::vector<bool> isObservation(g.nodes.size(), false);
  std::int64_t vocabulary = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (n.op == ir::Op::Input) isObservation[i] = n.attrs.name == "obs";
    if (n.op == ir::Op::Reshape) isObservation[i] = isObservation[size_t(n.inputs[0])];
    if (n.op == ir::Op::Gather && isObservation[size_t(n.inputs[1])]) {
      const std::int64_t rows = g.node(n.inputs[0]).shape[0];
      vocabulary = vocabulary == 0 ? rows : std::min(vocabulary, rows);
    }
  }
  return vocabulary;
}

// A random observation for `g`: normal values, or token ids when an embedding reads them.
std::vector<float> randomObservation(const ir::Graph& g) {
  std::vector<float> input(size_t(ir::numel(g.node(g.findInput("obs")).shape)));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  const std::int64_t vocabulary = observationVocabulary(g);
  for (float& x : input) x = vocabulary > 0 ? float(std::uniform_int_distribution<std::int64_t>(0, vocabulary - 1)(rng)) : normal(rng);
  return input;
}

// Every data input of `exe` at random: the observation as randomObservation makes it, an action
// (a learned model's dynamics) one-hot on action 0, anything else (a latent state) normal.
void setRandomInputs(exec::Executable& exe) {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal;
  for (const ir::Node& n : exe.graph().nodes) {
    if (n.op != ir::Op::Input || n.attrs.role != ir::InputRole::Data) continue;
    std::vector<float> input;
    if (n.attrs.name == "obs") {
      input = randomObservation(exe.graph());
    } else {
      input.resize(size_t(ir::numel(n.shape)));
      const std::int64_t row = n.shape.back();
      for (size_t i = 0; i < input.size(); ++i) input[i] = n.attrs.name == "action" ? float(std::int64_t(i) % row == 0) : normal(rng);
    }
    exe.setInput(n.attrs.name, input.data(), input.size());
  }
}

// One forward pass of `g` (after the passes) on the CPU backend, its parameters at their initial
// values and a random observation, then five timed: the milliseconds per pass, or nullopt with
// the failure printed (a value that is not finite fails it).
std::optional<double> timeForwardPass(const ir::Graph& g) {
  try {
    auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
    exe->setFiniteCheck(true);
    for (const ir::Node& n : exe->graph().nodes)
      if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
        auto v = exec::initialValues(n, 1);
        exe->setInput(n.attrs.name, v.data(), v.size());
      }
    setRandomInputs(*exe);
    exe->run();  // warm-up
    const int runs = 5;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) exe->run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / runs;
  } catch (const std::exception& e) {
    std::cerr << "  the forward pass failed on the CPU backend: " << printable(e.what()) << "\n";
    return std::nullopt;
  }
}

// Prints the policy's summary, its IR with --ir (`g`, after the passes) and the forward pass's time.
void describePolicy(const pdl::CompiledPolicy& p, const ir::Graph& g, std::int64_t batch, bool printIr, double ms) {
  std::cout << "  outputs:";
  for (size_t i = 0; i < p.outputNames.size(); ++i)
    std::cout << (i ? ", " : " ") << printable(p.outputNames[i]) << " " << shortShape(p.outputShapes[i]);
  std::cout << "\n";
  std::printf("  %-34s %-11s %-16s %10s %10s\n", "layer", "kind", "output", "params", "FLOPs");
  for (const pdl::LayerSummary& l : p.layers)
    std::printf("  %-34s %-11s %-16s %10s %10s\n", printable(l.name).c_str(), l.kind.c_str(), shortShape(l.outputShape).c_str(),
                count(double(l.parameters)).c_str(), count(double(l.flops)).c_str());
  std::printf("  total: %lld parameters, %s FLOPs per sample (layers only; a multiply-add counts 2)\n",
              static_cast<long long>(p.parameterCount), count(double(p.flopsPerSample)).c_str());
  if (printIr) {
    std::cout << printable(ir::toText(g), Keep::TabsAndNewlines);
    // The kernels the CUDA backend launches for this graph (the schedule is target data, so it
    // is printed on any machine); a graph it cannot run says why instead.
    printSchedule(g);
  }
  std::printf("  CPU forward pass, batch %lld: %.3f ms (mean of 5 runs, random observation)\n", static_cast<long long>(batch), ms);
}

// The arithmetic of one forward pass of `g`, roughly: products and windows by their terms,
// everything else by its outputs.
double operationsOf(const ir::Graph& g) {
  double total = 0;
  for (const ir::Node& n : g.nodes) {
    const double out = double(ir::numel(n.shape));
    if (n.op == ir::Op::Input || n.op == ir::Op::Constant) continue;
    const ir::Shape& x = g.node(n.inputs[0]).shape;
    if (n.op == ir::Op::MatMul) total += 2 * out * double(n.attrs.transposeA ? x[x.size() - 2] : x.back());
    else if (n.op == ir::Op::Conv2d) total += 2 * out * double(ir::numel(g.node(n.inputs[1]).shape) / g.node(n.inputs[1]).shape[0]);
    else if (n.op == ir::Op::MaxPool2d || n.op == ir::Op::AvgPool2d) total += out * double(n.attrs.kernelH * n.attrs.kernelW);
    else if (n.op == ir::Op::Attention) total += 4 * out * double(g.node(n.inputs[1]).shape[1]);
    else total += out;
  }
  return total;
}

// Why check does not run the forward pass of `g`: more memory or arithmetic than a check should
// take on the CPU backend (a model within every limit can still need gigabytes, or hours).
std::optional<std::string> tooLargeToRun(const ir::Graph& g) {
  constexpr double kMaxBytes = 4.0 * (1 << 30), kMaxOperations = 2e11;
  double bytes = 0;
  for (std::int64_t size : g.plan.sizes) bytes += 4.0 * double(size);
  for (const ir::Node& n : g.nodes)
    if (n.op == ir::Op::Input || n.op == ir::Op::Constant) bytes += 4.0 * double(ir::numel(n.shape));
  char b[200];
  const double operations = bytes > kMaxBytes ? 0 : operationsOf(g);
  if (bytes > kMaxBytes) std::snprintf(b, sizeof b, "it needs %.1f GiB of memory, more than the 4 GiB check allows itself", bytes / (1 << 30));
  else if (operations > kMaxOperations) std::snprintf(b, sizeof b, "it takes about %.2g operations, more than the 2e11 check allows itself", operations);
  else return std::nullopt;
  return std::string(b);
}

// The policy's graph after the passes, and its forward pass's time; nullopt (the failure printed)
// when the pass fails or, with `tooLarge` set, is too large to run here.
std::optional<std::pair<ir::Graph, double>> runPolicy(const pdl::CompiledPolicy& p, bool* tooLarge) {
  ir::Graph g = p.graph;
  ir::runPasses(g, ir::defaultPipeline());
  *tooLarge = false;
  if (std::optional<std::string> why = tooLargeToRun(g)) {
    std::cerr << "  the forward pass was not run on the CPU backend: " << *why << "\n";
    *tooLarge = true;
    return std::nullopt;
  }
  const std::optional<double> ms = timeForwardPass(g);
  if (!ms) return std::nullopt;
  return std::make_pair(std::move(g), *ms);
}

std::string errors(int n) { return std::to_string(n) + " error" + (n == 1 ? "" : "s"); }

// The verdict on a policy whose forward pass did not run: it failed, or it was too large to try
// (then nothing says the policy is wrong, and nothing says it runs).
std::string notRunVerdict(bool tooLarge) {
  return tooLarge ? "not verified: it compiles, but its forward pass is too large for check to run" : "rejected: the forward pass failed";
}

void printProject(const std::string& path, const project::Project& p);

// `check --algorithm muzero FILE`, or a MuZero project (`path` then the project's, `project` set):
// the learned model's three programs, each described and run.
int checkLearnedModelFile(const std::string& path, const std::string& source, const CheckOptions& options,
                          const project::Project* project = nullptr) {
  pdl::LearnedModelOptions o;
  o.fileName = project ? project->policyFile.string() : path;
  o.observationShape = options.observationShape;
  o.actionCount = options.actionCount;
  o.batch = options.batch;
  pdl::LearnedModelResult r = pdl::compileLearnedModel(source, o);
  printDiagnostics(r.diagnostics, source);
  if (!r.model) {
    std::cerr << printable(path) << ": rejected (" << errors(r.diagnostics.errorCount()) << ")\n";
    return 1;
  }
  struct Program {
    const char* title;
    const pdl::CompiledPolicy* program;
  };
  const Program programs[] = {{"represent (obs -> state)", &r.model->represent},
                              {"recurrent (state, action -> state, reward; then predict)", &r.model->recurrent},
                              {"predict (state -> logits, value)", &r.model->predict}};
  std::vector<std::pair<ir::Graph, double>> ran;
  for (const Program& p : programs) {
    bool tooLarge = false;
    auto result = runPolicy(*p.program, &tooLarge);
    if (!result) {
      std::cerr << printable(path) << ": " << notRunVerdict(tooLarge) << " (" << p.title << ")\n";
      return 1;
    }
    ran.push_back(std::move(*result));
  }
  if (project) {  // what `train` refuses before it builds anything, refused here too
    if (auto problem = train::trainingProblem(*project)) {
      std::cerr << "error: " << printable(*problem) << "\n" << printable(path) << ": rejected (1 error)\n";
      return 1;
    }
    printProject(path, *project);  // "ok" only now, after the last check
  }
  std::cout << (project ? std::string("  model:       ") : printable(path) + ": ok, ") << "a learned model (observation " << shortShape(o.observationShape) << ", " << o.actionCount
            << " actions, state " << shortShape(r.model->stateShape) << ", " << r.model->parameterCount << " parameters)\n";
  for (size_t i = 0; i < ran.size(); ++i) {
    std::cout << " " << programs[i].title << "\n";
    describePolicy(*programs[i].program, ran[i].first, options.batch, options.printIr, ran[i].second);
  }
  return 0;
}

int checkPdlFile(const std::string& path, const CheckOptions& options) {
  std::string error;
  auto source = readFile(path, kPolicyFileLimit, &error);
  if (!source) {
    std::cerr << "error: " << printable(error) << "\n";
    return 1;
  }
  if (options.observationShape.empty() || options.actionCount <= 0) {
    std::cerr << printable(path) << ": error: a standalone PDL file needs --obs-shape and --action-dim (e.g. --obs-shape 4,84,84 --action-dim 6)\n";
    return 2;
  }
  if (options.update) {
    std::cerr << printable(path) << ": error: --update needs a project (its algorithm says which loss the training step has), not a .pdl file\n";
    return 2;
  }
  if (options.algorithm == "muzero") return checkLearnedModelFile(path, *source, options);
  pdl::CompileOptions o;
  o.fileName = path;
  o.observationShape = options.observationShape;
  o.actionCount = options.actionCount;
  o.entry = options.entry;
  o.algorithm = options.algorithm;
  o.batch = options.batch;
  pdl::CompileResult r = pdl::compile(*source, o);
  printDiagnostics(r.diagnostics, *source);
  if (!r.policy) {
    std::cerr << printable(path) << ": rejected (" << errors(r.diagnostics.errorCount()) << ")\n";
    return 1;
  }
  bool tooLarge = false;
  const auto ran = runPolicy(*r.policy, &tooLarge);
  if (!ran) {
    std::cerr << printable(path) << ": " << notRunVerdict(tooLarge) << "\n";
    return 1;
  }
  // "ok" only now, after the last check.
  std::cout << printable(path) << ": ok (observation " << shortShape(o.observationShape) << ", " << o.actionCount << " actions)\n";
  describePolicy(*r.policy, ran->first, options.batch, options.printIr, ran->second);
  return 0;
}

void printProject(const std::string& path, const project::Project& p) {
  const env::EnvironmentInfo* e = env::findEnvironment(p.environment);
  std::cout << printable(path) << ": ok\n"
            << "  name:        " << printable(p.name) << "\n"
            << "  environment: " << p.environment << " (observation " << shortShape({e->observationShape.begin(), e->observationShape.end()})
            << ", " << e->actionCount << " actions)\n"
            << "  algorithm:   " << p.algorithm << "\n"
            << "  policy:      " << printable(p.policyFile.string()) << "\n";
  if (p.series) {
    const int split = env::trainingBars(p.series->size(), p.parameters.getFloat("trading.train_fraction"));
    std::cout << "  series:      " << printable(p.seriesFile.string()) << " (" << p.series->size() << " bars: training on 0-" << split - 1
              << ", held out " << split << "-" << p.series->size() - 1 << ")\n";
  }
  for (const params::ParameterSpec& spec : params::ParameterRegistry::standard().all())
    if (!p.parameters.isDefault(spec.name))
      std::cout << "  " << spec.name << " = " << printable(params::formatValue(p.parameters.get(spec.name))) << "\n";
}

// The options of a standalone .pdl file given with a project: named as ignored for it (they were
// ignored silently). Not refused: one `check` may take .pdl files and projects together.
void warnStandaloneOptions(const std::string& path, const CheckOptions& options) {
  std::string given;
  auto add = [&](bool on, const char* option) {
    if (on) given += (given.empty() ? "" : ", ") + std::string(option);
  };
  add(!options.observationShape.empty(), "--obs-shape");
  add(options.actionCount > 0, "--action-dim");
  add(options.entry != CheckOptions{}.entry, "--entry");
  add(!options.algorithm.empty(), "--algorithm");
  if (!given.empty())
    std::cerr << printable(path) << ": warning: " << given << " go with a .pdl file and are ignored for a project (its environment gives the "
              << "observation shape and actions, its project.toml the policy and algorithm)\n";
}

// A MuZero project: its policy file is a learned model (represent, dynamics, predict).
int checkMuZeroProject(const std::string& path, const project::Project& p, const CheckOptions& options) {
  if (options.update) {
    std::cerr << printable(path) << ": error: --update shows a PPO or AlphaZero training step; MuZero's unrolled step is not printed yet\n";
    return 2;
  }
  std::string error;
  const std::optional<std::string> source = readFile(p.policyFile, kPolicyFileLimit, &error);
  if (!source) {
    std::cerr << "error: " << printable(error) << "\n" << printable(path) << ": rejected (1 error)\n";
    return 1;
  }
  const env::EnvironmentInfo* e = env::findEnvironment(p.environment);
  CheckOptions model = options;
  model.observationShape.assign(e->observationShape.begin(), e->observationShape.end());
  model.actionCount = e->actionCount;
  return checkLearnedModelFile(path, *source, model, &p);
}

int checkProject(const std::string& path, const CheckOptions& options) {
  warnStandaloneOptions(path, options);
  project::LoadOptions loadOptions;
  loadOptions.allowOutsidePaths = options.allowOutsideProject;
  project::LoadResult result = project::loadProject(path, loadOptions);
  printDiagnostics(result.diagnostics, result.source);
  if (!result.project) {
    std::cerr << printable(path) << ": rejected (" << errors(result.diagnostics.errorCount()) << ")\n";
    return 1;
  }
  const project::Project& p = *result.project;
  if (p.algorithm == "muzero") return checkMuZeroProject(path, p, options);
  std::string source;
  // With --update the forward pass that shows the policy runs at batch 1; --batch sizes the step.
  const std::int64_t forwardBatch = options.update ? 1 : options.batch;
  pdl::CompileResult compiled = project::compilePolicy(p, forwardBatch, &source);
  printDiagnostics(compiled.diagnostics, source);
  if (!compiled.policy) {
    std::cerr << printable(path) << ": rejected: the policy does not compile (" << errors(compiled.diagnostics.errorCount()) << ")\n";
    return 1;
  }
  // What `train` refuses before it builds anything, refused here too.
  if (auto problem = train::trainingProblem(p)) {
    std::cerr << "error: " << printable(*problem) << "\n" << printable(path) << ": rejected (1 error)\n";
    return 1;
  }
  bool tooLarge = false;
  const auto ran = runPolicy(*compiled.policy, &tooLarge);
  const std::optional<ir::Graph> update = ran && options.update ? buildUpdate(p, options) : std::nullopt;
  if (!ran || (options.update && !update)) {
    std::cerr << printable(path) << ": " << (ran ? "rejected: the training step does not build" : notRunVerdict(tooLarge)) << "\n";
    return 1;
  }
  printProject(path, p);  // "ok" only now, after the last check
  describePolicy(*compiled.policy, ran->first, forwardBatch, options.printIr && !options.update, ran->second);
  if (update) {
    std::cout << "  the training step at batch " << options.batch << ":\n" << printable(ir::toText(*update), Keep::TabsAndNewlines);
    printSchedule(*update);
  }
  return 0;
}

}  // namespace

int runCheck(const std::vector<std::string>& paths, const CheckOptions& options) {
  int status = 0;
  for (const std::string& path : paths) {
    const bool pdlFile = path.size() > 4 && path.compare(path.size() - 4, 4, ".pdl") == 0;
    status = std::max(status, pdlFile ? checkPdlFile(path, options) : checkProject(path, options));
  }
  return status;
}

}  // namespace cas::cli
