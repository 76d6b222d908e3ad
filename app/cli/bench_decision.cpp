// `cuda-agent bench decision PROJECT`: the time of one self-play decision of an AlphaZero project
// (a move's full search in every game, the root statistics back, the moves played and the ended
// games started again) split as the seed's Transformer agent split its 50 ms decisions:
//
//   network inference   the evaluator's batches (device search: the network's kernels, from the
//                       events of its captured graph; host search: the evaluator's wall time)
//   search              the tree work (device search: its kernels; host search: the CPU's)
//   data exchange       the rest of the decision's wall time: positions, parameters, root
//                       statistics and moves crossing between host and device, launches, waits
//
// The project's own search runs (search.device; --set search.device=cpu gives the host search
// with the network where the backend runs it, the seed's arrangement). The trainer is a fresh
// one (the weights do not change the time); two decisions warm up (compilation, graph capture).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/exec/backend.hpp"
#include "core/project/project.hpp"
#include "core/search/self_play_search.hpp"
#include "core/support/printable.hpp"
#include "core/train/trainer.hpp"

namespace cas::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct DecisionTimes {
  double inference = 0, search = 0, exchange = 0, wall = 0;  // seconds, summed over the decisions
};

// One decision in every game: search, root statistics, the moves, fresh games where one ended.
void decide(search::SelfPlaySearch& search, const std::vector<int>& games) {
  search.search(games);
  const std::vector<search::RootStats> stats = search.rootStats(games);
  std::vector<int> moves(games.size());
  for (size_t i = 0; i < games.size(); ++i) moves[i] = stats[i].played;
  search.play(games, moves);
  std::vector<int> ended;
  for (int g : games)
    if (search.positions().terminal(g)) ended.push_back(g);
  search.resetGames(ended);
}

DecisionTimes timeDecisions(search::SelfPlaySearch& search, int decisions) {
  std::vector<int> games(size_t(search.games()));
  std::iota(games.begin(), games.end(), 0);
  for (int i = 0; i < 2; ++i) decide(search, games);  // compiles, captures the graphs
  DecisionTimes t;
  for (int i = 0; i < decisions; ++i) {
    const search::SearchMetrics before = search.metrics();  // waits for the device: outside the timing
    const auto start = Clock::now();
    decide(search, games);
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const search::SearchMetrics after = search.metrics();
    const double inference = after.inferenceSeconds - before.inferenceSeconds, tree = after.searchSeconds - before.searchSeconds;
    t.inference += inference;
    t.search += tree;
    t.exchange += std::max(0.0, wall - inference - tree);
    t.wall += wall;
  }
  return t;
}

void printTable(const DecisionTimes& t, int decisions, bool onDevice) {
  const double n = double(decisions), total = std::max(t.wall, 1e-12);
  auto row = [&](const char* what, double seconds) {
    std::printf("  %-22s %9.3f ms  %5.1f%%\n", what, 1e3 * seconds / n, 100 * seconds / total);
  };
  std::printf("                         per decision  share\n");
  row("network inference", t.inference);
  row(onDevice ? "search kernels" : "search (host)", t.search);
  row("data exchange", t.exchange);
  std::printf("  %-22s %9.3f ms\n", "decision", 1e3 * t.wall / n);
  std::printf("stream overlap: not yet (a decision's stages run in order on one stream)\n");
  std::printf("the seed's Transformer agent, per decision: inference 3.2 ms, MCTS node evaluation 9.5 ms, data exchange 4.8 ms\n"
              "  of about 50 ms; about 11 ms after its fixes\n");
}

void printJson(const project::Project& p, const exec::Backend& backend, const search::SelfPlaySearch& search, const DecisionTimes& t, int decisions) {
  const double n = double(decisions), total = std::max(t.wall, 1e-12);
  std::printf("{\"project\": %s, \"device\": \"%s\", \"search\": \"%s\", \"games\": %d, \"simulations\": %d, \"decisions\": %d, "
              "\"decision_ms\": %.6g, \"inference_ms\": %.6g, \"search_ms\": %.6g, \"exchange_ms\": %.6g, \"exchange_share\": %.6g, "
              "\"stream_overlap\": false}\n",
              jsonString(p.name).c_str(), backend.id().c_str(), search.device().c_str(), search.games(), search.config().simulations, decisions,
              1e3 * t.wall / n, 1e3 * t.inference / n, 1e3 * t.search / n, 1e3 * t.exchange / n, t.exchange / total);
}

}  // namespace

int runBenchDecision(const DecisionBenchOptions& o) {
  BenchProject opened = openBenchProject(o.project, o.sets, o.device, "alphazero", "bench decision needs a project that searches (algorithm alphazero)");
  if (opened.status != 0) return opened.status;
  const project::Project& project = *opened.project;
  const std::shared_ptr<exec::Backend>& backend = opened.backend;
  std::unique_ptr<train::Trainer> trainer = train::makeTrainer(project, backend, {}, false);
  train::SearchingTrainer* searching = trainer->searching();
  search::SelfPlaySearch& search = searching->selfPlaySearch();
  const DecisionTimes t = timeDecisions(search, o.decisions);
  if (o.json) {
    printJson(project, *backend, search, t, o.decisions);
    return 0;
  }
  std::printf("%s (%s) on %s: %s\n", project.name.c_str(), project.environment.c_str(), backend->statusText().c_str(),
              searching->searchNote().c_str());
  std::printf("%d decisions of %d games x %d simulations (a move's search in every game, its statistics, the moves)\n", o.decisions, search.games(),
              search.config().simulations);
  printTable(t, o.decisions, search.device() != "cpu");
  return 0;
}

}  // namespace cas::cli
