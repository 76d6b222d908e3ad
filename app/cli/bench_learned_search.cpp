// `cuda-agent bench search --model learned`: times one search call over a learned model (root:
// represent + predict; each simulation step: one recurrent batch of every game's leaves), fresh
// trees each call, on the device search or the CPU reference, the figure a median over calls
// after warm-up. The roots are fixed random observations of the environment's shape (binary,
// sparse like MinAtar's planes); the model is a benchmark learned model with seeded initial
// weights (core/train/benchmark_nets.hpp), or `none`: the hashed test model, no network.
// bench/mctx_baseline.py --recurrent times mctx on the same shapes. With --breakdown the device
// search then times one decision phase by phase (LearnedSearch::profileDecision).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/env/environments.hpp"
#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/search/learned_search.hpp"
#include "core/train/benchmark_nets.hpp"

namespace cas::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct LearnedPrograms {
  std::unique_ptr<exec::Executable> represent, recurrent, predict;
  int stateSize = 0;
};

std::unique_ptr<exec::Executable> compileProgram(const pdl::CompiledPolicy& program, exec::Backend& backend) {
  ir::Graph g = program.graph;
  ir::runPasses(g, ir::defaultPipeline());
  std::unique_ptr<exec::Executable> exe = backend.compile(g);
  for (const ir::Node& n : exe->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
      const std::vector<float> v = exec::initialValues(n, 1);
      exe->setInput(n.attrs.name, v.data(), v.size());
    }
  return exe;
}

// The model's three programs for `batch` rows on `backend`; nullopt with the reason printed.
std::optional<LearnedPrograms> compileModel(const train::BenchmarkLearnedModel& model, const env::EnvironmentInfo& environment, std::int64_t batch,
                                            exec::Backend& backend) {
  pdl::LearnedModelOptions o;
  o.fileName = model.name + ".pdl";
  o.observationShape.assign(environment.observationShape.begin(), environment.observationShape.end());
  o.actionCount = environment.actionCount;
  o.batch = batch;
  pdl::LearnedModelResult compiled = pdl::compileLearnedModel(model.source, o);
  if (!compiled.model) {
    std::cerr << "bench search: " << formatHeadline(compiled.diagnostics.items().at(0)) << "\n";
    return std::nullopt;
  }
  LearnedPrograms p;
  p.stateSize = int(ir::numel(compiled.model->stateShape));
  p.represent = compileProgram(compiled.model->represent, backend);
  p.recurrent = compileProgram(compiled.model->recurrent, backend);
  p.predict = compileProgram(compiled.model->predict, backend);
  return p;
}

std::vector<float> rootObservations(int games, int observationSize) {
  std::mt19937 rng(1);
  std::bernoulli_distribution on(0.1);
  std::vector<float> obs(std::size_t(games) * std::size_t(observationSize));
  for (float& x : obs) x = on(rng) ? 1.0f : 0.0f;
  return obs;
}

search::LearnedSearchConfig configOf(const SearchBenchOptions& o) {
  search::LearnedSearchConfig c;
  c.simulations = o.simulations;
  c.gumbel = o.policy == "gumbel";
  c.leavesPerStep = o.leaves;
  c.nodeBudget = o.nodeBudget;
  return c;
}

// One decision phase by phase: a JSON field, or lines in microseconds and shares of the whole.
std::string breakdownJson(const search::LearnedSearchBreakdown& b) {
  char text[320];
  std::snprintf(text, sizeof text,
                ", \"breakdown\": {\"stage_us\": %.1f, \"root_model_us\": %.1f, \"recurrent_us\": %.1f, \"search_us\": %.1f, "
                "\"readback_us\": %.1f, \"total_us\": %.1f, \"steps\": %d, \"exchange_share\": %.4f}",
                b.stageUs, b.rootModelUs, b.recurrentUs, b.searchUs, b.readbackUs, b.totalUs(), b.steps, b.exchangeShare());
  return text;
}

void printBreakdown(const search::LearnedSearchBreakdown& b) {
  const double total = b.totalUs();
  const std::pair<const char*, double> rows[] = {{"data exchange in (observations, weights)", b.stageUs},
                                                 {"root model (represent, predict)", b.rootModelUs},
                                                 {"recurrent model (dynamics, predict)", b.recurrentUs},
                                                 {"search kernels", b.searchUs},
                                                 {"data exchange out (root statistics)", b.readbackUs}};
  std::printf("  one decision, phase by phase (launched one by one, not as graphs; %d recurrent steps):\n", b.steps);
  for (const auto& [name, us] : rows) std::printf("    %-38s %10.1f us  %5.1f%%\n", name, us, total > 0 ? 100.0 * us / total : 0.0);
  std::printf("    %-38s %10.1f us  (data exchange: %.1f%%)\n", "total", total, 100.0 * b.exchangeShare());
}

