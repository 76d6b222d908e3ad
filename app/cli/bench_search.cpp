// `cuda-agent bench search`: times one search call (root evaluation + S simulations in every
// game, then the root statistics back on the host) with a TARGETS.md network or none, on the
// device search or the CPU's, as TARGETS.md measures mctx: fresh trees each call, every game
// from the starting position, the figure a median over calls after warm-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <new>
#include <numeric>
#include <optional>
#include <string>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/search/self_play_search.hpp"
#include "core/pdl/compiler.hpp"
#include "core/support/atomic_file.hpp"
#include "core/train/benchmark_nets.hpp"
#include "core/train/memory_estimate.hpp"

namespace cas::cli {
namespace {

using Clock = std::chrono::steady_clock;

// One line per kernel: time, registers, SIMT efficiency and the SM timeline's extent.
void printKernels(const std::vector<exec::KernelReport>& kernels, bool json) {
  if (json) std::printf(", \"kernels\": [");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const exec::KernelReport& k = kernels[i];
    const TimelineExtent extent = timelineExtent(k);
    if (json) {
      std::printf("%s{\"name\": %s, \"kind\": %s, \"us\": %.2f, \"registers\": %d, \"simt_efficiency\": %.4f, \"blocks\": %zu, \"sms\": %d, \"timeline_span_us\": %.1f}",
                  i ? ", " : "", jsonString(k.name).c_str(), jsonString(k.kind).c_str(), k.timeUs, k.registers, k.simtEfficiency, k.timeline.size(),
                  extent.sms, extent.spanUs);
    } else {
      std::printf("  %-24s %9.2f us", k.name.c_str(), k.timeUs);
      if (k.registers >= 0) std::printf("  %3d registers", k.registers);
      if (k.simtEfficiency >= 0) std::printf("  SIMT efficiency %5.1f%%", 100 * k.simtEfficiency);
      if (!k.timeline.empty()) std::printf("  %zu blocks on %d SMs over %.1f us", k.timeline.size(), extent.sms, extent.spanUs);
      std::printf("  (%s)\n", k.label.c_str());
    }
  }
  if (json) std::printf("]");
}

// `net` compiled for `batch` leaves at once on `backend`, with its initial weights; null, with
// the reason printed, when it does not compile.
std::unique_ptr<exec::Executable> compileNetwork(const train::BenchmarkNet& net, const env::EnvironmentInfo& environment, std::int64_t batch,
                                                 exec::Backend& backend) {
  pdl::CompileOptions co;
  co.fileName = net.name + ".pdl";
  co.observationShape.assign(environment.observationShape.begin(), environment.observationShape.end());
  co.actionCount = net.actionCount;
  co.algorithm = "alphazero";
  co.batch = batch;
  pdl::CompileResult compiled = pdl::compile(net.alphaZeroSource, co);
  if (!compiled.policy) {
    std::cerr << "bench search: " << formatHeadline(compiled.diagnostics.items().at(0)) << "\n";
    return nullptr;
  }
  ir::Graph g = compiled.policy->graph;
  ir::runPasses(g, ir::defaultPipeline());
  std::unique_ptr<exec::Executable> network = backend.compile(g);
  for (const ir::Node& n : network->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
      auto v = exec::initialValues(n, 1);
      network->setInput(n.attrs.name, v.data(), v.size());
    }
  return network;
}

// Why the CPU search's trees cannot fit in the memory this process may still allocate, estimated
// before any is allocated (65536 games of 16777216 nodes would otherwise allocate until the
// system kills the process); nullopt when they can.
std::optional<std::string> treesTooLarge(const SearchBenchOptions& o) {
  const train::MemoryPart trees = train::searchTreesPart(o.games, o.nodeBudget, "");
  const std::uint64_t available = train::availableMemory();
  if (trees.bytes <= available) return std::nullopt;
  return "bench search: " + std::to_string(o.games) + " games of " + std::to_string(o.nodeBudget) + " tree nodes each need about " +
         formatBytes(trees.bytes) + " of memory, more than the " + formatBytes(available) + " available; give fewer --games or a smaller --node-budget";
}

}  // namespace

