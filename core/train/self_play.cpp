#include "core/train/self_play.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

search::SearchConfig searchConfig(const params::SearchParams& p, SearchUse use) {
  const bool selfPlay = use == SearchUse::SelfPlay;
  search::SearchConfig c;
  c.simulations = int(p.simulations);
  c.cPuct = float(p.cPuct);
  c.dirichletAlpha = float(p.dirichletAlpha);
  c.dirichletFraction = selfPlay ? float(p.dirichletFraction) : 0.0f;
  c.leavesPerStep = int(p.leavesPerStep);
  c.virtualLoss = float(p.virtualLoss);
  c.gumbel = p.rootPolicy == params::RootPolicy::Gumbel;
  c.gumbelArms = int(p.gumbelArms);
  c.nodeBudget = int(p.nodeBudget);
  c.subtreeReuse = p.subtreeReuse;
  c.temperature = selfPlay ? float(p.temperature) : 0.0f;
  c.temperatureMoves = int(p.temperatureMoves);
  c.selection = p.selection == params::SelectionKernel::Branchy ? search::SelectionKernel::Branchy : search::SelectionKernel::Masked;
  c.instrument = p.instrument;
  return c;
}

SelfPlay::SelfPlay(std::unique_ptr<search::SelfPlaySearch> search, int observationSize)
    : search_(std::move(search)), observationSize_(observationSize), records_(size_t(search_->games())) {}

std::int64_t SelfPlay::play(std::int64_t games, ReplayBuffer& buffer, const std::function<bool()>& cancelled, IterationReport& report) {
  const auto start = Clock::now();
  const search::SearchMetrics before = search_->metrics();
  const env::BoardGames& pos = search_->positions();
  std::vector<int> active(size_t(pos.size()));
  std::iota(active.begin(), active.end(), 0);
  std::int64_t finished = 0;
  std::vector<int> moves(active.size()), over;

  while (finished < games && !(cancelled && cancelled())) {
    search_->search(active);
    const auto dataStart = Clock::now();
    const std::vector<search::RootStats> stats = search_->rootStats(active);
    for (size_t i = 0; i < active.size(); ++i) {
      const int g = active[i];
      Record rec;
      rec.obs.resize(size_t(observationSize_));
      pos.observe(g, rec.obs.data());
      rec.policy = stats[i].policy;
      rec.player = pos.toMove(g);
      rec.action = moves[i] = stats[i].played;
      records_[size_t(g)].push_back(std::move(rec));
    }
    search_->play(active, moves);
    over.clear();
    for (int g : active) {
      if (!pos.terminal(g)) continue;
      const float v = pos.terminalValue(g);  // for the player to move at the end
      const int last = pos.toMove(g);
      for (const Record& r : records_[size_t(g)]) buffer.add(r.obs.data(), r.policy.data(), r.player == last ? v : -v);
      records_[size_t(g)].clear();
      over.push_back(g);
      ++finished;
    }
    search_->resetGames(over);
    report.dataSeconds += since(dataStart);
  }
  const double seconds = std::max(since(start), 1e-9);
  const search::SearchMetrics after = search_->metrics();
  report.inferenceSeconds = after.inferenceSeconds - before.inferenceSeconds;
  report.searchSeconds = after.searchSeconds - before.searchSeconds;
  report.simulationsPerSecond = double(after.simulations - before.simulations) / seconds;
  report.gamesPerSecond = double(finished) / seconds;
  report.recycledNodes = after.recycledNodes;
  return finished;
}

void SelfPlay::stepSimulation() {
  std::vector<int> active;
  for (int g = 0; g < search_->positions().size(); ++g)
    if (!search_->positions().terminal(g)) active.push_back(g);
  search_->search(active, 1);
}

TreeSnapshot SelfPlay::snapshot(int game, int maxNodes) const {
  TreeSnapshot snap;
  snap.game = std::clamp(game, 0, search_->positions().size() - 1);
  snap.board = search_->positions().render(snap.game);
  for (const Record& r : records_[size_t(snap.game)]) snap.rootMoves.push_back(r.action);
  const search::Tree t = search_->treeSnapshot(snap.game);
  snap.treeNodes = t.nodesInUse();
  snap.treeCapacity = t.budget();
  snap.recycledNodes = t.recycledNodes();
  snap.cPuct = search_->config().cPuct;
  std::vector<std::pair<std::int32_t, std::int32_t>> queue = {{0, -1}};  // (tree slot, parent index)
  std::vector<int> depth = {0};
  for (size_t q = 0; q < queue.size() && int(snap.nodes.size()) < maxNodes; ++q) {
    const auto [slot, parentIndex] = queue[q];
    const auto s = size_t(slot);
    snap.nodes.push_back({parentIndex, t.action[s], t.visits[s], t.virtualLoss[s], depth[q],
                          t.visits[s] > 0 ? t.valueSum[s] / float(t.visits[s]) : 0.0f, t.prior[s]});
    if (!t.expanded(slot)) continue;
    for (int k = 0; k < t.childCount[s]; ++k) {
      queue.push_back({t.child(slot, k), std::int32_t(snap.nodes.size() - 1)});
      depth.push_back(depth[q] + 1);
    }
  }
  return snap;
}

void SelfPlay::restart() {
  std::vector<int> all(size_t(search_->games()));
  std::iota(all.begin(), all.end(), 0);
  search_->resetGames(all);
  for (auto& r : records_) r.clear();
}

}  // namespace cas::train