void printResult(const SearchBenchOptions& o, const search::LearnedSearch& s, const std::string& note, const std::vector<double>& times,
                 const std::optional<search::LearnedSearchBreakdown>& breakdown) {
  const double ms = times[times.size() / 2];
  const double simsPerSecond = double(o.games) * o.simulations / (ms / 1000.0);
  if (o.json) {
    std::printf("{\"bench\": \"search\", \"model\": \"learned\", \"env\": \"%s\", \"net\": \"%s\", \"games\": %d, \"sims\": %d, \"policy\": \"%s\", "
                "\"device\": \"%s\", \"leaves\": %d, \"node_budget\": %d, \"ms_per_search\": %.4f, \"ms_min\": %.4f, \"calls\": %zu, "
                "\"simulations_per_second\": %.0f, \"search\": %s%s}\n",
                o.env.c_str(), o.net.c_str(), o.games, o.simulations, o.policy.c_str(), s.device().c_str(), o.leaves, o.nodeBudget, ms, times.front(),
                times.size(), simsPerSecond, jsonString(note).c_str(), breakdown ? breakdownJson(*breakdown).c_str() : "");
    return;
  }
  std::printf("%s, learned model %s, %d games x %d simulations, %s, k=%d: %.3f ms per search (median of %zu; min %.3f), %.2f M simulations/s\n",
              o.env.c_str(), o.net.c_str(), o.games, o.simulations, o.policy.c_str(), o.leaves, ms, times.size(), times.front(), simsPerSecond / 1e6);
  std::printf("  %s\n", note.c_str());
  if (breakdown) printBreakdown(*breakdown);
}

}  // namespace

int timeLearnedSearch(const SearchBenchOptions& o) {
  const env::EnvironmentInfo* environment = env::findEnvironment(o.env);
  if (!environment || environment->twoPlayer) {
    std::cerr << "bench search: a learned model plans a single-agent environment, and '" << o.env << "' is not one; try --env minatar-breakout\n";
    return 2;
  }
  const train::BenchmarkLearnedModel* model = o.net == "none" ? nullptr : train::findBenchmarkLearnedModel(o.net);
  if (o.net != "none" && !model) {
    std::cerr << "bench search: unknown learned model '" << o.net << "'; known: muzero_mlp256, muzero_mlp256_tf32, or none (the hashed test model)\n";
    return 2;
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(o.device, &error);
  if (!backend) {
    std::cerr << "bench search: " << error << "\n";
    return 1;
  }
  search::LearnedSearchSetup setup;
  setup.games = o.games;
  setup.observationSize = int(std::accumulate(environment->observationShape.begin(), environment->observationShape.end(), 1, std::multiplies<>()));
  setup.actions = environment->actionCount;
  setup.stateSize = 8;  // the hashed model's
  setup.config = configOf(o);
  std::optional<LearnedPrograms> programs;
  if (model) {
    if (!(programs = compileModel(*model, *environment, std::int64_t(o.games) * o.leaves, *backend))) return 1;
    setup.stateSize = programs->stateSize;
    setup.evaluator = {search::LearnedModelEvaluator::Kind::Network, programs->represent.get(), programs->recurrent.get(), programs->predict.get()};
  } else {
    setup.evaluator.kind = search::LearnedModelEvaluator::Kind::Hashed;
  }
  std::string note;
  auto search = search::makeLearnedSearch(*backend, setup, backend->id() == "cuda" ? "gpu" : "cpu", &note);
  if (o.breakdown && search->device() != "cuda") {
    std::cerr << "bench search: --breakdown needs the device search (--device cuda); the CPU search runs its phases in one thread\n";
    return 2;
  }
  const std::vector<float> observations = rootObservations(o.games, setup.observationSize);
  std::vector<int> all(static_cast<size_t>(o.games));
  std::iota(all.begin(), all.end(), 0);
  std::vector<search::RootStats> last;
  auto call = [&] {
    const auto start = Clock::now();
    search->search(all, observations.data());
    last = search->rootStats(all);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int i = 0; i < 3; ++i) call();
  std::vector<double> times;
  const auto budgetStart = Clock::now();
  while (int(times.size()) < o.minCalls || (std::chrono::duration<double>(Clock::now() - budgetStart).count() < o.seconds && times.size() < 10000))
    times.push_back(call());
  std::sort(times.begin(), times.end());
  for (const search::RootStats& r : last)
    if (std::accumulate(r.visits.begin(), r.visits.end(), 0) != o.simulations) throw std::runtime_error("a root's visits do not add up to the simulations");
  std::optional<search::LearnedSearchBreakdown> breakdown;
  if (o.breakdown) breakdown = search->profileDecision(all, observations.data(), o.simulations);
  printResult(o, *search, note, times, breakdown);
  return 0;
}

}  // namespace cas::cli