// The searches of o, timed and printed; throws what the search throws.
static int timeSearch(const SearchBenchOptions& o) {
  const env::EnvironmentInfo* environment = env::findEnvironment(o.env);
  if (!environment || !environment->twoPlayer) {
    std::cerr << "bench search: '" << o.env << "' is not a two-player board game; use connect4 or tictactoe, or --model learned\n";
    return 2;
  }
  const train::BenchmarkNet* net = o.net == "none" ? nullptr : train::findBenchmarkNet(o.net);
  if (o.net != "none" && !net) {
    std::cerr << "bench search: unknown network '" << o.net << "'; known: connect4_mlp256, or none (uniform priors, value 0)\n";
    return 2;
  }
  std::int64_t obsSize = 1;
  for (int d : environment->observationShape) obsSize *= d;
  if (net) {
    std::int64_t netObs = 1;
    for (std::int64_t d : net->observationShape) netObs *= d;
    if (netObs != obsSize || net->actionCount != environment->actionCount) {
      std::cerr << "bench search: " << net->name << " does not fit " << o.env << " (" << netObs << " inputs and " << net->actionCount
                << " actions, the game has " << obsSize << " and " << environment->actionCount << ")\n";
      return 2;
    }
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(o.device, &error);
  if (!backend) {
    std::cerr << "bench search: " << error << "\n";
    return 1;
  }
  search::SearchConfig config;
  config.simulations = o.simulations;
  config.gumbel = o.policy == "gumbel";
  config.leavesPerStep = o.leaves;
  config.nodeBudget = o.nodeBudget;
  config.selection = o.selection == "branchy" ? search::SelectionKernel::Branchy : search::SelectionKernel::Masked;
  config.instrument = o.instrument;
  search::SearchSetup setup;
  setup.environment = o.env;
  setup.games = o.games;
  setup.config = config;
  setup.seed = 1;
  setup.evaluator.kind = net ? search::LeafEvaluator::Kind::Network : search::LeafEvaluator::Kind::Uniform;

  if (backend->id() == "cpu")
    if (auto refused = treesTooLarge(o)) {
      std::cerr << *refused << "\n";
      return 1;
    }
  std::unique_ptr<exec::Executable> network;
  if (net && !(network = compileNetwork(*net, *environment, std::int64_t(o.games) * o.leaves, *backend))) return 1;
  setup.evaluator.network = network.get();
  std::string note;
  auto search = search::makeSearch(*backend, setup, backend->id() == "cuda" ? "gpu" : "cpu", &note);
  std::vector<int> all(static_cast<size_t>(o.games));
  std::iota(all.begin(), all.end(), 0);

  // One call: fresh trees at the start position (queued and finished before the clock starts),
  // then the search and the root statistics on the host.
  std::vector<search::RootStats> last;
  auto call = [&] {
    search->resetGames(all);
    search->rootStats(std::vector<int>{0});
    const auto start = Clock::now();
    search->search(all);
    last = search->rootStats(all);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int i = 0; i < 3; ++i) call();
  const std::string before = exec::statValue(search->runtimeStats(), "pool device allocations");
  std::vector<double> times;
  const auto budgetStart = Clock::now();
  while (int(times.size()) < o.minCalls || (std::chrono::duration<double>(Clock::now() - budgetStart).count() < o.seconds && times.size() < 10000))
    times.push_back(call());
  const std::string after = exec::statValue(search->runtimeStats(), "pool device allocations");
  std::sort(times.begin(), times.end());
  const double ms = times[times.size() / 2];
  std::int64_t nodes = 0;
  for (const search::RootStats& r : last) nodes += r.treeNodes;
  for (const search::RootStats& r : last)
    if (std::accumulate(r.visits.begin(), r.visits.end(), 0) != o.simulations) throw std::runtime_error("a root's visits do not add up to the simulations");
  const double simsPerSecond = double(o.games) * o.simulations / (ms / 1000.0);
  const double nodesPerSecond = double(nodes) / (ms / 1000.0);
  const long long allocations = before.empty() || after.empty() ? -1 : std::stoll(after) - std::stoll(before);
  std::vector<exec::KernelReport> kernels;
  if (o.kernels) {
    search->resetGames(all);
    kernels = search->profileKernels((o.simulations + o.leaves - 1) / o.leaves);
  }
  if (o.json) {
    std::printf("{\"bench\": \"search\", \"env\": \"%s\", \"net\": \"%s\", \"games\": %d, \"sims\": %d, \"policy\": \"%s\", \"device\": \"%s\", "
                "\"leaves\": %d, \"selection\": \"%s\", \"instrument\": %s, \"node_budget\": %d, \"ms_per_search\": %.4f, \"ms_min\": %.4f, "
                "\"calls\": %zu, \"simulations_per_second\": %.0f, \"nodes_per_second\": %.0f, \"device_allocations_during_timing\": %lld, "
                "\"search\": %s",
                o.env.c_str(), o.net.c_str(), o.games, o.simulations, o.policy.c_str(), search->device().c_str(), o.leaves, o.selection.c_str(),
                o.instrument ? "true" : "false", o.nodeBudget, ms, times.front(), times.size(), simsPerSecond, nodesPerSecond, allocations,
                jsonString(note).c_str());
    if (!kernels.empty()) printKernels(kernels, true);
    std::printf("}\n");
  } else {
    std::printf("%s, %s, %d games x %d simulations, %s%s, k=%d: %.3f ms per search (median of %zu; min %.3f), %.2f M simulations/s, %.2f M nodes/s\n",
                o.env.c_str(), o.net.c_str(), o.games, o.simulations, o.policy.c_str(),
                search->device() == "cuda" ? (", " + o.selection + " selection" + (o.instrument ? ", instrumented" : "")).c_str() : "", o.leaves,
                ms, times.size(), times.front(), simsPerSecond / 1e6, nodesPerSecond / 1e6);
    std::printf("  %s\n", note.c_str());
    for (const exec::RuntimeStat& s : search->runtimeStats()) std::printf("  %s: %s\n", s.name.c_str(), s.value().c_str());
    if (allocations >= 0) std::printf("  device allocations while timing: %lld\n", allocations);
    if (!kernels.empty()) printKernels(kernels, false);
  }
  return 0;
}

// The bench, ending with a sentence whatever it throws (out of memory: the options that size it).
int runBenchSearch(const SearchBenchOptions& given) {
  SearchBenchOptions o = given;
  const bool learned = o.model == "learned";
  if (o.env.empty()) o.env = learned ? "minatar-breakout" : "connect4";
  if (o.net.empty()) o.net = learned ? "muzero_mlp256" : "connect4_mlp256";
  if (learned && (o.kernels || o.instrument)) {
    std::cerr << "bench search: --kernels and --instrument profile the rules search; with --model learned use --breakdown\n";
    return 2;
  }
  if (!learned && o.breakdown) {
    std::cerr << "bench search: --breakdown times a learned model's decision; add --model learned, or use --kernels\n";
    return 2;
  }
  try {
    return learned ? timeLearnedSearch(o) : timeSearch(o);
  } catch (const std::bad_alloc&) {
    std::cerr << "bench search: out of memory for " << o.games << " games of " << o.nodeBudget << " tree nodes each; give fewer --games "
              << "or a smaller --node-budget\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "bench search: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cas::cli
