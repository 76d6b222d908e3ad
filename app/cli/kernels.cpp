// `cuda-agent kernels`: compiles a project's policy (or a benchmark network) on the CUDA backend,
// times every kernel of its forward or update graph with CUDA events, and prints each one's
// generated source, launch shape, registers, shared memory and theoretical occupancy; or, with
// --graph search, the device search's kernels over that network (SIMT efficiency, SM timeline).
#include <cstdio>
#include <iostream>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/project/project.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/benchmark_nets.hpp"
#include "core/train/self_play.hpp"
#include "core/train/update.hpp"

namespace cas::cli {
namespace {

std::string orNa(double v, const char* format) {
  if (v < 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// One search of `o.batch` games over the network, kernel by kernel, instrumented.
int printSearchKernels(const KernelsOptions& o, exec::Backend& backend, exec::Executable& network, const std::string& environment,
                       const search::SearchConfig& config) {
  search::SearchSetup setup{environment, int(o.batch), config, 1, {search::LeafEvaluator::Kind::Network, &network}};
  std::string reason = "the " + backend.id() + " backend has no search of its own";
  exec::DeviceServices* services = backend.deviceServices();
  auto s = services ? services->createSearch(setup, &reason) : nullptr;
  if (!s) {
    std::cerr << "kernels: no device search: " << reason << "\n";
    return 1;
  }
  const int steps = (config.simulations + config.leavesPerStep - 1) / config.leavesPerStep;
  const std::vector<exec::KernelReport> reports = s->profileKernels(steps);
  std::printf("device search of %lld %s games, %d simulations (k = %d, %s selection) on %s, instrumented:\n", static_cast<long long>(o.batch),
              environment.c_str(), config.simulations, config.leavesPerStep, config.selection == search::SelectionKernel::Masked ? "masked" : "branchy",
              backend.statusText().c_str());
  for (const exec::RuntimeStat& stat : s->runtimeStats()) std::printf("  %s: %s\n", stat.name.c_str(), stat.value().c_str());
  std::printf("\n%-4s %-26s %-8s %9s %5s %6s %12s  %s\n", "#", "kernel", "kind", "time us", "regs", "SIMT", "SMs, span us", "what");
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    const TimelineExtent extent = timelineExtent(r);
    const std::string timeline = r.timeline.empty() ? "n/a" : std::to_string(extent.sms) + ", " + orNa(extent.spanUs, "%.1f");
    std::printf("%-4zu %-26s %-8s %9s %5s %6s %12s  %s\n", i, r.name.substr(0, 26).c_str(), r.kind.c_str(), orNa(r.timeUs, "%.2f").c_str(),
                orNa(r.registers, "%.0f").c_str(), orNa(r.simtEfficiency * 100, "%.1f%%").c_str(), timeline.c_str(), r.label.c_str());
  }
  std::printf("\nSIMT: active lanes per sampled warp step (__activemask) / 32; SMs, span: the last launch's blocks on the SM timeline\n"
              "(%%globaltimer); per-step kernels are the mean over the search's steps. Source: gpu/search/search_kernels.cu\n");
  return 0;
}

}  // namespace

int runKernels(const KernelsOptions& o) {
  std::string error;
  auto backend = exec::BackendRegistry::instance().select("cuda", &error);
  if (!backend) {
    std::cerr << "kernels: GPU kernel metrics need the CUDA backend: " << error << "\n"
              << "(on the CPU backend the graph is interpreted node by node; `cuda-agent check --ir` shows it)\n";
    return 1;
  }
  std::optional<pdl::CompiledPolicy> policy;
  std::int64_t actions = 0;
  train::LossKind loss = train::LossKind::AlphaZero;
  const bool searching = o.graph == "search";
  std::string environment = "connect4";  // the benchmark networks' game, for --graph search
  search::SearchConfig config;
  if (const train::BenchmarkNet* net = train::findBenchmarkNet(o.target)) {
    if (searching && net->name != "connect4_mlp256") {
      std::cerr << "kernels: --graph search needs a network for a board game: connect4_mlp256, or a project\n";
      return 2;
    }
    pdl::CompileOptions co;
    co.fileName = net->name + ".pdl";
    co.observationShape = net->observationShape;
    co.actionCount = actions = net->actionCount;
    co.batch = o.batch;
    if (searching) co.algorithm = "alphazero";
    auto r = pdl::compile(searching ? net->alphaZeroSource : o.precision == "bf16" ? net->mixedSource : net->source, co);
    policy = std::move(r.policy);
    loss = train::LossKind::PolicyGradient;
  } else {
    project::LoadResult loaded = project::loadProject(o.target);
    if (!loaded.project) {
      for (const Diagnostic& d : loaded.diagnostics.items()) std::cerr << formatDiagnostic(d, loaded.source) << "\n";
      std::cerr << "kernels: '" << o.target << "' is neither a project nor one of the benchmark networks (`cuda-agent bench update --help` lists them)\n";
      return 2;
    }
    environment = loaded.project->environment;
    if (loaded.project->algorithm == "ppo") {
      if (searching) {
        std::cerr << "kernels: --graph search needs a board game's project; '" << o.target << "' trains " << environment << " with ppo, which has no search\n";
        return 2;
      }
      loss = train::LossKind::Ppo;
    }
    // The project's settings that shape the kernels; the rest (root noise, temperature) keep the
    // defaults the benchmark networks run with, so both are measured alike.
    const search::SearchConfig fromProject = search::configFor(params::readSearchParams(loaded.project->parameters), search::SearchUse::SelfPlay);
    config.simulations = fromProject.simulations;
    config.cPuct = fromProject.cPuct;
    config.leavesPerStep = fromProject.leavesPerStep;
    config.gumbel = fromProject.gumbel;
    config.nodeBudget = fromProject.nodeBudget;
    config.selection = fromProject.selection;
    std::string source;
    // For a search, each game's k leaves are rows of the network's batch.
    auto r = project::compilePolicy(*loaded.project, searching ? o.batch * config.leavesPerStep : o.batch, &source, o.graph == "update");
    if (!r.policy) {
      for (const Diagnostic& d : r.diagnostics.items()) std::cerr << formatDiagnostic(d, source) << "\n";
      return 1;
    }
    actions = r.policy->outputShapes.front().back();
    policy = std::move(r.policy);
  }
  if (!policy) {
    std::cerr << "kernels: the network does not compile\n";
    return 1;
  }
  try {
    std::unique_ptr<exec::Executable> exe;
    std::unique_ptr<train::Updater> updater;
    if (o.graph == "update") {
      updater = std::make_unique<train::Updater>(*backend, *policy, loss, train::OptimizerConfig{}, actions, 1);
      updater->enqueueStep();  // sets the optimizer's scalars
    } else {
      ir::Graph g = policy->graph;
      ir::runPasses(g, ir::defaultPipeline());
      exe = backend->compile(g);
      for (const ir::Node& n : exe->graph().nodes)
        if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
          auto v = exec::initialValues(n, 1);
          exe->setInput(n.attrs.name, v.data(), v.size());
        }
    }
    if (searching) return printSearchKernels(o, *backend, *exe, environment, config);
    exec::Executable& program = updater ? updater->executable() : *exe;
    const std::vector<exec::KernelReport> reports = program.profileKernels(o.runs);
    double total = 0;
    for (const auto& r : reports) total += std::max(r.timeUs, 0.0);
    std::printf("%s graph '%s' at batch %lld on %s: %zu steps, %.1f us per run when launched one by one (%d runs)\n",
                o.graph.c_str(), program.graph().name.c_str(), static_cast<long long>(o.batch), backend->statusText().c_str(),
                reports.size(), total, o.runs);
    for (const exec::RuntimeStat& s : program.runtimeStats()) std::printf("  %s: %s\n", s.name.c_str(), s.value().c_str());
    std::printf("\n%-4s %-34s %-9s %9s %6s %5s %7s %9s %9s  %s\n", "#", "kernel", "kind", "time us", "nodes", "regs", "smem B",
                "theo occ", "achieved", "launch");
    for (size_t i = 0; i < reports.size(); ++i) {
      const auto& r = reports[i];
      std::printf("%-4zu %-34s %-9s %9s %6d %5s %7s %9s %9s  %s\n", i, r.name.substr(0, 34).c_str(), r.kind.c_str(),
                  orNa(r.timeUs, "%.2f").c_str(), r.nodes, orNa(r.registers, "%.0f").c_str(), orNa(r.sharedBytes, "%.0f").c_str(),
                  orNa(r.theoreticalOccupancy * 100, "%.0f%%").c_str(), orNa(r.achievedOccupancy * 100, "%.0f%%").c_str(), r.launch.c_str());
    }
    std::printf("\ntheoretical occupancy: cuOccupancyMaxActiveBlocksPerMultiprocessor; achieved: see 'achieved occupancy' above\n");
    if (o.source)
      for (const auto& r : reports)
        if (!r.source.empty()) std::printf("\n// ---- %s  [%s]  %s\n%s", r.name.c_str(), r.label.c_str(), r.launch.c_str(), r.source.c_str());
  } catch (const std::exception& e) {
    std::cerr << "kernels: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace cas::cli
